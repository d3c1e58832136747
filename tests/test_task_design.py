"""The ``design:`` field: every shipped task names the design (scenario) it is built from, ``tasks list`` and
``tasks show`` report it, a user's own task file may leave it out, a bad id is refused with the fix, and
build.py writes the family's name as the design and reproduces every committed task file exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core.cli.tasks import tasks_group
from agentworld.core.tasks.task import TaskError, load_suite, load_task, parse_task
from agentworld.core.tasks.task_file import snake_case

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

DATA = Path(__file__).parent / "data"
TOOLS = Path(__file__).resolve().parents[1] / "tools" / "task_authoring"


def test_every_shipped_main_task_names_a_design():
    tasks = load_suite("main")
    missing = [t.id for t in tasks if not t.design]
    assert not missing, f"shipped tasks without design: {missing}"
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", t.design) for t in tasks)


def test_a_built_task_names_its_family_and_a_hand_written_one_its_own_design():
    families = {p.stem for p in (TOOLS / "families").glob("*.yaml")}
    for t in load_suite("main"):
        with open(t.path, encoding="utf-8") as fh:
            head = fh.readline()
        m = re.search(r"from families/(\w+)\.yaml", head)
        if m:
            assert t.design == m.group(1), t.id
        else:  # hand-maintained: its design is not a family's (one name, one scenario)
            assert t.design not in families, t.id


def test_tasks_list_and_show_report_the_design():
    listed = json.loads(CliRunner().invoke(tasks_group, ["list", "--json"]).output)
    assert all("design" in r and "mechanics" in r for r in listed)
    by_id = {r["id"]: r for r in listed}
    assert by_id["task_44_oakridge_wolves"]["design"] == "hunt"
    assert by_id["task_09_bronze_blade"]["design"] == "bronze_blade"
    shown = json.loads(CliRunner().invoke(tasks_group, ["show", STAFF, "--json"]).output)
    assert shown["design"] == "staff"
    table = CliRunner().invoke(tasks_group, ["list"]).output
    assert "design" in table and "designs)" in table


def test_a_users_task_without_a_design_loads():
    t = load_task(DATA / "good_base_task.yaml")
    assert t.design is None
    result = CliRunner().invoke(tasks_group, ["validate", str(DATA / "good_base_task.yaml")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("bad, fix", [("Wolf Hunt", "wolf_hunt"), ("hunt-2", "hunt_2"), ("2hunt", "design_2hunt"),
                                      ("WolfHunt", "wolf_hunt")])
def test_a_bad_design_id_is_refused_with_the_fix(bad, fix):
    raw = yaml.safe_load((DATA / "good_base_task.yaml").read_text(encoding="utf-8"))
    raw["design"] = bad
    with pytest.raises(TaskError) as exc:
        parse_task(raw, "mine.yaml", "mine")
    text = str(exc.value)
    assert "mine.yaml" in text and "design" in text and "snake_case" in text
    assert f"design: {fix}" in text
    assert snake_case(bad) == fix
    raw["design"] = fix
    assert parse_task(raw, "mine.yaml", "mine").design == fix


def test_build_writes_the_family_as_design_and_the_walk_aggro_opt_out(build):
    (doc, variant), = build.family_variants(build.FAMILIES / "provisions.yaml", {"task_06_provisions"})
    assert variant["walk_aggro"] is False
    _, text = build.build_task("provisions", doc, variant)
    loaded = yaml.safe_load(text)
    assert loaded["design"] == "provisions" and loaded["world_rules"] == {"walk_aggro": False}
    assert "\n# Issue 26: this task's reference plan walks through aggressive mobs' range" in text
    assert "\nworld_rules: {walk_aggro: false}\nverifier:" in text
    (doc, variant), = build.family_variants(build.FAMILIES / "hunt.yaml", {"task_44_oakridge_wolves"})
    _, text = build.build_task("hunt", doc, variant)
    assert "world_rules" not in yaml.safe_load(text) and "walk_aggro" not in text


def test_build_refuses_a_bad_opt_out_or_a_template_design(build):
    (doc, variant), = build.family_variants(build.FAMILIES / "hunt.yaml", {"task_44_oakridge_wolves"})
    with pytest.raises(build.PlanError, match="walk_aggro must be true or false"):
        build.build_task("hunt", dict(doc), {**variant, "walk_aggro": "no"})
    with pytest.raises(build.PlanError, match="walk_aggro_note without walk_aggro: false"):
        build.build_task("hunt", dict(doc), {**variant, "walk_aggro_note": "why"})
    with pytest.raises(build.PlanError, match="a family's design is its file name"):
        build.build_task("hunt", {**doc, "design": "other"}, variant)


def test_regenerating_every_family_reproduces_the_committed_files(build, capsys):
    # the families carry everything the task files say (the walk_aggro opt-outs included): a hand edit of a
    # built file shows here as "would change"
    assert build.main(["--check"]) == 0, capsys.readouterr().out
