"""Judge results live under their labels; a judge with failed calls is stored as incomplete, never as CCE 0,
never over another judge's (or its own earlier) complete result; `report --judge LABEL` chooses and warns."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agentworld.core.cce.graph import CCEReport
from agentworld.core.cce.grounded import GroundedJudge
from agentworld.core.cce.judges import ScriptedJudge, labels_answerer
from agentworld.core.cce.score import read_stored, score_episode, stored_labels, write_report
from agentworld.core.cce.synth import STAFF_CONTRIBUTING, staff_episode
from agentworld.core.cli import _load_commands, cli
from agentworld.core.play.records import EpisodeResult

_load_commands()


def half_failing_judge(name: str = "flaky") -> ScriptedJudge:
    """Knows the right answers but fails every second question (an endpoint that drops half its calls)."""
    good = labels_answerer({"r3.agent_2"}, STAFF_CONTRIBUTING, {})
    count = {"n": 0}

    def fn(q):
        count["n"] += 1
        if count["n"] % 2 == 0:
            raise ConnectionError("endpoint went away")
        return good(q)

    return ScriptedJudge(fn=fn, name=name, model="m")


def run_of_staff_episodes(root: Path, n: int = 2) -> Path:
    """A run folder (manifest, results.jsonl, episodes/) of ``n`` copies of the synthetic staff episode."""
    lines = []
    for i in range(n):
        folder = staff_episode(root / "episodes" / f"staff-{i}")  # the folder name is the episode id
        lines.append(EpisodeResult.model_validate_json((folder / "result.json").read_text()).model_dump_json())
    (root / "manifest.json").write_text(json.dumps({"spec": {"name": "staff"}, "status": "finished"}))
    (root / "results.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_a_half_failing_judge_is_stored_incomplete_and_touches_no_complete_result(tmp_path: Path):
    folder = staff_episode(tmp_path / "ep")
    good = score_episode(folder, GroundedJudge())
    write_report(folder, good)
    grounded_bytes = (folder / "cce" / "grounded-rules.json").read_bytes()
    cce_json = (folder / "cce.json").read_bytes()

    flaky = score_episode(folder, half_failing_judge())
    assert flaky.failed_calls >= 1 and flaky.failed_calls < len(flaky.calls)
    assert not flaky.complete and flaky.cce is None and flaky.partial_cce is not None
    path = write_report(folder, flaky, "flaky")
    assert path.name == "flaky.json"
    stored = json.loads(path.read_text())
    assert stored["complete"] is False and stored["cce"] is None and stored["failed_calls"] == flaky.failed_calls
    # another judge's complete result and the episode's cce.json are untouched
    assert (folder / "cce" / "grounded-rules.json").read_bytes() == grounded_bytes
    assert (folder / "cce.json").read_bytes() == cce_json
    assert stored_labels(folder) == ["flaky", "grounded-rules"]

    # the same label judged completely, then failing again: the complete result stays
    complete = score_episode(folder, ScriptedJudge.from_labels({"r3.agent_2"}, STAFF_CONTRIBUTING, name="flaky",
                                                               model="m"))
    write_report(folder, complete, "flaky")
    assert read_stored(folder / "cce" / "flaky.json").complete
    again = write_report(folder, score_episode(folder, half_failing_judge()), "flaky")
    assert again.name == "flaky.incomplete.json"
    assert read_stored(folder / "cce" / "flaky.json").cce == complete.cce
    assert stored_labels(folder) == ["flaky", "grounded-rules"]


def test_files_written_before_complete_existed_read_as_incomplete(tmp_path: Path):
    folder = staff_episode(tmp_path / "ep")
    data = json.loads(score_episode(folder, half_failing_judge()).model_dump_json())
    for key in ("complete", "partial_cce", "label"):
        data.pop(key)
    data["cce"] = 0.0  # what the old code stored for a judge that failed
    old = CCEReport.model_validate(data)
    assert not old.complete and old.cce is None and old.partial_cce == 0.0


def test_report_says_which_judge_and_warns_on_incomplete(tmp_path: Path):
    run = run_of_staff_episodes(tmp_path / "run")
    res = CliRunner().invoke(cli, ["cce", str(run), "--judge", "grounded"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    # a dead endpoint's judge: every call fails -> incomplete, reported as such, grounded untouched
    for folder in sorted((run / "episodes").iterdir()):
        write_report(folder, score_episode(folder, half_failing_judge()), "flaky")
    out = CliRunner().invoke(cli, ["report", str(run), "--json"], catch_exceptions=False)
    rep = json.loads(out.output)
    assert rep["cce"]["sources"] == {"grounded-rules": 2}
    assert rep["overall"][0]["cce"]["n"] == 2 and rep["overall"][0]["cce"]["mean"] > 0
    assert any("flaky" in w and "incomplete" in w for w in rep["cce"]["warnings"])

    out = CliRunner().invoke(cli, ["report", str(run), "--judge", "flaky", "--json"], catch_exceptions=False)
    rep = json.loads(out.output)
    assert rep["has_cce"] is False and rep["overall"][0]["cce"]["n"] == 0  # no zeros averaged in
    assert rep["cce"]["incomplete"] == {"flaky": 2}
    assert any("not counted as 0" in w for w in rep["cce"]["warnings"])
    out = CliRunner().invoke(cli, ["report", str(run), "--judge", "flaky"], terminal_width=200, catch_exceptions=False)
    assert "warning:" in out.output and "incomplete" in out.output

    out = CliRunner().invoke(cli, ["report", str(run), "--judge", "grounded-rules"], terminal_width=200)
    assert "CCE from judge grounded-rules (2 episodes)" in out.output
    out = CliRunner().invoke(cli, ["report", str(run), "--judge", "nobody"])
    assert out.exit_code != 0 and "stored labels: flaky, grounded-rules" in out.output


def test_cce_score_prints_incomplete_and_compare_leaves_it_out(tmp_path: Path):
    run = run_of_staff_episodes(tmp_path / "run", n=1)
    folder = run / "episodes" / "staff-0"
    res = CliRunner().invoke(cli, ["cce", str(run), "--judge", "scripted", "-o", "rule=malformed", "--label", "bad"],
                             terminal_width=200, catch_exceptions=False)
    assert res.exit_code == 0 and "incomplete" in res.output and "not 0" in res.output
    assert not (folder / "cce.json").exists()  # no complete judging yet: no cce.json at all
    res = CliRunner().invoke(cli, ["cce", "compare", str(run), "--judges", "grounded", "bad"], terminal_width=200,
                             catch_exceptions=False)
    assert "judge bad: 1 incomplete episode(s)" in res.output


def test_cce_graph_writes_the_format_its_name_asks_for(tmp_path: Path):
    from PIL import Image

    folder = staff_episode(tmp_path / "ep")
    write_report(folder, score_episode(folder, GroundedJudge()))
    res = CliRunner().invoke(cli, ["cce", "graph", str(folder), "--out", str(tmp_path / "g.png")])
    assert res.exit_code == 0, res.output
    with Image.open(tmp_path / "g.png") as img:
        assert img.format == "PNG" and img.size[0] > 1000
        # the success action is drawn in its gold, the contributing ones in green
        colours = {c for _, c in img.convert("RGB").getcolors(1 << 20)}
        assert (0xF2, 0xB7, 0x05) in colours and (0x4C, 0xAF, 0x50) in colours
    res = CliRunner().invoke(cli, ["cce", "graph", str(folder), "--out", str(tmp_path / "g.svg")])
    assert res.exit_code == 0 and (tmp_path / "g.svg").read_text().startswith("<svg")
    res = CliRunner().invoke(cli, ["cce", "graph", str(folder), "--out", str(tmp_path / "g.jpg")])
    assert res.exit_code != 0 and "end it in .svg or .png" in res.output and not (tmp_path / "g.jpg").exists()
