"""`agentworld run --no-progress` when every episode errors: a clear summary, exit code 3, no traceback, and
no pointer to an error.txt that does not exist; the model-option flags reach the teams."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.runs.runner import read_results_file

sys.path.insert(0, str(Path(__file__).parent))
from openai_stub_server import OpenAIStubServer  # noqa: E402

_load_commands()


def broken_team(spec):
    """A team factory that crashes while the episode is set up (a harness error: the runner writes error.txt)."""
    raise RuntimeError("this team is broken on purpose")


@pytest.fixture(scope="module")
def short_task(tmp_path_factory) -> str:
    """A 3-agent task cut to 2 rounds, as a task file."""
    import yaml

    from agentworld.core.tasks.task import load_suite

    task = next(t for t in sorted(load_suite("main"), key=lambda t: t.id) if len(t.agents) == 3)
    data = yaml.safe_load(Path(task.path).read_text(encoding="utf-8"))
    data["rounds"] = 2
    path = tmp_path_factory.mktemp("task") / Path(task.path).name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def invoke(*args: str):
    # catch_exceptions=False: a traceback in front of the user fails the test as an exception
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


def test_every_episode_failing_at_the_model_service_prints_a_summary_and_exits_3(tmp_path, short_task):
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1})) as server:
        server.faults.extend(["500"] * 200)
        spec = tmp_path / "spec.yaml"
        spec.write_text(json.dumps({"tasks": [short_task], "frameworks": ["openai", "langgraph"],
                                    "models": ["openai-compatible:broken"], "base_url": server.base_url,
                                    "options": {"retries": 0}, "concurrency": 1}))
        res = invoke("run", str(spec), "--no-progress", "--out", str(tmp_path / "run"), "--request-timeout", "5")
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output
    assert "2 of 2 episode(s) errored" in res.output and "infrastructure errors on 6 turn(s)" in res.output
    assert "500 - stub: internal" in res.output  # the first error, said plainly
    assert "error.txt" not in res.output  # none was written: the errors are in the trajectories
    assert "--resume" in res.output
    results = read_results_file(tmp_path / "run" / "results.jsonl")
    assert len(results) == 2 and all(r.infra_errors == 6 for r in results)


def test_every_episode_crashing_in_the_harness_names_the_error_files(tmp_path, short_task):
    res = invoke("run", "--task", short_task, "--team-factory", "test_run_errored:broken_team", "--no-progress",
                 "--out", str(tmp_path / "run"))
    assert res.exit_code == 3, res.output
    assert "Traceback" not in res.output and "1 of 1 episode(s) errored" in res.output
    assert "this team is broken on purpose" in res.output
    (result,) = read_results_file(tmp_path / "run" / "results.jsonl")
    error_txt = tmp_path / "run" / "episodes" / result.episode_id / "error.txt"
    assert error_txt.is_file() and str(error_txt) in res.output.replace("\n", "")


def test_model_flags_reach_the_team_and_the_manifest(tmp_path, short_task):
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1})) as server:
        res = invoke("run", "--task", short_task, "--framework", "openai", "--model", "openai-compatible:m",
                     "--base-url", server.base_url, "--no-progress", "--out", str(tmp_path / "run"),
                     "--max-tokens", "64", "--temperature", "0.5", "--request-timeout", "30",
                     "--tool-choice", "required", "--context-window", "8192")
    assert res.exit_code == 0, res.output
    assert {r["max_tokens"] for r in server.requests} == {64}
    assert {r["temperature"] for r in server.requests} == {0.5}
    assert {r["tool_choice"] for r in server.requests} == {"required"}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    model = next(iter(manifest["models"].values()))
    assert (model["timeout"], model["context_window"], model["tool_choice"]) == (30.0, 8192, "required")
    # resume may change the server's facts (timeout, window), not the model's behaviour
    res = invoke("run", "--resume", str(tmp_path / "run"), "--temperature", "1.0")
    assert res.exit_code != 0 and "--resume keeps the run's model settings" in res.output


def test_a_refused_tool_choice_is_said_once_in_the_run_log(tmp_path, short_task):
    from agentworld.plugins.agents.compat import forget_server_facts

    forget_server_facts()
    with OpenAIStubServer(lambda body: ("sleep", {"seconds": 1}), llama_cpp=True,
                          refuse_tool_choice=("required",)) as server:
        res = invoke("run", "--task", short_task, "--framework", "camel", "--model", "openai-compatible:m",
                     "--base-url", server.base_url, "--no-progress", "--out", str(tmp_path / "run"),
                     "--tool-choice", "required")
    assert res.exit_code == 0, res.output
    log = (tmp_path / "run" / "run.log").read_text()
    assert log.count("refused tool_choice='required'") == 1 and "using tool_choice='auto'" in log
    assert [r.get("tool_choice") for r in server.requests].count("required") == 1
