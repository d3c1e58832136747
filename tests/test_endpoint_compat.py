"""Real OpenAI-compatible servers as they are: the four frameworks against a local HTTP server that behaves
like the stock llama-cpp-python server (tests/openai_stub_server.py, ``llama_cpp=True``).

- ``tool_choice="required"`` answered with llama.cpp's bare HTTP 500: one fallback to ``auto``, said once in
  the log, remembered for every later request;
- a prompt over the context window answered with HTTP 400: the oldest turns of that request are dropped and
  it is asked once more; the agent's budget shrinks to what the window the server named leaves, so later
  turns fold their own history;
- its request schema (no ``content: null``, no list-content tool messages) and its legacy ``function_call``
  never reach a framework as errors;
- the request options (``max_tokens``, ``temperature``, ``seed``, ``tool_choice``) reach the server the same
  way from every framework, and the context window is read from ``/v1/models`` where the server offers it.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from agentworld.core.play.models import DEFAULT_CONTEXT_BUDGET, ModelSpec
from agentworld.core.play.protocol import Turn
from agentworld.core.world.tools import TOOLS
from agentworld.plugins.agents import compat

sys.path.insert(0, str(Path(__file__).parent))
from openai_stub_server import OpenAIStubServer  # noqa: E402
from test_frameworks import GateDouble, make_turn, team_for  # noqa: E402

pytestmark = pytest.mark.anyio
FRAMEWORKS = ["openai", "autogen", "langgraph", "camel"]
MODEL = "openai-compatible:smollm2"


@pytest.fixture(autouse=True)
def _fresh_server_facts():
    compat.forget_server_facts()
    logging.getLogger("camel").setLevel(logging.CRITICAL)  # CAMEL logs failed requests with tracebacks
    yield
    compat.forget_server_facts()


def sleeper(body):
    return ("sleep", {"seconds": 1})


async def play(team, gate, rounds, agents=("agent_1", "agent_2"), padding=400):
    outcomes = []
    for rnd in range(1, rounds + 1):
        for agent in agents:
            outcomes.append(await team.act(make_turn(gate, agent, rnd, padding=padding)))
    await team.aclose()
    return outcomes


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_required_refused_with_llama_cpp_500_falls_back_to_auto_once_and_says_so(framework, caplog):
    with OpenAIStubServer(sleeper, llama_cpp=True, refuse_tool_choice=("required",)) as server:
        team = team_for(framework, MODEL, base_url=server.base_url, tool_choice="required", retries=0)
        gate = GateDouble()
        with caplog.at_level(logging.WARNING, logger="agentworld.frameworks"):
            outcomes = await play(team, gate, rounds=3)
    assert [o.infra_error for o in outcomes] == [None] * 6
    assert [v for *_, v in gate.log] == ["ok"] * 6  # every turn reached the gate with the model's call
    # one refusal, then every request (the first one's second try included) is sent with auto
    assert server.log[0] == "refused_tool_choice_required" and server.log[1:] == ["ok"] * 6
    assert [r.get("tool_choice") for r in server.requests] == ["required"] + ["auto"] * 6
    said = [r.getMessage() for r in caplog.records if "refused tool_choice='required'" in r.getMessage()]
    assert len(said) == 1 and "tool_choice='auto'" in said[0] and "--tool-choice" in said[0]
    # llama.cpp's request schema and legacy function_call caused nothing: no refused message, no retries
    assert all(o.model_calls == 1 for o in outcomes)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_context_length_400_trims_the_request_retries_once_and_shrinks_the_budget(framework, caplog):
    window = 4096  # the stub counts 4 characters a token, tools included (about 1,600 tokens of schemas)
    with OpenAIStubServer(sleeper, llama_cpp=True, context_tokens=window) as server:
        team = team_for(framework, MODEL, base_url=server.base_url, retries=0)
        gate = GateDouble()
        with caplog.at_level(logging.WARNING, logger="agentworld.frameworks"):
            outcomes = await play(team, gate, rounds=8, agents=("agent_1",), padding=1500)
    assert [o.infra_error for o in outcomes] == [None] * 8, [o.infra_error for o in outcomes]
    assert [v for *_, v in gate.log] == ["ok"] * 8
    overflows = [i for i, v in enumerate(server.log) if v == "context_length"]
    assert overflows and all(server.log[i + 1] == "ok" for i in overflows)  # each followed by a good retry
    first = overflows[0]
    assert len(server.requests[first + 1]["messages"]) < len(server.requests[first]["messages"])
    # the turn that overflowed reports what was dropped; the budget now comes from the window the server named
    turn_of_overflow = first  # one request per turn before the first overflow
    assert outcomes[turn_of_overflow].context_trimmed > 0 and outcomes[turn_of_overflow].model_calls == 1
    assert team.window == window and team.budgets["agent_1"].budget < DEFAULT_CONTEXT_BUDGET
    # after it the agent folds its own history: no further overflow, and turns report their folding
    assert len(overflows) == 1, server.log
    assert sum(o.context_trimmed for o in outcomes[turn_of_overflow + 1:]) > 0
    assert any("context window" in r.getMessage() for r in caplog.records)


async def test_a_second_overflow_is_an_infrastructure_error():
    # a window too small for even one turn: dropping old turns cannot help, the turn fails (episode goes on)
    with OpenAIStubServer(sleeper, llama_cpp=True, context_tokens=600) as server:
        team = team_for("openai", MODEL, base_url=server.base_url, retries=0)
        outcomes = await play(team, GateDouble(), rounds=2, agents=("agent_1",))
    assert all(o.infra_error and "maximum context length" in o.infra_error for o in outcomes)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_request_options_reach_the_server_the_same_way_from_every_framework(framework):
    with OpenAIStubServer(sleeper, llama_cpp=True) as server:
        team = team_for(framework, MODEL, base_url=server.base_url, max_tokens=128, temperature=0.3, seed=5)
        await play(team, GateDouble(), rounds=2)
    for body in server.requests:
        # LangGraph's client says max_completion_tokens, which llama-cpp-python ignores: max_tokens is sent too
        assert body.get("max_tokens") == 128, body.keys()
        assert body.get("temperature") == 0.3 and body.get("seed") == 5
        assert body.get("tool_choice") == "auto" and body.get("parallel_tool_calls") is False


async def test_every_framework_sends_the_system_prompt_byte_for_byte():
    """The same prompt token for token, whichever framework: a server's prompt cache then serves a second
    framework from the first one's states (AutoGen's client used to strip the prompt's trailing newline)."""
    sent = {}
    for framework in FRAMEWORKS:
        with OpenAIStubServer(sleeper, llama_cpp=True) as server:
            team = team_for(framework, MODEL, base_url=server.base_url)
            gate = GateDouble()
            base = make_turn(gate, "agent_1", 1)
            # as the episode renders it (core/play/prompts.py): ending in a newline
            turn = Turn(agent_id=base.agent_id, username=base.username, round=1, observation=base.observation,
                        observation_text=base.observation_text, system_prompt=base.system_prompt + "\n",
                        user_prompt=base.user_prompt, tools=base.tools, port=gate.port("agent_1"))
            await team.act(turn)
            await team.aclose()
        sent[framework] = [m["content"] for m in server.requests[0]["messages"] if m["role"] == "system"]
    assert all(v == [turn.system_prompt] for v in sent.values()), sent


def test_tool_choice_defaults_per_provider_and_the_option_wins():
    assert ModelSpec.parse(MODEL, base_url="http://127.0.0.1:1/v1").effective_tool_choice() == "auto"
    assert ModelSpec.parse("openai:gpt-4.1-mini").effective_tool_choice() == "required"
    assert ModelSpec.parse(MODEL, base_url="http://x/v1", tool_choice="required").effective_tool_choice() == "required"
    with pytest.raises(ValueError, match="tool_choice"):
        ModelSpec.parse(MODEL, base_url="http://x/v1", tool_choice="always")


def test_history_budget_counts_the_system_prompt_the_tools_and_the_answer():
    spec = ModelSpec.parse(MODEL, base_url="http://x/v1", context_window=4096, max_tokens=256)
    budget = spec.history_budget(system_chars=2000, tools_chars=6000)
    assert budget == int((4096 - 256 - 100) * 3.0) - 2000 - 6000
    assert spec.history_budget(system_chars=2000, tools_chars=20000) == 0  # never negative
    # an explicit budget wins; nothing known: the default
    assert ModelSpec.parse(MODEL, base_url="http://x/v1", context_budget=5000).history_budget(
        system_chars=1, tools_chars=1, window=4096) == 5000
    assert ModelSpec.parse(MODEL, base_url="http://x/v1").history_budget(system_chars=1, tools_chars=1) == \
        DEFAULT_CONTEXT_BUDGET


async def test_context_window_is_read_from_v1_models_where_the_server_says():
    vllm_models = {"object": "list", "data": [{"id": "smollm2", "object": "model", "max_model_len": 8192}]}
    with OpenAIStubServer(sleeper, models=vllm_models) as server:
        team = team_for("openai", MODEL, base_url=server.base_url)
        await team.start(None)
        await play(team, GateDouble(), rounds=1, agents=("agent_1",))
    assert team.window == 8192
    tools_chars = sum(len(json.dumps(t.openai_schema())) for t in TOOLS.values())
    system_chars = len("You are AGENT_1. Call exactly one tool per turn.")
    assert team.budgets["agent_1"].budget == int((8192 - 1024 - 100) * 3.0) - system_chars - tools_chars
    # llama-cpp-python's /v1/models names no window: the default budget stays
    with OpenAIStubServer(sleeper, models={"object": "list", "data": [{"id": "smollm2", "owned_by": "me"}]}) as server:
        team = team_for("openai", MODEL, base_url=server.base_url)
        await team.start(None)
        assert team.window is None
        await team.aclose()


def test_request_and_answer_normalisation():
    body = {"messages": [{"role": "system", "content": "s"},
                         {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
                         {"role": "tool", "tool_call_id": "1", "content": [{"type": "text", "text": "a"},
                                                                            {"type": "text", "text": "b"}]}],
            "max_completion_tokens": 64}
    out = compat.normalise_request(body)
    assert out["messages"][1]["content"] == "" and out["messages"][2]["content"] == "ab"
    assert out["max_tokens"] == 64 and out["max_completion_tokens"] == 64
    answer = {"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c"}],
                                       "function_call": {"name": "sleep:", "arguments": "{}"}}}]}
    assert compat.normalise_answer(answer) and "function_call" not in answer["choices"][0]["message"]
    assert compat.window_from_models({"data": [{"id": "m", "meta": {"n_ctx_train": 2048}}]}, "m") == 2048
    assert compat.window_from_models({"data": [{"id": "m"}]}, "m") is None


def test_dropping_old_turns_keeps_whole_turns_and_the_latest():
    msgs = [{"role": "system", "content": "S"}]
    for i in range(5):
        msgs += [{"role": "user", "content": f"turn {i} " + "x" * 100},
                 {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}"}]},
                 {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]
    kept, dropped = compat.drop_oldest_turns(msgs, 0.5)
    assert kept[0]["content"] == "S" and kept[1]["content"].startswith("[History summary")
    assert dropped % 3 == 0 and 0 < dropped < 15 and kept[-3]["content"].startswith("turn 4")
    tail, n = compat.drop_oldest_turns(msgs, 0.0)  # nothing fits: only the latest turn stays
    assert n == 12 and [m["content"][:6] for m in tail[2:3]] == ["turn 4"]
