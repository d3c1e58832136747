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

A ``tools/call`` of an initialized session is also *handled* here rather than passed through the SDK's
session and server loops (see "tools/call answered here" below): the same handler, request context and
response, two memory-stream hops, a task and a second validation fewer per call.

**The one module of agentworld that reaches beyond the MCP SDK's public API.** On the SDK 1.x, the transport
above subclasses the SDK's streamable HTTP transport and session manager and uses their internals, and the
server's lowlevel handle (its version and request context) is read here (:func:`set_server_version`,
:func:`request_context`); on the SDK 2.x nothing of that is needed (the server runs on 2.x's public server API
and the SDK's own transport answers: ``mcp_server/app_v2.py``). On both, the session manager's live sessions are
read here (:func:`live_sessions`). Internals change without notice, so this module refuses, at import, an SDK
outside the versions it was written and tested against (``KNOWN_SDK`` of ``core/play/mcp_sdk.py``: 1.x from
1.30, 2.x from 2.2), naming the installed version and the fix, rather than failing somewhere inside a call;
``tests/test_public_apis.py`` fails loudly on such an SDK. Every other module of ``mcp_server`` uses the SDK's
public API.
"""

from __future__ import annotations

import asyncio
import contextlib
from http import HTTPStatus
from typing import Any

# the gate: refuses, at import, an SDK agentworld does not know, naming the installed version and the fix
from ..core.play.mcp_sdk import KNOWN_SDK, SDK_MAJOR, UnknownSdk, check_sdk, sdk_version  # noqa: F401


def live_sessions(app: Any) -> set[str] | None:
    """Session ids the SDK's session manager still serves (None if this SDK version hides them). ``app``: the
    FastMCP (1.x) or low-level ``Server`` (2.x) whose ``streamable_http_app()`` was made."""
    manager = getattr(app, "_session_manager", None)
    instances = getattr(manager, "_server_instances", None)
    return set(instances) if isinstance(instances, dict) else None


def path_first(app: Any, manager: Any, path: str) -> Any:
    """``app`` (the SDK's Starlette app) with the requests for the MCP path itself handed to its session
    manager (its public ``handle_request``) at once, as its route would: not through Starlette's error and
    exception middleware, router and route (four ASGI layers per request; uvicorn answers an exception 500
    just as the error middleware would). Every other request (custom routes, a trailing slash) and the
    lifespan (which runs the session manager) go to the Starlette app unchanged."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == path:
            await manager.handle_request(scope, receive, send)
        else:
            await app(scope, receive, send)

    return asgi


if SDK_MAJOR == 1:  # the rest: the answer-when-ready transport on the SDK 1.x's internals (mcp_server/app_v1.py)
    import anyio
    from mcp import types
    from mcp.server.fastmcp import FastMCP
    from mcp.server.lowlevel.server import Server, request_ctx
    from mcp.server.streamable_http import (
        CONTENT_TYPE_SSE, MCP_PROTOCOL_VERSION_HEADER, MCP_SESSION_ID_HEADER, REQUEST_STREAM_BUFFER_SIZE, EventMessage,
        StreamableHTTPServerTransport)
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.shared.context import RequestContext
    from mcp.shared.exceptions import McpError
    from mcp.shared.message import ServerMessageMetadata, SessionMessage
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
    from mcp.types import (
        DEFAULT_NEGOTIATED_VERSION, ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest,
        JSONRPCResponse)
    from pydantic import ValidationError
    from pydantic_core import to_json
    from sse_starlette import EventSourceResponse
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

    _STREAM = object()  # put in a request's stream when stream_after has passed with nothing for it
    _GONE = object()  # ... when its client disconnected first


    class AnswerWhenReady(StreamableHTTPServerTransport):
        """The SDK's transport, answering a session's requests as JSON when ready within ``stream_after``
        seconds and as an SSE stream otherwise (see the module docstring)."""

        stream_after: float = 5.0
        direct: Server | None = None  # the server whose tools/call handler this transport calls itself
        _initialized = False  # the client has sent notifications/initialized (the SDK session's own check)
        _direct_calls: dict[str, asyncio.Task] | None = None

        async def _handle_post_request(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
            message = await self._plain_request(request) if self.stream_after > 0 else None
            if message is None:
                await self._notice(request)
                await super()._handle_post_request(scope, request, receive, send)
            else:
                await self._answer(scope, request, receive, send, message)

        async def _notice(self, request: Request) -> None:
            """What a tools/call answered directly needs from the notifications the SDK's session handles: that
            the session is initialized, and a client's cancellation of one of those calls."""
            if self.direct is None or request.method != "POST":
                return
            try:
                root = JSONRPCMessage.model_validate_json(await request.body()).root
            except ValidationError:
                return
            if not isinstance(root, JSONRPCNotification):
                return
            if root.method == "notifications/initialized":
                self._initialized = True
            elif root.method == "notifications/cancelled" and self._direct_calls:
                task = self._direct_calls.get(str((root.params or {}).get("requestId")))
                if task is not None:
                    task.cancel()

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
                    headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
                    not in SUPPORTED_PROTOCOL_VERSIONS):
                return None
            body = await request.body()  # cached on the request: the SDK's path reads the same bytes
            try:  # a request, as nearly every POST is, without trying the message union member by member
                message = JSONRPCMessage(JSONRPCRequest.model_validate_json(body))
            except ValidationError:
                try:
                    message = JSONRPCMessage.model_validate_json(body)
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
                call = self._direct_request(message)
                if call is not None:
                    self._call_directly(call, message.root, request, to_request)
                else:
                    protocol = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
                    await self._read_stream_writer.send(self._create_session_message(message, request, request_id,
                                                                                     protocol))
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
                if isinstance(first, _Reply):  # a tools/call answered here: its envelope serialised once, sent as is
                    await self._send_json(send, first.body())
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

        # -- tools/call answered here --------------------------------------------------------------------
        # The SDK passes a request from the transport to its session (a memory stream and a task), which validates
        # it again, to the server's loop (another stream, a task per request), and the response back the same way
        # through the transport's message router: a third of the CPU of a call to a bare server, and all of it on
        # the chain of a turn-based episode. A tools/call of an initialized session is handled here instead: the
        # same handler (the server's registered tools/call handler: validation, the tool, its result or error)
        # in the same request context (request id, _meta, the HTTP request), the response built as the SDK builds
        # it; its notifications (progress) go out through the session's own router; a notifications/cancelled
        # from the client cancels it and answers as the SDK does. Everything else takes the SDK's path.
        def _direct_request(self, message: JSONRPCMessage) -> types.CallToolRequest | None:
            root = message.root
            if self.direct is None or not self._initialized or root.method != "tools/call" or \
                    types.CallToolRequest not in self.direct.request_handlers:
                return None
            try:  # the method is known: not the union of every client request (0.13 ms), as the SDK's session does
                return types.CallToolRequest.model_validate({"method": root.method, "params": root.params})
            except ValidationError:
                return None  # the SDK's session answers it (invalid params)

        def _call_directly(self, call: types.CallToolRequest, root: JSONRPCRequest, http: Request,
                           to_request: Any) -> None:
            if self._direct_calls is None:
                self._direct_calls = {}
            key = str(root.id)
            task = asyncio.ensure_future(self._run_call(call, root.id, http, to_request))
            self._direct_calls[key] = task
            task.add_done_callback(lambda t: self._direct_calls.pop(key, None) if self._direct_calls and
                                   self._direct_calls.get(key) is t else None)

        async def _run_call(self, call: types.CallToolRequest, request_id: Any, http: Request, to_request: Any) -> None:
            assert self.direct is not None
            ctx = RequestContext(request_id, call.params.meta, _DirectSession(self._write_stream), None, request=http)
            token = request_ctx.set(ctx)
            try:
                response: Any = await self.direct.request_handlers[types.CallToolRequest](call)
            except McpError as err:
                response = err.error
            except asyncio.CancelledError:  # the client cancelled it (or the session closed)
                response = ErrorData(code=0, message="Request cancelled", data=None)
            except Exception as err:  # as the SDK's server answers a handler that raised
                response = ErrorData(code=0, message=str(err), data=None)
            finally:
                request_ctx.reset(token)
            reply: Any = _Reply(request_id, response)
            if isinstance(response, ErrorData):
                reply = EventMessage(JSONRPCMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=response)), None)
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await to_request.send(reply)

        async def _send_json(self, send: Send, body: bytes) -> None:
            """The response the SDK's ``_create_json_response`` makes (same status, headers and body), sent as two
            ASGI messages without a Starlette ``Response`` around them."""
            headers = [(b"content-type", b"application/json")]
            if self.mcp_session_id:
                headers.append((MCP_SESSION_ID_HEADER.lower().encode("latin-1"), self.mcp_session_id.encode("latin-1")))
            headers.append((b"content-length", str(len(body)).encode("latin-1")))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        @contextlib.asynccontextmanager
        async def connect(self) -> Any:
            async with super().connect() as streams:
                try:
                    yield streams
                finally:  # the session ends: its calls answered here end with it, as the SDK's would
                    for task in list((self._direct_calls or {}).values()):
                        task.cancel()

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
                            if isinstance(item, _Reply):
                                item = item.event()
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

            headers = {"Cache-Control": "no-cache, no-transform", "Connection": "keep-alive",
                       "Content-Type": CONTENT_TYPE_SSE,
                       **({MCP_SESSION_ID_HEADER: self.mcp_session_id} if self.mcp_session_id else {})}
            try:
                await EventSourceResponse(content=sse_reader, data_sender_callable=forward, headers=headers)(
                    scope, receive, send)
            finally:
                await sse_reader.aclose()


    class _Reply:
        """The result of a tools/call answered here, serialised when sent: as one JSON body in one pass (the
        bytes the SDK's two passes give: a dict, re-validated into a JSON-RPC message, dumped again), or as the
        SDK's event when the answer became an SSE stream."""

        __slots__ = ("request_id", "result")

        def __init__(self, request_id: Any, result: Any):
            self.request_id, self.result = request_id, result

        def body(self) -> bytes:
            return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (
                to_json(self.request_id), to_json(self.result, by_alias=True, exclude_none=True))

        def event(self) -> EventMessage:
            result = self.result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return EventMessage(JSONRPCMessage(JSONRPCResponse(jsonrpc="2.0", id=self.request_id, result=result)), None)


    class _DirectSession:
        """``ctx.session`` of a tools/call answered by :class:`AnswerWhenReady` itself: its notifications go to
        the session's router, as the SDK's ``ServerSession`` sends them (progress and log messages)."""

        def __init__(self, write_stream: Any):
            self._write_stream = write_stream
            self.client_params = None

        async def send_notification(self, notification: types.ServerNotification,
                                    related_request_id: Any = None) -> None:
            message = JSONRPCNotification(jsonrpc="2.0", **notification.model_dump(by_alias=True, mode="json",
                                                                                    exclude_none=True))
            await self._write_stream.send(SessionMessage(
                message=JSONRPCMessage(message),
                metadata=ServerMessageMetadata(related_request_id=related_request_id) if related_request_id else None))

        async def send_progress_notification(self, progress_token: str | int, progress: float,
                                             total: float | None = None,
                                             message: str | None = None, related_request_id: Any = None) -> None:
            await self.send_notification(types.ServerNotification(types.ProgressNotification(
                params=types.ProgressNotificationParams(progressToken=progress_token, progress=progress, total=total,
                                                        message=message))), related_request_id)

        async def send_log_message(self, level: types.LoggingLevel, data: Any, logger: str | None = None,
                                   related_request_id: Any = None) -> None:
            params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
            await self.send_notification(types.ServerNotification(types.LoggingMessageNotification(params=params)),
                                         related_request_id)


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
                transport.direct = self.app  # type: ignore[attr-defined]
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


    def mcp_path_first(mcp: FastMCP) -> Any:
        """``mcp.streamable_http_app()`` with the MCP path's requests handed to its session manager at once
        (:func:`path_first`), unless the SDK's OAuth middleware sits on that route."""
        app = mcp.streamable_http_app()
        if mcp.settings.auth or getattr(mcp, "_token_verifier", None):
            return app  # the SDK's OAuth middleware sits on that route: keep it
        return path_first(app, mcp.session_manager, mcp.settings.streamable_http_path)


    # -- the server's own internals ----------------------------------------------------------------------------
    def set_server_version(mcp: FastMCP, version: str) -> None:
        """The server's version in ``serverInfo`` (FastMCP takes none; without it the SDK reads mcp's package
        metadata for every new session: about 6 ms each, 0.6 s of the episode's loop for 100 seats)."""
        mcp._mcp_server.version = version


    def request_context(mcp: FastMCP) -> RequestContext | None:
        """The request context of the request being handled, or None outside one (FastMCP's ``get_context``
        builds a pydantic model per call around the same thing)."""
        try:
            return mcp._mcp_server.request_context
        except LookupError:
            return None
