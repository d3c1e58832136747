"""`agentworld bench mcp-load`: N concurrent MCP clients on an N-agent task, against the same calls in process.

A generated task (every agent spawned round one village, no verifier, so every round is played). N MCP
clients, each with its own session and bearer token, run in a separate process over streamable HTTP on
loopback and call ``sleep`` once per round; each call waits for its agent's turn. The floor is the same
episode with the calls made in process (a scripted team through the turn gate): the ratio is the share of
the in-process rate that the MCP path keeps. Beside it: the server's CPU per call (its capacity if clients
cost nothing) and the client-side floor, a bare FastMCP server (a ``sleep`` that returns at once, no game,
no turns) under the same client process, measured in the same run.
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


async def run_clients(seats_path: str, rounds: int) -> None:
    """The client process: one MCP session per seat, each calling ``sleep`` once per round."""
    import asyncio

    from .clients import mcp_session
    from .seats import read_seats_file

    seats = read_seats_file(seats_path)
    errors: list[str] = []

    async def play(url: str, token: str) -> None:
        async with mcp_session(url, token) as s:
            for _ in range(rounds):
                r = await s.call_tool("sleep", {"seconds": 1})
                if r.isError:
                    errors.append(r.content[0].text[:200])
                    return

    await asyncio.gather(*(play(s.url, s.token) for s in seats.seats))
    if errors:
        print(f"client errors: {len(errors)}; first: {errors[0]}", file=sys.stderr)
        sys.exit(1)


def _calls(ep: Any) -> int:
    return sum(1 for e in ep.events if getattr(e, "type", "") == "turn" and e.tool)


async def over_mcp(agents: int, rounds: int, turn_timeout: float) -> dict[str, float]:
    import asyncio

    from ..core.play.episode import Episode
    from .seats import SeatsFile, write_seats_file
    from .server import EpisodeMcpServer
    from .turns import ExternalSeatsTeam

    task = load_task(agents, rounds)
    ep = Episode(task, ExternalSeatsTeam(turn_timeout=turn_timeout), framework="mcp", model="bench",
                 turn_timeout=turn_timeout)
    with tempfile.TemporaryDirectory() as tmp:
        seats_path = Path(tmp) / "seats.json"
        async with EpisodeMcpServer(ep, turn_timeout=turn_timeout) as server:
            write_seats_file(seats_path, SeatsFile(task_id=task.id, url=server.url, turn_timeout_s=turn_timeout,
                                                   seats=server.seats))
            code = ("import asyncio, sys; from agentworld.mcp_server.bench import run_clients; "
                    f"asyncio.run(run_clients({str(seats_path)!r}, {rounds}))")
            proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
            try:
                missing = await server.wait_connected(ep.agent_ids, 120)
                if missing:
                    raise click.ClickException(f"{len(missing)} of {agents} MCP clients did not connect within 120 s")
                t0, cpu0 = time.perf_counter(), time.process_time()
                await ep.run()
                wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            finally:
                if proc.returncode is None:
                    try:
                        await asyncio.wait_for(proc.wait(), 30)
                    except asyncio.TimeoutError:
                        proc.kill()
                        await proc.wait()
    calls = _calls(ep)
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall, "client_rc": proc.returncode,
            **_server_cpu(cpu, calls)}


def _server_cpu(cpu_s: float, calls: int) -> dict[str, float]:
    """The server process's CPU per call, and the calls per second that CPU alone would allow."""
    per_call = cpu_s / calls if calls else 0.0
    return {"server_cpu_ms_per_call": per_call * 1000, "server_capacity_calls_per_s": 1 / per_call if per_call else 0.0}


async def bare_fastmcp(clients: int, rounds: int) -> dict[str, float]:
    """The client-side floor: the same client process (one MCP session per seat, ``sleep`` called ``rounds``
    times each) against a bare FastMCP server whose ``sleep`` returns at once: no game, no turns, so calls
    run in parallel. Timed from the first call to the last."""
    import asyncio

    import uvicorn
    from mcp.server.fastmcp import FastMCP

    from .seats import Seat, SeatsFile, write_seats_file
    from .server import MCP_PATH, _InProcessUvicorn

    mcp = FastMCP("bare", log_level="WARNING", streamable_http_path=MCP_PATH)
    marks: list[float] = []

    @mcp.tool()
    def sleep(seconds: int) -> str:
        """Return at once."""
        marks.append(time.perf_counter())
        return "ok"

    server = _InProcessUvicorn(uvicorn.Config(mcp.streamable_http_app(), host="127.0.0.1", port=0,
                                              log_level="warning", access_log=False, lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}{MCP_PATH}"
        with tempfile.TemporaryDirectory() as tmp:
            seats_path = Path(tmp) / "seats.json"
            write_seats_file(seats_path, SeatsFile(task_id="bare", url=url, turn_timeout_s=60, seats=[
                Seat(agent_id=f"agent_{i}", username=f"player{i}", url=url, token="unused")
                for i in range(1, clients + 1)]))
            code = ("import asyncio; from agentworld.mcp_server.bench import run_clients; "
                    f"asyncio.run(run_clients({str(seats_path)!r}, {rounds}))")
            proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
            while not marks and proc.returncode is None:
                await asyncio.sleep(0.001)
            cpu0 = time.process_time()
            await proc.wait()
            cpu = time.process_time() - cpu0
    finally:
        server.should_exit = True
        await task
    calls = len(marks)
    wall = marks[-1] - marks[0] if calls > 1 else 0.0
    return {"calls": calls, "wall_s": wall, "calls_per_s": (calls - 1) / wall if wall else 0.0,
            "client_rc": proc.returncode, **_server_cpu(cpu, calls)}


async def in_process(agents: int, rounds: int) -> dict[str, float]:
    from ..core.play.episode import Episode
    from ..core.play.policies import IdlePolicy, PolicyTeam

    ep = Episode(load_task(agents, rounds), PolicyTeam(IdlePolicy()), framework="idle")
    t0 = time.perf_counter()
    await ep.run()
    wall = time.perf_counter() - t0
    calls = _calls(ep)
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall}


def measure(clients: int, rounds: int, turn_timeout: float = 60.0) -> dict[str, Any]:
    import asyncio

    floor = asyncio.run(in_process(clients, rounds))
    mcp = asyncio.run(over_mcp(clients, rounds, turn_timeout))
    bare = asyncio.run(bare_fastmcp(clients, rounds))
    return {"clients": clients, "rounds": rounds, "mcp": mcp, "in_process": floor, "bare_fastmcp": bare,
            "ratio": mcp["calls_per_s"] / floor["calls_per_s"],
            "ratio_to_bare": mcp["calls_per_s"] / bare["calls_per_s"] if bare["calls_per_s"] else None}


@click.command("mcp-load")
@click.option("--clients", default=100, show_default=True, help="MCP clients (and agents in the task).")
@click.option("--rounds", default=5, show_default=True)
@click.option("--turn-timeout", default=60.0, show_default=True, help="Seconds a seat may take for its turn.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def mcp_load(clients: int, rounds: int, turn_timeout: float, as_json: bool) -> None:
    """Tool calls per second with N concurrent MCP clients, against the same calls in process (the floor)."""
    from ..core.runs.bench import show

    res = measure(clients, rounds, turn_timeout)
    if as_json:
        click.echo(json.dumps(res))
        return
    mcp, bare = res["mcp"], res["bare_fastmcp"]
    show(f"bench mcp-load: {clients} concurrent clients on a {clients}-agent task, {rounds} rounds",
         ["path", "calls", "wall s", "calls / s", "ratio to in process", "server CPU ms / call"],
         [["in process (floor)", res["in_process"]["calls"], res["in_process"]["wall_s"],
           res["in_process"]["calls_per_s"], 1.0, ""],
          ["MCP, streamable HTTP on loopback", mcp["calls"], mcp["wall_s"], mcp["calls_per_s"], res["ratio"],
           mcp["server_cpu_ms_per_call"]],
          ["bare FastMCP server, same client process (client-side floor)", bare["calls"], bare["wall_s"],
           bare["calls_per_s"], bare["calls_per_s"] / res["in_process"]["calls_per_s"],
           bare["server_cpu_ms_per_call"]]],
         [f"server-side capacity (calls/s its CPU per call allows): {mcp['server_capacity_calls_per_s']:,.0f}; "
          f"the game's MCP rate is {res['ratio_to_bare'] or 0:.2f}x the bare SDK server's under the same clients.",
          "The game's calls are turn-serialised (a result is sent when the seat's next turn opens), so each call "
          "waits for a full client round trip; the bare server's calls run in parallel.",
          f"target: 100 concurrent MCP clients at least 150 calls per second: "
          f"{'met' if mcp['calls_per_s'] >= 150 else 'missed'}"])
