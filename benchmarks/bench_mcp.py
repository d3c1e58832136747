"""MCP server benchmark: tool-call latency over streamable HTTP on loopback, and 100 concurrent clients.

    python benchmarks/bench_mcp.py                      # both parts, real world
    python benchmarks/bench_mcp.py --calls 500 --agents 100 --rounds 5
    python benchmarks/bench_mcp.py --fixture            # the small test world (tests/worldfix.py)

Part 1 (latency): one external seat on a one-agent task. Before each timed call the client reads the
``agentworld://turn`` resource until its turn is open, so the figure is the tool call alone (HTTP, auth,
the gate, the world, and the result that comes with the seat's next turn), never turn waiting. The floor
is a bare FastMCP server with one trivial tool, measured in the same run with the same client; both over
one reused connection and over a new TCP connection per call. Reported: medians and the ratio.

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
def http_client(token: str | None, reuse: bool) -> Any:
    """The client's HTTP side: one kept-alive connection (``reuse``), or a new TCP connection per request."""
    from agentworld.core.play.mcp_sdk import http as httpx  # httpx on the MCP SDK 1.x, httpx2 on 2.x

    limits = httpx.Limits() if reuse else httpx.Limits(max_keepalive_connections=0)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(headers=headers, limits=limits, timeout=httpx.Timeout(30, read=600))


async def timed_calls(url: str, token: str | None, reuse: bool, calls: int, turn_open: bool) -> list[float]:
    """``calls`` timed ``sleep`` calls (after 10 untimed) over one MCP session; milliseconds each. With
    ``turn_open`` the client first reads ``agentworld://turn`` until its turn is open, so a figure is the call
    alone: HTTP, auth, the gate, the world, and the result that comes with the seat's next turn."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from agentworld.core.play.mcp_sdk import is_error

    lat: list[float] = []
    http = http_client(token, reuse)
    async with http, streamable_http_client(url, http_client=http) as (read, write, *_), \
            ClientSession(read, write) as s:
        await s.initialize()
        for i in range(calls + 10):
            if turn_open:
                while not json.loads((await s.read_resource("agentworld://turn")).contents[0].text)["your_turn"]:
                    await asyncio.sleep(0)
            t0 = time.perf_counter()
            r = await s.call_tool("sleep", {"seconds": 1})
            dt = time.perf_counter() - t0
            assert not is_error(r), r.content[0].text
            if i >= 10:  # warm-up calls are not counted
                lat.append(dt * 1000)
    return lat


async def bare_fastmcp_latency(calls: int, reuse: bool) -> list[float]:
    """The floor: the bare FastMCP server of `agentworld bench mcp-load` (one trivial ``sleep`` tool, the game
    server's HTTP settings), on uvicorn in this loop, same client."""
    from agentworld.mcp_server.bench import BareServer

    async with BareServer() as bare:
        return await timed_calls(bare.url, None, reuse, calls, turn_open=False)


async def agentworld_latency(calls: int, fixture: bool, reuse: bool) -> list[float]:
    from agentworld.mcp_server.server import EpisodeMcpServer

    task = make_task(1, calls + 20, fixture)
    ep = make_episode(task, fixture, turn_timeout=30)
    async with EpisodeMcpServer(ep, turn_timeout=30) as server:
        run = asyncio.create_task(ep.run())
        try:
            return await timed_calls(server.url, server.token("agent_1"), reuse, calls, turn_open=True)
        finally:
            run.cancel()
            try:
                await run
            except asyncio.CancelledError:
                pass


def summary(lat: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(lat), "p90_ms": pct(lat, 90), "min_ms": min(lat)}


async def bench_latency(calls: int, fixture: bool) -> dict[str, dict[str, float]]:
    """Median tool-call latency of this server and of a bare FastMCP server, over one reused connection and
    over a new connection per call, measured in the same run (interleaved, so machine noise hits both)."""
    out: dict[str, dict[str, float]] = {}
    for reuse in (True, False):
        conn = "reused connection" if reuse else "new connection per call"
        out[f"bare FastMCP, {conn}"] = summary(await bare_fastmcp_latency(calls, reuse))
        out[f"AgentWorld, {conn}"] = summary(await agentworld_latency(calls, fixture, reuse))
    return out


# -- part 2: many clients ----------------------------------------------------------------------------------
# The client process is the same as `agentworld bench mcp-load`'s: one MCP session per seat.
from agentworld.mcp_server.bench import run_clients  # noqa: E402


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
    from agentworld.mcp_server.eventloop import run  # uvloop when installed, as `agentworld serve`

    if args.clients:
        run(run_clients(args.clients, args.rounds))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if args.only in (None, "latency"):
        lat = run(bench_latency(args.calls, args.fixture))
        t = Table("server, connection", "median ms", "p90 ms", "min ms", "x bare (median)",
                  title=f"MCP tool call latency, {args.calls} calls each (streamable HTTP, loopback)")
        for name, fig in lat.items():
            floor = lat[name.replace("AgentWorld", "bare FastMCP")]
            t.add_row(name, f"{fig['median_ms']:.2f}", f"{fig['p90_ms']:.2f}", f"{fig['min_ms']:.2f}",
                      f"{fig['median_ms'] / floor['median_ms']:.2f}")
        console.print(t)
        console.print("target: at most 1.2x the bare server. An AgentWorld call also runs the turn (gate, world, "
                      "record) and answers with the seat's next turn (tick, observation).")
    if args.only in (None, "many"):
        many = run(bench_many(args.agents, args.rounds, args.fixture, args.turn_timeout))
        t = Table("figure", "value", title=f"{args.agents} concurrent MCP clients on a {args.agents}-agent task")
        for k, v in many.items():
            t.add_row(k, f"{v:.2f}" if isinstance(v, float) else str(v))
        console.print(t)


if __name__ == "__main__":
    main()
