"""What our side does so that real OpenAI-compatible servers (llama.cpp, vLLM, Ollama) work as they are.

Every framework's OpenAI client (the ``openai`` SDK under the plain agent, AutoGen, langchain-openai and
CAMEL) is given an ``httpx`` client whose transport is :class:`CompatTransport`. It sees each Chat
Completions request and answer as JSON, whatever framework built it, so the differences between servers
are handled in this one place:

- **Requests** to servers other than the OpenAI API: an assistant message with ``content: null`` gets ``""``
  and a tool message whose content is a list of text parts gets the joined text (llama-cpp-python's request
  schema refuses both with HTTP 500; AutoGen and langchain send them from the second turn on); a token limit
  sent only as ``max_completion_tokens`` (langchain-openai's name) is sent as ``max_tokens`` too, the name
  llama-cpp-python and older servers read.
- **Answers**: the legacy ``function_call`` a server puts beside ``tool_calls`` is dropped (AutoGen's client
  refuses any answer that carries one).
- **tool_choice fallback**: when the server refuses the ``tool_choice`` asked for (llama-cpp-python's
  ``chatml-function-calling`` handler answers ``"required"`` with HTTP 500; other servers say 400), the
  request is sent once more with the next weaker value (``required`` -> ``auto``; ``auto`` and ``none`` ->
  left out). When that works, the fallback is remembered for the server and model for the rest of the
  process and logged once as a warning (the run's log keeps it).
- **Context length**: an answer saying the prompt exceeds the model's context window makes the transport
  drop the oldest whole turns of this request (a summary line says so) and send it once more; the team is
  told (``on_overflow``) so that the agent's history budget shrinks and later turns fold their history
  themselves. A second overflow is returned as it is: the turn's infrastructure error.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

log = logging.getLogger("agentworld.frameworks")

# The next weaker tool_choice to try when a server refuses one; None: leave tool_choice out.
FALLBACK: dict[str, str | None] = {"required": "auto", "auto": None, "none": None}

# What servers say when a prompt does not fit (llama-cpp-python, llama.cpp, vLLM, OpenAI, Ollama, TGI).
_OVERFLOW = re.compile(r"context (length|window|size)|maximum context|exceeds? (the )?(model'?s? )?(context|max)|"
                       r"too many tokens|prompt is too long|input (is )?too long|context_length_exceeded", re.I)
_LIMIT = re.compile(r"(?:context (?:length|window|size)(?: of| is)?|maximum context length is)\s*(\d{3,7})", re.I)
_REQUESTED = re.compile(r"(?:requested|requested tokens|you requested|resulted in)\D{0,12}(\d{3,7})", re.I)


def is_context_overflow(status: int, text: str) -> bool:
    return status in (400, 413, 422, 500) and bool(_OVERFLOW.search(text or ""))


def stated_window(text: str) -> int | None:
    """The context window a server's overflow message names, e.g. "maximum context length is 4096"."""
    m = _LIMIT.search(text or "")
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------- what we learn about servers


@dataclass
class ServerFacts:
    """What one (base URL, model) turned out to accept; shared by every client of the process."""

    tool_choice: dict[str, str | None] = field(default_factory=dict)  # asked -> what is sent instead
    confirmed: set[str] = field(default_factory=set)  # tool_choice values that got a 200


_FACTS: dict[tuple[str, str], ServerFacts] = {}
_FACTS_LOCK = threading.Lock()


def server_facts(base_url: str, model: str) -> ServerFacts:
    with _FACTS_LOCK:
        return _FACTS.setdefault((base_url.rstrip("/"), model), ServerFacts())


def forget_server_facts() -> None:
    """For tests: start from nothing known."""
    with _FACTS_LOCK:
        _FACTS.clear()


# ---------------------------------------------------------------------- request and answer fixes


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def normalise_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request as every OpenAI-compatible server reads it (see the module docstring)."""
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant" and m.get("content") is None:
            m["content"] = ""
        elif m.get("role") == "tool" and not isinstance(m.get("content"), str):
            m["content"] = _text_of(m.get("content"))
    if "max_completion_tokens" in body and "max_tokens" not in body:
        body["max_tokens"] = body["max_completion_tokens"]
    return body


def normalise_answer(payload: dict[str, Any]) -> bool:
    """Drop a legacy ``function_call`` beside ``tool_calls``; True when something changed."""
    changed = False
    for choice in payload.get("choices") or []:
        msg = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(msg, dict) and "function_call" in msg and (msg.get("tool_calls") or msg["function_call"] is None):
            msg.pop("function_call")
            changed = True
    return changed


def drop_oldest_turns(messages: list[dict[str, Any]], fraction: float) -> tuple[list[dict[str, Any]], int]:
    """Keep the system messages and the newest whole turns (a turn starts at a user message) whose size is
    at most ``fraction`` of the turns' size now; the latest turn always stays. Returns (messages, dropped)."""
    n_head = next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), len(messages))
    head, rest = messages[:n_head], messages[n_head:]
    starts = [i for i, m in enumerate(rest) if m.get("role") == "user"] or [0]
    sizes = [len(json.dumps(m, default=str)) for m in rest]
    target = sum(sizes) * fraction
    keep_from = starts[-1]
    for s in reversed(starts[:-1]):  # grow the kept tail turn by turn while it fits
        if sum(sizes[s:]) > target:
            break
        keep_from = s
    if keep_from == 0:
        return messages, 0
    note = {"role": "user", "content": f"[History summary: {keep_from} earlier messages were removed to fit "
                                       f"the model's context window. Your current state is in the latest "
                                       f"observation.]"}
    return [*head, note, *rest[keep_from:]], keep_from


# ---------------------------------------------------------------------- the transport


Overflow = Callable[[int, int | None], None]  # (messages dropped, context window the server named) -> None


class CompatTransport(httpx.AsyncBaseTransport):
    """Wraps an httpx transport with the fixes above for Chat Completions requests (others pass through)."""

    def __init__(self, *, base_url: str, model: str, openai_api: bool, on_overflow: Overflow | None = None,
                 inner: httpx.AsyncBaseTransport | None = None):
        self.inner = inner or httpx.AsyncHTTPTransport()
        self.facts = server_facts(base_url or "https://api.openai.com/v1", model)
        self.base_url, self.model = base_url, model
        self.openai_api = openai_api  # the OpenAI API itself: requests are sent as the SDKs wrote them
        self.on_overflow = on_overflow

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.rstrip("/").endswith("/chat/completions"):
            return await self.inner.handle_async_request(request)
        try:
            body = json.loads(await request.aread() or b"{}")
        except ValueError:
            return await self.inner.handle_async_request(request)
        if not isinstance(body, dict):
            return await self.inner.handle_async_request(request)
        if not self.openai_api:
            normalise_request(body)
        asked = body.get("tool_choice")
        if isinstance(asked, str) and asked in self.facts.tool_choice:
            _set_tool_choice(body, self.facts.tool_choice[asked])
        response, text = await self._send(request, body)
        if response.status_code >= 400:
            response, text = await self._recover(request, body, response, text)
        if response.status_code == 200:
            sent = body.get("tool_choice")
            if isinstance(sent, str):
                self.facts.confirmed.add(sent)
            response = _fixed_answer(response, text)
        return response

    async def _send(self, request: httpx.Request, body: dict[str, Any]) -> tuple[httpx.Response, str]:
        content = json.dumps(body).encode()
        headers = [(k, v) for k, v in request.headers.raw if k.lower() not in (b"content-length", b"transfer-encoding")]
        headers.append((b"content-length", str(len(content)).encode()))
        fresh = httpx.Request(request.method, request.url, headers=headers, content=content,
                              extensions=request.extensions)
        response = await self.inner.handle_async_request(fresh)
        raw = await response.aread()
        await response.aclose()
        text = raw.decode("utf-8", "replace")
        return httpx.Response(response.status_code, headers=response.headers, content=raw,
                              request=request, extensions=response.extensions), text

    async def _recover(self, request: httpx.Request, body: dict[str, Any], response: httpx.Response,
                       text: str) -> tuple[httpx.Response, str]:
        """One more attempt after a refusal of tool_choice or a context overflow; else the answer as it is."""
        status = response.status_code
        if is_context_overflow(status, text):
            messages, dropped = drop_oldest_turns(list(body.get("messages") or []), _keep_fraction(text))
            if not dropped:
                return response, text
            log.warning("%s (%s): the prompt exceeds the model's context window; dropped the %d oldest "
                        "messages and asked once more", self.model, self.base_url, dropped)
            if self.on_overflow is not None:
                self.on_overflow(dropped, stated_window(text))
            return await self._send(request, {**body, "messages": messages})
        asked = body.get("tool_choice")
        if isinstance(asked, str) and asked in FALLBACK and self._refuses_tool_choice(status, text, asked):
            weaker = FALLBACK[asked]
            retry = dict(body)
            _set_tool_choice(retry, weaker)
            second, second_text = await self._send(request, retry)
            if second.status_code == 200:
                self.facts.tool_choice[asked] = weaker
                log.warning("%s (%s) refused tool_choice=%r (HTTP %d); using %s from now on "
                            "(set --tool-choice to choose)", self.model, self.base_url, asked, status,
                            f"tool_choice={weaker!r}" if weaker else "no tool_choice")
                body.clear()
                body.update(retry)
                return second, second_text
        return response, text

    def _refuses_tool_choice(self, status: int, text: str, asked: str) -> bool:
        if status not in (400, 422, 500, 501):
            return False
        if "tool_choice" in text or "tool choice" in text.lower():
            return True
        # llama-cpp-python answers "required" with a bare 500 (a failed assertion, no message): suspect
        # that value on such servers until it has worked once. Anything else must say what it refuses.
        return (status == 500 and asked == "required" and not self.openai_api
                and asked not in self.facts.confirmed)


def _set_tool_choice(body: dict[str, Any], value: str | None) -> None:
    if value is None:
        body.pop("tool_choice", None)
    else:
        body["tool_choice"] = value


def _keep_fraction(text: str) -> float:
    """How much of the history to keep: the share the server says fits, with a margin; else half."""
    limit, asked = stated_window(text), _REQUESTED.search(text or "")
    if limit and asked and int(asked.group(1)) > limit:
        return max(0.1, 0.8 * limit / int(asked.group(1)))
    return 0.5


def _fixed_answer(response: httpx.Response, text: str) -> httpx.Response:
    try:
        payload = json.loads(text)
    except ValueError:
        return response
    if not isinstance(payload, dict) or not normalise_answer(payload):
        return response
    content = json.dumps(payload).encode()
    headers = [(k, v) for k, v in response.headers.raw
               if k.lower() not in (b"content-length", b"content-encoding", b"transfer-encoding")]
    headers.append((b"content-length", str(len(content)).encode()))
    return httpx.Response(response.status_code, headers=headers, content=content, request=response.request,
                          extensions=response.extensions)


def compat_http_client(spec: Any, *, on_overflow: Overflow | None = None) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` every framework's OpenAI client is given for a real model (``spec`` is a
    ModelSpec); its timeout is the spec's request timeout."""
    transport = CompatTransport(base_url=spec.base_url or "https://api.openai.com/v1", model=spec.model,
                                openai_api=spec.provider == "openai" and not spec.base_url, on_overflow=on_overflow)
    return httpx.AsyncClient(transport=transport, timeout=spec.timeout)


# ---------------------------------------------------------------------- the server's context window


_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx", "n_ctx_train")
_WINDOWS: dict[tuple[str, str], int | None] = {}


def window_from_models(payload: Any, model: str) -> int | None:
    """The context window of ``model`` in a ``/v1/models`` answer: vLLM's ``max_model_len``, llama.cpp's
    ``meta.n_ctx``/``n_ctx_train``, ``context_length`` (OpenRouter, LM Studio); None when not offered."""
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        return None
    chosen = [e for e in entries if isinstance(e, dict) and e.get("id") == model] or \
             [e for e in entries if isinstance(e, dict)][:1]
    for entry in chosen:
        for where in (entry, entry.get("meta") or {}):
            for key in _WINDOW_KEYS:
                v = where.get(key) if isinstance(where, dict) else None
                if isinstance(v, int) and v > 0:
                    return v
    return None


async def discover_context_window(spec: Any, timeout: float = 5.0) -> int | None:
    """Ask ``GET {base_url}/models`` once per server and model; None when it does not say (or fails)."""
    if not spec.base_url:
        return None
    key = (spec.base_url.rstrip("/"), spec.model)
    if key not in _WINDOWS:
        try:
            headers = {}
            key_value = spec.api_key() if spec.key_variable() else ""
            if key_value and key_value != "none":
                headers["Authorization"] = f"Bearer {key_value}"
            async with httpx.AsyncClient(timeout=timeout) as http:
                resp = await http.get(f"{key[0]}/models", headers=headers)
            _WINDOWS[key] = window_from_models(resp.json(), spec.model) if resp.status_code == 200 else None
        except Exception:  # noqa: BLE001 - any failure means "not offered": the default budget applies
            _WINDOWS[key] = None
    return _WINDOWS[key]
