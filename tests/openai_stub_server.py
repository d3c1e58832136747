"""A real HTTP server on 127.0.0.1 that speaks OpenAI Chat Completions, for offline framework tests.

Each POST to ``/v1/chat/completions`` is answered by ``decide(body)`` (one tool call, or ``None`` for a text
answer) unless a fault is queued: ``server.faults.extend(["500", "malformed", "timeout"])`` makes the next
requests fail that way, one fault per request:

- ``"500"``: HTTP 500 with an OpenAI-style error body;
- ``"malformed"``: HTTP 200 whose body is not JSON;
- ``"empty"``: HTTP 200 with a well-formed body and no choices;
- ``"drop"``: the connection is closed without an answer (the client sees it at once);
- ``"timeout"``: no answer ever comes (the request is held until the server stops), so the client's own
  timeout ends it, however long that timeout is and however busy the machine: the fault does not depend on
  a slow answer losing a race against the clock. ``decide`` is not asked for either.

Every request body is kept in ``server.requests`` (and each outcome in ``server.log``) for assertions.

It can also behave as the stock llama-cpp-python server does (``llama_cpp=True``): it refuses assistant
messages with ``content: null`` and tool messages whose content is a list (HTTP 500, "validation errors"),
answers a ``tool_choice`` it does not support (``refuse_tool_choice``, e.g. ``("required",)``) with its bare
HTTP 500, puts a legacy ``function_call`` beside ``tool_calls``, and with ``context_tokens=N`` answers a
prompt over N tokens (4 characters a token) with its HTTP 400 "maximum context length" error. ``models``
is the answer to ``GET /v1/models`` (vLLM's carries ``max_model_len``).

    with OpenAIStubServer(decide) as server:
        base_url = server.base_url   # "http://127.0.0.1:PORT/v1"
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from agentworld.plugins.agents.common import chars_to_tokens
from agentworld.plugins.agents.fakes import chat_completion_payload, request_chars

Decide = Callable[[dict[str, Any]], "tuple[str, dict[str, Any]] | None"]
FAULTS = ("500", "malformed", "empty", "drop", "timeout")


class OpenAIStubServer:
    def __init__(self, decide: Decide, *, thought: str | None = None, llama_cpp: bool = False,
                 refuse_tool_choice: tuple[str, ...] = (), context_tokens: int | None = None,
                 models: dict[str, Any] | None = None):
        self.decide = decide
        self.llama_cpp = llama_cpp
        self.refuse_tool_choice = refuse_tool_choice
        self.context_tokens = context_tokens
        self.models = models  # the answer to GET /v1/models (None: 404, as some servers)
        self.thought = thought  # text sent beside each tool call (models often explain their move)
        self.faults: deque[str] = deque()
        self.requests: list[dict[str, Any]] = []
        self.log: list[str] = []  # "ok" or the fault served, per request
        self._lock = threading.Lock()
        self._stopping = threading.Event()  # releases the requests held by "timeout" faults
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _next_fault(self) -> str | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path.rstrip("/").endswith("/models") and server.models is not None:
                    self._send(200, json.dumps(server.models).encode())
                else:
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                    return
                body = json.loads(raw)
                fault = server._next_fault()
                with server._lock:
                    server.requests.append(body)
                    server.log.append(fault or "ok")
                refusal = server._refusal(body)
                if refusal is not None:
                    with server._lock:
                        server.log[-1] = refusal[0]
                    self._send(refusal[1], json.dumps(refusal[2]).encode())
                    return
                if fault == "500":
                    self._send(500, json.dumps({"error": {"message": "stub: internal error", "type": "server_error"}}).encode())
                    return
                if fault == "malformed":
                    self._send(200, b'{"id": "broken", "choices": [{"message": ')
                    return
                if fault == "empty":
                    self._send(200, json.dumps({"id": "empty", "object": "chat.completion", "created": 0,
                                                "model": body.get("model", "stub"), "choices": []}).encode())
                    return
                if fault in ("drop", "timeout"):
                    # No answer, and the policy is not asked: a stateful policy must be asked only for answers
                    # the client will read. A held request waits for the server to stop, not for a clock.
                    if fault == "timeout":
                        server._stopping.wait()
                    self.close_connection = True
                    return
                payload = chat_completion_payload(server.decide(body), model=body.get("model", "stub"),
                                                  prompt_chars=request_chars(body))
                message = payload["choices"][0]["message"]
                if server.thought and message.get("tool_calls"):
                    message["content"] = server.thought
                if server.llama_cpp and message.get("tool_calls"):  # its legacy field beside tool_calls
                    call = message["tool_calls"][0]["function"]
                    message["function_call"] = {"name": call["name"] + ":", "arguments": call["arguments"]}
                self._send(200, json.dumps(payload).encode())

        return Handler

    def _refusal(self, body: dict[str, Any]) -> tuple[str, int, dict[str, Any]] | None:
        """(log entry, status, error body) when a llama-cpp-python-like server would refuse the request."""
        if self.llama_cpp:
            for m in body.get("messages", []):
                if (m.get("role") == "assistant" and m.get("content") is None) or \
                        (m.get("role") == "tool" and not isinstance(m.get("content"), str)):
                    return "invalid_message", 500, {"error": {"message": "2 validation errors for ...",
                                                              "type": "internal_server_error"}}
        if body.get("tool_choice") in self.refuse_tool_choice:
            # chatml-function-calling: `assert tool_choice == "auto"` fails; the message is empty
            return f"refused_tool_choice_{body['tool_choice']}", 500, {
                "error": {"message": "", "type": "internal_server_error", "param": None, "code": None}}
        if self.context_tokens is not None:
            prompt = chars_to_tokens(request_chars(body) + len(json.dumps(body.get("tools") or [])))
            completion = body.get("max_tokens") or 0
            if prompt + completion > self.context_tokens:
                return "context_length", 400, {"error": {
                    "message": f"This model's maximum context length is {self.context_tokens} tokens. However, "
                               f"you requested {prompt + completion} tokens ({prompt} in the messages, "
                               f"{completion} in the completion). Please reduce the length of the messages or "
                               f"completion.", "type": "invalid_request_error", "param": "messages",
                    "code": "context_length_exceeded"}}
        return None

    def start(self) -> "OpenAIStubServer":
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "OpenAIStubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
