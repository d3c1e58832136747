"""The Dask executor (optional extra): same results and resume semantics as the local executor.

Runs only when `distributed` is installed; the cluster is a LocalCluster bound to 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")

from agentworld.core.cli import _load_commands, cli  # noqa: E402
from agentworld.core.runs.runner import RunDir, read_results_file  # noqa: E402

_load_commands()


def strip_timing(path: Path) -> list[dict]:
    return sorted((r.model_dump(exclude={"wall_s", "harness_s"}) for r in read_results_file(path)),
                  key=lambda d: d["episode_id"])


def test_dask_executor_same_results_and_resume(tmp_path: Path):
    from agentworld.core.tasks.task import load_suite

    tasks = sorted(load_suite("main"), key=lambda t: (len(t.agents) * t.rounds, t.id))[:2]
    args = ["run", "--framework", "oracle", "--trials", "2", "--no-progress"]
    for t in tasks:
        args += ["--task", t.id]
    runner = CliRunner()
    local, dask = tmp_path / "local", tmp_path / "dask"
    res = runner.invoke(cli, [*args, "--out", str(local)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, [*args, "--out", str(dask), "--executor", "dask", "--workers", "2"],
                        catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert strip_timing(dask / "results.jsonl") == strip_timing(local / "results.jsonl")
    manifest = json.loads((dask / "manifest.json").read_text())
    assert manifest["executor"] == "dask" and manifest["status"] == "finished"
    assert manifest["sessions"][0]["executor_address"].startswith("tcp://127.0.0.1:")  # loopback only

    # Lose the last two recorded episodes (as if killed before they were recorded) and resume on Dask.
    rd = RunDir(dask)
    kept = rd.read_results()[:-2]
    rd.rewrite_results(kept)
    res = runner.invoke(cli, ["run", "--resume", str(dask), "--no-progress", "--executor", "dask"],
                        catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert strip_timing(dask / "results.jsonl") == strip_timing(local / "results.jsonl")
    sessions = json.loads((dask / "manifest.json").read_text())["sessions"]
    assert [s["ran"] for s in sessions] == [4, 2]


def test_dask_workers_pace_turns_with_the_providers_rate_limit(tmp_path: Path, monkeypatch):
    """The runner's limiter cannot cross processes: the worker rebuilds one from the rate (none without)."""
    import asyncio

    from agentworld.core.runs import jobs as jobs_mod
    from agentworld.core.runs.distributed import DaskExecutor
    from agentworld.core.runs.jobs import EpisodeJob, RateLimiter, error_result

    seen: list = []

    async def fake_episode(job, out_dir, progress=None, limiter=None):
        seen.append(limiter)
        return error_result(job, RuntimeError("not run"), 0.0)

    class InlineFuture:  # runs the submitted function when its result is awaited, as a worker would
        def __init__(self, fn, args):
            self.fn, self.args = fn, args

        def result(self):
            return self.fn(*self.args)

    class InlineClient:
        def submit(self, fn, *args, **kwargs):
            return InlineFuture(fn, args)

    monkeypatch.setattr(jobs_mod, "run_episode_job", fake_episode)
    executor = DaskExecutor()
    executor.client = InlineClient()
    job = EpisodeJob(episode_id="e1", task_id="t", task_path=None, category=None, n_agents=1,
                     framework="oracle", model="", variant="vanilla", seed=0)
    result = asyncio.run(executor.run(job, tmp_path, None, RateLimiter(5.0)))
    asyncio.run(executor.run(job, tmp_path, None, None))
    assert result.episode_id == "e1"
    assert isinstance(seen[0], RateLimiter) and seen[0].interval == pytest.approx(0.2)
    assert seen[1] is None
