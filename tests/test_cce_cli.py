"""`agentworld cce`: scoring a run folder, comparing judges, drawing the graph."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import click
import pytest
from click.testing import CliRunner

from agentworld.core.cce.synth import STAFF_CONTRIBUTING, staff_episode
from agentworld.core.cli.cce import cce_group, register_commands


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "run"
    staff_episode(run / "synthetic_staff" / "seed0")
    staff_episode(run / "synthetic_staff" / "seed1", success=False)
    return run


def invoke(*args):
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [str(a) for a in args], catch_exceptions=False)
    return result


def test_cce_is_registered_on_the_cli():
    group = click.Group("agentworld")
    register_commands(group)
    assert "cce" in group.commands


def test_score_writes_cce_json_per_episode_and_prints_a_table(run_dir):
    result = invoke(run_dir, "--judge", "grounded")
    assert result.exit_code == 0, result.output
    ok = json.loads((run_dir / "synthetic_staff" / "seed0" / "cce.json").read_text())
    failed = json.loads((run_dir / "synthetic_staff" / "seed1" / "cce.json").read_text())
    assert ok["cce"] == pytest.approx(6 / 11) and failed["cce"] == 0.0
    assert {n["id"] for n in ok["nodes"] if n["contributing"]} == STAFF_CONTRIBUTING
    assert "CCE on successes (1): 0.545" in " ".join(result.output.split())
    assert "0.00–1.00" in result.output  # PAC spread of the successful episode


def test_score_with_the_cache_second_run_is_free(run_dir, monkeypatch):
    monkeypatch.delenv("AGENTWORLD_JUDGE_CACHE", raising=False)
    invoke(run_dir, "--judge", "scripted", "-o", "rule=effects")
    result = invoke(run_dir, "--judge", "scripted", "-o", "rule=effects")
    assert "judge calls 0 (+" in " ".join(result.output.split())
    assert (run_dir / ".cce_cache").is_dir()


def test_compare_two_judges(run_dir):
    invoke(run_dir, "--judge", "scripted", "-o", "rule=inclusive", "--label", "incl")
    result = invoke("compare", run_dir, "--judges", "grounded", "incl")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Cohen's kappa" in result.output and "synthetic_staff" in text
    assert "Ranking of tasks by CCE the same under every judge: yes" in text  # one task: trivially the same
    missing = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, ["compare", str(run_dir), "--judges", "grounded nobody"])
    assert missing.exit_code != 0 and "no stored result for judge 'nobody'" in missing.output


def test_compare_names_a_damaged_episode_instead_of_crashing(run_dir):
    invoke(run_dir, "--judge", "scripted", "-o", "rule=inclusive", "--label", "incl")
    traj = run_dir / "synthetic_staff" / "seed0" / "trajectory.jsonl"
    traj.write_text("not json\n" + traj.read_text())
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, ["compare", str(run_dir), "--judges", "grounded", "incl"])
    assert result.exit_code == 2 and "trajectory.jsonl:1" in result.output, result.output


def test_graph_svg_is_well_formed_and_highlights_contributing(run_dir, tmp_path):
    ep = run_dir / "synthetic_staff" / "seed0"
    invoke(ep, "--judge", "grounded")
    out = tmp_path / "g.svg"
    result = invoke("graph", ep, "--out", out)
    assert result.exit_code == 0, result.output
    root = ET.fromstring(out.read_text())
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    fills = [c.get("fill") for c in root.iter(f"{ns}circle")] + [p.get("fill") for p in root.iter(f"{ns}polygon")]
    assert fills.count("#f2b705") >= 2  # the success node (+ its legend swatch)
    assert "lumber" in out.read_text() and "r3.agent_2" in out.read_text()


def test_bad_input_gives_clear_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [str(tmp_path / "empty")])
    assert result.exit_code != 0 and "no episode folders" in result.output
    staff_episode(tmp_path / "ep")
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [str(tmp_path / "ep"), "--judge", "nope"])
    assert result.exit_code != 0 and "unknown judge 'nope'" in result.output
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [str(tmp_path / "ep"), "--judge", "openai"])
    assert result.exit_code != 0 and "--model" in result.output
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [str(tmp_path / "ep"), "-o", "oops"])
    assert result.exit_code != 0 and "KEY=VALUE" in result.output
    result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, ["graph", str(tmp_path / "ep")])
    assert result.exit_code != 0 and "no cce.json" in result.output


def test_shared_cache_from_the_environment(run_dir, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    monkeypatch.setenv("AGENTWORLD_JUDGE_CACHE", str(shared))
    result = invoke(run_dir, "--judge", "scripted", "-o", "rule=effects")
    assert result.exit_code == 0 and any(shared.rglob("*.json")) and not (run_dir / ".cce_cache").exists()
