"""`agentworld bench mcp-load`: N concurrent MCP clients on an N-agent task, against the same calls in process.

A generated task (every agent spawned round one village, no verifier, so every round is played). N MCP
clients, each with its own session and bearer token, run in a separate process over streamable HTTP on
loopback and call ``sleep`` once per round; each call waits for its agent's turn. Every figure is timed once every
seat is in: the game's from when every seat's first call waits for its turn, as the floors'. The floor is the same
episode with the calls made in process (a scripted team through the turn gate): the ratio is the share of
the in-process rate that the MCP path keeps. Beside it: the server's CPU per call (its capacity if clients
cost nothing) and two floors measured in the same run under the same client process, with the game
server's HTTP settings and event loop: a bare FastMCP server that plays the same turn contract with no game
(the chain floor: what the MCP SDK on both ends allows for turn-serialised play), and one whose ``sleep``
returns at once, calls in parallel (the client-side floor).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click


def load_task(agents: int, rounds: int) -> Any:
    from ..core.tasks.task import parse_task
    from ..core.world.datapack import load_world

    w = load_world()
    lm = w.landmark("hearthmoor")
    tiles: list[tuple[int, int]] = []
    r = 0
    while len(tiles) < agents and r < 200:  # distinct walkable tiles spiralling out from the village
        for dx in range(-r, r + 1):
            for dy in ((-r, r) if abs(dx) != r else range(-r, r + 1)):
                x, y = lm.x + dx, lm.y + lm.radius + 2 + dy
                if w.map.walkable(x, y) and (x, y) not in tiles:
                    tiles.append((x, y))
        r += 1
    raw: dict[str, Any] = {
        "id": f"bench_mcp_{agents}", "category": "coordination",
        "task": {"name": f"{agents} agents", "description": "Benchmark: every agent passes its turn."},
        "objectives": {"primary": "none (benchmark)"}, "rounds": rounds, "max_action_steps": rounds + 1}
    for i, (x, y) in enumerate(tiles[:agents], start=1):
        raw[f"agent_{i}"] = {"username": f"player{i:04d}", "location": {"x": x, "y": y}, "role": "benchmark"}
    return parse_task(raw, f"bench_mcp_{agents}.yaml", raw["id"])


async def run_clients(seats_path: str, rounds: int, figures_path: str | None = None) -> None:
    """The client process: one MCP session per seat, each calling ``sleep`` once per round. With
    ``figures_path``, writes there (JSON) the process's CPU per call once every seat has had a result, as the
    server's is timed once every seat is in (the first round's results come after its last call)."""
    import asyncio

    from .clients import mcp_session
    from ..core.play.mcp_sdk import is_error
    from .seats import read_seats_file

    seats = read_seats_file(seats_path)
    errors: list[str] = []
    done: list[float] = []  # the process's CPU time as each call returned

    async def play(url: str, token: str) -> None:
        async with mcp_session(url, token) as s:
            for _ in range(rounds):
                r = await s.call_tool("sleep", {"seconds": 1})
                done.append(time.process_time())
                if is_error(r):
                    errors.append(r.content[0].text[:200])
                    return

    await asyncio.gather(*(play(s.url, s.token) for s in seats.seats))
    if errors:
        print(f"client errors: {len(errors)}; first: {errors[0]}", file=sys.stderr)
        sys.exit(1)
    if figures_path:
        first = len(seats.seats)  # the calls after every seat's first result
        timed = len(done) - first
        per_call = (done[-1] - done[first - 1]) / timed if timed > 0 else 0.0
        Path(figures_path).write_text(json.dumps({"client_cpu_ms_per_call": per_call * 1000}))


async def start_clients(seats: list[Any], url: str, rounds: int, loop: str, folder: str) -> Any:
    """The client process (:func:`run_clients` on the event loop ``loop``) for ``seats``, started."""
    import asyncio

    from .seats import SeatsFile, write_seats_file

    seats_path = write_seats_file(Path(folder) / "seats.json", SeatsFile(task_id="bench", url=url, turn_timeout_s=60,
                                                                         seats=seats))
    figures = str(Path(folder) / "client.json")
    code = ("from agentworld.mcp_server.bench import run_clients; from agentworld.mcp_server.eventloop import run; "
            f"run(run_clients({str(seats_path)!r}, {rounds}, {figures!r}), {loop!r})")
    return await asyncio.create_subprocess_exec(sys.executable, "-c", code)


def _client_figures(folder: str) -> dict[str, float]:
    """What the client process measured of itself (its CPU per call), or nothing when it failed."""
    try:
        return json.loads((Path(folder) / "client.json").read_text())
    except (OSError, ValueError):
        return {}


async def _stop(proc: Any) -> None:
    import asyncio

    if proc.returncode is None:
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


def _calls(ep: Any) -> int:
    return sum(1 for e in ep.events if getattr(e, "type", "") == "turn" and e.tool)


async def over_mcp(agents: int, rounds: int, turn_timeout: float, loop: str = "auto") -> dict[str, float]:
    from ..core.play.episode import Episode
    from .server import EpisodeMcpServer
    from .turns import ExternalSeatsTeam

    task = load_task(agents, rounds)
    ep = Episode(task, ExternalSeatsTeam(turn_timeout=turn_timeout), framework="mcp", model="bench",
                 turn_timeout=turn_timeout)
    with tempfile.TemporaryDirectory() as tmp:
        async with EpisodeMcpServer(ep, turn_timeout=turn_timeout) as server:
            proc = await start_clients(server.seats, server.url, rounds, loop, tmp)
            try:
                missing = await server.wait_connected(ep.agent_ids, 120)
                if missing:
                    raise click.ClickException(f"{len(missing)} of {agents} MCP clients did not connect within 120 s")
                await _first_calls_in(server, agents, proc, 120)
                t0, cpu0 = time.perf_counter(), time.process_time()
                await ep.run()
                wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            finally:
                await _stop(proc)
            client = _client_figures(tmp)
    calls = _calls(ep)
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall, "client_rc": proc.returncode,
            **_server_cpu(cpu, calls), **client}


async def _first_calls_in(server: Any, agents: int, proc: Any, timeout: float) -> None:
    """Wait until every seat's first call waits for its turn, as the chain floor's clock starts when the first
    turn opens once every seat has called: neither figure then counts the opening of the other sessions
    (initialize, the client's notification and its SSE stream: about half a second for 100 seats) as play."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(server.tracker.waiting) < agents:
        if proc.returncode is not None or loop.time() > deadline:
            raise click.ClickException(f"{agents - len(server.tracker.waiting)} of {agents} MCP clients made no "
                                       f"call within {timeout:g} s of connecting")
        await asyncio.sleep(0.002)


def _server_cpu(cpu_s: float, calls: int) -> dict[str, float]:
    """The server process's CPU per call, and the calls per second that CPU alone would allow."""
    per_call = cpu_s / calls if calls else 0.0
    return {"server_cpu_ms_per_call": per_call * 1000, "server_capacity_calls_per_s": 1 / per_call if per_call else 0.0}


class BareServer:
    """A bare MCP server (no game, no seats) with one tool, ``sleep``, on uvicorn in the running loop, with
    the game server's SDK server API and HTTP settings (its parser, its answers: app_v1.py or app_v2.py). ``serial=False``:
    ``sleep`` returns at once, so calls run in parallel. ``serial=True``: the game's turn contract with
    nothing to play: seats (by bearer token ``seat-<i>``) take turns in order once all ``seats`` have called,
    a call runs at its seat's turn and its result is sent when that seat's next turn opens; after
    ``turns`` turns every waiting call is answered. ``marks`` holds the time each call ran.

    ``async with BareServer(...) as bare:`` then ``bare.url``; the one definition behind the floors of
    ``bench mcp-load`` and ``benchmarks/bench_mcp.py``."""

    def __init__(self, seats: int = 1, *, serial: bool = False, turns: int = 0, stream_after: float | None = None):
        import asyncio

        from .tracker import PROGRESS_EVERY_S

        self.seats, self.serial, self.turns = seats, serial, turns
        self.stream_after = PROGRESS_EVERY_S if stream_after is None else stream_after
        self.marks: list[float] = []
        self.url = ""
        self._turn: int | None = None  # index of the seat whose turn is open (None before the start)
        self._open = [asyncio.Event() for _ in range(seats)] if serial else []
        self._arrived = 0

    def tokens(self) -> list[str]:
        return [f"seat-{i}" for i in range(self.seats)]

    async def sleep(self, request: Any, seconds: int) -> str:
        if not self.serial:
            self.marks.append(time.perf_counter())
            return "ok"
        me = int(request.headers["authorization"].rpartition("-")[2])
        if self._turn is None:
            self._arrived += 1
            if self._arrived == self.seats:
                self._pass(0)  # everyone is here: the first turn opens
        await self._open[me].wait()
        self.marks.append(time.perf_counter())
        self._open[me].clear()
        if len(self.marks) >= self.turns:
            for ev in self._open:  # the end: every waiting result is sent
                ev.set()
        else:
            self._pass((me + 1) % self.seats)
        await self._open[me].wait()  # the result waits for this seat's next turn
        return "ok"

    def _pass(self, seat: int) -> None:
        self._turn = seat
        self._open[seat].set()

    async def __aenter__(self) -> "BareServer":
        import asyncio

        import uvicorn

        from .guard import HttpLimits, guarded_protocol
        from ..core.play.mcp_sdk import SDK_MAJOR
        from .server import MCP_PATH, _InProcessUvicorn

        if SDK_MAJOR >= 2:
            from .app_v2 import bare_app
        else:
            from .app_v1 import bare_app
        app = bare_app(self.sleep, path=MCP_PATH, stream_after=self.stream_after)
        self._server = _InProcessUvicorn(uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False, lifespan="on",
            http=guarded_protocol(HttpLimits(), self.seats)))  # type: ignore[arg-type]
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        self.url = f"http://127.0.0.1:{self._server.servers[0].sockets[0].getsockname()[1]}{MCP_PATH}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for ev in self._open:
            ev.set()
        self._server.should_exit = True
        await self._task


async def bare_fastmcp(clients: int, rounds: int, serial: bool = False, loop: str = "auto") -> dict[str, float]:
    """A floor: the same client process (one MCP session per seat, ``sleep`` called ``rounds`` times each)
    against a :class:`BareServer`, parallel or turn-serialised. Timed, as the game, once every seat is in:
    from the ``clients``-th call run (parallel; before it sessions still open) or the first (serial: the first
    turn opens when every seat has called) to the last."""
    import asyncio

    from .seats import Seat

    async with BareServer(clients, serial=serial, turns=clients * rounds) as bare:
        seats = [Seat(agent_id=f"agent_{i + 1}", username=f"player{i + 1}", url=bare.url, token=token)
                 for i, token in enumerate(bare.tokens())]
        with tempfile.TemporaryDirectory() as tmp:
            proc = await start_clients(seats, bare.url, rounds, loop, tmp)
            try:
                first = 1 if serial else clients
                while len(bare.marks) < first and proc.returncode is None:
                    await asyncio.sleep(0.001)
                cpu0 = time.process_time()
                while len(bare.marks) < clients * rounds and proc.returncode is None:
                    await asyncio.sleep(0.002)
                cpu = time.process_time() - cpu0
            finally:
                await _stop(proc)
            client = _client_figures(tmp)
    marks = bare.marks[first - 1:]
    timed = len(marks) - 1  # calls run after the clock started
    wall = marks[-1] - marks[0] if timed > 0 else 0.0
    return {"calls": len(bare.marks), "wall_s": wall, "calls_per_s": timed / wall if wall else 0.0,
            "client_rc": proc.returncode, **_server_cpu(cpu, timed), **client}


async def in_process(agents: int, rounds: int) -> dict[str, float]:
    from ..core.play.episode import Episode
    from ..core.play.policies import IdlePolicy, PolicyTeam

    ep = Episode(load_task(agents, rounds), PolicyTeam(IdlePolicy()), framework="idle")
    t0 = time.perf_counter()
    await ep.run()
    wall = time.perf_counter() - t0
    calls = _calls(ep)
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall}


def measure(clients: int, rounds: int, turn_timeout: float = 60.0, loop: str = "auto") -> dict[str, Any]:
    """Every figure on the event loop ``loop`` (mcp_server/eventloop.py), both processes, each in a fresh loop."""
    from .eventloop import loop_name, run

    floor = run(in_process(clients, rounds), loop)
    mcp = run(over_mcp(clients, rounds, turn_timeout, loop), loop)
    serial = run(bare_fastmcp(clients, rounds, serial=True, loop=loop), loop)
    bare = run(bare_fastmcp(clients, rounds, loop=loop), loop)
    return {"clients": clients, "rounds": rounds, "loop": loop_name(loop), "mcp": mcp, "in_process": floor,
            "bare_fastmcp_serial": serial, "bare_fastmcp": bare,
            "ratio": mcp["calls_per_s"] / floor["calls_per_s"],
            "ratio_to_serial_bare": mcp["calls_per_s"] / serial["calls_per_s"] if serial["calls_per_s"] else None,
            "ratio_to_bare": mcp["calls_per_s"] / bare["calls_per_s"] if bare["calls_per_s"] else None}


@click.command("mcp-load")
@click.option("--clients", default=100, show_default=True, help="MCP clients (and agents in the task).")
@click.option("--rounds", default=5, show_default=True)
@click.option("--turn-timeout", default=60.0, show_default=True, help="Seconds a seat may take for its turn.")
@click.option("--loop", type=click.Choice(["auto", "uvloop", "asyncio"]), default="auto", show_default=True,
              help="Event loop of the server and the client process (auto: uvloop when installed).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def mcp_load(clients: int, rounds: int, turn_timeout: float, loop: str, as_json: bool) -> None:
    """Tool calls per second with N concurrent MCP clients, against the same calls in process (the floor)."""
    from ..core.runs.bench import show

    try:
        res = measure(clients, rounds, turn_timeout, loop)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--loop") from None
    if as_json:
        click.echo(json.dumps(res))
        return
    mcp, serial, bare, floor = res["mcp"], res["bare_fastmcp_serial"], res["bare_fastmcp"], res["in_process"]

    def row(name: str, fig: dict[str, Any]) -> list[Any]:
        return [name, fig["calls"], fig["wall_s"], fig["calls_per_s"], fig["calls_per_s"] / floor["calls_per_s"],
                fig.get("server_cpu_ms_per_call", ""), fig.get("client_cpu_ms_per_call", "")]

    show(f"bench mcp-load: {clients} concurrent clients on a {clients}-agent task, {rounds} rounds, {res['loop']} loop",
         ["path", "calls", "wall s", "calls / s", "ratio to in process", "server CPU ms / call",
          "client CPU ms / call"],
         [row("in process (floor)", floor), row("MCP, streamable HTTP on loopback", mcp),
          row("bare FastMCP, turn-serialised like the game (chain floor)", serial),
          row("bare FastMCP, parallel calls (client-side floor)", bare)],
         [f"the game's MCP rate is {res['ratio_to_serial_bare'] or 0:.2f}x the turn-serialised bare server's and "
          f"{res['ratio_to_bare'] or 0:.2f}x the parallel one's, under the same client process; the game server's "
          f"CPU alone would allow {mcp['server_capacity_calls_per_s']:,.0f} calls/s.",
          "The game's calls are turn-serialised (a result is sent when the seat's next turn opens), so each turn "
          "waits for a whole round trip: the server's and the client's work per call add up.",
          f"target: 100 concurrent MCP clients at least 150 calls per second: "
          f"{'met' if mcp['calls_per_s'] >= 150 else 'missed'}"])
