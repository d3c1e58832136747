"""MCP server benchmark: tool-call latency over streamable HTTP on loopback, and 100 concurrent clients.

    python benchmarks/bench_mcp.py                      # both parts, real world
    python benchmarks/bench_mcp.py --calls 500 --agents 100 --rounds 5
    python benchmarks/bench_mcp.py --fixture            # the small test world (tests/worldfix.py)

Part 1 (latency): one external seat on a one-agent task. Before each timed call the client reads the
``agentworld://turn`` resource until its turn is open, so the figure is the tool call alone (HTTP, auth,
the gate, the world, the observation appended to the result), never turn waiting. The in-process gate call
is timed too, for reference.

Part 2 (throughput): a generated N-agent task (all agents spawned around one village, no verifier, so the
episode runs the whole round budget). N MCP clients, each with its own session and token, run in a
separate process and call ``sleep`` in a loop; every call waits for its agent's turn. Reported: tool calls
per second over the whole episode, and the server process's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def rss_mib() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def make_world(fixture: bool) -> Any:
    from agentworld.core.world.engine import EmbeddedWorld

    if fixture:
        sys.path.insert(0, str(ROOT / "tests"))
        from worldfix import fixture_world

        return EmbeddedWorld(fixture_world(), seed=0)
    return None  # the episode builds the real world


def spawn_tiles(n: int, fixture: bool) -> list[tuple[int, int]]:
    """n distinct walkable tiles spiralling out from a village centre."""
    if fixture:
        sys.path.insert(0, str(ROOT / "tests"))
        from worldfix import fixture_world

        gm, cx, cy = fixture_world().map, 9, 24
    else:
        from agentworld.core.world.datapack import load_world

        w = load_world()
        lm = w.landmark("hearthmoor")
        gm, cx, cy = w.map, lm.x, lm.y + lm.radius + 2
    tiles: list[tuple[int, int]] = []
    r = 0
    while len(tiles) < n:
        for dx in range(-r, r + 1):
            for dy in (-r, r) if abs(dx) != r else range(-r, r + 1):
                x, y = cx + dx, cy + dy
                if (x, y) not in tiles and 0 <= x and 0 <= y and gm.walkable(x, y):
                    tiles.append((x, y))
        r += 1
        if r > 200:
            raise RuntimeError(f"found only {len(tiles)} walkable tiles near ({cx},{cy})")
    return tiles[:n]


def make_task(n_agents: int, rounds: int, fixture: bool) -> Any:
    from agentworld.core.tasks.task import parse_task

    raw: dict[str, Any] = {
        "id": f"bench_mcp_{n_agents}", "category": "coordination",
        "task": {"name": f"{n_agents} agents", "description": "Benchmark: every agent passes its turn."},
        "objectives": {"primary": "none (benchmark)"}, "rounds": rounds, "max_action_steps": rounds + 1,
    }
    for i, (x, y) in enumerate(spawn_tiles(n_agents, fixture), start=1):
        raw[f"agent_{i}"] = {"username": f"player{i:03d}", "location": {"x": x, "y": y}, "role": "benchmark"}
    return parse_task(raw, f"bench_mcp_{n_agents}.yaml", raw["id"])


def make_episode(task: Any, fixture: bool, turn_timeout: float) -> Any:
    from agentworld.core.play.episode import Episode
    from agentworld.mcp_server.turns import ExternalSeatsTeam

    team = ExternalSeatsTeam(turn_timeout=turn_timeout)
    return Episode(task, team, world=make_world(fixture), framework="mcp", model="bench", turn_timeout=turn_timeout)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


# -- part 1: latency ---------------------------------------------------------------------------------------
async def bench_latency(calls: int, fixture: bool) -> dict[str, float]:
    from agentworld.mcp_server.clients import mcp_session
    from agentworld.mcp_server.server import EpisodeMcpServer

    task = make_task(1, calls + 20, fixture)
    ep = make_episode(task, fixture, turn_timeout=30)
    lat: list[float] = []
    async with EpisodeMcpServer(ep, turn_timeout=30) as server:
        run = asyncio.create_task(ep.run())
        async with mcp_session(server.url, server.token("agent_1")) as s:
            for i in range(calls + 10):
                while not json.loads((await s.read_resource("agentworld://turn")).contents[0].text)["your_turn"]:
                    await asyncio.sleep(0)
                t0 = time.perf_counter()
                r = await s.call_tool("sleep", {"seconds": 1})
                dt = time.perf_counter() - t0
                assert not r.isError, r.content[0].text
                if i >= 10:  # warm-up calls are not counted
                    lat.append(dt * 1000)
        run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            pass
    # in-process reference: the gate call alone, same tool, on a fresh episode
    from agentworld.core.play.episode import Episode
    from agentworld.core.play.policies import IdlePolicy, PolicyTeam

    ep2 = Episode(make_task(1, 5, fixture), PolicyTeam(IdlePolicy()), world=make_world(fixture))
    gate = ep2.gate
    inproc = []
    for i in range(calls):
        gate.open("agent_1", 1)
        t0 = time.perf_counter()
        await gate.call("agent_1", "sleep", {"seconds": 1})
        inproc.append((time.perf_counter() - t0) * 1000)
        gate.close()
    return {"calls": len(lat), "median_ms": statistics.median(lat), "p99_ms": pct(lat, 99), "min_ms": min(lat),
            "max_ms": max(lat), "inproc_median_ms": statistics.median(inproc)}


# -- part 2: many clients ----------------------------------------------------------------------------------
async def run_clients(seats_path: str, rounds: int) -> None:
    """The client process: one MCP session per seat, each calling `sleep` once per round."""
    from agentworld.mcp_server.clients import mcp_session
    from agentworld.mcp_server.seats import read_seats_file

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


async def bench_many(n_agents: int, rounds: int, fixture: bool, turn_timeout: float) -> dict[str, float]:
    from agentworld.mcp_server.seats import SeatsFile, write_seats_file
    from agentworld.mcp_server.server import EpisodeMcpServer

    mem0 = rss_mib()
    task = make_task(n_agents, rounds, fixture)
    ep = make_episode(task, fixture, turn_timeout)
    async with EpisodeMcpServer(ep, turn_timeout=turn_timeout) as server:
        seats_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_mcp_seats_{os.getpid()}.json"
        write_seats_file(seats_path, SeatsFile(task_id=task.id, url=server.url, turn_timeout_s=turn_timeout,
                                               seats=server.seats))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--clients", str(seats_path), "--rounds", str(rounds), cwd=str(ROOT))
        missing = await server.wait_connected(ep.agent_ids, 120)
        if missing:
            raise RuntimeError(f"{len(missing)} clients did not connect")
        mem_connected = rss_mib()
        t0 = time.perf_counter()
        result = await ep.run()
        wall = time.perf_counter() - t0
        rc = await proc.wait()
        mem_end = rss_mib()
        seats_path.unlink(missing_ok=True)
    calls = sum(1 for e in ep.events if getattr(e, "type", "") == "turn" and e.tool)
    timeouts = sum(1 for e in ep.events if getattr(e, "type", "") == "turn" and e.error == "timeout")
    return {"agents": n_agents, "rounds": result.rounds, "calls": calls, "timeouts": timeouts, "client_rc": rc,
            "wall_s": wall, "calls_per_s": calls / wall, "rss_before_mib": mem0, "rss_connected_mib": mem_connected,
            "rss_end_mib": mem_end}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="timed calls for the latency part")
    ap.add_argument("--agents", type=int, default=100, help="agents (and concurrent clients) for part 2")
    ap.add_argument("--rounds", type=int, default=5, help="rounds for part 2")
    ap.add_argument("--turn-timeout", type=float, default=30.0)
    ap.add_argument("--fixture", action="store_true", help="use the small test world instead of the real one")
    ap.add_argument("--only", choices=["latency", "many"], default=None)
    ap.add_argument("--clients", default=None, help=argparse.SUPPRESS)  # internal: run the client process
    args = ap.parse_args()
    if args.clients:
        asyncio.run(run_clients(args.clients, args.rounds))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if args.only in (None, "latency"):
        lat = asyncio.run(bench_latency(args.calls, args.fixture))
        t = Table("figure", "value", title="MCP tool call latency (streamable HTTP, loopback, turn already open)")
        t.add_row("calls timed", str(lat["calls"]))
        for k in ("median_ms", "p99_ms", "min_ms", "max_ms", "inproc_median_ms"):
            t.add_row(k, f"{lat[k]:.3f}")
        console.print(t)
        console.print(f"target median < 5 ms: {'met' if lat['median_ms'] < 5 else 'NOT met'}")
    if args.only in (None, "many"):
        many = asyncio.run(bench_many(args.agents, args.rounds, args.fixture, args.turn_timeout))
        t = Table("figure", "value", title=f"{args.agents} concurrent MCP clients on a {args.agents}-agent task")
        for k, v in many.items():
            t.add_row(k, f"{v:.2f}" if isinstance(v, float) else str(v))
        console.print(t)


if __name__ == "__main__":
    main()
