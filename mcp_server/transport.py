"""Streamable HTTP answers chosen when the answer comes: one JSON body if it comes soon, else an SSE stream.

The MCP spec lets the server answer each POSTed request either with one ``application/json`` body or with a
``text/event-stream`` (the client must accept both). The SDK fixes the choice per server: SSE (its default)
costs a stream, its tasks and pings on the server, and the Python SDK's client closes the stream once it
has the result before the server ends it, so every later request opens a new TCP connection; JSON cannot
carry progress notifications or keep-alive pings, so a client with a read timeout may give up on a call
that waits long for its turn (docs/mcp.md, "Request timeouts").

:class:`AnswerWhenReady` decides per request: a request whose response is the first message the server
sends for it, within ``stream_after`` seconds, is answered as one JSON body; otherwise (a notification
for it comes first, or nothing has come by then) the answer becomes an SSE stream at that moment and
carries the notifications, the SDK's pings and the response from then on. With ``stream_after`` equal to
the progress interval a client misses nothing: the first progress notification of a waiting call is due
when the stream opens. Initialize, notifications, anything malformed and servers with an event store
(resumable streams) and servers set to JSON responses take the SDK's own path unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
from http import HTTPStatus
from typing import Any

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE, MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_ID_HEADER, REQUEST_STREAM_BUFFER_SIZE, EventMessage,
    StreamableHTTPServerTransport)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from mcp.types import DEFAULT_NEGOTIATED_VERSION, JSONRPCError, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

_STREAM = object()  # put in a request's stream when stream_after has passed with nothing for it
_GONE = object()  # ... when its client disconnected first


class AnswerWhenReady(StreamableHTTPServerTransport):
    """The SDK's transport, answering a session's requests as JSON when ready within ``stream_after``
    seconds and as an SSE stream otherwise (see the module docstring)."""

    stream_after: float = 5.0

    async def _handle_post_request(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
        message = await self._plain_request(request) if self.stream_after > 0 else None
        if message is None:
            await super()._handle_post_request(scope, request, receive, send)
        else:
            await self._answer(scope, request, receive, send, message)

    async def _plain_request(self, request: Request) -> JSONRPCMessage | None:
        """The POSTed JSON-RPC request when it is one the SDK would dispatch as is (a request, not initialize,
        of this session, in a protocol version it speaks, from a client that accepts JSON and SSE); None
        otherwise: the SDK's own handling then answers it (and every error) exactly as before."""
        if self._read_stream_writer is None or self._event_store is not None or self.is_json_response_enabled:
            return None
        has_json, has_sse = self._check_accept_headers(request)
        headers = request.headers
        if not (has_json and has_sse and self._check_content_type(request)) or (
                self.mcp_session_id and headers.get(MCP_SESSION_ID_HEADER) != self.mcp_session_id) or (
                headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION) not in SUPPORTED_PROTOCOL_VERSIONS):
            return None
        try:  # the body is cached on the request: the SDK's path reads the same bytes
            message = JSONRPCMessage.model_validate_json(await request.body())
        except ValidationError:
            return None
        root = message.root
        return message if isinstance(root, JSONRPCRequest) and root.method != "initialize" else None

    async def _answer(self, scope: Scope, request: Request, receive: Receive, send: Send,
                      message: JSONRPCMessage) -> None:
        assert self._read_stream_writer is not None
        request_id = str(message.root.id)
        to_request, from_server = anyio.create_memory_object_stream[Any](REQUEST_STREAM_BUFFER_SIZE)
        self._request_streams[request_id] = (to_request, from_server)
        waiting = True

        def signal(what: object) -> None:  # a marker for the wait below (never for the stream's later reader)
            if waiting:
                with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    to_request.send_nowait(what)

        async def watch_disconnect() -> None:  # the SSE response listens itself; a JSON one must too
            while (await receive())["type"] != "http.disconnect":
                pass
            signal(_GONE)

        timer = asyncio.get_running_loop().call_later(self.stream_after, signal, _STREAM)
        watcher = asyncio.ensure_future(watch_disconnect())
        streaming = False
        try:
            protocol = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
            await self._read_stream_writer.send(self._create_session_message(message, request, request_id, protocol))
            try:
                first = await from_server.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):  # the session closed first (as the SDK answers)
                first = None
            waiting = False
            timer.cancel()
            watcher.cancel()
            if first is _GONE:
                return
            if first is None:
                await self._create_error_response("Error processing request: No response received",
                                                  HTTPStatus.INTERNAL_SERVER_ERROR)(scope, receive, send)
                return
            if isinstance(first, EventMessage) and isinstance(first.message.root, JSONRPCResponse | JSONRPCError):
                await self._create_json_response(first.message)(scope, receive, send)
                return
            streaming = True
            await self._stream(scope, receive, send, request_id, from_server, first)
        finally:
            waiting = False
            timer.cancel()
            watcher.cancel()
            if not streaming:
                await self._clean_up_memory_streams(request_id)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, request_id: str, from_server: Any,
                      first: object) -> None:
        """Answer as the SDK's SSE stream from now on: ``first`` (a notification, or the stream marker), then
        every message for the request until its response."""
        sse_writer, sse_reader = anyio.create_memory_object_stream[dict[str, Any]](0)
        self._sse_stream_writers[request_id] = sse_writer

        async def forward() -> None:
            try:
                async with sse_writer, from_server:
                    pending = [first]
                    while True:
                        item = pending.pop() if pending else await from_server.receive()
                        if not isinstance(item, EventMessage):
                            continue  # a marker that arrived together with the first item
                        await sse_writer.send(self._create_event_data(item))
                        if isinstance(item.message.root, JSONRPCResponse | JSONRPCError):
                            break
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass  # the client went away, or the session closed
            finally:
                self._sse_stream_writers.pop(request_id, None)
                await self._clean_up_memory_streams(request_id)

        headers = {"Cache-Control": "no-cache, no-transform", "Connection": "keep-alive", "Content-Type": CONTENT_TYPE_SSE,
                   **({MCP_SESSION_ID_HEADER: self.mcp_session_id} if self.mcp_session_id else {})}
        try:
            await EventSourceResponse(content=sse_reader, data_sender_callable=forward, headers=headers)(
                scope, receive, send)
        finally:
            await sse_reader.aclose()


class AnswerWhenReadySessions(StreamableHTTPSessionManager):
    """The SDK's session manager, giving each new session an :class:`AnswerWhenReady` transport."""

    def __init__(self, *args: Any, stream_after: float, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.stream_after = stream_after

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:  # the same transport, answering when ready (its state is the SDK's)
            transport.__class__ = AnswerWhenReady
            transport.stream_after = self.stream_after  # type: ignore[attr-defined]
        return transport


def answer_when_ready(mcp: FastMCP, stream_after: float) -> FastMCP:
    """Make ``mcp.streamable_http_app()`` answer when ready (call before it). ``stream_after`` 0: always SSE."""
    s = mcp.settings
    mcp._session_manager = AnswerWhenReadySessions(
        app=mcp._mcp_server, event_store=mcp._event_store, retry_interval=mcp._retry_interval,
        json_response=s.json_response, stateless=s.stateless_http, security_settings=s.transport_security,
        max_request_body_size=s.max_request_body_size, session_idle_timeout=s.session_idle_timeout,
        max_sessions=s.max_sessions, stream_after=stream_after)
    return mcp
