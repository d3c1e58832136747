"""The 13 game tools of one running episode, served over MCP (streamable HTTP on 127.0.0.1 by default).

- Tools are generated from ``core/tools.TOOLS``: same names, descriptions and input schemas
  (``ToolSpec.json_schema()``), registered as the SDK's low-level handlers so the schemas are exactly ours
  rather than re-derived from Python signatures.
- The MCP SDK 1.x or 2.x, whichever is installed: ``app_v1.py`` (FastMCP) and ``app_v2.py`` (2.x's low-level
  ``Server``) build the same server on each major's own server API and answer through this module's
  :class:`EpisodeMcpServer` (``answer_call``, ``answer_read``).
- Identity: each seat has a bearer token (``Authorization: Bearer <token>``). :class:`SeatAuth` refuses a
  request without a known token with HTTP 401, and an MCP session opened by one seat cannot be used with
  another seat's token (HTTP 403). A connection acts only as its seat's character.
- Turns: :class:`~agentworld.mcp_server.tracker.TurnTracker` makes an early call wait for the agent's turn and
  refuses a second call in one turn; the episode's gate executes and records every call.
- Every result of an external seat carries the outcome and the observation of the seat's next turn (the
  result is sent when that turn opens: the very text the in-process prompt shows, chat and notes
  included), or the episode's outcome once it is over, and ``isError`` for failures, so a client can
  simply call tools in a loop. A call whose client disconnected or cancelled before its turn never runs.
- Read-only resources (not tools, so the tool list stays the paper's 13): ``agentworld://brief``,
  ``agentworld://observation``, ``agentworld://turn``.

uvicorn runs in process, on the episode's own asyncio loop, so tool calls and the episode share state
without threads or locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from typing import Any, Iterable
from urllib.parse import parse_qs

import uvicorn

# first: the SDK's version check (mcp_sdk refuses an MCP SDK agentworld does not know, with the fix)
from ..core.play.mcp_sdk import SDK_MAJOR
from mcp import types  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402

from .. import __version__
from ..core.world.effects import ToolResult
from ..core.world.tools import CHAT_TOOLS, TOOL_NAMES, TOOLS
from .guard import HttpGuard, HttpLimits, guarded_protocol, public_host, transport_security
from .seats import Seat, make_seats, new_token
from .tracker import Flag, TurnTracker

if SDK_MAJOR >= 2:  # the same server on each major's own server API
    from .app_v2 import game_app
else:
    from .app_v1 import game_app

MCP_PATH = "/mcp"
MAX_WAIT_S = 240.0  # longest an early call waits for its turn by default (then: "call again")
SESSION_GRACE_S = 5.0  # after the linger, how long sessions still open get to end before the server stops
INSTRUCTIONS = ("AgentWorld: you play one character of a team in a turn-based 2D RPG world. Call exactly one tool "
                "per turn; a call made before your turn waits for it. Each result ends with your observation. "
                "Read agentworld://brief for your task and role.")
RESOURCES: dict[str, tuple[str, str, str]] = {  # uri -> (name, description, mime type)
    "agentworld://brief": ("brief", "Your task brief: objectives, your role and guideline, the rules.", "text/plain"),
    "agentworld://observation": ("observation", "What your character sees now (position, HP, inventory, nearby, "
                                                "chat). Read-only: it does not use your turn.", "text/plain"),
    "agentworld://turn": ("turn", "Whose turn it is (agent, username, round) and whether the episode is over.",
                          "application/json"),
}


def tool_definitions(names: Iterable[str] | None = None) -> list[types.Tool]:
    """The MCP tool definitions, derived from the one definition in core/world/tools.py."""
    return [types.Tool(name=n, description=TOOLS[n].description, inputSchema=TOOLS[n].json_schema())
            for n in (names or TOOL_NAMES)]


class SeatAuth:
    """ASGI middleware: bearer token -> seat. 401 without a known token; 403 when an MCP session opened by one
    seat is used with another seat's token; 429 when a seat that already holds ``max_sessions_per_seat`` open
    sessions asks for another (``live_sessions()`` gives the session ids the SDK still serves)."""

    def __init__(self, app: Any, tokens: dict[str, str], on_connect: Any = None, max_sessions_per_seat: int | None = None,
                 live_sessions: Any = None):
        self.app = app
        self.tokens = tokens  # token -> agent_id
        self.sessions: dict[str, str] = {}  # mcp-session-id -> agent_id
        self.on_connect = on_connect
        self.max_sessions_per_seat = max_sessions_per_seat
        self.live_sessions = live_sessions

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        raw = headers.get(b"authorization", b"").decode("latin-1").strip()
        scheme, _, token = raw.partition(" ")
        if not raw:
            await _deny(send, 401, "missing bearer token: send the header 'Authorization: Bearer <token>' with "
                                   "your seat's token (from the seats file written by `agentworld serve`)")
            return
        agent = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if agent is None:
            await _deny(send, 401, "unknown bearer token: use the token of your seat from the seats file "
                                   "(tokens change every time the server starts)")
            return
        sid = headers.get(b"mcp-session-id", b"").decode("latin-1")
        if sid and self.sessions.get(sid, agent) != agent:
            await _deny(send, 403, "this MCP session belongs to another seat: open your own session with your "
                                   "own token")
            return
        if not sid and scope.get("method") == "POST" and self._open_sessions(agent) >= (self.max_sessions_per_seat or 1 << 30):
            await _deny(send, 429, f"seat {agent} already has {self.max_sessions_per_seat} open MCP sessions: reuse "
                                   f"one, or end one (HTTP DELETE with its mcp-session-id) before opening another")
            return
        data, problem = observation_as_data(scope.get("query_string", b""))
        if problem:
            await _deny(send, 400, problem)
            return
        state = scope.setdefault("state", {})
        state["agentworld_agent"] = agent
        state["agentworld_observation_data"] = data
        state["agentworld_arrived"] = time.monotonic()  # tells parallel calls from sequential ones
        gone = state["agentworld_gone"] = Flag()  # set when the client goes away mid-request
        if self.on_connect is not None:
            self.on_connect(agent)

        async def receive_watched() -> dict:
            # the SSE response keeps reading the request channel while the call runs: a disconnect shows here
            message = await receive()
            if message.get("type") == "http.disconnect":
                gone.set()
            return message

        async def send_bound(message: dict) -> None:
            if message["type"] == "http.response.start":
                for k, v in message.get("headers", []):
                    if k.lower() == b"mcp-session-id":
                        self.sessions[v.decode("latin-1")] = agent
            await send(message)

        await self.app(scope, receive_watched, send_bound)
        if scope.get("method") == "DELETE" and sid:  # the client ended its session
            self.sessions.pop(sid, None)

    def _open_sessions(self, agent: str) -> int:
        """Sessions of ``agent`` the SDK still serves (ones it closed for idleness are forgotten here too)."""
        live = self.live_sessions() if self.live_sessions is not None else None
        if live is not None:
            for gone in [sid for sid in self.sessions if sid not in live]:
                del self.sessions[gone]
        return sum(1 for a in self.sessions.values() if a == agent)


_DENIED = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 429: "too_many_sessions"}
INVALID_REQUEST = -32600  # JSON-RPC's code for a request the server will not take
OBSERVATION_PARAM = "observation"  # the endpoint's URL parameter: ?observation=data


def observation_as_data(query_string: bytes) -> tuple[bool, str | None]:
    """Whether the request's URL asks for the observation as data in every result (``?observation=data``;
    ``?observation=text``, the default, does not), and the problem with its value if it is neither."""
    if not query_string:
        return False, None
    values = parse_qs(query_string.decode("latin-1")).get(OBSERVATION_PARAM)
    if not values:
        return False, None
    if values[-1] in ("data", "text"):
        return values[-1] == "data", None
    return False, (f"unknown value {values[-1][:40]!r} for the URL parameter {OBSERVATION_PARAM}: use "
                   f"?{OBSERVATION_PARAM}=data to have every result carry your observation as data "
                   f"(structuredContent.observation) beside its text, or leave it out (text only)")


async def _deny(send: Any, status: int, message: str) -> None:
    """Refuse with ``status`` and a JSON-RPC error body (``error.data``: the status and a reason word), the form
    the MCP SDK's own transport refuses in: an MCP client shows its message (the SDK 2.x client raises it as
    the request's error; 1.x raises the HTTP status)."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": INVALID_REQUEST, "message": message, "data": {"status": status, "reason": _DENIED.get(status, "refused")}}
    }).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="agentworld"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


class EpisodeMcpServer:
    """Serve one episode's tools over streamable HTTP, in process.

    ``async with EpisodeMcpServer(episode) as server:`` (or ``await server.start()`` / ``await server.stop()``)
    starts uvicorn on the running loop; ``server.url`` is the endpoint and ``server.seat(agent_id)`` gives a
    seat's token. One server per episode: :meth:`join_or_start` returns the episode's server if one runs.
    """

    def __init__(self, episode: Any, *, players: dict[str, str] | None = None, host: str = "127.0.0.1",
                 port: int = 0, turn_timeout: float = 120.0, wait_timeout: float | None = None,
                 observation_in_results: bool | None = None, progress_every: float | None = None,
                 allow_hosts: Iterable[str] = (), limits: HttpLimits | None = None, stream_after: float | None = None):
        self.episode = episode
        self.host, self.port = host, port
        # Exposed on purpose: the Host check needs the names clients use (refused here, before anything runs)
        self.allow_hosts = list(allow_hosts)
        self.security = transport_security(host, self.allow_hosts)
        self.limits = (limits or HttpLimits()).check()
        self.turn_timeout = turn_timeout
        n = max(1, len(episode.agent_ids))
        # An early call may have to wait for every other agent's turn (each bounded by the turn timeout), but
        # no longer than MAX_WAIT_S: MCP clients give up on a silent response after a few minutes (the SDK's
        # default read timeout is 300 s), and a clear "call again" result beats a transport error.
        default_wait = min(turn_timeout * n + 5.0, MAX_WAIT_S)
        self.tracker = TurnTracker(episode, wait_timeout=wait_timeout if wait_timeout is not None else default_wait,
                                   **({"progress_every": progress_every} if progress_every else {}))
        # A result ready within stream_after seconds goes back as one JSON body, a later one on an SSE stream
        # opened then (progress notifications, keep-alive pings): see mcp_server/transport.py. By default the
        # progress interval, so a waiting call's first progress notification is due when its stream opens.
        self.stream_after = self.tracker.progress_every if stream_after is None else stream_after
        # By default this follows the seat: an external seat's result is answered when its next turn opens
        # and ends with that turn's observation (it has no other prompt). A seat played by an in-process
        # framework team gets exactly what the in-process port gives: the outcome alone, at once (its
        # next prompt carries the observation). Malformed calls use the turn on every seat (the contract).
        self.observation_in_results = observation_in_results
        playing = set(episode.agent_ids)  # a variant may seat fewer agents than the task lists
        self.seats: list[Seat] = [s for s in make_seats(episode.task, players or {}) if s.agent_id in playing]
        for s in self.seats:  # every seat holds a token on the server; only external ones are published
            if not s.token:
                s.token = new_token()
        self._seat_of: dict[str | None, Seat] = {s.agent_id: s for s in self.seats}
        self._tokens = {s.token: s.agent_id for s in self.seats}
        self.connected: set[str] = set()
        self._connected_changed = asyncio.Event()
        self.told: set[str] = set()  # seats told how the episode ended (by a result or a read after the end)
        offered = set(getattr(episode, "tools", None) or TOOL_NAMES)  # the variant may have removed chat
        self.tools = tool_definitions([n for n in TOOL_NAMES if n in offered])
        self._uvicorn: uvicorn.Server | None = None
        self._auth: SeatAuth | None = None
        self._task: asyncio.Task | None = None
        self.url = ""

    # -- lifecycle -------------------------------------------------------------------------------
    @classmethod
    async def join_or_start(cls, episode: Any, **kwargs: Any) -> "EpisodeMcpServer":
        """The episode's running server, or a new one started for it (attached as ``episode.mcp_server``)."""
        existing = getattr(episode, "mcp_server", None)
        if isinstance(existing, EpisodeMcpServer):
            return existing
        return await cls(episode, **kwargs).start()

    async def start(self) -> "EpisodeMcpServer":
        if self._task is not None:
            return self
        seats = len(self.seats)

        async def whoami(request: Request) -> JSONResponse:
            agent = request.scope.get("state", {}).get("agentworld_agent")
            seat = self.seat(agent)
            return JSONResponse({"agent_id": seat.agent_id, "username": seat.username, "role": seat.role,
                                 "task_id": getattr(self.episode.task, "id", ""), "mcp_url": self.url})

        mcp_app, live_sessions = game_app(
            self, instructions=INSTRUCTIONS, version=__version__, host=self.host, path=MCP_PATH,
            security=self.security, max_sessions=self.limits.sessions_for(seats),
            max_body_bytes=self.limits.max_body_bytes, session_idle_timeout=self.limits.session_idle_timeout,
            stream_after=self.stream_after, routes=[("/whoami", whoami)])
        # outermost first: seat auth (headers only, so strangers never get their bodies read), then the HTTP
        # guard (bodies within limits, malformed input refused 4xx), then the MCP SDK
        app = self._auth = SeatAuth(HttpGuard(mcp_app, self.limits), self._tokens, on_connect=self._on_connect,
                                    max_sessions_per_seat=self.limits.max_sessions_per_seat,
                                    live_sessions=live_sessions)
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only for a socket created
        # with it (proto 0 leaves Nagle on: a 40 ms stall per request on a reused connection)
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM,
                             socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ValueError(f"cannot listen on {self.host}:{self.port} ({exc.strerror}): choose another --port, "
                             "or leave it out to take a free one") from None
        self.port = sock.getsockname()[1]
        shown = public_host(self.host, self.allow_hosts)  # 0.0.0.0 is no address a client can use
        host = f"[{shown}]" if ":" in shown else shown
        self.url = f"http://{host}:{self.port}{MCP_PATH}"
        for s in self.seats:
            s.url = self.url
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=2, ws="none", http=guarded_protocol(self.limits, seats),
                                timeout_keep_alive=self.limits.idle_timeout)  # type: ignore[arg-type]
        self._uvicorn = _InProcessUvicorn(config)
        self._task = asyncio.create_task(self._uvicorn.serve(sockets=[sock]), name="agentworld-mcp")
        while not self._uvicorn.started:
            if self._task.done():
                self._task.result()  # raises the startup error
                raise RuntimeError(f"MCP server on {self.url} stopped during startup")
            await asyncio.sleep(0.01)
        self.episode.mcp_server = self
        return self

    async def stop(self, reason: str = "stopped") -> None:
        if not self.tracker.finished:
            self.tracker.finish(reason)
        if self._uvicorn is not None and self._task is not None:
            self._uvicorn.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None
        if getattr(self.episode, "mcp_server", None) is self:
            self.episode.mcp_server = None

    async def __aenter__(self) -> "EpisodeMcpServer":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    # -- seats -----------------------------------------------------------------------------------
    def seat(self, agent_id: str | None) -> Seat:
        found = self._seat_of.get(agent_id)  # asked twice per call: not a scan of every seat
        if found is not None:
            return found
        raise KeyError(f"no seat {agent_id!r}; seats: {', '.join(s.agent_id for s in self.seats)}")

    def token(self, agent_id: str) -> str:
        return self.seat(agent_id).token

    def agent_for_token(self, token: str) -> str | None:
        return self._tokens.get(token)

    def _on_connect(self, agent: str) -> None:
        if agent not in self.connected:
            self.connected.add(agent)
            ev, self._connected_changed = self._connected_changed, asyncio.Event()
            ev.set()

    async def linger(self, timeout: float) -> None:
        """After the episode: keep answering for ``timeout`` seconds, whether or not a client holds a session
        now: a client that connects anew for each call, or a seat that left long ago, calls or reads later
        and is told how the episode ended (``told`` collects the seats that have been). Then sessions still
        open get up to SESSION_GRACE_S more to end (clients reading their last result close cleanly instead of
        finding the server gone)."""
        if timeout > 0:
            await asyncio.sleep(timeout)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SESSION_GRACE_S
        while self.open_sessions() and loop.time() < deadline:
            await asyncio.sleep(0.05)

    def open_sessions(self) -> int:
        return len(self._auth.sessions) if self._auth is not None else 0

    async def wait_connected(self, agent_ids: Iterable[str], timeout: float | None = None) -> set[str]:
        """Wait until every given seat has made at least one authenticated request; returns the missing ones."""
        want = set(agent_ids)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not want <= self.connected:
            ev = self._connected_changed
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ev.wait(), remaining)
        return want - self.connected

    # -- tool calls and resources ----------------------------------------------------------------
    # What the SDK's server (app_v1.py or app_v2.py) asks, with the HTTP request of the call or read
    def caller(self, req: Request | None) -> str | None:
        """The seat of a request (SeatAuth put it in the request's state; the token says it otherwise)."""
        if req is None:
            return None
        return req.scope.get("state", {}).get("agentworld_agent") or self.agent_for_token(
            req.headers.get("authorization", "").partition(" ")[2].strip())

    async def answer_call(self, req: Request | None, name: str, arguments: dict[str, Any] | None,
                          progress: Any = None) -> types.CallToolResult:
        """A ``tools/call`` as the SDK hands it over: the caller's seat from the request, then :meth:`handle_call`."""
        agent = self.caller(req)
        if agent is None:
            return _error("Unauthorized: this connection has no seat (send 'Authorization: Bearer <token>').")
        state = req.scope.get("state", {}) if req is not None else {}
        return await self.handle_call(agent, name, arguments, state.get("agentworld_arrived"),
                                      state.get("agentworld_gone"), progress,
                                      observation_data=state.get("agentworld_observation_data", False))

    def resources(self) -> list[tuple[str, str, str, str]]:
        """The resources a seat can read: (uri, name, description, mime type)."""
        return [(uri, name, desc, mime) for uri, (name, desc, mime) in RESOURCES.items()]

    def answer_read(self, req: Request | None, uri: str) -> tuple[str, str]:
        """A ``resources/read``: (text, mime type) for the caller's seat; LookupError(message) if refused."""
        agent = self.caller(req)
        if agent is None:
            raise LookupError("unauthorized: this connection has no seat")
        if uri not in RESOURCES:
            raise LookupError(f"unknown resource {uri!r}; resources: {', '.join(RESOURCES)}")
        return self.read(agent, uri), RESOURCES[uri][2]

    async def handle_call(self, agent: str, name: str, arguments: dict[str, Any] | None,
                          arrived: float | None = None, gone: Flag | None = None,
                          progress: Any = None, observation_data: bool = False) -> types.CallToolResult:
        """One ``tools/call`` of a seat. The gate decides it (a malformed call uses the turn, as in process).
        An external seat's executed call is answered when the seat's next turn opens (or it left, or the
        episode ended), with that turn's observation: exactly what an in-process agent's prompt shows, as
        text, and also as data when the request asked for it (``observation_data``: ``?observation=data``)."""
        result, lost, took = await self.tracker.call(agent, name, arguments, arrived=arrived, gone=gone,
                                                     progress=progress)
        nxt = None
        if took is not None and self._shows_observation(agent):
            nxt = await self.tracker.next_turn(agent, took, self.tracker.wait_timeout, progress, gone)
        return self._result(agent, result, lost, nxt, observation_data, executed=took is not None)

    def _shows_observation(self, agent: str) -> bool:
        external = self.seat(agent).external
        return external if self.observation_in_results is None else self.observation_in_results

    def _result(self, agent: str, result: ToolResult, lost: int, nxt: Any = None,
                observation_data: bool = False, executed: bool = True) -> types.CallToolResult:
        text = result.text or ("ok" if result.ok else "failed")
        if not result.ok and result.error:
            text = f"[{result.error}] {text}"
        shows = self._shows_observation(agent)
        if lost and shows:
            text += (f"\n(Note: you lost {lost} turn(s) before this call: no call arrived within the "
                     f"{self.turn_timeout:g} s turn timeout.)")
        # executed: the call took a turn (false for a call that waited in vain, was refused before the gate,
        # or came after the end): a client may send one that was not executed again, it cannot run twice
        structured: dict[str, Any] = {"ok": result.ok, "error": result.error, "result": result.text,
                                      "executed": executed}
        if shows:
            # the observation of the seat's next turn, as the episode rendered it, else the seat's view now
            if nxt is not None:
                obs, obs_text = nxt.observation, nxt.observation_text
            else:
                obs = self.observation(agent)
                obs_text = obs.render_text() if obs is not None else None
            outcome = self.tracker.outcome if self.tracker.finished else None
            if outcome is not None:
                if obs is None or obs.over is None:  # an observation at the end opens with the outcome itself
                    text += f"\n\nThe episode is over: {outcome.text()}."
                self.told.add(agent)
            if obs is not None:
                text += "\n\n--- Your observation now ---\n" + obs_text
                # the observation as data only when asked for: it is twice the text's size, and a client's
                # JSON-RPC parsing of it (the SDK's message union, tried member by member) costs the chain of
                # calls more than all the rest of a result
                if observation_data:
                    structured["observation"] = obs.model_dump(mode="json", exclude_none=True)
        structured["turn"] = self.tracker.whose_turn()
        structured["episode"] = self.episode_state()
        structured["active"] = self.tracker.is_active(agent) and not self.tracker.finished
        # built from values of the right types, so not validated again (a third of building it, per call)
        return types.CallToolResult.model_construct(content=[types.TextContent.model_construct(type="text", text=text)],
                                                    structuredContent=structured, isError=not result.ok)

    def episode_state(self) -> dict[str, Any]:
        """``{"over": False}`` while the episode runs; then its outcome (success, checkpoints, end reason)."""
        outcome = self.tracker.outcome
        if not self.tracker.finished:
            return {"over": False}
        state: dict[str, Any] = {"over": True, "reason": self.tracker.finished}
        if outcome is not None:
            state.update(outcome.model_dump(mode="json"))
            state["summary"] = outcome.text()
        return state

    def observation(self, agent: str) -> Any:
        """The agent's observation now. While its turn is open: the one the episode built for the turn (the
        in-process prompt's). Otherwise the view now, with the episode's round and budget fields, read without
        consuming the chat and notes that the agent's next turn hands over."""
        ep = self.episode
        cur = self.tracker.current
        turn = self.tracker.turns.get(agent)
        if cur is not None and cur.agent_id == agent and not cur.claimed and turn is not None:
            return turn.observation
        obs = peek_observation(ep.world, agent)
        if obs is None:
            return None
        used = dict(getattr(ep, "actions_used", {}) or {}).get(agent, 0)
        rec = ep.gate.open_record
        if cur is not None and cur.agent_id == agent and rec is not None and rec.tool and rec.tool not in CHAT_TOOLS:
            used += 1  # the episode counts this turn's action when the turn closes
        max_steps = getattr(ep.task, "max_action_steps", None)
        # the outcome of the agent's last action, as its next turn will show it (a client that gave up on a
        # result waiting for that turn reads it here)
        last = (getattr(ep, "last_result", None) or {}).get(agent)
        update = {"round": getattr(ep, "round", 0) or obs.round, "max_rounds": getattr(ep.task, "rounds", 0),
                  "actions_left": max(0, max_steps - used) if max_steps else None,
                  "last_result": last.text if last is not None else obs.last_result}
        if self.tracker.finished:  # no round under way and no action to take: the observation says how it ended
            outcome = self.tracker.outcome
            update.update(over=outcome.text() if outcome else str(self.tracker.finished), actions_left=None)
        return obs.model_copy(update=update)

    def read(self, agent: str, uri: str) -> str:
        if uri == "agentworld://turn":
            state = self.tracker.whose_turn()
            state["you"] = agent
            state["your_turn"] = state.get("agent_id") == agent and not state.get("call_made", False)
            state["active"] = self.tracker.is_active(agent) and not self.tracker.finished
            if (why := (getattr(self.tracker.episode, "left", None) or {}).get(agent)) is not None:
                state["left"] = why  # "you died in round 20": a seat that has left is told why, not only that
            state["episode"] = self.episode_state()
            if self.tracker.finished:
                self.told.add(agent)
            if state["your_turn"] and (turn := self.tracker.turns.get(agent)) is not None:
                # the observation of the open turn, as data (the first move of a client needs it)
                state["observation"] = turn.observation.model_dump(mode="json", exclude_none=True)
            return json.dumps(state)
        if uri == "agentworld://observation":
            cur = self.tracker.current
            turn = self.tracker.turns.get(agent)
            if cur is not None and cur.agent_id == agent and not cur.claimed and turn is not None:
                return turn.observation_text  # byte for byte what the in-process prompt shows this turn
            obs = self.observation(agent)
            if obs is None:
                return "The episode has not started yet: no observation."
            return self.standing(agent) + obs.render_text()
        return self.brief(agent)

    def standing(self, agent: str) -> str:
        """The line an observation read starts with once the seat can no longer act: how the episode ended,
        or that the seat has left while it runs (empty while the seat plays)."""
        if self.tracker.finished:  # the observation's first line says how it ended (observation())
            self.told.add(agent)
            return ""
        if not self.tracker.is_active(agent):
            return self.tracker.left_text(agent, call=False) + "\n\n"
        return ""

    def brief(self, agent: str) -> str:
        turn = self.tracker.turns.get(agent)
        if turn is not None and turn.system_prompt:
            return turn.system_prompt
        rendered = (getattr(self.episode, "system_prompts", None) or {}).get(agent)
        if rendered:  # the episode renders every brief up front (variant-aware)
            return rendered
        task = self.episode.task
        me = next((a for a in task.agents if a.agent_id == agent), None)
        try:
            from ..core.play import prompts

            return prompts.render_system(task, me, self.episode.world.rules)
        except Exception:  # prompts or world not ready: a plain brief from the task fields
            return compose_brief(task, agent)


def compose_brief(task: Any, agent_id: str) -> str:
    """A plain brief from the task fields (used before the episode has rendered its prompts)."""
    me = next((a for a in task.agents if a.agent_id == agent_id), None)
    lines = [f"Task: {task.name}", task.description or "", f"Objective: {task.objectives.primary}"]
    lines += [f"- {s}" for s in task.objectives.secondary]
    if me is not None:
        lines.append(f"You are {me.username}" + (f", the {me.role}" if me.role else "") + ".")
        if me.guideline:
            lines.append(me.guideline)
    team = ", ".join(f"{a.username}" + (f" ({a.role})" if a.role else "") for a in task.agents)
    lines.append(f"Team (turn order): {team}")
    if task.relevant_game_context:
        lines.append(task.relevant_game_context)
    lines.append(f"Budget: {task.rounds} rounds, {task.max_action_steps} action steps per agent.")
    return "\n".join(x for x in lines if x)


def peek_observation(world: Any, agent_id: str) -> Any:
    """The agent's observation after its action, without consuming the chat and notes of its next turn."""
    return world.peek(agent_id)


class _InProcessUvicorn(uvicorn.Server):
    """uvicorn sharing the caller's loop; leaves signal handling to the caller (Ctrl-C ends the episode)."""

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[override]
        yield
