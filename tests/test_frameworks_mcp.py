"""Framework teams with ``--tools mcp`` reach the tools through the episode's MCP server over real streamable
HTTP on 127.0.0.1 with each framework's OWN MCP client, and play exactly as they do in process.

"Exactly" is checked on the whole turn record, model accounting included: the scripted models count the
characters the framework sends them, tool results included, so equal ``tokens_in`` on every turn means the
model read the same tool-result text word for word in both modes (failures and refusals included: the
``scripted:random`` run makes many failing calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentworld.core import plugins
from agentworld.core.world.effects import ToolResult
from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import IdlePolicy, PolicyTeam
from agentworld.core.play.protocol import TeamSpec
from agentworld.core.play.records import TurnEvent
from agentworld.core.play.view import ReferencePlan
from agentworld.core.tasks.task import Task, find_task
from agentworld.mcp_server import clients
from agentworld.mcp_server.server import EpisodeMcpServer

pytestmark = [pytest.mark.anyio,
              # AutoGen 0.7.5 and camel-ai 0.2.90 open their sessions with the SDK's deprecated alias
              pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")]
FRAMEWORKS = ["openai", "autogen", "langgraph", "camel"]
TASK_FILE = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # a 3-agent fixture task
# Everything a turn records except wall-clock figures.
TIMING = {"timestamp": True, "model_latency_s": True, "harness_s": True, "attempts": {"__all__": {"latency_s"}}}


def native_entry(framework: str) -> tuple[Any, str]:
    """The framework's own MCP client method that every tool call of the team must go through."""
    if framework == "autogen":
        from autogen_ext.tools.mcp import McpWorkbench

        return McpWorkbench, "call_tool"
    if framework == "camel":
        from camel.utils.mcp_client import MCPClient

        return MCPClient, "call_tool"
    if framework == "langgraph":
        from langchain_mcp_adapters.client import MultiServerMCPClient

        return MultiServerMCPClient, "session"  # one session per seat; load_mcp_tools' tools use it
    from mcp import ClientSession

    return ClientSession, "call_tool"


def counting(monkeypatch, owner: Any, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


async def play(task: Task, framework: str, model: str, tools: str) -> tuple[Any, list[dict[str, Any]]]:
    plan = ReferencePlan.of(task) if model == "scripted:oracle" else None

    def build(view: Any) -> Any:
        return plugins.get("framework", framework)(TeamSpec(view=view, model=model, seed=0, agent_ids=view.agent_ids,
                                                            options={"tools": tools}, reference_plan=plan))

    ep = Episode(task, seed=0, framework=framework, model=model, turn_timeout=30, build_team=build)
    result = await ep.run()
    return result, [e.model_dump(exclude=TIMING) for e in ep.events if isinstance(e, TurnEvent)]


@pytest.fixture(scope="module")
def task() -> Task:
    return find_task(TASK_FILE, validate=False)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_native_mcp_client_plays_the_oracle_like_in_process(framework, task, monkeypatch):
    result, inproc = await play(task, framework, "scripted:oracle", "inproc")
    assert result.success
    # over MCP: every call goes through the framework's own client, none through our fallback caller
    fallback = counting(monkeypatch, clients.McpToolCaller, "__call__")
    native = counting(monkeypatch, *native_entry(framework))
    result, over_mcp = await play(task, framework, "scripted:oracle", "mcp")
    calls = sum(1 for e in over_mcp if e["tool"]) + sum(len(e["refused"]) for e in over_mcp)
    assert not fallback
    assert len(native) == (len(task.agent_ids) if framework == "langgraph" else calls)
    assert result.success and result.infra_errors == 0
    assert over_mcp == inproc  # action for action: tool, arguments, ok, result, error, effects, tokens, ...
    assert all(e["tokens_in"] > 0 for e in over_mcp)


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_failed_calls_read_the_same_over_mcp(framework, task):
    """``scripted:random`` makes plenty of failing calls; the next prompts carry their result text, so equal
    token counts show the failure text the model read is the same (normalised from each client's form)."""
    short = task.model_copy(update={"rounds": 6})
    _, inproc = await play(short, framework, "scripted:random", "inproc")
    _, over_mcp = await play(short, framework, "scripted:random", "mcp")
    assert any(e["tool"] and not e["ok"] for e in inproc), "the random policy should make a failing call"
    assert over_mcp == inproc


class TwoCallsATurn:
    """The oracle's call plus a second one in the same answer (the scripted OpenAI model emits both)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def decide(self, turn: Any) -> Any:
        decision = self.inner.decide(turn)
        return [decision, ("sleep", {"seconds": 1})] if decision else decision


async def test_a_second_call_is_refused_by_the_server_and_the_model_reads_the_same_refusal(task):
    from agentworld.core.play.policies import make_policy

    runs = {}
    for tools in ("inproc", "mcp"):
        def build(view: Any, tools: str = tools) -> Any:
            team = plugins.get("framework", "openai")(TeamSpec(view=view, model="scripted:oracle", seed=0,
                                                               agent_ids=view.agent_ids, options={"tools": tools}))
            team._policy = TwoCallsATurn(make_policy("oracle", 0, task))
            return team

        ep = Episode(task, seed=0, framework="openai", model="scripted:oracle", turn_timeout=30, build_team=build)
        result = await ep.run()
        runs[tools] = (result.success, result.refused_calls,
                       [e.model_dump(exclude=TIMING) for e in ep.events if isinstance(e, TurnEvent)])
    success, refused, events = runs["mcp"]
    assert success and refused == len(events) and all(e["refused"][0]["tool"] == "sleep" for e in events)
    assert runs["mcp"] == runs["inproc"]  # same refusals recorded, same refusal text read (same tokens)


async def test_seat_result_inverts_the_server_framing_for_every_outcome(tmp_path):
    """Clients that keep only a result's text and isError (AutoGen's McpWorkbench) get the gate's outcome back
    exactly; the structured form (raw SDK, CAMEL, langchain-mcp-adapters) agrees with it."""
    from typing import get_args

    from agentworld.core.world.effects import ErrorKind

    task = find_task(TASK_FILE, validate=False)
    ep = Episode(task, PolicyTeam(IdlePolicy()), out_dir=tmp_path)  # not played: the server's framing only
    server = EpisodeMcpServer(ep, players={a: "autogen" for a in task.agent_ids})  # not started: framing only
    outcomes = [ToolResult(ok=True, text="Moved to (3, 4)."), ToolResult(ok=True, text="[not an error] ok")]
    outcomes += [ToolResult.fail(kind, f"Refused: [{kind}] went wrong.\nSecond line.") for kind in get_args(ErrorKind)]
    for outcome in outcomes:
        framed = server._result("agent_1", outcome, 0)
        text = clients.result_text(framed)
        for back in (clients.seat_result(framed.isError, text), clients.to_tool_result(framed)):
            assert (back.ok, back.error, back.text) == (outcome.ok, outcome.error, outcome.text)
    assert clients.seat_result(True, "Connection refused").error is None  # a client-side failure stays one


async def test_native_clients_offer_the_model_the_in_process_tool_definitions(task, tmp_path):
    """The tool definitions each framework's own MCP client builds from list_tools are the ones its
    in-process tools give the model (after the documented normalisation of AutoGen's McpWorkbench)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from agentworld.plugins.agents.autogen_team import _autogen_classes, seat_workbench_class
    from agentworld.plugins.agents.camel_team import camel_tool, mcp_function_tools
    from agentworld.plugins.agents.common import ToolRouter, tool_bindings
    from agentworld.plugins.agents.langgraph_team import langchain_tool, mcp_tools

    router = ToolRouter("agent_1")
    bindings = tool_bindings(None, router)
    ep = Episode(task, PolicyTeam(IdlePolicy()), out_dir=tmp_path)  # not played: the server's framing only
    async with EpisodeMcpServer(ep, players={a: "framework" for a in task.agent_ids}) as server:
        url, token = server.url, server.token("agent_1")
        async with clients.mcp_session(url, token) as session:
            assert await clients.openai_tool_schemas(session) == [b.openai_schema() for b in bindings]
        cls = _autogen_classes()
        async with seat_workbench_class()(clients.autogen_server_params(url, token), router) as workbench:
            assert await workbench.list_tools() == [cls["GateTool"](b).schema for b in bindings]
        async with clients.langchain_session(url, token) as session:
            assert [convert_to_openai_tool(t) for t in await mcp_tools(session, router)] == [
                convert_to_openai_tool(langchain_tool(b)) for b in bindings]
        async with clients.camel_client(url, token) as client:
            assert [t.get_openai_tool_schema() for t in await mcp_function_tools(client, router)] == [
                camel_tool(b).get_openai_tool_schema() for b in bindings]
