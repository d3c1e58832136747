"""Protection of the MCP server's HTTP layer, so that a server can be exposed on purpose.

Three pieces, all configured by one :class:`HttpLimits` (documented in docs/mcp.md):

- :func:`guarded_protocol`: uvicorn's HTTP protocol (httptools when installed, else h11) with a **header
  timeout** (a client must send a request's headers within ``header_timeout`` seconds of connecting or of
  its previous response: a slowloris client that dribbles bytes is cut off), uvicorn's **idle timeout**
  (keep-alive), and a cap on **open connections** (a connection over the cap is closed at once, before it
  costs anything).
- :class:`HttpGuard`: an ASGI middleware in front of everything that reads each request body (within
  ``body_timeout`` and ``max_body_bytes``) and answers malformed protocol input with a 4xx JSON-RPC
  error instead of letting it reach the MCP SDK, which answers invalid UTF-8 and deep nesting with
  HTTP 500 and a traceback logged on the episode's event loop: bodies that are not UTF-8, not JSON,
  nested deeper than ``max_json_depth``, or holding an unpaired surrogate escape (``"\\ud800"`` parses
  but cannot be written to the trajectory).
- caps on **MCP sessions**: in total (``max_sessions``, the SDK's own limit, 503) and per seat
  (``max_sessions_per_seat``, 429, enforced by SeatAuth), and an idle timeout after which the SDK closes
  a session nobody uses (``session_idle_timeout``).

The Host and Origin checks (DNS rebinding) are the SDK's TransportSecuritySettings; see
:func:`transport_security`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Iterable

from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("agentworld.mcp")

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class HttpLimits:
    """Timeouts and caps of the MCP server's HTTP layer (``agentworld serve`` flags of the same names)."""

    header_timeout: float = 10.0  # seconds for a request's headers to arrive (slowloris)
    idle_timeout: float = 5.0  # seconds a keep-alive connection may sit idle between requests
    body_timeout: float = 30.0  # seconds for a request's body to arrive
    max_connections: int | None = None  # open TCP connections; None: 16 + 8 per seat
    max_sessions: int | None = None  # open MCP sessions in total; None: max_sessions_per_seat per seat
    max_sessions_per_seat: int = 4  # open MCP sessions of one seat (a client needs one; reconnects need two)
    session_idle_timeout: float = 600.0  # an MCP session with no request for this long is closed
    max_body_bytes: int = 4 * 1024 * 1024  # a tool call is a few hundred bytes; a 1 MB argument still parses
    max_json_depth: int = 64  # a tool call nests 4 deep

    def connections_for(self, seats: int) -> int:
        return self.max_connections if self.max_connections is not None else 16 + 8 * max(1, seats)

    def sessions_for(self, seats: int) -> int:
        return self.max_sessions if self.max_sessions is not None else self.max_sessions_per_seat * max(1, seats)

    def check(self) -> "HttpLimits":
        for name in ("header_timeout", "idle_timeout", "body_timeout", "session_idle_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        for name in ("max_connections", "max_sessions", "max_sessions_per_seat", "max_body_bytes", "max_json_depth"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1")
        return self


# ---------------------------------------------------------------------------------------------------
# The Host check
# ---------------------------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(host: str, allow_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """Host/Origin checks for a server bound to ``host``: loopback names always, plus ``allow_hosts`` (the
    names clients use to reach it: ``example.org`` allows any port, ``example.org:8000`` that port only).

    A server on another interface must name its hosts: with no list the SDK would turn the checks off, and
    any web page a player opens could then reach the server through DNS rebinding."""
    allowed = [h.strip() for h in allow_hosts if h.strip()]
    if not is_loopback(host) and not allowed:
        raise ValueError(f"--host {host} listens beyond this machine: give --allow-host NAME (repeatable) with "
                         f"each host name or address clients use to reach it, e.g. --allow-host "
                         f"{_example_name(host)}; requests with any other Host header are refused")
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    for name in allowed:
        with_port = name.rsplit(":", 1)[-1].isdigit() and not name.endswith("]")
        hosts += [name] if with_port else [name, f"{name}:*"]
        origins += [f"http://{name}", f"https://{name}"] if with_port else [f"http://{name}:*", f"https://{name}:*",
                                                                             f"http://{name}", f"https://{name}"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def _example_name(host: str) -> str:
    return "myhost.example.org" if host in ("0.0.0.0", "::") else host


def public_host(host: str, allow_hosts: Iterable[str] = ()) -> str:
    """The host name to publish in URLs (the seats file): the first allowed name for a wildcard bind."""
    names = [h.strip() for h in allow_hosts if h.strip()]
    if host in ("0.0.0.0", "::", "") and names:
        return names[0].rsplit(":", 1)[0] if names[0].rsplit(":", 1)[-1].isdigit() else names[0]
    return host


# ---------------------------------------------------------------------------------------------------
# Connections: header timeout and a cap
# ---------------------------------------------------------------------------------------------------
class _Guarded:
    """The guard of a uvicorn HTTP protocol (mixed in before it): the connection cap and the header timer."""

    limits: HttpLimits = HttpLimits()
    max_connections: int = 64

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._header_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.max_connections:  # type: ignore[attr-defined]
            log.warning("refusing a connection: %d open (max_connections %d)", len(self.connections) - 1,  # type: ignore[attr-defined]
                        self.max_connections)
            transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
                            b"connection: close\r\ncontent-length: 29\r\n\r\ntoo many connections; retry\n")
            transport.close()
            return
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.limits.header_timeout, self._header_timeout)  # type: ignore[attr-defined]

    def _cancel_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():  # type: ignore[attr-defined]  # no whole request line and headers in time
            self.transport.close()  # type: ignore[attr-defined]

    def _serving(self) -> bool:
        cycle = self.cycle  # type: ignore[attr-defined]
        return cycle is not None and not cycle.response_complete

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        # the next request's headers are due within header_timeout too (unless a pipelined one already runs)
        if not self.transport.is_closing() and not self._serving():  # type: ignore[attr-defined]
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)  # type: ignore[misc]


class HeldHeaders:
    """The connection's transport as one response cycle sees it: the cycle's first write (the status line and
    headers) is held and goes out with its next write (the body), so a response that is ready at once leaves
    in one write, one TCP segment and one wake-up of the client instead of two (uvicorn writes the headers
    when the app sends ``http.response.start``). Headers whose body is not written in the same pass of the
    event loop (an SSE stream) go out at the end of that pass. Everything else is the transport's."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        if self._first:
            self._first = False
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._transport.write(data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _hold_headers(protocol: Any) -> None:
    """Give the protocol's newest response cycle a :class:`HeldHeaders` transport (once)."""
    cycle = protocol.cycle
    if cycle is not None and not isinstance(cycle.transport, HeldHeaders):
        cycle.transport = HeldHeaders(cycle.transport, protocol.loop)


class _GuardedH11(_Guarded, H11Protocol):
    def handle_events(self) -> None:
        super().handle_events()
        if self._serving():
            self._cancel_header_timer()  # the headers are in: the request is the app's business now
            _hold_headers(self)


def _guarded_httptools() -> type | None:
    """The guard over uvicorn's httptools protocol (a C parser: about 0.4 ms less CPU per MCP call than h11),
    or None when httptools is not installed."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    class _GuardedHttpTools(_Guarded, HttpToolsProtocol):
        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._cancel_header_timer()  # the headers are in: the request is the app's business now
            _hold_headers(self)

    return _GuardedHttpTools


def guarded_protocol(limits: HttpLimits, seats: int, parser: str = "auto") -> type:
    """uvicorn's ``http=`` protocol class enforcing ``limits`` for a server with ``seats`` seats: over
    httptools when installed (``parser="auto"``), else (or with ``parser="h11"``) over h11."""
    base = _guarded_httptools() if parser in ("auto", "httptools") else None
    if base is None and parser == "httptools":
        raise ValueError("httptools is not installed: pip install httptools, or use the h11 parser")
    return type("GuardedHttpProtocol", (base or _GuardedH11,), {"limits": limits,
                                                                "max_connections": limits.connections_for(seats)})


# ---------------------------------------------------------------------------------------------------
# Requests: malformed protocol input answered 4xx
# ---------------------------------------------------------------------------------------------------
class HttpGuard:
    """ASGI middleware: reads each POST body within the limits and refuses what the MCP SDK cannot parse
    (not UTF-8, not JSON, nested too deep) with HTTP 400 and a JSON-RPC parse error, before it is parsed
    on the episode's loop. Everything else passes through unchanged (the body is replayed)."""

    def __init__(self, app: Any, limits: HttpLimits):
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.limits.body_timeout):  # no task per request, as wait_for makes
                body = await self._read_body(receive)
        except TimeoutError:
            await _reply(send, 408, -32600, f"the request body did not arrive within {self.limits.body_timeout:g} s")
            return
        except _TooLarge:
            await _reply(send, 413, -32600, f"the request body is over {self.limits.max_body_bytes:,} bytes")
            return
        except _Disconnected:
            return
        problem = self._malformed(body)
        if problem is not None:
            log.info("refused a malformed request from %s: %s", _client(scope), problem)
            await _reply(send, 400, -32700, problem)
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect message, when it comes

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Any) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _malformed(self, body: bytes) -> str | None:
        if not body:
            return None  # the SDK answers an empty body itself (400)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the request body is not UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start})"
        try:
            value = json.loads(text)
        except RecursionError:  # deeper than the interpreter's recursion limit allows to parse
            return f"the JSON is nested deeper than {self.limits.max_json_depth} levels"
        except ValueError as exc:
            return f"the request body is not JSON ({str(exc)[:80]})"
        if _too_deep(value, self.limits.max_json_depth):
            return f"the JSON is nested deeper than {self.limits.max_json_depth} levels"
        if _SURROGATE_ESCAPE.search(text):
            try:  # an unpaired \ud800 escape parses, but is no character: nothing downstream could write it
                json.dumps(value, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                return "the JSON holds an unpaired surrogate escape (such as \\ud800): not valid Unicode"
        return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _too_deep(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests deeper than ``limit`` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


def _client(scope: dict) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def _reply(send: Any, status: int, code: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
