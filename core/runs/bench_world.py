"""What `agentworld bench world` measures: speed and memory of the embedded world on the real data pack.

Three figures with their targets:
- the time of one engine path query between walkable tiles 100-250 tiles apart, cold (targets: median
  < 5 ms, p99 < 10 ms), beside a plain breadth-first search on the same queries, and the queries the
  oracle team asks in play on a sample of the shipped tasks, timed cold too;
- agent-turns per second for N agents (default 20) acting randomly: each turn is one observation
  (built and rendered as text) plus one random, plausible tool call through ``TOOLS[...].execute``,
  and every round ends with the world tick (target >= 2,000 per second);
- peak memory of loading the world: Python allocations (tracemalloc) and the process's peak RSS
  (target < 150 MB).
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import sys
import time
import tracemalloc
from typing import Any

TARGETS = {"path_median_ms": 5.0, "path_p99_ms": 10.0, "agent_turns_per_s": 2000.0, "peak_mb": 150.0}


def measure_load() -> tuple[Any, dict[str, float]]:
    """Load the real world under tracemalloc; returns it with load time and memory figures (MB)."""
    from ..world.datapack import load_world

    rss_before = _rss_now_mb()
    tracemalloc.start()
    t0 = time.perf_counter()
    loaded = load_world()
    from ..world.engine import EmbeddedWorld

    world = EmbeddedWorld(loaded, seed=0)  # one episode's state on top of the shared world
    load_s = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del world
    return loaded, {"load_s": load_s, "tracemalloc_peak_mb": peak / 2**20, "rss_peak_mb": _rss_peak_mb(),
                    "rss_before_load_mb": rss_before, "rss_after_load_mb": _rss_now_mb()}


def _rss_now_mb() -> float:
    """Current resident set size (Linux /proc); the peak where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return _rss_peak_mb()


def _rss_peak_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def random_walkable(gm, rng: random.Random) -> tuple[int, int]:
    while True:
        x, y = rng.randrange(gm.width), rng.randrange(gm.height)
        if gm.walkable(x, y):
            return x, y


def bench_paths(loaded, queries: int, seed: int) -> dict[str, float]:
    """Engine path queries (``pathing.route``) between connected tiles 100-250 tiles apart (Manhattan), each
    asked for the first time (the process-wide path cache is emptied first: these are cold figures), beside
    a floor measured in the same run: a plain breadth-first search on every tenth of the same queries."""
    import numpy  # noqa: F401 - the search imports it on a process's first detour: a start-up cost, not a query's

    from ..world.pathing import PATHS, route

    PATHS.clear()
    gm = loaded.map
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < queries:
        a = random_walkable(gm, rng)
        b = (a[0] + rng.randint(-250, 250), a[1] + rng.randint(-250, 250))
        if not (100 <= abs(a[0] - b[0]) + abs(a[1] - b[1]) <= 250) or not gm.connected(a, b):
            continue
        pairs.append((a, b))
    times, cpu, lengths = [], [], []
    for a, b in pairs:
        c0, t0 = time.thread_time(), time.perf_counter()
        path = route(gm, a, b)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)  # on a shared machine: what the query itself cost
        lengths.append(len(path or []))
    sample = list(range(0, queries, 10))
    walk = gm.walkable_grid.ravel().tolist()
    floor = [_timed_bfs(gm.width, walk, *pairs[i]) for i in sample]
    out = {"path_queries": queries, **_spread("path", times), **_spread("path_cpu", cpu),
           "path_mean_length": statistics.fmean(lengths),
           "path_floor_bfs_median_ms": statistics.median(floor),
           "path_floor_sample_median_ms": statistics.median(times[i] for i in sample),
           "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    out["path_ratio_to_floor"] = out["path_floor_sample_median_ms"] / out["path_floor_bfs_median_ms"]
    return out


def bench_play_paths(tasks: int) -> dict[str, float]:
    """Path queries as they occur in play: the distinct engine queries the oracle team asks on ``tasks``
    shipped tasks spread over the main suite, each then timed cold (cache emptied)."""
    from ..runs.prove import play
    from ..tasks.task import load_suite
    from ..world import pathing

    suite = load_suite("main")
    picked = suite[::max(1, len(suite) // tasks)][:tasks] if tasks else []
    asked: dict[tuple, None] = {}

    class Recording(pathing.PathCache):  # every distinct query, in the order play first asks it
        def get(self, gm, key):
            asked.setdefault((gm, *key))
            return super().get(gm, key)

    import numpy  # noqa: F401 - as in bench_paths

    saved, pathing.PATHS = pathing.PATHS, Recording()
    try:
        for task in picked:
            play(task, "oracle", seed=0)
    finally:
        pathing.PATHS = saved
    pathing.PATHS.clear()
    times, cpu = [], []
    for gm, start, target, reach, max_len in asked:
        c0, t0 = time.thread_time(), time.perf_counter()
        pathing.route(gm, start, target, reach, max_len)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    return {"play_tasks": len(picked), "play_queries": len(times), **_spread("play_path", times or [0.0]),
            **_spread("play_path_cpu", cpu or [0.0])}


def _spread(name: str, times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {f"{name}_median_ms": statistics.median(times), f"{name}_p90_ms": times[int(0.9 * (len(times) - 1))],
            f"{name}_p99_ms": times[int(0.99 * (len(times) - 1))], f"{name}_max_ms": times[-1]}


def _timed_bfs(w: int, walk: list[bool], start: tuple[int, int], goal: tuple[int, int]) -> float:
    """ms for a plain breadth-first search from ``start`` until it reaches ``goal`` (the floor)."""
    t0 = time.perf_counter()
    s, g = start[1] * w + start[0], goal[1] * w + goal[0]
    seen = {s}
    front = [s]
    while g not in seen and front:
        nxt = []
        for t in front:
            x = t % w
            for n in (t - w, t - 1 if x else -1, t + 1 if x + 1 < w else -1, t + w):
                if 0 <= n < len(walk) and walk[n] and n not in seen:
                    seen.add(n)
                    nxt.append(n)
        front = nxt
    return (time.perf_counter() - t0) * 1000


def _starting_kit(loaded) -> list[Any]:
    from ..world.api import StackSpec

    wanted = ["axe", "pickaxe", "fishing_rod", "knife", "hammer", "cooked_trout", "logs", "copper_ore", "tin_ore"]
    return [StackSpec(item=k, count=5 if loaded.has_item(k) and loaded.item(k).stackable else 1)
            for k in wanted if loaded.has_item(k)]


def bench_turns(loaded, agents: int, rounds: int, seed: int) -> dict[str, Any]:
    """Agents acting randomly around the central village; every turn observes, then calls one tool."""
    from ..world.tools import TOOL_NAMES, TOOLS
    from ..world.api import PlayerSpec
    from ..world.engine import EmbeddedWorld

    world = EmbeddedWorld(loaded, seed=seed, rules={"death": "respawn"})
    rng = random.Random(seed)
    centre = loaded.data.landmarks[0]
    kit = _starting_kit(loaded)
    skills = {"lumberjacking": 10, "mining": 10, "fishing": 10, "accuracy": 10, "strength": 10, "defense": 10,
              "health": 10, "crafting": 5, "smithing": 5, "smelting": 5, "fletching": 5, "cooking": 5}
    for i in range(agents):
        x, y = loaded.map.nearest_walkable(centre.x + rng.randint(-15, 15), centre.y + rng.randint(-15, 15), 40)
        world.add_player(PlayerSpec(agent_id=f"agent_{i + 1}", username=f"player{i + 1}", x=x, y=y,
                                    skills=skills, inventory=kit))
    recipes = [(r.skill.capitalize(), next(iter(r.outputs))) for r in loaded.data.recipes]
    item_keys = [i.key for i in loaded.data.items]
    names = [f"player{i + 1}" for i in range(agents)]
    calls: dict[str, int] = {n: 0 for n in TOOL_NAMES}
    oks: dict[str, int] = {n: 0 for n in TOOL_NAMES}
    obs_bytes = []
    turns = 0
    t0 = time.perf_counter()
    for rnd in range(1, rounds + 1):
        for aid in list(world.players):
            obs = world.observe(aid)
            text = obs.render_text()
            obs_bytes.append(len(text.encode()))
            name, args = _random_call(rng, obs, recipes, item_keys, names)
            r = TOOLS[name].execute(world, aid, args)
            calls[name] += 1
            oks[name] += r.ok
            turns += 1
        world.end_round(rnd)
    elapsed = time.perf_counter() - t0
    obs_bytes.sort()
    return {"agents": agents, "rounds": rounds, "agent_turns": turns, "turns_s": elapsed,
            "agent_turns_per_s": turns / elapsed, "obs_median_bytes": obs_bytes[len(obs_bytes) // 2],
            "obs_max_bytes": obs_bytes[-1],
            "ok_rate": {n: round(oks[n] / calls[n], 2) for n in TOOL_NAMES if calls[n]}}


def _random_call(rng: random.Random, obs, recipes, item_keys, names) -> tuple[str, dict]:
    """A plausible call: targets come from the observation most of the time, like a weak model's."""
    kinds: dict[str, list] = {}
    for e in obs.nearby:
        kinds.setdefault(e.kind, []).append(e)
    roll = rng.random()
    if roll < 0.30:
        return "move_character", {"x": obs.x + rng.randint(-40, 40), "y": obs.y + rng.randint(-40, 40)}
    if roll < 0.45:
        ids = [e.id for e in kinds.get("resource", [])] or ["oak_tree#1"]
        return "harvest_resource", {"targetInstance": rng.choice(ids)}
    if roll < 0.55:
        ids = [e.id for e in kinds.get("mob", [])] or ["goblin#1"]
        return "attack_entity", {"targetInstance": rng.choice(ids)}
    if roll < 0.62:
        skill, item = rng.choice(recipes)
        return "craft_item", {"skill": skill, "itemKey": item, "count": rng.choice([1, 5])}
    if roll < 0.68:
        return "equip_item", {"index": rng.randint(0, 10)} if rng.random() < 0.5 else {"itemKey": rng.choice(item_keys)}
    if roll < 0.75:
        return "transfer_items", {"targetPlayer": rng.choice(names), "itemKey": rng.choice(item_keys[:30]),
                                  "count": rng.randint(1, 3)}
    if roll < 0.82:
        return "chat", {"message": f"at {obs.x},{obs.y}, hp {obs.hp}"}
    if roll < 0.87:
        return "send_chat_message", {"message": "anyone near?", "global": rng.random() < 0.3}
    if roll < 0.90:
        ids = [e.id for e in kinds.get("ground_item", [])] or ["ground#1"]
        return "pickup_resource", {"targetInstance": rng.choice(ids)}
    if roll < 0.93:
        return "enter_portal", {}
    if roll < 0.97:
        return "sleep", {"seconds": 5}
    return "stop_action", {}


def run_bench(agents: int = 20, rounds: int = 100, queries: int = 200, seed: int = 0,
              play_tasks: int = 10) -> dict[str, Any]:
    loaded, mem = measure_load()
    out: dict[str, Any] = {"world_version": loaded.version, "width": loaded.map.width, "height": loaded.map.height,
                           "resource_nodes": len(loaded.nodes), "mobs": len(loaded.mobs), **mem}
    out.update(bench_paths(loaded, queries, seed))
    out.update(bench_play_paths(play_tasks))
    out.update(bench_turns(loaded, agents, rounds, seed))
    out["rss_peak_mb"] = _rss_peak_mb()
    out["peak_mb"] = max(out["tracemalloc_peak_mb"], out["rss_peak_mb"])
    out["targets"] = TARGETS
    out["meets_targets"] = (out["path_median_ms"] < TARGETS["path_median_ms"]
                            and out["path_p99_ms"] < TARGETS["path_p99_ms"]
                            and out["agent_turns_per_s"] >= TARGETS["agent_turns_per_s"]
                            and out["peak_mb"] < TARGETS["peak_mb"])
    return out
