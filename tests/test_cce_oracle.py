"""Grounded CCE on the oracle runs of the starter tasks (the reference solutions played by the engine)."""

from __future__ import annotations

import anyio
import pytest

from agentworld.core.cce.graph import load_episode
from agentworld.core.cce.score import score_episode
from agentworld.core.cce.grounded import GroundedJudge
from agentworld.core.cce.judges import ScriptedJudge
from agentworld.core.tasks.task import load_suite

ITEM_CHECKS = ("item_count", "crafted", "delivered", "equipped")


@pytest.fixture(scope="module")
def oracle_runs(oracle_episode):
    tasks = load_suite("main")

    async def play():
        return [(task, (await oracle_episode(task))[1]) for task in tasks]

    return anyio.run(play)


def objective_items(task, ep) -> set[str]:
    """The items the verifier asked for at the end: a change_objective event may have changed a check's item."""
    changed = ((ep.final_state or {}).get("world", {}).get("mechanics") or {}).get("check_overrides") or {}
    items = set()
    for i, c in enumerate(task.verifier.checks):
        params = {**c.params, **changed.get(c.name or "", {}), **changed.get(str(i), {})}
        if c.check in ITEM_CHECKS and "item" in params:
            items.add(params["item"])
    return items


def touches(turn, items: set[str]) -> bool:
    e = turn.effects
    moved = {d.item for d in (*e.gained, *e.lost)} | {t.item for t in e.transfers} | {c.item for c in e.crafted}
    return bool(moved & items) or (e.equipped is not None and e.equipped.item in items)


def test_suite_is_there(oracle_runs):
    assert len(oracle_runs) >= 8


def test_grounded_cce_on_oracle_runs_covers_every_objective_item_action(oracle_runs):
    for task, folder in oracle_runs:
        ep = load_episode(folder)
        assert ep.success, f"{task.id}: the oracle run failed; CCE needs a successful episode"
        report = score_episode(ep, GroundedJudge())
        assert 0 < report.cce <= 1, task.id
        assert report.judge_calls == 0 and report.success_actions, task.id
        contributing = report.contributing_ids()
        items = objective_items(task, ep)
        for turn in ep.turns:
            if turn.ok and touches(turn, items):
                nid = f"r{turn.round}.{turn.agent}"
                assert nid in contributing, f"{task.id}: {nid} {turn.tool} moved an objective item but is not contributing"
        # sleeping never enables anything
        assert not any(n.contributing for n in report.nodes if n.tool == "sleep"), task.id


def test_paper_method_with_a_scripted_judge_runs_on_every_oracle_episode(oracle_runs):
    for task, folder in oracle_runs:
        judge = ScriptedJudge.from_rule("effects")
        report = score_episode(folder, judge)
        rounds = {n.round for n in report.nodes}
        # one success question plus at most one call per round; the rest were skipped
        assert report.judge_calls == judge.calls == 1 + len(rounds) - len(report.skipped_rounds), task.id
        assert 0 < report.cce <= 1, task.id
