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
from agentworld.core.runner import RunDir, read_results_file  # noqa: E402

_load_commands()


def strip_timing(path: Path) -> list[dict]:
    return sorted((r.model_dump(exclude={"wall_s", "harness_s"}) for r in read_results_file(path)),
                  key=lambda d: d["episode_id"])


def test_dask_executor_same_results_and_resume(tmp_path: Path):
    from agentworld.core.task import load_suite

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
