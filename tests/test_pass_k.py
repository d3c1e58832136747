"""pass^k beside SR (tau-bench's estimator) in `agentworld report` (text, JSON) and the HTML report, with
values worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.runs.report import build_report, load_runs, pass_hat_k
from tests.test_report import result, write_run


def test_pass_hat_k_is_taubench_estimator_by_hand():
    trials = {"a": (4, 3), "b": (2, 2), "c": (3, 0)}  # task -> (trials n, successes c)
    # k=1: (3/4 + 1 + 0) / 3
    assert pass_hat_k(trials, 1) == (pytest.approx((0.75 + 1 + 0) / 3), 3)
    # k=2: C(3,2)/C(4,2) = 3/6, C(2,2)/C(2,2) = 1, 0 -> 0.5
    assert pass_hat_k(trials, 2) == (pytest.approx(0.5), 3)
    # k=3: task b has only 2 trials and is left out: (C(3,3)/C(4,3) + 0) / 2 = (1/4) / 2
    assert pass_hat_k(trials, 3) == (pytest.approx(0.125), 2)
    # k=4: only task a, with 3 successes out of 4: C(3,4) = 0
    assert pass_hat_k(trials, 4) == (0.0, 1)
    assert pass_hat_k(trials, 5) is None
    # all trials succeed: pass^k = 1 for every k; one failure of n: (n-k)/n
    assert pass_hat_k({"t": (5, 5)}, 5) == (1.0, 1)
    assert pass_hat_k({"t": (5, 4)}, 2) == (pytest.approx(math.comb(4, 2) / math.comb(5, 2)), 1)


def _run(tmp_path: Path) -> Path:
    rows = ([result("task_a", s, s != 1) for s in range(4)]        # 3 of 4
            + [result("task_b", s, True) for s in range(2)]        # 2 of 2
            + [result("task_c", s, False) for s in range(3)])      # 0 of 3
    return write_run(tmp_path / "run", rows, name="k")


def test_report_carries_pass_k_per_configuration(tmp_path: Path):
    rep = build_report(load_runs([_run(tmp_path)]))
    assert rep["has_pass_k"]
    row = rep["overall"][0]
    assert row["pass_k"]["max_trials"] == 4
    got = {v["k"]: (round(v["value"], 6), v["tasks"]) for v in row["pass_k"]["values"]}
    assert got == {1: (round(0.5833333333, 6), 3), 2: (0.5, 3), 3: (0.125, 2), 4: (0.0, 1)}
    # the pooled SR is 5/9; pass^1 averages per task
    assert row["sr"]["mean"] == pytest.approx(5 / 9)


def test_one_trial_per_task_shows_no_pass_k_table(tmp_path: Path):
    run = write_run(tmp_path / "one", [result("task_a", 0, True), result("task_b", 0, False)])
    rep = build_report(load_runs([run]))
    assert not rep["has_pass_k"]
    assert rep["overall"][0]["pass_k"]["values"] == [{"k": 1, "value": 0.5, "tasks": 2}]


def test_report_command_prints_pass_k_and_writes_it_to_json_and_html(tmp_path: Path):
    from agentworld.core.cli import _load_commands, cli

    _load_commands()
    run = _run(tmp_path)
    html = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", str(run), "--html", str(html)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "pass^k" in res.output and "pass^3 %" in res.output
    assert "12.5 (2)" in res.output and "50.0 (3)" in res.output
    res = CliRunner().invoke(cli, ["report", str(run), "--json"])
    data = json.loads(res.output)
    assert [v["k"] for v in data["overall"][0]["pass_k"]["values"]] == [1, 2, 3, 4]
    page = html.read_text(encoding="utf-8")
    assert 'id="pass-k"' in page and "pass^4 %" in page and "12.5 (2)" in page
