"""`agentworld bench ...`: performance figures anyone can check, each beside a floor measured in the same run.

This machine, like most, is shared and noisy: absolute figures move from run to run, the ratio to the floor
much less. Every command prints a table (the ratio in its own column) and, with ``--json``, one JSON object
instead. The measurements live in ``bench_world.py`` (the world alone) and ``bench_play.py`` (episodes,
start-up, concurrency); ``bench mcp-load`` is added to this group by the MCP server's plugin. Module-level
imports are click only: ``agentworld --help`` must not pay for what a benchmark needs.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..hookspecs import hookimpl


@click.group("bench")
def bench_group() -> None:
    """Performance benchmarks (each with its floor measured in the same run)."""


def show(title: str, columns: list[str], rows: list[list[Any]], notes: list[str] = ()) -> None:
    from rich.table import Table

    from ..console import make_console

    table = Table(*columns, title=title)
    for r in rows:
        table.add_row(*[_cell(v) for v in r])
    console = make_console()
    console.print(table)
    for n in notes:
        console.print(n)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 100 else f"{v:,.0f}"
    return str(v)


def _mark(ok: bool) -> str:
    return "[green]met[/]" if ok else "[red]missed[/]"


def _number_list(value: str, name: str, kind: type = int) -> list:
    """``"10,100,1000"`` -> ``[10, 100, 1000]``: whole numbers of at least 1 (``kind=int``), or seconds of at
    least 0 (``kind=float``); anything else is a usage error that names the option."""
    what, sample, least = ("whole numbers", "10,100,1000", 1) if kind is int else ("seconds", "1.0,0.2", 0)
    try:
        out = [kind(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"give {what} separated by commas, e.g. {sample} (got {value!r})",
                                 param_hint=name) from None
    if not out or any(v < least for v in out):
        raise click.BadParameter(f"give at least one number, each {least} or more (got {value!r})", param_hint=name)
    return out


@bench_group.command("world")
@click.option("--agents", default=20, show_default=True, help="Agents acting randomly.")
@click.option("--rounds", default=100, show_default=True, help="Rounds to play (agents x rounds turns).")
@click.option("--queries", default=200, show_default=True, help="Path queries to time (100-250 tiles apart).")
@click.option("--play-tasks", default=10, show_default=True,
              help="Shipped tasks whose oracle run's path queries are timed too (0: none).")
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bench_world(agents: int, rounds: int, queries: int, play_tasks: int, seed: int, as_json: bool) -> None:
    """Path query time, agent-turns per second and peak memory of the embedded world."""
    from .bench_world import TARGETS, run_bench

    res = run_bench(agents, rounds, queries, seed, play_tasks)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    rows = [
        ["path query median (100-250 tiles, cold)", f"{res['path_median_ms']:.2f} ms", "< 5 ms",
         _mark(res["path_median_ms"] < TARGETS["path_median_ms"])],
        ["path query p90 / p99 / max", f"{res['path_p90_ms']:.2f} / {res['path_p99_ms']:.2f} / "
                                        f"{res['path_max_ms']:.1f} ms", "p99 < 10 ms",
         _mark(res["path_p99_ms"] < TARGETS["path_p99_ms"])],
        ["the same, CPU time of the query's thread (median / p99 / max)", f"{res['path_cpu_median_ms']:.2f} / "
         f"{res['path_cpu_p99_ms']:.2f} / {res['path_cpu_max_ms']:.1f} ms", "", ""],
        ["floor: plain BFS, every 10th query (median) / the same queries", f"{res['path_floor_bfs_median_ms']:.1f} / "
         f"{res['path_floor_sample_median_ms']:.2f} ms", "", f"{res['path_ratio_to_floor']:.3f}x"],
        [f"in play: {res['play_queries']} oracle queries, {res['play_tasks']} tasks (median / p99 / max, cold)",
         f"{res['play_path_median_ms']:.2f} / {res['play_path_p99_ms']:.2f} / {res['play_path_max_ms']:.1f} ms",
         "p99 < 10 ms", _mark(res["play_path_p99_ms"] < TARGETS["path_p99_ms"]) if res["play_queries"] else ""],
        ["in play, CPU time (median / p99 / max)", f"{res['play_path_cpu_median_ms']:.2f} / "
         f"{res['play_path_cpu_p99_ms']:.2f} / {res['play_path_cpu_max_ms']:.1f} ms", "", ""],
        [f"agent-turns per second ({res['agents']} agents)", f"{res['agent_turns_per_s']:,.0f}", ">= 2,000",
         _mark(res["agent_turns_per_s"] >= TARGETS["agent_turns_per_s"])],
        ["observation size median / max", f"{res['obs_median_bytes']} / {res['obs_max_bytes']} bytes", "< 4 KB", ""],
        ["world load time", f"{res['load_s']:.2f} s", "", ""],
        ["peak memory (tracemalloc during load / process RSS)",
         f"{res['tracemalloc_peak_mb']:.1f} / {res['rss_peak_mb']:.1f} MB", "< 150 MB",
         _mark(res["peak_mb"] < TARGETS["peak_mb"])],
    ]
    show(f"AgentWorld world {res['world_version']} ({res['width']}x{res['height']}, {res['resource_nodes']} nodes, "
         f"{res['mobs']} mobs)", ["figure", "value", "target", ""], rows,
         ["tool ok-rate under random play: " + ", ".join(f"{k} {v}" for k, v in res["ok_rate"].items()),
          f"load average {res['load_average']:.1f} (figures are wall times; the floor's ratio moves less)"
          if res["load_average"] is not None else ""])


@bench_group.command("scale")
@click.option("--agents", "sizes", default="10,100,1000", show_default=True,
              help="Team sizes, comma-separated (e.g. 10,100,1000,10000); the smallest is the floor.")
@click.option("--rounds", default=5, show_default=True,
              help="Rounds per size, more for a small team (at least 500 agent-turns); the median round is reported.")
@click.option("--packed", is_flag=True, help="Spawn every agent in one village instead of round the map.")
@click.option("--seed", default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True,
              help='Print {"rows": [{"agents", "ms_per_round", "ms_per_agent_turn", "rss_mb", "cpu_ms_per_round"}, '
                   '...]}.')
def bench_scale(sizes: str, rounds: int, packed: bool, seed: int, as_json: bool) -> None:
    """Cost per round and per agent-turn as the team grows (random team, full episode layer)."""
    from .bench_play import bench_scale as measure

    res = measure(_number_list(sizes, "--agents"), rounds, packed, seed)
    if as_json:
        click.echo(json.dumps(res))
        return
    rows = res["rows"]
    floor = min(rows, key=lambda r: r["agents"])
    where = "packed into one village" if packed else "round the map"
    show(f"bench scale: random team, {rounds} rounds or more (500 agent-turns at least), {where}",
         ["agents", "ms / round", "rounds / s", "ms / agent-turn", "ratio to floor", "CPU ms / round", "RSS MB"],
         [[r["agents"], r["ms_per_round"], 1000 / r["ms_per_round"], r["ms_per_agent_turn"],
           r["ms_per_agent_turn"] / floor["ms_per_agent_turn"], r["cpu_ms_per_round"], r["rss_mb"]] for r in rows],
         [f"floor: the cost per agent-turn at {floor['agents']} agents, measured in this run. Targets: 1,000 agents "
          f">= 2 rounds/s (>= 1 packed), cost per agent-turn at 1,000 within 1.5x of the floor at 10. Wall times "
          f"are medians of rounds; CPU is this process's over the same rounds (it moves less with the load)."])


@bench_group.command("harness")
@click.option("--task", "task_id", default="task_08_convoy", show_default=True, help="The task to play.")
@click.option("--rounds", default=30, show_default=True)
@click.option("--seeds", default=3, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bench_harness(task_id: str, rounds: int, seeds: int, as_json: bool) -> None:
    """What the episode layer adds per call, against the world's execution of the same calls (the floor)."""
    from .bench_play import bench_harness as measure

    res = measure(task_id, rounds, seeds)
    res["ratio"] = res["layer_ms"] / res["world_tool_ms"] if res["world_tool_ms"] else None
    if as_json:
        click.echo(json.dumps(res))
        return
    show(f"bench harness: random team on {task_id}, {res['turns']} calls", ["per call", "ms", "ratio to floor"],
         [["world: the tool's execution (arguments validated, action applied) (floor)", res["world_tool_ms"], 1.0],
          ["world: the agent's observation", res["world_observe_ms"], res["world_observe_ms"] / res["world_tool_ms"]],
          ["episode layer: turn, prompts, gate, bookkeeping, event built and written", res["layer_ms"],
           res["ratio"]]],
         [f"target: the episode layer at most 3x the world's tool execution: {_mark((res['ratio'] or 0) <= 3)}"])


@bench_group.command("startup")
@click.option("--repeat", default=5, show_default=True, help="Runs of each command (the median is shown).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bench_startup(repeat: int, as_json: bool) -> None:
    """Wall and CPU time of `agentworld --help`, the README's first episode and a warm load_world()."""
    from .bench_play import bench_startup as measure

    res = measure(repeat)
    if as_json:
        click.echo(json.dumps(res))
        return
    targets = {"agentworld --help": 250, "agentworld run --task task_205_goldfield_two_forges --framework oracle": 600,
               "load_world() with a warm cache (in process)": 50}
    show("bench startup (fresh processes, world cache warm)",
         ["command", "ms", "ratio to floor", "cpu ms", "cpu ratio", "target"],
         [[r["command"], r["ms"], r["ms"] / res["floor_ms"],
           "" if r["cpu_ms"] is None else r["cpu_ms"],
           "" if r["cpu_ms"] is None or not res["floor_cpu_ms"] else r["cpu_ms"] / res["floor_cpu_ms"],
           (f"< {targets[r['command']]} ms " + _mark(r["ms"] < targets[r["command"]])) if r["command"] in targets
           else "(floor)" if r is res["rows"][0] else ""] for r in res["rows"]],
         [f"measured: {res['mode']['text']}; load average {res['load_average'][0]} before, "
          f"{res['load_average'][1]} after (cpu ms: user + system time of the process, which a busy machine "
          "inflates less than the wall time).",
          "A regular `pip install .` writes .pyc files at install time; with PYTHONDONTWRITEBYTECODE=1 an editable "
          "install compiles every module from source in every process (docs/performance.md)."])


@bench_group.command("concurrency")
@click.option("--episodes", "counts", default="20,100", show_default=True,
              help="How many identical episodes to run together, comma-separated.")
@click.option("--latency", "latencies", default="1.0,0.2", show_default=True,
              help="Seconds each simulated model call sleeps, comma-separated; the first is the headline.")
@click.option("--task", "task_id", default="task_205_goldfield_two_forges", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bench_concurrency(counts: str, latencies: str, task_id: str, as_json: bool) -> None:
    """Speed-up of K identical episodes with a sleeping model over one alone (the floor), against K.

    The headline latency is 1.0 s because a real model's call takes seconds; 0.2 s is the stress case, where
    the episodes' own CPU (two cores for 100 episodes) is most of the work."""
    from .bench_play import bench_concurrency as measure

    res = measure(_number_list(counts, "--episodes"), _number_list(latencies, "--latency", float), task_id)
    if as_json:
        click.echo(json.dumps(res))
        return
    rows = [[f"{run['latency_s']:g} s" + (" (headline)" if i == 0 else ""), f"{run['single_s']:.2f}",
             r["episodes"], r["wall_s"], r["speedup"], f"{r['efficiency']:.0%}",
             _mark(r["efficiency"] >= 0.85) if r["episodes"] >= 100 else ""]
            for i, run in enumerate(res["runs"]) for r in run["rows"]]
    show(f"bench concurrency: {task_id}, identical episodes whose model calls sleep",
         ["model latency", "one alone s (floor)", "episodes", "wall s", "speed-up", "share of ideal", "target"], rows,
         ["target: 100 episodes reach at least 85% of the ideal speed-up (ideal = the number of episodes). The "
          "headline is the first latency: a real model's call takes seconds; shorter ones show the CPU-bound case."])


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(bench_group)
