"""`agentworld run` and `agentworld report` end to end with real episodes (oracle/random teams, no network)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.runs.runner import read_results_file

_load_commands()
AGENTWORLD = str(Path(sys.executable).parent / "agentworld")
TURN_SLEEP_S = 0.015


def slow_oracle_team(spec):
    """The oracle, pausing before each move like a (very fast) model: gives a kill time to land mid-run.

    Used by the subprocess runs below as ``--team-factory test_runs_cli:slow_oracle_team``."""
    import asyncio

    from agentworld.core.play.protocol import Team
    from agentworld.core.play.policies import PolicyTeam, make_policy

    inner = PolicyTeam(make_policy("oracle", spec.seed, spec.reference_plan))

    class SlowOracle(Team):
        async def act(self, turn):
            await asyncio.sleep(TURN_SLEEP_S)
            return await inner.act(turn)

    return SlowOracle()


@pytest.fixture(scope="module")
def small_tasks() -> list[str]:
    """The main suite's tasks with the fewest agent-turns (fast episodes)."""
    from agentworld.core.tasks.task import load_suite

    tasks = sorted(load_suite("main"), key=lambda t: (len(t.agents) * t.rounds, t.id))
    assert len(tasks) >= 3, "the main suite should hold the starter tasks"
    return [t.id for t in tasks[:3]]


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, terminal_width=160, catch_exceptions=False)


def strip_timing(path: Path) -> list[dict]:
    rows = [r.model_dump(exclude={"wall_s", "harness_s"}) for r in read_results_file(path)]
    return sorted(rows, key=lambda d: d["episode_id"])


def test_quickstart_single_oracle_episode(tmp_path: Path, small_tasks: list[str]):
    out = tmp_path / "run"
    res = invoke("run", "--task", small_tasks[0], "--framework", "oracle", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "SUCCESS" in res.output and "PSR" in res.output and small_tasks[0] in res.output
    (result,) = read_results_file(out / "results.jsonl")
    assert result.success and result.psr == 1.0 and result.framework == "oracle"
    folder = out / "episodes" / result.episode_id
    for name in ("trajectory.jsonl", "result.json", "final_state.json"):
        assert (folder / name).is_file(), name
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["episodes"][0]["episode_id"] == result.episode_id
    assert manifest["environment"]["packages"]["pydantic"]


def test_default_run_folder_and_bad_input(tmp_path: Path, small_tasks: list[str], monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = invoke("run", "--task", small_tasks[0], "--framework", "random", "--seed", "3", "--no-progress")
    assert res.exit_code == 0, res.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert read_results_file(run_dir / "results.jsonl")[0].seed == 3
    res = invoke("run", "--task", "no_such_task", "--framework", "oracle")
    assert res.exit_code == 1 and "no_such_task" in res.output
    res = invoke("run", "--task", small_tasks[0], "--framework", "no_such_framework")
    assert res.exit_code == 1 and "unknown framework 'no_such_framework'" in res.output
    res = invoke("run", "--task", small_tasks[0], "--variant", "no_such_variant")
    assert res.exit_code == 1 and "no_such_variant" in res.output
    res = invoke("run", "--task", small_tasks[0], "--agents", "9-3")
    assert res.exit_code == 1 and "agents" in res.output
    # Model problems are caught before anything runs (no run folder is left behind).
    res = invoke("run", "--task", small_tasks[0], "--framework", "openai", "--model", "openai:gpt-4.1-mini",
                 "--api-key-env", "AW_SURELY_UNSET_KEY", "--out", str(tmp_path / "nokey"))
    assert res.exit_code == 1 and "AW_SURELY_UNSET_KEY is not set" in res.output
    assert not (tmp_path / "nokey").exists()
    res = invoke("run", "--task", small_tasks[0], "--framework", "openai", "--model", "openai-compatible:qwen")
    assert res.exit_code == 1 and "--base-url" in res.output


def _sessions(run: Path) -> int:
    try:
        return len(json.loads((run / "manifest.json").read_text())["sessions"])
    except (OSError, ValueError, KeyError):
        return 0


def test_killed_three_times_and_resumed_matches_uninterrupted(tmp_path: Path, small_tasks: list[str]):
    """SIGKILL the CLI at random moments three times, resume each time: same results, none duplicated."""
    from agentworld.core.tasks.task import load_suite

    tasks = [t.id for t in sorted(load_suite("main"), key=lambda t: (len(t.agents) * t.rounds, t.id))[:4]]
    args = ["run", "--framework", "oracle", "--trials", "3", "--concurrency", "2", "--no-progress"]
    for t in tasks:
        args += ["--task", t]
    ref = tmp_path / "ref"
    res = invoke(*args, "--out", str(ref))
    assert res.exit_code == 0, res.output
    expected = strip_timing(ref / "results.jsonl")
    assert len(expected) == 3 * len(tasks)
    turns = {r["episode_id"]: r["actions"] + r["chats"] + r["no_calls"] for r in expected}

    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    rng = random.Random(7)
    cmd = [AGENTWORLD, *args, "--team-factory", "test_runs_cli:slow_oracle_team", "--out", str(run)]
    for kill in range(3):
        done = {r.episode_id for r in read_results_file(run / "results.jsonl")} if run.exists() else set()
        # A lower bound of the time this session needs: the pauses of the turns still to play.
        left_s = sum(n for eid, n in turns.items() if eid not in done) * TURN_SLEEP_S / 2
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while _sessions(run) <= kill and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # this session has started (its manifest entry exists)
        time.sleep(rng.uniform(0.1, 0.6) * left_s)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        manifest = json.loads((run / "manifest.json").read_text())
        # The kill landed mid-run: the session never finished and episodes were still missing.
        assert manifest["status"] == "running" and manifest["sessions"][-1]["finished"] is None
        assert len(read_results_file(run / "results.jsonl")) < len(expected)
        cmd = [AGENTWORLD, "run", "--resume", str(run), "--no-progress"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    got = strip_timing(run / "results.jsonl")
    ids = [r["episode_id"] for r in got]
    assert len(ids) == len(set(ids)) == len(expected)
    assert got == expected
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and len(manifest["sessions"]) == 4
    # Every planned episode has exactly its one folder.
    folders = sorted(p.name for p in (run / "episodes").iterdir())
    assert folders == sorted(ids)


def test_manifest_and_run_folder_hold_no_secrets(tmp_path: Path, small_tasks: list[str]):
    secret = "sk-test-" + "Zq8" * 12
    out = tmp_path / "run"
    res = invoke("run", "--task", small_tasks[0], "--framework", "openai", "--model", "scripted:oracle",
                 "--api-key-env", "AW_FAKE_TEST_KEY", "--out", str(out), "--no-progress",
                 env={"AW_FAKE_TEST_KEY": secret})
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["spec"]["api_key_env"] == "AW_FAKE_TEST_KEY"
    found = [p for p in out.rglob("*") if p.is_file() and secret in p.read_text(errors="ignore")]
    assert found == []
    (result,) = read_results_file(out / "results.jsonl")
    assert result.framework == "openai" and result.model == "scripted:oracle"


def test_variants_across_tasks_and_report_tables(tmp_path: Path, small_tasks: list[str]):
    out = tmp_path / "run"
    res = invoke("run", "--task", small_tasks[0], "--task", small_tasks[1], "--framework", "oracle",
                 "--variant", "vanilla", "--variant", "no_communication", "--variant", "short_horizon:2",
                 "--out", str(out), "--no-progress")
    assert res.exit_code == 0, res.output
    # two rounds are fewer than either reference plan needs: those cells are n/a, planned out, explained
    assert "n/a  short_horizon:2 · " in res.output and "needs" in res.output
    results = read_results_file(out / "results.jsonl")
    assert len(results) == 4 and {r.variant for r in results} == {"vanilla", "no_communication"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert {(c["variant"], c["task_id"]) for c in manifest["not_applicable"]} == {
        ("short_horizon:2", t) for t in small_tasks[:2]}
    res = invoke("report", str(out), "--json")
    rep = json.loads(res.output)
    assert rep["by"] == "variant" and {v["variant"] for v in rep["variants"]} == {
        "vanilla", "no_communication", "short_horizon:2"}
    vanilla = next(v for v in rep["variants"] if v["variant"] == "vanilla")
    assert vanilla["sr"]["mean"] == 1.0 and vanilla["paper_baseline_sr"] == 52.0 and vanilla["na"] == 0
    short = next(v for v in rep["variants"] if v["variant"] == "short_horizon:2")
    assert short["n"] == 0 and short["na"] == 2  # a row of n/a, never a 0 %
    assert all("needs" in c["reason"] for c in rep["not_applicable"])
    assert len(rep["paired"]) == 1 and rep["paired"][0]["pairs"] == 2
    text = invoke("report", str(out)).output
    assert "n/a tasks" in text and "n/a  short_horizon:2" in text


def test_html_report_is_self_contained_and_renders_in_chromium(tmp_path: Path, small_tasks: list[str]):
    out = tmp_path / "run"
    res = invoke("run", "--task", small_tasks[0], "--task", small_tasks[1], "--framework", "oracle",
                 "--framework", "random", "--cce", "grounded", "--out", str(out), "--no-progress")
    assert res.exit_code == 0, res.output
    results = read_results_file(out / "results.jsonl")
    for r in results:  # scored before being recorded
        cce = json.loads((out / "episodes" / r.episode_id / "cce.json").read_text())["cce"]
        assert cce > 0 if r.success else cce == 0
    failed = [r for r in results if not r.success]
    assert len(failed) == 2 and len(results) == 4
    html_path = tmp_path / "report.html"
    # room for 3 of the 4 episodes: the sample takes the failed ones first
    res = invoke("report", str(out), "--html", str(html_path), "--max-viewer-episodes", "3")
    assert res.exit_code == 0, res.output
    page = html_path.read_text()
    # Self-contained: no external scripts, styles or images.
    for needle in ('src="http', "src='http", 'href="http', "@import", "<link "):
        assert needle not in page
    assert "data:image/png;base64," in page or '"map":null' in page
    assert "Episode viewer" in page and small_tasks[0] in page and "CCE [95% CI]" in page

    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        pytest.skip("no chromium binary (apt-get install chromium); the rest of the report was checked")
    def dump_dom(url: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=3000", "--dump-dom", url], capture_output=True, text=True, timeout=90)

    def load(url: str) -> str:
        proc = dump_dom(url)
        dom = proc.stdout
        assert 'data-viewer-ready="1"' in dom, proc.stderr[-2000:]
        assert "data-js-error=" not in dom
        # The page logs nothing: any console line (an uncaught error, console.error, a warning) is a failure.
        assert [line for line in proc.stderr.splitlines() if ":CONSOLE" in line] == []
        # every label on the map was placed clear of the others (measured in the browser)
        assert 'data-label-overlaps="0"' in dom
        return dom

    def options(dom: str) -> list[str]:
        sel = dom[dom.index('id="ep-select"'):]
        return re.findall(r"<option[^>]*>([^<]*)</option>", sel[: sel.index("</select>")])

    dom = load(html_path.as_uri())
    assert 'id="lanes"' in dom and "<polyline" in dom  # the timeline and the agents' paths were drawn
    cce_svg = dom[dom.index('id="cce"'):]
    assert "<circle" in cce_svg[: cce_svg.index("</svg>")]  # the causal graph was drawn
    # failed episodes are in the viewer (both of them, though only 3 of 4 episodes fit)
    assert sum(o.startswith("✗") for o in options(dom)) == 2 and len(options(dom)) == 3
    assert 'id="transcript"' in dom and 'id="f-task"' in dom
    # a filter from the URL (what the tables' links set): only the failed episode of that task
    dom = load(html_path.as_uri() + f"#task={failed[0].task_id}&outcome=failed")
    assert options(dom) == [o for o in options(dom) if o.startswith("✗")] and len(options(dom)) == 1
    assert failed[0].task_id in options(dom)[0]
    # an unknown episode id says so, visibly
    dom = load(html_path.as_uri() + "#episode=no-such-episode")
    missing = dom[dom.index('id="ep-missing"'):]
    assert "no-such-episode is not an episode or task of these runs" in missing[: missing.index("</div>")]

    # The world state at round 1, rebuilt in the browser from the trajectory's AgentStatus records.
    from agentworld.core.play.records import TurnEvent
    from agentworld.core.play.trajectory import read_events

    second = next(r for r in results if r.success)
    events = read_events(out / "episodes" / second.episode_id / "trajectory.jsonl")
    first_turn = next(e for e in events if isinstance(e, TurnEvent) and e.round == 1 and e.status)
    dom = load(html_path.as_uri() + f"#episode={second.episode_id}&round=1")
    state = dom[dom.index('id="state"'):]
    assert 'data-round="1"' in state[:200]
    row = state[state.index(f">{first_turn.username}<"):]
    row = row[: row.index("</tr>")]
    assert f"({first_turn.status.x}, {first_turn.status.y})" in row
    assert f"{first_turn.status.hp}/{first_turn.status.max_hp}" in row


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _signal_masks(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "unknown (no /proc)"
    return " ".join(line.replace("\t", "") for line in status.splitlines() if line.startswith(("SigBlk", "SigIgn")))


def test_ctrl_c_marks_the_run_interrupted_and_resume_finishes_it(tmp_path: Path, small_tasks: list[str]):
    run = tmp_path / "run"
    # enough episodes (a few seconds' work) that a busy machine cannot finish them all before the signal lands
    trials = 8
    cmd = [AGENTWORLD, "run", "--framework", "random", "--trials", str(trials), "--concurrency", "1", "--no-progress",
           "--out", str(run)] + [x for t in small_tasks for x in ("--task", t)]
    # The CLI is started as a terminal would start it, with Ctrl-C at its default. A child inherits ignored
    # signals, and a full suite on a loaded machine once started it with SIGINT and SIGQUIT ignored (glibc's
    # system() ignores both while it waits, process-wide): a process started so keeps ignoring Ctrl-C, as a
    # background job must, and ran to its end.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=_default_interrupt)
    deadline = time.monotonic() + 60
    while _sessions(run) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    masks = _signal_masks(proc.pid)  # a Ctrl-C blocked or ignored by what the test inherited is not the CLI's bug
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, f"{out}\n(the CLI's signal masks when signalled: {masks})"
    assert f"agentworld run --resume {run}" in out
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["counts"]["remaining"] > 0
    res = invoke("run", "--resume", str(run), "--no-progress")
    assert res.exit_code == 0, res.output
    assert len(read_results_file(run / "results.jsonl")) == trials * len(small_tasks)


def test_run_spec_file_grid_with_filters(tmp_path: Path):
    from agentworld.core.tasks.task import load_suite

    tasks = load_suite("main")
    small = min(len(t.agents) for t in tasks)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: grid\nsuite: main\nagents: '-{small}'\nframeworks: [oracle, random]\n"
                    f"variants: [vanilla]\nseeds: [4]\nconcurrency: 3\n")
    res = invoke("run", str(spec), "--out", str(tmp_path / "run"), "--no-progress")
    assert res.exit_code == 0, res.output
    results = read_results_file(tmp_path / "run" / "results.jsonl")
    n_small = sum(len(t.agents) <= small for t in tasks)
    assert len(results) == 2 * n_small and {r.framework for r in results} == {"oracle", "random"}
    assert all(r.n_agents <= small and r.seed == 4 for r in results)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["spec"]["name"] == "grid" and manifest["spec"]["agents"] == f"-{small}"
    cat = results[0].category
    res = invoke("run", "--suite", "main", "--category", cat, "--framework", "oracle", "--out",
                 str(tmp_path / "cat"), "--no-progress")
    assert res.exit_code == 0, res.output
    assert {r.category for r in read_results_file(tmp_path / "cat" / "results.jsonl")} == {cat}
    spec.write_text("suite: main\nframeworks: [oracle]\nconcurency: 2\n")
    res = invoke("run", str(spec))
    assert res.exit_code == 1 and "concurency: unknown field" in res.output


def test_rate_limit_spaces_the_turns_of_a_provider(tmp_path: Path, small_tasks: list[str]):
    out = tmp_path / "run"
    t0 = time.monotonic()
    res = invoke("run", "--task", small_tasks[0], "--framework", "oracle", "--rate-limit", "oracle=40",
                 "--out", str(out), "--no-progress")
    elapsed = time.monotonic() - t0
    assert res.exit_code == 0, res.output
    (r,) = read_results_file(out / "results.jsonl")
    turns = r.actions + r.chats + r.no_calls
    assert r.success and elapsed >= (turns - 1) / 40  # each turn waited for its slot
    res = invoke("run", "--task", small_tasks[0], "--rate-limit", "oracle")
    assert res.exit_code == 2 and "PROVIDER=TURNS_PER_SECOND" in res.output


def test_token_budget_stops_the_command_and_resume_with_more_finishes(tmp_path: Path, small_tasks: list[str]):
    out = tmp_path / "run"
    args = ["run", "--task", small_tasks[0], "--task", small_tasks[1], "--framework", "openai", "--model",
            "scripted:oracle", "--concurrency", "1", "--no-progress"]
    res = invoke(*args, "--max-tokens-total", "3000", "--out", str(out))
    assert res.exit_code == 4, res.output
    assert "token budget reached" in res.output and f"--resume {out}" in res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "max_tokens_total 3000" in manifest["stop_reason"]
    assert manifest["counts"]["remaining"] >= 1
    res = invoke("run", "--resume", str(out), "--max-tokens-total", "10000000", "--no-progress")
    assert res.exit_code == 0, res.output
    results = read_results_file(out / "results.jsonl")
    assert len(results) == 2 and all(r.success and r.tokens_in > 0 for r in results)
