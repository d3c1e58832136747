"""The task loader: the shipped suite, the paper's own format, and a corpus of broken files
(tests/data/bad_tasks/, one per kind of mistake) whose errors must name the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import cli
from agentworld.core.cli.tasks import register_commands
from agentworld.core.tasks.task import CATEGORIES, TaskError, find_task, load_suite, load_task

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

DATA = Path(__file__).parent / "data"
BAD = sorted((DATA / "bad_tasks").glob("*.yaml"))


def _expectation(path: Path) -> tuple[str, str, str]:
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():  # some files are not UTF-8 on purpose
        if line.startswith("# expect:"):
            field, message, fix = (p.strip() for p in line.removeprefix("# expect:").split("|"))
            return field, message, fix
    raise AssertionError(f"{path} has no '# expect: field | message | fix' line")


def test_bad_corpus_covers_each_kind_of_mistake():
    names = {p.stem for p in BAD}
    for kind in ("unknown_item", "unknown_skill", "level_out_of_range", "offmap_spawn", "blocked_spawn",
                 "unknown_check", "check_unknown_agent", "check_unknown_mob", "unreachable_recipe",
                 "ref_unknown_agent", "ref_unknown_tool", "ref_bad_args", "bad_yaml", "unknown_field"):
        assert kind in names


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_task_is_refused_with_field_and_fix(path: Path):
    field, message, fix = _expectation(path)
    with pytest.raises(TaskError) as info:
        load_task(path)
    err = info.value
    assert err.file == str(path)
    assert str(path) in str(err)
    hits = [p for p in err.problems if p.field.startswith(field) and message in p.message and fix in p.fix]
    assert hits, f"expected {field!r} / {message!r} / {fix!r}; got:\n{err}"


def test_good_base_of_the_corpus_loads():
    task = load_task(DATA / "good_base_task.yaml")
    assert task.verifiable and task.agent_ids == ["agent_1", "agent_2", "agent_3"]


def test_every_problem_is_collected_at_once(tmp_path: Path):
    text = (DATA / "good_base_task.yaml").read_text()
    text = text.replace("{item: logs, count: 2}", "{item: lgos, count: 2}").replace("lumberjacking: 10", "lumberjackin: 10")
    text = text.replace("item: staff, agent: agent_3", "item: staff, agent: agent_8")
    f = tmp_path / "many.yaml"
    f.write_text(text)
    with pytest.raises(TaskError) as info:
        load_task(f)
    fields = {p.field for p in info.value.problems}
    assert {"agent_2.inventory_items[1].item", "agent_1.skill_levels.lumberjackin", "verifier.checks[0].agent"} <= fields


def test_paper_format_task_loads_as_unverifiable():
    task = load_task(DATA / "paper_task_01.yaml")
    assert task.id == "paper_task_01"  # from the file name
    assert not task.verifiable and task.verifier is None and task.category is None
    assert [a.username for a in task.agents] == ["lumberjack_agent", "woodworker_agent", "wizard_agent"]
    assert task.agents[0].equipment[0].item == "axe" and task.agents[0].skills["lumberjacking"] == 25
    assert task.raw["agent_1"]["username"] == "lumberjack_agent"


STARTER_IDS = ("task_01_staff", "task_02_harvest", "task_03_market", "task_04_goblins", "task_05_survey",
               "task_06_provisions", "task_07_shield_wall", "task_08_convoy")


def test_starter_tasks_have_one_task_per_category_and_3_to_10_agents():
    suite = {t.id: t for t in load_suite("main")}
    retired = {"task_01_staff": Path(STAFF), "task_03_market": DATA / "market_day.yaml",  # suite v3 retired them
               "task_05_survey": DATA / "survey.yaml",  # (kept as fixtures)
               "task_07_shield_wall": DATA / "shield_wall.yaml"}
    tasks = [suite[i] if i in suite else load_task(retired[i]) for i in STARTER_IDS]
    assert {t.category for t in tasks} == set(CATEGORIES)
    for t in tasks:
        assert 3 <= len(t.agents) <= 10, t.id
        assert t.verifiable and t.reference_solution, t.id
        assert all(a.guideline.strip() for a in t.agents), t.id
    assert max(len(t.agents) for t in tasks) == 10


def test_task_01_is_the_papers_staff_scenario():
    t = find_task(STAFF)
    roles = {a.role for a in t.agents}
    assert {"lumberjack", "woodworker", "wizard"} <= roles
    wizard = next(a for a in t.agents if a.role == "wizard")
    assert any(s.item == "bead" for s in wizard.inventory)
    assert t.verifier and t.verifier.checks[0].params["item"] == "staff"


def test_find_task_unknown_id_suggests():
    with pytest.raises(KeyError, match="did you mean 'task_02_harvest'"):
        find_task("task_02_harvst")


def _cli():
    register_commands(cli) if "tasks" not in cli.commands else None
    return cli


def test_cli_tasks_list_json_and_show():
    import json

    runner = CliRunner()
    res = runner.invoke(_cli(), ["tasks", "list", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert {"id", "name", "category", "agents", "rounds"} <= set(rows[0])
    res = runner.invoke(_cli(), ["tasks", "show", STAFF])
    assert res.exit_code == 0 and "three staffs by the wizard" in res.output


def test_cli_tasks_validate_exit_codes():
    runner = CliRunner()
    ok = runner.invoke(_cli(), ["tasks", "validate", str(DATA / "good_base_task.yaml"), str(DATA / "paper_task_01.yaml")])
    assert ok.exit_code == 0, ok.output
    assert "unverifiable" in ok.output
    bad = runner.invoke(_cli(), ["tasks", "validate", str(DATA / "bad_tasks" / "unknown_item.yaml")])
    assert bad.exit_code == 1
    assert "agent_2.inventory_items[1].item" in bad.output and "did you mean 'stick'" in bad.output
