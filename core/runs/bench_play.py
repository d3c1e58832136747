"""What ``agentworld bench scale|harness|startup|concurrency`` measure. Each returns rows plus the floor they
are compared with, measured in the same run (this machine is shared and noisy: the ratio is the solid part).

- scale: N agents (a generated task, spawned round the map's landmarks, or ``packed`` into one village)
  play the random team through the full episode layer, trajectory written; each N runs in a fresh process
  so its RSS is its own. Floor: the cost per agent-turn at the smallest N.
- harness: the random team on a shipped task; what the episode layer adds per call (the Turn and its
  prompts, the gate, turn bookkeeping, the turn event built and written) against the world's own execution
  of the same calls (argument validation and the action: the floor), both timed inside the same episodes.
- startup: wall time of commands in fresh processes (``agentworld --help``, the README's first episode, a
  warm ``load_world()``) against a bare ``python -c pass`` (the floor).
- concurrency: K identical episodes whose team sleeps like a model call before each move, run together in
  one process; speed-up over one episode alone (the floor) against the ideal K.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

KIT = ("axe", "pickaxe", "fishing_rod", "knife", "hammer", "cooked_trout", "logs", "copper_ore", "tin_ore")
SKILLS = {"lumberjacking": 10, "mining": 10, "fishing": 10, "accuracy": 10, "strength": 10, "defense": 10,
          "health": 10, "crafting": 5, "smithing": 5, "smelting": 5, "fletching": 5, "cooking": 5}


def rss_mb() -> float:
    """This process's resident set size now (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return kb / 1024 if sys.platform != "darwin" else kb / 2**20


# -- scale -----------------------------------------------------------------------------------------------
def scale_task(agents: int, rounds: int, packed: bool = False, seed: int = 0) -> Any:
    """A generated task: ``agents`` agents with a gatherer's kit, spread round every landmark (or packed into
    the first village), a verifier that cannot pass (so every round is played) and respawning deaths."""
    from ..tasks.task import AgentDef, CheckSpec, Objectives, Task, VerifierSpec, YamlStack
    from ..world.datapack import load_world

    w = load_world()
    rng = random.Random(seed)
    kit = [YamlStack(item=k, count=5 if w.item(k).stackable else 1) for k in KIT if w.has_item(k)]
    marks = w.data.landmarks[:1] if packed else w.data.landmarks
    spread = 15 if packed else 25
    out = []
    for i in range(agents):
        lm = marks[i % len(marks)]
        x, y = w.map.nearest_walkable(lm.x + rng.randint(-spread, spread), lm.y + rng.randint(-spread, spread), 60) \
            or (lm.x, lm.y)
        out.append(AgentDef(agent_id=f"agent_{i + 1}", username=f"player{i + 1}", x=x, y=y, skills=SKILLS,
                            inventory=kit, role="gatherer"))
    return Task(id=f"bench_scale_{agents}", name=f"{agents} agents", description="Benchmark: agents act at random.",
                objectives=Objectives(primary="none (benchmark)"), rounds=rounds, max_action_steps=rounds + 1,
                agents=out, world_rules={"death": "respawn"},
                verifier=VerifierSpec(checks=[CheckSpec(check="item_count", item="staff", count=10**6),
                                              CheckSpec(check="all_alive")]))


def scale_once(agents: int, rounds: int, packed: bool = False, seed: int = 0) -> dict[str, float]:
    """One size, in this process: the median time of a round (turns, tick, verifier, recording), wall and CPU
    (the process's; on a shared machine the wall time moves with the load, the CPU time much less)."""
    from ..play.episode import Episode
    from ..play.policies import PolicyTeam, RandomPolicy
    from ..play.records import TickEvent

    task = scale_task(agents, rounds, packed, seed)
    marks: list[tuple[float, float]] = []  # (wall, CPU) at the end of each round

    def progress(event: Any) -> None:
        if isinstance(event, TickEvent):
            marks.append((time.perf_counter(), time.process_time()))

    with tempfile.TemporaryDirectory() as tmp:
        ep = Episode(task, PolicyTeam(RandomPolicy(seed, task)), seed=seed, out_dir=tmp, framework="random",
                     progress=progress)
        start: list[tuple[float, float]] = []
        first = ep._turn

        async def timed_turn(agent_id: str, rnd: int) -> None:  # the clock starts at the first turn
            if not start:
                start.append((time.perf_counter(), time.process_time()))
            await first(agent_id, rnd)

        ep._turn = timed_turn  # type: ignore[method-assign]
        asyncio.run(ep.run())
        rss = rss_mb()
    ends = [*start, *marks]
    ms = statistics.median(b[0] - a[0] for a, b in zip(ends, marks)) * 1000
    cpu_ms = statistics.median(b[1] - a[1] for a, b in zip(ends, marks)) * 1000
    return {"agents": agents, "ms_per_round": round(ms, 3), "ms_per_agent_turn": round(ms / agents, 4),
            "rss_mb": round(rss, 1), "cpu_ms_per_round": round(cpu_ms, 3)}


MIN_TURNS = 500  # agent-turns each size plays at least: a small team's median round is otherwise a handful of turns


def scale_rounds(agents: int, rounds: int) -> int:
    """Rounds a size plays: ``rounds``, or more for a small team, so that its median round (the floor at the
    smallest size) rests on at least :data:`MIN_TURNS` agent-turns rather than on a few noisy ones."""
    return max(rounds, -(-MIN_TURNS // agents))


def bench_scale(sizes: list[int], rounds: int, packed: bool = False, seed: int = 0) -> dict[str, Any]:
    """Every size in a fresh process (so RSS is that size's own), with the ``agentworld`` program's collector
    settings (``core/cli/collector.py``: what ``agentworld run`` plays with); rows in the order given."""
    rows = []
    for n in sizes:
        code = ("import json\nfrom agentworld.core.cli.collector import for_program\n"
                "from agentworld.core.runs.bench_play import scale_once\nwith for_program():\n"
                f"    print(json.dumps(scale_once({n}, {scale_rounds(n, rounds)}, {packed!r}, {seed})))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"bench scale with {n} agents failed:\n{out.stderr[-2000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"rows": rows}


# -- harness -----------------------------------------------------------------------------------------------
def bench_harness(task_id: str = "task_08_convoy", rounds: int = 30, seeds: int = 3) -> dict[str, Any]:
    """Per call, in the same episodes: the world's tool execution (validating the arguments and acting: the
    floor), the world's observation, and the episode layer (everything else the episode does for a turn:
    the Turn and its lazily rendered prompts, the gate, bookkeeping, the turn event built, encoded and
    written), i.e. ``harness_s`` plus the writing, less the observation and the tool execution. Each seed is
    played once untimed first, so the tool figure is the world's own work, not first-time path searches
    (answers the process-wide path cache keeps): the stricter comparison for the layer."""
    from ..play.episode import Episode
    from ..play.policies import PolicyTeam, RandomPolicy
    from ..play.records import TurnEvent
    from ..play.trajectory import read_events
    from ..tasks.task import find_task

    task = find_task(task_id).model_copy(update={"rounds": rounds})
    harness = record = observe = tool = 0.0
    turns = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            asyncio.run(Episode(task, PolicyTeam(RandomPolicy(seed, task)), seed=seed, out_dir=Path(tmp) / "warm").run())
            out = Path(tmp) / f"s{seed}"
            ep = Episode(task, PolicyTeam(RandomPolicy(seed, task)), seed=seed, out_dir=out)
            observe_s, tool_s = _time_world(ep)
            asyncio.run(ep.run())
            events = [e for e in read_events(out) if isinstance(e, TurnEvent)]
            turns += len(events)
            harness += sum(e.harness_s for e in events)
            record += ep.record_s
            observe += sum(observe_s)
            tool += sum(tool_s)
    per = 1000 / max(turns, 1)
    return {"task": task_id, "turns": turns, "world_tool_ms": tool * per, "world_observe_ms": observe * per,
            "layer_ms": max(0.0, harness + record - observe - tool) * per}


def _time_world(ep: Any) -> tuple[list[float], list[float]]:
    """Collect the time of each observation the episode asks of its world, and of each tool execution (the
    gate's own figure), without changing what either does."""
    observe_s: list[float] = []
    tool_s: list[float] = []
    world_observe, gate_close = ep.world.observe, ep.gate.close

    def observe(agent_id: str) -> Any:
        t0 = time.perf_counter()
        obs = world_observe(agent_id)
        observe_s.append(time.perf_counter() - t0)
        return obs

    def close() -> Any:
        rec = gate_close()
        tool_s.append(rec.tool_s)
        return rec

    ep.world.observe, ep.gate.close = observe, close
    return observe_s, tool_s


# -- startup -----------------------------------------------------------------------------------------------
STARTUP_WARM_LOAD = ("import time; from agentworld.core.world.datapack import load_world; t = time.perf_counter(); "
                     "load_world(); print((time.perf_counter() - t) * 1000)")
README_EPISODE = "agentworld run --task task_205_goldfield_two_forges --framework oracle"


def startup_mode() -> dict[str, Any]:
    """How the agentworld being measured is installed, in an environment of how many distributions, and
    whether its modules and its dependencies' start from cached bytecode. Start-up figures depend on both: with ``PYTHONDONTWRITEBYTECODE=1`` and no
    ``__pycache__`` every process compiles every module it imports from source (a regular ``pip install``
    writes .pyc files at install time; an editable install, or ``uv pip install`` without
    ``--compile-bytecode``, does not)."""
    import importlib.util
    from importlib import metadata

    try:
        raw = metadata.distribution("agentworld").read_text("direct_url.json")
        editable = bool(json.loads(raw or "{}").get("dir_info", {}).get("editable"))
    except (metadata.PackageNotFoundError, ValueError):
        editable = False
    install = "editable" if editable else "regular"

    def cached(module: str) -> bool:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        return bool(origin and origin.endswith(".py") and Path(importlib.util.cache_from_source(origin)).exists())

    writes = not os.environ.get("PYTHONDONTWRITEBYTECODE")
    own, deps = cached("agentworld.core.cli"), cached("click")

    def says(ok: bool) -> str:
        return "from cached .pyc" if ok else ("compiled once, then cached" if writes else
                                              "compiled from source at every start")

    # the environment's size: the README's `pip install .` has ~47 distributions, `.[all]` ~106; a start-up
    # reads every one's entry points (our plugins and pydantic's), so the same code starts slower in a bigger one
    distributions = sum(1 for _ in metadata.distributions())
    return {"install": install, "pyc_agentworld": own, "pyc_dependencies": deps, "writes_bytecode": writes,
            "distributions": distributions,
            "text": f"{install} install in an environment of {distributions} installed distributions; agentworld's "
                    f"modules {says(own)}, its dependencies' {says(deps)}"
                    + ("" if writes else " (PYTHONDONTWRITEBYTECODE is set)")}


def bench_startup(repeat: int = 5) -> dict[str, Any]:
    """Median wall time (and CPU time: user + system, which a busy machine inflates less) of each command in a
    fresh process. The commands take turns, round after round, so the floor and the commands see the same
    load, after one untimed run of the README's episode has warmed the world and task caches; the episode writes
    to a temp folder, and its own wall time (``wall_s`` in its
    results.jsonl) is reported beside it. ``mode`` says how agentworld is installed and whether modules start
    from cached bytecode (checked after the runs, which may write it); ``load_average`` is the 1-minute
    load average before and after."""
    import resource

    exe = Path(sys.executable).with_name("agentworld")
    agentworld = [str(exe)] if exe.exists() else [sys.executable, "-c", "from agentworld.core.cli import main; main()"]
    load_before = _load_average()
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "agentworld --help": [*agentworld, "--help"],
            README_EPISODE: [*agentworld, "run", "--task", "task_205_goldfield_two_forges", "--framework", "oracle", "--out", "{out}"],
        }
        # warm the world cache and the task cache (a task file is validated once per version of the code)
        subprocess.run([*commands[README_EPISODE][:-1], str(Path(tmp) / "warm")], capture_output=True, cwd=tmp)
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        episode_s = []
        for i in range(repeat):
            for k, (name, cmd) in enumerate(commands.items()):
                out = Path(tmp) / f"{k}-{i}"  # a fresh run folder each time
                argv = [a.replace("{out}", str(out)) for a in cmd]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
                wall[name].append((time.perf_counter() - t0) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(round((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000, 3))
                if done.returncode != 0:
                    raise RuntimeError(f"`{name}` failed:\n{done.stderr[-2000:]}")
                if (out / "results.jsonl").exists():
                    episode_s += [json.loads(line)["wall_s"] for line in
                                  (out / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = []
        for name in commands:
            rows.append({"command": name, "ms": statistics.median(wall[name]), "cpu_ms": statistics.median(cpu[name])})
            if name == README_EPISODE and episode_s:
                rows.append({"command": "  of which the episode itself (wall_s in its results.jsonl)",
                             "ms": statistics.median(episode_s) * 1000, "cpu_ms": None})
        loads = [float(subprocess.run([sys.executable, "-c", STARTUP_WARM_LOAD], capture_output=True, text=True,
                                      check=True).stdout.strip()) for _ in range(repeat)]
        rows.append({"command": "load_world() with a warm cache (in process)", "ms": statistics.median(loads),
                     "cpu_ms": None})
    return {"rows": rows, "floor_ms": rows[0]["ms"], "floor_cpu_ms": rows[0]["cpu_ms"], "mode": startup_mode(),
            "load_average": [load_before, _load_average()]}


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not on every platform
        return None


# -- concurrency -------------------------------------------------------------------------------------------
class SleepyTeam:
    """The oracle's moves, each after ``latency`` seconds of sleep (a stand-in for a model call)."""

    def __init__(self, task: Any, seed: int, latency: float):
        from ..play.policies import PolicyTeam, make_policy

        self.inner = PolicyTeam(make_policy("oracle", seed, task))
        self.latency = latency

    async def start(self, view: Any) -> None:
        return None

    async def act(self, turn: Any) -> Any:
        await asyncio.sleep(self.latency)
        return await self.inner.act(turn)

    async def aclose(self) -> None:
        return None


async def _episodes(task: Any, k: int, latency: float, out: Path) -> float:
    from ..play.episode import Episode

    eps = [Episode(task, SleepyTeam(task, 0, latency), seed=0, out_dir=out / f"e{i}", framework="sleepy")
           for i in range(k)]
    t0 = time.perf_counter()
    await asyncio.gather(*(e.run() for e in eps))
    return time.perf_counter() - t0


def bench_concurrency(counts: list[int], latencies: Sequence[float] = (1.0, 0.2),
                      task_id: str = "task_205_goldfield_two_forges") -> dict[str, Any]:
    """For each model latency: one episode alone (the floor), then K together for each K. The first latency
    is the headline (``latency_s``, ``single_s``, ``rows`` at the top level); ``runs`` holds every latency."""
    from ..tasks.task import find_task
    from ..world.datapack import load_world

    load_world()
    task = find_task(task_id)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for latency in latencies:
            single = asyncio.run(_episodes(task, 1, latency, Path(tmp) / f"single-{latency}"))
            rows = []
            for k in counts:
                wall = asyncio.run(_episodes(task, k, latency, Path(tmp) / f"k{k}-{latency}"))
                speedup = k * single / wall
                rows.append({"episodes": k, "wall_s": wall, "speedup": speedup, "efficiency": speedup / k})
            runs.append({"latency_s": latency, "single_s": single, "rows": rows})
    return {"task": task_id, **runs[0], "runs": runs}
