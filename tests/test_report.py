"""Report tables and statistics on hand-made runs (no world needed); stats themselves: test_stats.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner

from agentworld.core.cce.graph import CCEReport
from agentworld.core.cce.score import write_report
from agentworld.core.play.records import EndEvent, EpisodeResult, StartEvent
from agentworld.core.runs.report import build_report, load_runs
from agentworld.core.runs.stats import cluster_bootstrap, sign_test
from agentworld.core.runs.run_spec import episode_id


def result(task: str, seed: int, success: bool, *, variant: str = "vanilla", framework: str = "oracle",
           model: str = "", n_agents: int = 3, category: str = "crafting", psr: float | None = None,
           rounds: int = 10) -> EpisodeResult:
    return EpisodeResult(
        episode_id=episode_id(task, framework, model, variant, seed), task_id=task, category=category,
        n_agents=n_agents, seed=seed, variant=variant, framework=framework, model=model, success=success,
        psr=psr if psr is not None else (1.0 if success else 0.5), end_reason="round_budget", rounds=rounds,
        max_rounds=40, actions=rounds * n_agents, chats=2, tool_errors=0, no_calls=0, refused_calls=0,
        infra_errors=0)


def write_run(path: Path, results: list[EpisodeResult], name: str | None = None, cce: dict | None = None) -> Path:
    path.mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps({"spec": {"name": name}, "status": "finished",
                                                    "episodes": [{"episode_id": r.episode_id} for r in results]}))
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    for r in results:  # the files a recorded episode has (the report checks that they are whole)
        write_episode_files(path / "episodes" / r.episode_id, r)
    for eid, value in (cce or {}).items():
        write_report(path / "episodes" / eid, CCEReport(episode_id=eid, task_id="t", task_success=True,
                                                         judge="grounded", method="grounded", cce=value,
                                                         n_actions=4, n_contributing=round(4 * value)))
    return path


def write_episode_files(folder: Path, r: EpisodeResult) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    start = StartEvent(episode_id=r.episode_id, task_id=r.task_id, seed=r.seed, variant=r.variant,
                       framework=r.framework, model=r.model, world_version="x", agents=[], max_rounds=r.max_rounds,
                       max_action_steps=9, timestamp="")
    end = EndEvent(reason=r.end_reason, rounds=r.rounds)
    (folder / "trajectory.jsonl").write_text(start.model_dump_json() + "\n" + end.model_dump_json() + "\n")
    (folder / "result.json").write_text(r.model_dump_json())


def test_table2_by_category_team_size_and_paired(tmp_path: Path):
    a = [result(f"t{i}", s, success=(i + s) % 2 == 0, n_agents=3 if i < 2 else 12,
                category="crafting" if i % 2 else "combat") for i in range(4) for s in (0, 1)]
    b = [result(f"t{i}", s, success=True, model="openai:x", framework="openai", n_agents=3 if i < 2 else 12,
                category="crafting" if i % 2 else "combat") for i in range(4) for s in (0, 1)]
    ra = write_run(tmp_path / "a", a, name="base", cce={a[0].episode_id: 0.25, a[1].episode_id: 0.5})
    rb = write_run(tmp_path / "b", b, name="llm", cce={b[0].episode_id: 0.5, b[1].episode_id: 0.75})
    runs = load_runs([ra, rb])
    rep = build_report(runs)
    assert rep["by"] == "config" and rep["has_cce"]
    overall = {row["group"]: row for row in rep["overall"]}
    base = overall["base · oracle · vanilla"]
    assert base["n"] == 8 and base["tasks"] == 4 and base["sr"]["mean"] == 0.5 and base["cce"]["n"] == 2
    assert math.isclose(base["cce"]["mean"], 0.375)
    # the interval resamples tasks (each task here is 1/2: seeds disagree, tasks alike), seeded as reported
    by_task = {f"t{i}": [float((i + s) % 2 == 0) for s in (0, 1)] for i in range(4)}
    expected = cluster_bootstrap(by_task, reps=rep["stats"]["reps"], seed=rep["stats"]["seed"], lo=0, hi=1)
    assert (base["sr"]["lo"], base["sr"]["hi"]) == (expected.lo, expected.hi) == (0.5, 0.5)
    assert {r["category"] for r in rep["by_category"]} == {"crafting", "combat"}
    assert [r["team_size"] for r in rep["by_team_size"] if r["group"].startswith("base")] == ["3-5", "11-20"]
    (pair,) = rep["paired"]
    assert pair["pairs"] == 8 and pair["tasks"] == 4 and pair["sr"]["mean"] == 0.5  # B wins the 4 pairs A lost
    # by task: B is better on all 4 tasks (each 1/2 -> 1): exact sign test p = 2 / 2^4
    assert (pair["sr"]["b_better"], pair["sr"]["a_better"], pair["sr"]["ties"]) == (4, 0, 0)
    assert pair["sr"]["p"] == sign_test(4, 0) == 0.125
    assert math.isclose(pair["cce"]["mean"], 0.25) and pair["cce"]["pairs"] == 2
    # SR per task x configuration
    cells = {row["task"]: row["cells"] for row in rep["per_task"]["rows"]}
    assert cells["t0"]["base · oracle · vanilla"] == {"n": 2, "successes": 1, "psr": 0.75}
    assert cells["t0"]["llm · openai · openai:x · vanilla"]["successes"] == 2


def test_variants_table_has_paper_reference(tmp_path: Path):
    rows = []
    for variant, wins in (("vanilla", 3), ("no_communication", 1), ("short_horizon", 0)):
        rows += [result(f"t{i}", 0, success=i < wins, variant=variant) for i in range(4)]
    rows += [result(f"t{i}", 0, success=False, framework="random") for i in range(4)]
    rep = build_report(load_runs([write_run(tmp_path / "v", rows)]))
    assert rep["by"] == "variant"
    table = {r["variant"]: r for r in rep["variants"]}
    assert table["vanilla"]["sr"]["mean"] == 0.75 and table["vanilla"]["paper_baseline_sr"] == 52.0
    assert table["no_communication"]["paper_baseline_sr"] == 22.9
    assert table["short_horizon"]["paper_ablation_sr"] == 37.1
    assert table["random"]["paper_baseline_sr"] == 5.7
    # paired differences against vanilla
    assert all(p["a"] == "oracle · vanilla" for p in rep["paired"])


def test_report_command_prints_tables(tmp_path: Path):
    from agentworld.core.cli import _load_commands, cli

    _load_commands()
    rows = [result(f"t{i}", s, success=i % 2 == 0) for i in range(3) for s in (0, 1)]
    run = write_run(tmp_path / "r", rows, name="demo")
    out = CliRunner().invoke(cli, ["report", str(run)], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "Table 2 shape" in out.output and "By team size" in out.output and "demo" in out.output
    assert "66.7" in out.output  # SR 4/6 (with its interval)
    assert "SR per task" in out.output and "What happened" in out.output and "Run to run" in out.output
    assert "round_budget 6" in out.output  # end reasons counted
    out = CliRunner().invoke(cli, ["report", str(run), "--json"])
    assert json.loads(out.output)["overall"][0]["n"] == 6
    out = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert out.exit_code != 0 and "not a run folder" in out.output


def test_the_viewer_samples_across_outcomes_and_tasks(tmp_path: Path):
    from agentworld.core.runs.html_report import sample_episodes

    # 6 tasks x 3 seeds: tasks t0-t4 always succeed, t5 always fails (1 group of failures among 6)
    rows = [result(f"t{i}", s, success=i < 5) for i in range(6) for s in range(3)]
    runs = load_runs([write_run(tmp_path / "r", rows)])
    picked = [r for _, r in sample_episodes(runs, 4)]
    assert len(picked) == 4 and picked[0].task_id == "t5" and not picked[0].success
    assert len({r.task_id for r in picked}) == 4  # one per group before any group gives a second
    picked = [r for _, r in sample_episodes(runs, 8)]
    assert [r.success for r in picked].count(False) == 2  # the failing task's second seed in the second pass
    assert len(sample_episodes(runs, 100)) == 18
