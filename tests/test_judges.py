"""CCE judges: the OpenAI-compatible judge against a local HTTP server, tolerant parsing, kappa, plugins."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentworld.core import plugins
from agentworld.core.cce.score import score_episode
from agentworld.core.cce.compare import cohen_kappa, compare_reports, kendall_tau, ranking
from agentworld.core.cce.judges import JudgeCache, JudgeConfigError, OpenAIJudge, check_shape, extract_json
from agentworld.core.cce.prompts import ROUND_SCHEMA
from agentworld.core.cce.synth import STAFF_CONTRIBUTING, STAFF_SUCCESS, staff_episode

KEY_ENV = "AGENTWORLD_TEST_JUDGE_KEY"
SECRET = "sk-test-not-a-real-key-123"


class FakeOpenAI:
    """A Chat Completions server on 127.0.0.1; ``script(prompt_text) -> content or (status, body)``."""

    def __init__(self, script):
        self.script = script
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                # the question (a re-ask after an unusable answer appends the reason after it)
                answer = outer.script(next(m for m in body["messages"] if m["role"] == "user")["content"])
                status, payload = (answer if isinstance(answer, tuple) else (200, answer))
                if status == 200:
                    payload = {"id": "x", "object": "chat.completion", "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": payload}}],
                               "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def label_script(prompt: str):
    """Answer like a model that knows the staff episode, wrapped in prose and code fences."""
    if "Step 1" in prompt:
        return 'Sure! Here is my analysis.\n```json\n{"success_action_ids": ["r3.agent_2"]}\n```\nHope it helps.'
    judged = prompt.split("to judge:")[1]
    ids = re.findall(r"^\[(r\d+\.agent_\d+)\]", judged, re.M)
    yes = [i for i in ids if i in STAFF_CONTRIBUTING]
    return json.dumps({"contributing_ids": yes, "not_contributing_ids": [i for i in ids if i not in yes]})


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def make_judge(server, **kw):
    return OpenAIJudge("judge-model", base_url=server.base_url, api_key_env=KEY_ENV, backoff_s=0.01, **kw)


def test_openai_judge_runs_the_paper_method_over_http(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    with FakeOpenAI(label_script) as server:
        report = score_episode(folder, make_judge(server))
    assert report.contributing_ids() == STAFF_CONTRIBUTING
    assert report.success_actions == sorted(STAFF_SUCCESS)
    assert report.judge_calls == 4 and report.tokens_in == 400 and report.tokens_out == 40
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == f"Bearer {SECRET}"
    assert req["body"]["temperature"] == 0 and req["body"]["response_format"] == {"type": "json_object"}
    assert req["body"]["messages"][0]["role"] == "system"
    assert SECRET not in report.model_dump_json()


def test_malformed_then_good_answers_are_retried(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    answers = iter(["I think the staff craft did it.", (500, {"error": "overloaded"})])

    def script(prompt):
        return next(answers, None) or label_script(prompt)

    with FakeOpenAI(script) as server:
        report = score_episode(folder, make_judge(server))
    assert report.calls[0].attempts == 3 and report.calls[0].ok
    assert report.contributing_ids() == STAFF_CONTRIBUTING and report.failed_calls == 0


def test_always_malformed_is_recorded_after_retries(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    with FakeOpenAI(lambda p: '{"success_action_ids": "r3.agent_2"') as server:  # truncated JSON
        report = score_episode(folder, make_judge(server, retries=2), cache=JudgeCache(tmp_path / "c"))
    # asked again once with the reason; the identical answer ends it (temperature 0: a third ask is wasted)
    assert len(server.requests) == 2
    assert "could not be used" in server.requests[1]["body"]["messages"][-1]["content"]
    assert report.failed_calls == 1 and report.calls[0].attempts == 2 and "unusable answer" in report.calls[0].error
    assert "the same answer again" in report.calls[0].error
    assert report.cce is None and not report.complete and report.partial_cce == 0.0  # incomplete, never 0
    assert not any((tmp_path / "c").rglob("*.json"))  # failures are not cached


def test_an_error_body_that_echoes_the_key_is_stored_masked(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    with FakeOpenAI(lambda p: (401, {"error": f"invalid key {SECRET}"})) as server:
        report = score_episode(folder, make_judge(server))
    assert "HTTP 401" in report.calls[0].error and "***" in report.calls[0].error
    assert SECRET not in report.model_dump_json()


def test_a_client_error_is_not_retried_and_an_unreachable_server_is_recorded(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    with FakeOpenAI(lambda p: (404, {"error": "no such model"})) as server:
        report = score_episode(folder, make_judge(server))
    assert len(server.requests) == 1 and "HTTP 404" in report.calls[0].error
    dead = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key_env=KEY_ENV, retries=1, backoff_s=0.01,
                       timeout_s=2)
    report = score_episode(folder, dead)
    assert report.failed_calls == 1 and report.calls[0].attempts == 2


def test_the_http_judge_cache_makes_rerun_free(tmp_path, key):
    folder = staff_episode(tmp_path / "ep")
    cache = JudgeCache(tmp_path / "cache")
    with FakeOpenAI(label_script) as server:
        score_episode(folder, make_judge(server), cache=cache)
        n = len(server.requests)
        again = score_episode(folder, make_judge(server), cache=cache)
    assert n == 4 and len(server.requests) == 4
    assert again.judge_calls == 0 and again.contributing_ids() == STAFF_CONTRIBUTING
    assert SECRET not in "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))


def test_missing_key_variable_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("SURELY_UNSET_VAR_X", raising=False)
    with pytest.raises(JudgeConfigError, match="SURELY_UNSET_VAR_X"):
        OpenAIJudge("m", api_key_env="SURELY_UNSET_VAR_X")


def test_a_local_judge_needs_no_key_and_takes_timeout_and_max_tokens(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = staff_episode(tmp_path / "ep")
    with FakeOpenAI(label_script) as server:
        judge = plugins.get("judge", "openai")(model="m", base_url=server.base_url, max_tokens="300")
        report = score_episode(folder, judge)
    assert report.failed_calls == 0 and report.contributing_ids() == STAFF_CONTRIBUTING
    assert all(r["auth"] is None and r["body"]["max_tokens"] == 300 for r in server.requests)
    assert judge.timeout_s == 600  # a local CPU server may be slow; hosted endpoints keep 120 s
    assert plugins.get("judge", "openai")(model="m", base_url="http://localhost:9/v1", timeout_s="30").timeout_s == 30
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY"):  # a hosted endpoint still needs its key
        plugins.get("judge", "openai")(model="m", base_url="https://api.example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert plugins.get("judge", "openai")(model="m").timeout_s == 120


# -- parsing ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"contributing_ids": ["a"]}',
    '```json\n{"contributing_ids": ["a"]}\n```',
    'Here you go: {"contributing_ids": ["a"]} -- done.',
    'Reasoning about {braces} first... then {"contributing_ids": ["a"], "reasons": {"a": "it said \\"}\\""}}',
])
def test_extract_json_tolerates_fences_and_prose(text):
    assert extract_json(text)["contributing_ids"] == ["a"]


def test_extract_json_and_shape_errors():
    with pytest.raises(ValueError):
        extract_json("no json here")
    with pytest.raises(ValueError, match="contributing_ids"):
        check_shape({"not_contributing_ids": []}, ROUND_SCHEMA)
    with pytest.raises(ValueError, match="must be a list"):
        check_shape({"contributing_ids": "r1.agent_1"}, ROUND_SCHEMA)
    assert check_shape({"contributing_ids": [3]}, ROUND_SCHEMA)["contributing_ids"] == ["3"]


# -- kappa and ranking ------------------------------------------------------------------------------------------


def test_cohen_kappa_on_known_label_sets():
    # the classic 2x2 example: 50 items, a: 25 yes, b: 30 yes, agree 20 yes + 15 no
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert cohen_kappa([True] * 5, [True] * 5) == 1.0
    # three categories (Cohen 1960 style): p_o = 0.7, p_e = 0.34 -> kappa = 0.5454...
    x = ["a"] * 4 + ["b"] * 3 + ["c"] * 3
    y = ["a"] * 3 + ["b"] + ["b"] * 2 + ["c"] + ["c"] * 2 + ["a"]
    p_o = sum(i == j for i, j in zip(x, y)) / 10
    p_e = (4 * 4 + 3 * 3 + 3 * 3) / 100
    assert cohen_kappa(x, y) == pytest.approx((p_o - p_e) / (1 - p_e))
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


def test_kendall_tau_and_ranking():
    assert kendall_tau([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert ranking({"t1": 0.2, "t2": 0.5, "t3": 0.2}) == ["t2", "t1", "t3"]


def test_compare_reports_agreement_and_ranks(tmp_path):
    from agentworld.core.cce.grounded import GroundedJudge
    from agentworld.core.cce.judges import ScriptedJudge

    folder = staff_episode(tmp_path / "ep")
    grounded = score_episode(folder, GroundedJudge())
    inclusive = score_episode(folder, ScriptedJudge.from_rule("inclusive"))
    cmp = compare_reports({"g": {"e": grounded}, "i": {"e": inclusive}, "g2": {"e": grounded}})
    pair = {(p.a, p.b): p for p in cmp.pairs}
    assert pair[("g", "g2")].kappa == 1.0 and pair[("g", "g2")].agreement == 1.0
    g_labels = [n.contributing for n in grounded.nodes]
    i_labels = [n.contributing for n in inclusive.nodes]
    assert pair[("g", "i")].kappa == pytest.approx(cohen_kappa(g_labels, i_labels))
    assert pair[("g", "i")].n_actions == 11


# -- plugins ----------------------------------------------------------------------------------------------------


def test_builtin_judges_are_registered(key):
    names = set(plugins.judges())
    assert {"openai", "grounded", "scripted"} <= names
    judge = plugins.get("judge", "openai")(model="m", base_url="http://127.0.0.1:1/v1", api_key_env=KEY_ENV)
    assert judge.name == "openai" and judge.method == "paper"
    g = plugins.get("judge", "grounded")(chat_judge="scripted:effects")
    assert g.method == "grounded" and g.chat_judge.model == "effects"
    with pytest.raises(JudgeConfigError, match="model"):
        plugins.get("judge", "openai")()
    with pytest.raises(JudgeConfigError, match="unknown scripted rule"):
        plugins.get("judge", "scripted")(rule="nope")
    with pytest.raises(JudgeConfigError, match="unknown grounded judge option"):
        plugins.get("judge", "grounded")(colour="red")


def test_cli_scores_with_the_openai_judge_and_never_prints_the_key(tmp_path, key):
    from click.testing import CliRunner

    from agentworld.core.cli.cce import cce_group

    folder = staff_episode(tmp_path / "run" / "ep")
    with FakeOpenAI(label_script) as server:
        result = CliRunner(env={"COLUMNS": "220"}).invoke(cce_group, [
            str(tmp_path / "run"), "--judge", "openai", "--model", "judge-model", "--base-url", server.base_url,
            "--api-key-env", KEY_ENV, "-o", "backoff_s=0.01"])
    assert result.exit_code == 0, result.output
    report = json.loads((folder / "cce.json").read_text())
    assert {n["id"] for n in report["nodes"] if n["contributing"]} == STAFF_CONTRIBUTING
    assert report["judge"] == "openai" and report["model"] == "judge-model" and report["judge_calls"] == 4
    assert (folder / "cce" / "openai-judge-model.json").is_file()
    assert SECRET not in result.output and SECRET not in (folder / "cce.json").read_text()


def test_grounded_asks_the_llm_only_about_chat(tmp_path, key):
    from agentworld.core import plugins as plugin_host

    folder = staff_episode(tmp_path / "ep")

    def script(prompt):
        assert "Message [r1.agent_2]" in prompt  # the only message with contributing targets
        return json.dumps({"links": [{"message_id": "r1.agent_2", "action_ids": ["r3.agent_1"],
                                      "reason": "asked for the logs"}]})

    with FakeOpenAI(script) as server:
        judge = plugin_host.get("judge", "grounded")(model="judge-model", base_url=server.base_url,
                                                     api_key_env=KEY_ENV, backoff_s=0.01)
        report = score_episode(folder, judge)
    assert len(server.requests) == 1 and report.judge_calls == 1 and report.model == "judge-model"
    edge = next(e for e in report.edges if e.kind == "chat_judge")
    assert (edge.source, edge.target, edge.reason) == ("r1.agent_2", "r3.agent_1", "asked for the logs")
    assert report.contributing_ids() == STAFF_CONTRIBUTING


def test_prompts_tell_the_truth_about_a_failed_episode_judged_anyway(tmp_path, key):
    from agentworld.core.cce.score import ScoreOptions

    asked = {}
    for outcome in (True, False):
        folder = staff_episode(tmp_path / f"ep{outcome}", success=outcome)
        with FakeOpenAI(label_script) as server:
            score_episode(folder, make_judge(server), options=ScoreOptions(judge_failed=True))
        asked[outcome] = [r["body"]["messages"] for r in server.requests]
    ok_step1, failed_step1 = asked[True][0], asked[False][0]
    assert "completed successfully" in ok_step1[1]["content"] and "FAILED" not in ok_step1[0]["content"]
    assert "completed successfully" not in failed_step1[1]["content"]
    assert "NOT completed" in failed_step1[1]["content"] and "This episode FAILED" in failed_step1[0]["content"]
    sweep = [m[1]["content"] for m in asked[False][1:]]
    assert sweep and all("contribute to the progress made" in q and "to the success" not in q for q in sweep)
