"""Designs a capable team can lose (issue 28): each family carries, besides its reference plan, the plan a team
that does not think together plays (its ``trap`` branch). The reference plan wins; the obvious one loses, for the
reason the design names: a bar handed over before the guild's letter, a crate left behind the slide, a seeker who
set out for the cairn and reaches the hoard after the water, bars smelted before the council's word, a drift
chosen on one workshop's order, a camp charged before the other was looked at, a carrier who walked onto the bridge while the pack was on it,
the island fisher's tuna halved between the sides by fishers who never heard the orders (or pooled at the island's
cook, to be handed back: the design's second trap, ``trap: pool``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentworld.core.runs.replays import play
from agentworld.core.tasks.task import find_task, load_task


# (family, task id, the checkpoint the obvious plan misses for good)
TRAPS = [
    ("guild_letter", "task_430_saltmarsh_guild_letter", "the harbour master's bars"),
    ("guild_letter", "task_432_hearthmoor_guild_letter", "the harbour master's bars"),
    ("slide_crates", "task_431_hearthmoor_slide_crates", "the iron for the hall"),
    ("cairn_trail", "task_526_saltmarsh_cairn_trail", "the hoard for the antiquarian"),
    ("councils_metal", "task_225_fishers_rest_councils_metal", "the marshal's platebody"),
    ("twin_drifts", "task_226_oakridge_twin_drifts", "the pewterer's tin_ore"),
    ("raiders_two_camps", "task_324_oakridge_raiders_two_camps", "the relic returned"),
    ("raiders_two_camps", "task_325_hearthmoor_raiders_two_camps", "the relic returned"),
    ("hound_bridge", "task_326_silverrun_hound_bridge", "the keeper's share of the potions"),
    ("tuna_shares", "task_524_saltmarsh_tuna_order", "the island household's order"),
]


def _obvious_plan_task(build, family: str, task_id: str, tmp_path: Path, trap: bool | str = True, **changed):
    """The task with its family's ``trap`` plan (and the variant's values ``changed``)."""
    raw = yaml.safe_load((build.FAMILIES / f"{family}.yaml").read_text(encoding="utf-8"))
    (row,) = [v for v in raw["variants"] if v["id"] == task_id]
    doc = build.render(raw["template"], {**row, **changed, "trap": trap})
    _, text = build.build_task(family, doc, row)
    path = tmp_path / f"{task_id}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_task(path)


@pytest.mark.parametrize("family, task_id, missed", TRAPS)
def test_the_reference_plan_wins_and_the_obvious_plan_loses(build, tmp_path, family, task_id, missed):
    won, _ = play(find_task(task_id), "oracle", seed=0)
    assert won.success, task_id
    obvious = _obvious_plan_task(build, family, task_id, tmp_path)
    assert obvious.reference_solution != find_task(task_id).reference_solution
    lost, _ = play(obvious, "oracle", seed=0)
    assert not lost.success, task_id
    (checkpoint,) = [c for c in lost.checkpoints if missed in c.name]
    assert not checkpoint.achieved, checkpoint


def test_tuna_pooled_at_one_cook_loses_on_that_cooks_fish(build, tmp_path):
    """A team without chat won task_524 by pooling: the island fisher handed its whole catch to the island's
    cook, who cooked its order and handed the spare on. The objective counts the fish each cook is handed
    (``delivered`` with ``kept: false``), so pooling spoils that cook's share. With the last ferry late
    enough for the pooled plan to be in time, it wins without those checks and loses with them."""
    task_id = "task_524_saltmarsh_tuna_order"
    pooled = _obvious_plan_task(build, "tuna_shares", task_id, tmp_path, trap="pool", last_crossing=20)
    lost, _ = play(pooled, "oracle", seed=0)
    checkpoints = {c.name: c for c in lost.checkpoints}
    assert not lost.success
    assert checkpoints["the island household's order"].achieved and checkpoints["the dock household's order"].achieved
    assert checkpoints["the island household's fish"].value > checkpoints["the island household's fish"].target
    orders_only = [c for c in pooled.verifier.checks if not (c.name or "").endswith("household's fish")]
    assert len(orders_only) == len(pooled.verifier.checks) - 2
    unchecked = pooled.model_copy(update={"verifier": pooled.verifier.model_copy(update={"checks": orders_only})})
    won, _ = play(unchecked, "oracle", seed=0)
    assert won.success, won.message
