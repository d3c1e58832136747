"""Hostile task files: refused before anything runs, naming the file, the line or field and the fix, with a
short excerpt of a bad value only, in bounded memory (tests/data/bad_tasks/ holds the fixed corpus; the huge
files are generated here). Timings of the same corpus are printed by benchmarks/bench_hostile_tasks.py."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.tasks.task import TaskError, load_task, world_index
from agentworld.core.world.engine import make_rules
from agentworld.core.world.models import Rules
from agentworld.core.yamlio import MAX_FILE_BYTES, YamlInputError, load_yaml

DATA = Path(__file__).parent / "data"
BAD = sorted((DATA / "bad_tasks").glob("*.yaml"))
HOSTILE = [p for p in BAD if p.read_bytes().startswith(b"# A hostile task file")]
GOOD = DATA / "good_base_task.yaml"
MEMORY_CAP = 200 * 1024 * 1024


def _cli():
    _load_commands()
    return cli


def _refused(path: Path) -> tuple[TaskError, int]:
    """Load ``path``; the TaskError and the peak of Python memory allocated meanwhile."""
    world_index()  # the world is loaded once per process, not per task file: keep it out of the figure
    tracemalloc.start()
    try:
        with pytest.raises(TaskError) as info:
            load_task(path)
        return info.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_corpus_has_the_cases_of_the_issue():
    names = {p.stem for p in HOSTILE}
    assert {"two_items_one_slot", "inventory_over_slots", "move_range_zero", "respawn_nan", "negative_regen",
            "username_is_agent_id", "not_utf8", "duplicate_agent_key", "alias_bomb_python_args",
            "alias_bomb_rounds", "alias_bomb_tool_arg", "recursive_alias"} <= names


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_file_is_refused_in_bounded_memory_with_a_short_message(path: Path):
    err, peak = _refused(path)
    assert peak < MEMORY_CAP, f"{path.name}: {peak / 2**20:.0f} MiB"
    assert str(err).startswith(str(path))
    assert all(len(str(p)) < 400 for p in err.problems), "a problem echoed a long value"


def _big_task(tmp_path: Path, name: str, filler: str) -> Path:
    f = tmp_path / name
    f.write_text(GOOD.read_text() + filler, encoding="utf-8")
    return f


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path: Path):
    f = tmp_path / "fifty_mb.yaml"
    with open(f, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: a 50 MB file without writing 50 MB
    err, peak = _refused(f)
    assert err.problems[0].field == "(file)" and "over the 2,097,152-byte limit" in err.problems[0].message
    assert peak < 1024 * 1024
    just_over = _big_task(tmp_path, "just_over.yaml", "#" * (MAX_FILE_BYTES + 1) + "\n")
    assert "byte limit" in _refused(just_over)[0].problems[0].message


def test_a_document_with_too_many_values_is_refused(tmp_path: Path):
    f = _big_task(tmp_path, "many.yaml", "success_criteria: [" + ", ".join(["x"] * 120_000) + "]\n")
    assert f.stat().st_size < MAX_FILE_BYTES
    err, peak = _refused(f)
    assert "more than 50,000 values" in err.problems[0].message and peak < MEMORY_CAP


def test_duplicate_keys_name_both_lines_and_merge_keys_still_work():
    with pytest.raises(YamlInputError, match=r"duplicate key 'b' \(first on line 2, again on line 4\)"):
        load_yaml("a:\n  b: 1\n  c: 2\n  b: 3\n")
    with pytest.raises(YamlInputError, match="duplicate key 'k'"):
        load_yaml("- {k: 1, j: [1, 2], k: 2}\n")
    assert load_yaml("- {k: 1}\n- {k: 1}\n") == [{"k": 1}, {"k": 1}]  # same key in two mappings is fine
    assert load_yaml("1: a\n'1': b\n") == {1: "a", "1": "b"}  # an int and a string key differ
    assert load_yaml("base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n")["c"] == {"x": 1, "y": 2}


def test_aliases_are_bounded_but_allowed():
    assert load_yaml("a: &a [1, 2]\nb: *a\nc: *a\n") == {"a": [1, 2], "b": [1, 2], "c": [1, 2]}
    nested = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 6))
    with pytest.raises(YamlInputError, match="expand the document"):
        load_yaml(nested)  # 10^6 values from a 300-byte text
    assert load_yaml(nested, max_alias_expansion=10**7)["l1"][0] == ["x"] * 10
    with pytest.raises(YamlInputError, match="recursive alias"):
        load_yaml("a: &x [1, *x]\n")


def test_world_rules_are_range_checked_everywhere():
    with pytest.raises(ValueError, match="respawn_scale"):
        make_rules(Rules(), {"respawn_scale": float("nan")})
    with pytest.raises(ValueError, match="hp_regen_per_round"):
        make_rules(Rules(), {"hp_regen_per_round": -7})
    assert make_rules(Rules(), {"move_range": 5}).move_range == 5


def test_validate_reports_every_file_and_is_not_aborted_by_one(tmp_path: Path):
    files = [GOOD, DATA / "bad_tasks" / "not_utf8.yaml", DATA / "bad_tasks" / "alias_bomb_rounds.yaml", GOOD]
    res = CliRunner().invoke(_cli(), ["tasks", "validate", *map(str, files)])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    assert res.output.count("ok ") == 2 and "2/4 task files valid" in res.output
    assert "not_utf8.yaml" in res.output and "not UTF-8" in res.output
    assert "alias_bomb_rounds.yaml" in res.output and "expand the document" in res.output


def test_run_names_the_bad_file(tmp_path: Path):
    bad = DATA / "bad_tasks" / "not_utf8.yaml"
    res = CliRunner().invoke(_cli(), ["run", "--task", str(bad), "--framework", "oracle", "--no-progress",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code != 0
    assert str(bad) in res.output and "not UTF-8" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "run").exists()  # refused before anything ran
