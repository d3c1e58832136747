"""`agentworld bench mcp-load`: N concurrent MCP clients on an N-agent task, against the same calls in process.

A generated task (every agent spawned round one village, no verifier, so every round is played). N MCP
clients, each with its own session and bearer token, run in a separate process over streamable HTTP on
loopback and call ``sleep`` once per round; each call waits for its agent's turn. The floor is the same
episode with the calls made in process (a scripted team through the turn gate): the ratio is the share of
the in-process rate that the MCP path keeps.
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
                t0 = time.perf_counter()
                await ep.run()
                wall = time.perf_counter() - t0
            finally:
                if proc.returncode is None:
                    try:
                        await asyncio.wait_for(proc.wait(), 30)
                    except asyncio.TimeoutError:
                        proc.kill()
                        await proc.wait()
    calls = _calls(ep)
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall, "client_rc": proc.returncode}


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
    return {"clients": clients, "rounds": rounds, "mcp": mcp, "in_process": floor,
            "ratio": mcp["calls_per_s"] / floor["calls_per_s"]}


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
    show(f"bench mcp-load: {clients} concurrent clients on a {clients}-agent task, {rounds} rounds",
         ["path", "calls", "wall s", "calls / s", "ratio to floor"],
         [["in process (floor)", res["in_process"]["calls"], res["in_process"]["wall_s"],
           res["in_process"]["calls_per_s"], 1.0],
          ["MCP, streamable HTTP on loopback", res["mcp"]["calls"], res["mcp"]["wall_s"], res["mcp"]["calls_per_s"],
           res["ratio"]]],
         ["target: 100 concurrent MCP clients at least 150 calls per second"])
