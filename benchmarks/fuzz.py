"""Long fuzzing campaigns: whole episodes of the shipped tasks on the real world, driven through the turn gate
with arbitrary tool calls, every invariant checked after every call and tick (core/play/fuzzing.py), and
every episode replayed to check that the same calls give the same trajectory.

A seeded ``random`` draws the calls (the property test tests/test_fuzz_episodes.py draws them with
hypothesis on a small world): mostly well-formed calls aimed at what the agent sees, plus junk arguments,
unknown tools, huge strings, second calls in a turn and calls out of turn through other agents' ports.

Usage: ``python benchmarks/fuzz.py --minutes 10 [--seed N] [--suite main]``. Prints calls, episodes,
replays, violations and exceptions; exits 1 if anything broke.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from agentworld.core.play.episode import Episode
from agentworld.core.play.fuzzing import Call, Ref, TurnPlan, fuzz_episode
from agentworld.core.tasks.task import load_suite, world_index
from agentworld.core.world.datapack import load_world
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.core.world.tools import TOOL_NAMES, TOOLS

PARAMS = sorted({p for t in TOOLS.values() for p in t.parameter_names()} | {"junk", "item_key", "target_instance"})
STRINGS = ["", "  ", "x" * 1001, "y" * 200_000, "0", "-1", "7", "logs", "oak_tree#1", "agent_2", "\u00e9\u4e16",
           "'; DROP TABLE", "\n\t", "null"]
REF_KINDS = ["nearby", "inv_key", "inv_index", "teammate", "x", "y", "recipe"]


def scalar(rng: random.Random) -> Any:
    return rng.choice([
        lambda: None, lambda: rng.random() < 0.5, lambda: rng.randint(-10**12, 10**12),
        lambda: rng.choice([0.5, -3.0, float("nan"), float("inf"), 1e308]), lambda: rng.choice(STRINGS),
        lambda: "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(1, 12))),
    ])()


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return Ref(rng.choice(REF_KINDS), rng.randint(-80, 80))
    if roll < 0.8 or depth > 2:
        return scalar(rng)
    if roll < 0.9:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(PARAMS): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def well_formed(rng: random.Random) -> Call:
    tool = rng.choice(TOOL_NAMES)
    k = rng.randint(0, 30)
    if tool == "move_character":
        return Call(tool, {"x": Ref("x", rng.randint(-70, 70)), "y": Ref("y", rng.randint(-70, 70))})
    if tool in ("harvest_resource", "pickup_resource", "attack_entity"):
        kind = {"harvest_resource": "resource", "pickup_resource": "ground_item", "attack_entity": "mob"}[tool]
        return Call(tool, {"targetInstance": Ref(rng.choice(["nearby", f"nearby:{kind}", f"nearby:{kind}"]), k)})
    if tool == "transfer_items":
        return Call(tool, {"targetPlayer": Ref("teammate", k), "itemKey": Ref("inv_key", rng.randint(0, 9)),
                           "count": rng.randint(1, 5)})
    if tool == "equip_item":
        return Call(tool, rng.choice([{"index": Ref("inv_index", k)}, {"itemKey": Ref("inv_key", k)}]))
    if tool == "craft_item":
        return Call(tool, {"skill": rng.choice(["Crafting", "smithing", "Fletching", "Cooking", "Smelting"]),
                           "itemKey": Ref("recipe", rng.randint(0, 500)), "count": rng.randint(1, 10)})
    if tool in ("chat", "send_chat_message"):
        return Call(tool, {"message": rng.choice(["hi", "meet at the forge", "x" * 999]), "global": rng.random() < 0.5}
                    if tool == "send_chat_message" else {"message": rng.choice(["hi", "need logs"])})
    if tool == "sleep":
        return Call(tool, {"seconds": rng.randint(1, 60)})
    if tool == "complete":
        return Call(tool, {"response": "done"})
    return Call(tool, {})


def junk(rng: random.Random) -> Call:
    tool = rng.choice(list(TOOL_NAMES) + ["", "teleport", "Chat", "x" * 300])
    args: Any = {rng.choice(PARAMS): value(rng) for _ in range(rng.randint(0, 4))}
    if rng.random() < 0.1:
        args = rng.choice([None, [], "move", 3, [1, 2]])
    return Call(tool, args)


def plans(rng: random.Random, n: int) -> list[TurnPlan]:
    def call() -> Call:
        return well_formed(rng) if rng.random() < 0.75 else junk(rng)

    out = []
    for _ in range(n):
        calls = [call() for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 3]))]
        out.append(TurnPlan(calls, call() if rng.random() < 0.15 else None, rng.randint(0, 20)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--suite", default="main")
    ap.add_argument("--max-rounds", type=int, default=12, help="rounds per episode, drawn from 1 to this")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tasks = load_suite(args.suite)
    example = Path(__file__).resolve().parent.parent / "tests" / "data" / "example_mechanics.yaml"
    if example.is_file():  # the worked example: every event, joint action and hidden kind in play
        from agentworld.core.tasks.task import load_task

        tasks.append(load_task(example))
    loaded = load_world()
    recipes = sorted({o for r in world_index().recipes for o in r.outputs})
    totals = {"episodes": 0, "replays": 0, "calls": 0, "refused": 0, "succeeded": 0, "item_moves": 0, "ticks": 0}
    violations: list[str] = []
    exceptions: list[str] = []
    t0 = time.perf_counter()
    deadline = t0 + args.minutes * 60
    while time.perf_counter() < deadline:
        base = rng.choice(tasks)
        rules = dict(base.world_rules, death=rng.choice(["out", "respawn"]))
        task = base.model_copy(update={"rounds": rng.randint(1, args.max_rounds), "world_rules": rules})
        seed = rng.randint(0, 10**6)

        with tempfile.TemporaryDirectory() as tmp:
            made = []

            def make(team: Any, task: Any = task, seed: int = seed) -> Episode:
                made.append(1)  # each episode (and its replay) writes its trajectory: the writer is fuzzed too
                return Episode(task, team, seed=seed, out_dir=Path(tmp) / str(len(made)),
                               world=EmbeddedWorld(loaded, seed=seed, rules=dict(task.world_rules),
                                                   mechanics=task.mechanics))

            report = asyncio.run(fuzz_episode(make, plans(rng, task.rounds * len(task.agents)), recipes))
        totals["episodes"] += 1
        totals["replays"] += report.replayed
        for k in ("calls", "refused", "succeeded", "item_moves", "ticks"):
            totals[k] += getattr(report, k)
        violations += [f"{task.id} seed {seed}: {v}" for v in report.violations]
        exceptions += [f"{task.id} seed {seed}: {e}" for e in report.exceptions]
    wall = time.perf_counter() - t0
    print(f"fuzz: {wall / 60:.1f} min, seed {args.seed}, suite {args.suite} ({len(tasks)} tasks)")
    print(f"  episodes {totals['episodes']:,} (replayed {totals['replays']:,}), tool calls {totals['calls']:,} "
          f"({totals['succeeded']:,} carried out by the world, {totals['refused']:,} refused by the gate), "
          f"ticks {totals['ticks']:,}, item movements checked {totals['item_moves']:,}, "
          f"{totals['calls'] / wall:,.0f} calls/s")
    print(f"  exceptions escaping the episode: {len(exceptions)}; invariant violations: {len(violations)}")
    for line in (exceptions + violations)[:20]:
        print("   ", line[:300])
    raise SystemExit(1 if exceptions or violations else 0)


if __name__ == "__main__":
    main()
