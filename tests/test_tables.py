"""`agentworld baselines` and `agentworld ablations`: the paper's Tables 3 and 4, offline with scripted teams."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli

sys.path.insert(0, str(Path(__file__).parent))
from variant_picks import pick, plan_rounds  # noqa: E402

_load_commands()
APPLIES, HANDOFFS = pick("applies"), pick("hand-offs")
TASKS = ("--task", APPLIES.path, "--task", HANDOFFS.path)  # single_agent applies to the first only (files: a pick may be a fixture)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


def test_baselines_fill_table_3_offline_and_explain_na(tmp_path: Path):
    out = tmp_path / "t3"
    res = invoke("baselines", *TASKS, "--framework", "oracle", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    table = json.loads(res.output)
    rows = {r["method"]: r for r in table["rows"]}
    assert list(rows) == ["Random actions", "Shared plan, no communication", "No communication", "Single agent",
                          "Vanilla", "Oracle communication"]
    assert rows["Random actions"]["framework"] == "random" and rows["Random actions"]["n"] == 2
    assert rows["Vanilla"]["sr"]["mean"] == 1.0 and rows["Vanilla"]["paper_sr"] == 52.0
    single = rows["Single agent"]
    assert single["n"] == 1 and single["na"] == 1 and "hand-offs" in single["na_reasons"][HANDOFFS.id]
    assert single["sr"]["mean"] == 1.0  # the oracle plays the adapted plan; the n/a task is not a 0
    assert {Path(p).name for p in table["runs"].values()} == {"oracle", "random"}
    # the same command again resumes the finished runs: nothing reruns, the table is the same
    again = json.loads(invoke("baselines", *TASKS, "--framework", "oracle", "--out", str(out), "--json").output)
    assert [(r["method"], r["n"], r["sr"]["mean"]) for r in again["rows"]] == \
        [(r["method"], r["n"], r["sr"]["mean"]) for r in table["rows"]]
    text = invoke("baselines", *TASKS, "--framework", "oracle", "--out", str(out)).output
    assert "Table 3 shape: baselines" in text and "Single agent: n/a on 1 task(s)" in text
    assert f"n/a  {HANDOFFS.id}: one agent holding the team's items" in text


def test_ablations_fill_table_4_with_an_idle_team(tmp_path: Path):
    short = plan_rounds(APPLIES) - 1  # fewer rounds than the plan needs: that row is n/a, explained
    args = ("ablations", "--task", APPLIES.path, "--framework", "idle", "--short-horizon", str(short),
            "--out", str(tmp_path / "t4"))
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    assert "Table 4 shape: ablations" in res.output and f"Without long horizon ({short} rounds)" in res.output
    assert f"needs {plan_rounds(APPLIES)} rounds" in res.output
    data = json.loads(invoke(*args, "--json").output)
    rows = {r["variant"]: r for r in data["rows"]}
    assert rows[f"short_horizon:{short}"]["n"] == 0 and rows[f"short_horizon:{short}"]["na"] == 1
    assert all(r["sr"]["mean"] == 0.0 for v, r in rows.items() if r["n"])  # idle never passes


def test_tables_need_a_task_selection():
    res = invoke("baselines", "--framework", "oracle")
    assert res.exit_code == 2 and "select tasks" in res.output
