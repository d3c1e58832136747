"""``exact: true`` on item_count, crafted and delivered: met only at exactly the amount, an overshoot shown and
failed (a team cannot over-deliver instead of finding out the amount), and the objective-vs-verifier warning
of ``tasks validate`` for an objective asking an exact amount that an at-least check tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core.cli.tasks import tasks_group
from agentworld.core.tasks.amounts import amount_warnings
from agentworld.core.tasks.task import CheckSpec, Task, TaskError, VerifierSpec, load_task, parse_task
from agentworld.core.tasks.verify import verify
sys.path.insert(0, str(Path(__file__).parent))
from test_verifiers import Bench as VerifierBench  # noqa: E402

DATA = Path(__file__).parent / "data"


class Bench(VerifierBench):
    """good_base_task's three agents in a fresh world (woodworker: knife and 2 logs; wizard: a bead)."""

    def __init__(self):
        super().__init__(load_task(DATA / "good_base_task.yaml"))

    def verify(self, *specs: dict):
        t = self.task.model_copy(update={"verifier": VerifierSpec(checks=[CheckSpec.model_validate(s) for s in specs])})
        return verify(t, self.world, self.history)


@pytest.fixture
def bench() -> Bench:
    return Bench()


def test_delivered_exact_fails_an_over_delivery_that_at_least_passes(bench: Bench):
    exact = {"check": "delivered", "item": "logs", "to": "wizard", "count": 1, "exact": True}
    at_least = {**exact, "exact": False}
    cp = bench.check(**exact)
    assert (cp.value, cp.achieved) == (0, False) and cp.name == "exactly 1 logs delivered to wizard"
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="logs", count=1)
    assert bench.check(**exact).achieved and bench.check(**at_least).achieved
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="logs", count=1)  # one too many
    res = bench.verify(exact)
    assert not res.success and res.psr == 0.0
    assert res.checkpoints[0].value == 2
    assert res.message == "exactly 1 logs delivered to wizard: 2/1 (over by 1: exactly 1 asked)"
    assert bench.check(**at_least).achieved  # the old check: the brute-force over-delivery wins
    bench.act("agent_3", "transfer_items", targetPlayer="woodworker", itemKey="logs", count=1)  # handing one back
    assert not bench.check(**exact).achieved  # does not undo what was delivered


def test_delivered_not_kept_counts_what_was_handed_over(bench: Bench):
    """kept: false: a material the receiver uses up (fish a cook cooks) counts as it arrives, so the receiver
    need not still hold it, and units handed back do not undo an overshoot (pooling at one receiver fails)."""
    spec = {"check": "delivered", "item": "logs", "to": "wizard", "count": 1, "exact": True, "kept": False}
    assert bench.check(**spec).name == "exactly 1 logs handed to wizard"
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="logs", count=1)
    bench.act("agent_3", "transfer_items", targetPlayer="lumberjack", itemKey="logs", count=1)  # used up, say
    assert bench.check(**spec).achieved  # handed over once: met, though the wizard holds none now
    kept = {**spec, "kept": True}
    assert not bench.check(**kept).achieved  # the default asks the receiver to end holding it
    bench.act("agent_2", "transfer_items", targetPlayer="wizard", itemKey="logs", count=1)  # a spare
    bench.act("agent_3", "transfer_items", targetPlayer="woodworker", itemKey="logs", count=1)  # handed back
    cp = bench.check(**spec)
    assert (cp.value, cp.achieved) == (2, False)


def test_item_count_exact(bench: Bench):
    spec = {"check": "item_count", "item": "logs", "agent": "woodworker", "count": 1, "exact": True}
    cp = bench.check(**spec)
    assert (cp.value, cp.achieved) == (2, False) and cp.name == "exactly 1 logs with woodworker"
    bench.act("agent_2", "transfer_items", targetPlayer="lumberjack", itemKey="logs", count=1)
    assert bench.check(**spec).achieved
    # no one named: met when some one agent holds exactly the amount, whatever another holds
    assert bench.check(check="item_count", item="logs", count=1, exact=True).achieved
    assert not bench.check(check="item_count", item="logs", count=2, exact=True).achieved
    assert bench.check(check="item_count", item="logs", count=2, exact=True, scope="team").achieved
    assert not bench.check(check="item_count", item="logs", count=1, exact=True, scope="team").achieved


def test_crafted_exact_partial_and_over(bench: Bench):
    spec = {"check": "crafted", "item": "stick", "agent": "woodworker", "count": 4, "exact": True}
    bench.act("agent_2", "craft_item", skill="Fletching", itemKey="stick", count=1)
    res = bench.verify(spec)
    assert (res.checkpoints[0].value, res.checkpoints[0].achieved) == (2, False)
    assert res.message == "exactly 4 stick crafted by woodworker: 2/4"  # partial progress reads as before
    bench.act("agent_2", "craft_item", skill="Fletching", itemKey="stick", count=1)
    assert bench.check(**spec).achieved
    assert bench.check(**{**spec, "count": 2, "exact": False}).achieved
    assert not bench.check(**{**spec, "count": 2}).achieved  # 4 made where exactly 2 were asked


def test_exact_is_refused_on_checks_without_amounts():
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text(encoding="utf-8"))
    raw["verifier"]["checks"][0]["exact"] = True  # item_count: fine
    assert parse_task(raw, "mine.yaml", "mine")
    raw["verifier"]["checks"].append({"check": "kills", "mob": "goblin", "exact": True})
    with pytest.raises(TaskError, match="exact"):
        load_task_from(raw)


def load_task_from(raw: dict) -> Task:
    from agentworld.core.tasks.task import validate_task

    t = parse_task(raw, "mine.yaml", "mine")
    problems = validate_task(t)
    if problems:
        raise TaskError("mine.yaml", problems)
    return t


def _task(objective: str, **check) -> Task:
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text(encoding="utf-8"))
    raw["objectives"]["primary"] = objective
    raw["verifier"]["checks"] = [{"check": "delivered", "item": "logs", "to": "wizard", "count": 3, **check}]
    return parse_task(raw, "mine.yaml", "mine")


@pytest.mark.parametrize("objective, warned", [
    ("The wizard receives exactly 3 logs.", True),
    ("The wizard receives logs in the amounts it asked for.", True),
    ("The wizard receives 3 of the logs the woodworker holds.", True),
    ("The wizard receives three of the logs.", True),
    ("The wizard receives 3 logs.", False),
    ("The wizard receives at least 3 logs, exactly as agreed.", False),  # the objective says at least
    ("The wizard receives 2 of the logs.", False),  # not the amount the check wants: briefs check that
])
def test_an_exact_objective_on_an_at_least_check_warns(objective, warned):
    problems = amount_warnings(_task(objective))
    assert bool(problems) == warned, problems
    if warned:
        assert problems[0].field == "verifier.checks[0]" and "exact: true" in problems[0].fix
    assert not amount_warnings(_task(objective, exact=True))


def _two_checks(objective: str, **sword) -> Task:
    """task_09's shape: an exact check of bars and an at-least check of the sword made from them."""
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text(encoding="utf-8"))
    raw["objectives"]["primary"] = objective
    raw["verifier"]["checks"] = [
        {"check": "crafted", "item": "bronze_bar", "agent": "agent_2", "count": 2, "exact": True},
        {"check": "crafted", "item": "bronze_sword", "agent": "agent_3", "count": 1, **sword}]
    return parse_task(raw, "mine.yaml", "mine")


@pytest.mark.parametrize("objective, warned", [
    # "exactly" speaks of the bars in its clause, not of the sword in the next (task_09_bronze_blade)
    ("The smelter smelts exactly the bronze_bar the sword needs, and the smith forges a bronze_sword and wields "
     "it.", False),
    ("The smelter smelts the bronze_bar; the smith forges exactly one bronze_sword.", True),
    ("The smelter smelts the bronze_bar and the smith forges a bronze_sword, exactly as ordered.", True),
    ("Exactly what was ordered is made, and the smith wields it.", True),  # names no item: may mean any
    ("The smelter smelts exactly 2 bronze_bar, and the smith forges 1 of the bronze swords.", True),
])
def test_an_exact_word_covers_the_items_of_its_own_clause(objective, warned):
    problems = amount_warnings(_two_checks(objective))
    assert [p.field for p in problems] == (["verifier.checks[1]"] if warned else []), problems
    assert not amount_warnings(_two_checks(objective, exact=True))


def test_validate_prints_the_warning_and_strict_fails_it(tmp_path):
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text(encoding="utf-8"))
    raw["objectives"]["primary"] = "The wizard holds exactly one staff."
    raw["verifier"]["checks"][0]["count"] = 1
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    result = CliRunner().invoke(tasks_group, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "warn" in result.output and "exact: true" in result.output and "1 with warnings" in result.output
    result = CliRunner().invoke(tasks_group, ["validate", "--strict", str(path)])
    assert result.exit_code == 1 and "verifier.checks[0]" in result.output
