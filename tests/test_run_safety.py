"""Run folders lose nothing: one process per folder, damaged files found and rerun or flagged by name, a
damaged manifest named, and an episode that keeps failing the same way marked failed for good."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentworld.core.play.records import EpisodeResult
from agentworld.core.runs.integrity import episode_problem
from agentworld.core.runs.lock import RunLock, RunLockedError
from agentworld.core.runs.report import ReportError, load_runs
from agentworld.core.runs.run_spec import RunSpecError, build_spec
from agentworld.core.runs.runner import LocalExecutor, RunDir, Runner, read_results_file

sys.path.insert(0, str(Path(__file__).parent))
from test_runs_logic import SPEC, FakeEpisodes, make_jobs  # noqa: E402

pytestmark = pytest.mark.anyio
AGENTWORLD = str(Path(sys.executable).parent / "agentworld")


async def _finished_run(run_dir: Path, n_tasks: int = 3) -> list:
    jobs = make_jobs(n_tasks=n_tasks, seeds=(0,))
    await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(FakeEpisodes())).run()
    return jobs


# -- one process per run folder ------------------------------------------------------------------------
def test_a_second_holder_is_refused_naming_the_pid(tmp_path: Path):
    with RunLock(tmp_path):
        with pytest.raises(RunLockedError, match=f"pid {os.getpid()}"):
            RunLock(tmp_path).acquire()  # another open file description: refused like another process
    with RunLock(tmp_path):  # released on exit
        pass


async def test_two_concurrent_resumes_the_second_refused_the_first_finishes_clean(tmp_path: Path):
    """A real second `agentworld run --resume` while the first one runs: refused, naming our pid."""
    spec = build_spec({"tasks": [str(Path(__file__).parent / "data" / "good_base_task.yaml")],
                       "frameworks": ["oracle"], "seeds": [0, 1, 2]})
    run_dir = tmp_path / "run"
    gate = asyncio.Event()
    fake = FakeEpisodes()

    async def slow(job, out, progress, limiter):
        await gate.wait()
        return await fake(dataclasses.replace(job, task_id="t1"), out, progress, limiter)  # a fake episode

    first = Runner(spec, run_dir, executor=LocalExecutor(slow))
    task = asyncio.ensure_future(first.run())
    while not (run_dir / "manifest.json").is_file():
        await asyncio.sleep(0.01)
    second = await asyncio.create_subprocess_exec(
        AGENTWORLD, "run", "--resume", str(run_dir), "--no-progress",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(second.communicate(), 120)
    gate.set()
    summary = await task
    text = out.decode()
    assert second.returncode == 1, text
    assert f"pid {os.getpid()}" in text and "in use by another agentworld process" in text
    assert "Traceback" not in text
    assert summary.done == summary.planned == 3 and not summary.notices
    results = read_results_file(run_dir / "results.jsonl")
    assert len(results) == 3 and all(episode_problem(RunDir(run_dir).episode_dir(r.episode_id), r) is None
                                     for r in results)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished" and len(manifest["sessions"]) == 1  # the refused one left no trace


# -- damaged files ---------------------------------------------------------------------------------------
def _cut(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


async def test_damaged_episode_files_are_flagged_by_report_and_rerun_by_resume(tmp_path: Path):
    run_dir = tmp_path / "run"
    jobs = await _finished_run(run_dir, n_tasks=4)
    rd = RunDir(run_dir)
    a, b, c, d = (j.episode_id for j in jobs)
    _cut(rd.episode_dir(a) / "trajectory.jsonl", 0.6)  # cut mid-file
    _cut(rd.episode_dir(b) / "result.json", 0.5)  # a truncated result.json
    lines = rd.results_path.read_text().splitlines()
    lines[2] = lines[2][:40] + "#garbled#" + lines[2][60:]  # a garbled results.jsonl line (episode c)
    rd.results_path.write_text("\n".join(lines) + "\n")

    [run] = load_runs([run_dir])
    assert [r.episode_id for r in run.results] == [d] and run.damaged == 2
    problems = "\n".join(run.problems)
    assert f"{a}/trajectory.jsonl: cut off" in problems
    assert f"{b}/result.json: not a whole result" in problems
    assert "results.jsonl: line 3 is not a whole result" in problems

    fake = FakeEpisodes()
    runner = Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=True)
    summary = await runner.run()
    assert sorted(fake.started) == sorted([a, b, c])  # exactly the damaged ones, from clean folders
    assert any("trajectory.jsonl" in n and a in n for n in summary.notices)
    assert summary.done == 4
    [run] = load_runs([run_dir])
    assert len(run.results) == 4 and not run.problems


async def test_a_trajectory_without_its_end_or_with_other_turns_is_damaged(tmp_path: Path):
    run_dir = tmp_path / "run"
    jobs = await _finished_run(run_dir, n_tasks=1)
    folder = RunDir(run_dir).episode_dir(jobs[0].episode_id)
    result = EpisodeResult.model_validate_json((folder / "result.json").read_text())
    lines = (folder / "trajectory.jsonl").read_text().splitlines(keepends=True)
    (folder / "trajectory.jsonl").write_text("".join(lines[:-1]))  # whole lines, but no end event
    assert "ends without an end event" in episode_problem(folder, result)
    (folder / "trajectory.jsonl").write_text("".join(lines[:1] + lines[2:]))  # a turn missing
    assert "turn events but the result counts" in episode_problem(folder, result)


async def test_a_damaged_manifest_is_named(tmp_path: Path):
    run_dir = tmp_path / "run"
    jobs = await _finished_run(run_dir, n_tasks=1)
    _cut(run_dir / "manifest.json", 0.5)
    with pytest.raises(RunSpecError, match=r"manifest\.json is damaged"):
        await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(FakeEpisodes()), resume=True).run()
    with pytest.raises(ReportError, match=r"manifest\.json is damaged"):
        load_runs([run_dir])
    res = subprocess.run([AGENTWORLD, "report", str(run_dir)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "manifest.json is damaged" in res.stderr and "Traceback" not in res.stderr


# -- failing the same way N times ------------------------------------------------------------------------
class AlwaysFails:
    def __init__(self):
        self.started: list[str] = []

    async def __call__(self, job, out_dir, progress, limiter):
        self.started.append(job.episode_id)
        raise RuntimeError(f"engine broke at {hex(id(self) + len(self.started))}")  # the address changes


async def test_an_episode_failing_the_same_way_three_times_is_failed_for_good(tmp_path: Path):
    run_dir = tmp_path / "run"
    jobs = make_jobs(n_tasks=2, seeds=(0,))
    bad = jobs[0].episode_id
    failing = AlwaysFails()
    fake = FakeEpisodes()

    async def episodes(job, out, progress, limiter):
        return await (failing if job.episode_id == bad else fake)(job, out, progress, limiter)

    summaries = []
    for i in range(4):
        runner = Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(episodes), resume=i > 0)
        summaries.append(await runner.run())
    assert failing.started == [bad] * 3  # attempts 1-3 ran; the fourth resume did not retry it
    assert [s.errors for s in summaries] == [1, 1, 0, 0] and [s.failed for s in summaries] == [0, 0, 1, 1]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["given_up"][bad]["attempts"] == 3 and "engine broke" in manifest["given_up"][bad]["error"]
    assert manifest["counts"] == {"planned": 2, "done": 1, "errors": 0, "failed": 1, "remaining": 0}
    assert manifest["status"] == "finished_with_errors"
    [run] = load_runs([run_dir])
    assert run.failed == 1 and any("failed for good after 3 identical errors" in p for p in run.problems)
    # a higher limit on resume tries it again
    more = build_spec({**SPEC.model_dump(), "max_attempts": 4})
    await Runner(more, run_dir, jobs=jobs, executor=LocalExecutor(episodes), resume=True).run()
    assert failing.started == [bad] * 4


async def test_different_errors_do_not_add_up(tmp_path: Path):
    run_dir = tmp_path / "run"
    jobs = make_jobs(n_tasks=1, seeds=(0,))
    messages = iter(["ConnectionError", "ValueError", "ConnectionError", "ConnectionError"])

    async def flaky(job, out, progress, limiter):
        raise RuntimeError(next(messages))

    for i in range(4):
        summary = await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(flaky), resume=i > 0).run()
    assert summary.failed == 0 and summary.errors == 1  # only two identical in a row so far
