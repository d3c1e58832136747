"""``langgraph``: one compiled LangGraph graph per character, one ``ainvoke`` per turn.

The graph is ``agent → tools → END`` with an ``InMemorySaver`` checkpointer and ``thread_id`` = agent id,
so each character keeps its own message history across turns. The agent node calls the chat model (with
the 13 tools bound, ``tool_choice`` forced, no parallel calls), folds old turns when the history exceeds
the budget (``RemoveMessage`` on the checkpointed state), and times, counts and retries every request.
The tool definitions bound to the model are LangChain ``StructuredTool`` objects from ``core/world/tools.py``;
with ``--tools mcp`` they come from langchain-mcp-adapters (``load_mcp_tools`` on the seat's session, see
:func:`mcp_tools`). The graph's own tool node (not LangGraph's prebuilt ToolNode, which answers an unknown
tool name itself) hands every emitted call, parseable or not (``invalid_tool_calls``), to the turn gate as
emitted, in process or over the seat's MCP session.
"""

from __future__ import annotations

from typing import Any

from ...core.play.protocol import Turn
from .common import (FrameworkTeam, HistoryBudget, team_factory, MalformedResponse, ToolBinding, ToolRouter, call_model,
                     result_text, split_turns, tool_bindings, turn_messages)


def langchain_tool(binding: ToolBinding) -> Any:
    """A LangChain tool with our JSON schema; arguments go to the gate unvalidated (the gate explains errors)."""
    from langchain_core.tools import StructuredTool

    async def run(**kwargs: Any) -> str:
        return await binding.run(kwargs)

    return StructuredTool.from_function(coroutine=run, name=binding.name, description=binding.description,
                                        args_schema=binding.schema(), infer_schema=False)


def _validate(msg: Any) -> None:
    """Only a failure of the service is retried: an answer whose tool call is unparseable (LangChain's
    ``invalid_tool_calls``) is the model's call, which the turn gate decides."""
    from langchain_core.messages import AIMessage

    if not isinstance(msg, AIMessage):
        raise MalformedResponse(f"model returned {type(msg).__name__}, not an AIMessage")


def emitted_calls(msg: Any) -> list[dict[str, Any]]:
    """The calls of an answer in the order the model wrote them (LangChain splits the parseable ones,
    ``tool_calls``, from the rest, ``invalid_tool_calls``, whose ``args`` is the text as emitted)."""
    return [*(msg.tool_calls or []), *(getattr(msg, "invalid_tool_calls", None) or [])]


async def mcp_tools(session: Any, router: ToolRouter) -> list[Any]:
    """The seat's tools from langchain-mcp-adapters (``load_mcp_tools`` on the seat's held-open session): they
    give the model its tool definitions. The graph's tool node makes the calls itself, on the same session,
    through the router (so that every call, whatever its name or arguments, reaches the gate)."""
    from langchain_mcp_adapters.tools import load_mcp_tools

    return await load_mcp_tools(session, server_name="agentworld")


def _tool_names(group: list[Any]) -> list[str]:  # the tool calls of the AIMessages of a turn
    return [c["name"] for m in group for c in (getattr(m, "tool_calls", None) or [])]


def build_graph(model: Any, tools: list[Any], *, system: str, budget: HistoryBudget, team: "LangGraphTeam",
                agent_id: str, bind_kwargs: dict[str, Any], call_tool: Any) -> Any:
    """``agent → tools → END``: one model call and at most one tool node run per ``ainvoke``."""
    from typing import Annotated, TypedDict

    from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    bound = model.bind_tools(tools, **bind_kwargs)

    # Functional TypedDict: class syntax would leave string annotations (this module uses postponed ones).
    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages]})

    async def agent(state: dict[str, Any]) -> dict[str, Any]:
        meter = team.routers[agent_id].meter
        history = list(state["messages"])
        # Fold the oldest turns (a turn starts at a HumanMessage; this turn's is in the state already)
        # until the history fits the budget.
        groups = split_turns(history, lambda m: isinstance(m, HumanMessage))
        before = budget.snapshot()
        folded = budget.fold_oldest(groups, _tool_names)
        removed = [RemoveMessage(id=m.id) for g in folded for m in g]
        meter.trimmed += len(removed)
        kept = [m for g in groups[len(folded):] for m in g]
        summary = budget.summary()
        prompt = [SystemMessage(system)] + ([HumanMessage(summary)] if summary else []) + kept
        try:
            msg = await call_model(lambda: bound.ainvoke(prompt), team.model, meter, _validate)
        except Exception:
            # The removals below never reach the checkpoint when the node fails: undo their bookkeeping.
            budget.restore(before)
            meter.trimmed -= len(removed)
            raise
        usage = getattr(msg, "usage_metadata", None) or {}
        meter.usage(usage.get("input_tokens"), usage.get("output_tokens"))
        for c in emitted_calls(msg):
            meter.emitted(c.get("name") or "", c.get("args"))
        return {"messages": removed + [msg]}

    async def route(state: dict[str, Any]) -> str:  # async: a sync router would hop through a thread pool
        return "tools" if emitted_calls(state["messages"][-1]) else END

    async def run_tools(state: dict[str, Any]) -> dict[str, Any]:
        """Every emitted call, as emitted, to the gate (a prebuilt ToolNode would answer an unknown name or
        unparseable arguments itself); the model reads each answer as that call's ToolMessage."""
        out = []
        for c in emitted_calls(state["messages"][-1]):
            text = await call_tool(c.get("name") or "", c.get("args"))
            out.append(ToolMessage(content=text, tool_call_id=c.get("id") or "", name=c.get("name") or ""))
        return {"messages": out}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", run_tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, {"tools": "tools", END: END})
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


class LangGraphTeam(FrameworkTeam):
    framework = "langgraph"

    def chat_model(self) -> tuple[Any, dict[str, Any]]:
        if self.model.is_scripted:
            from .fakes import scripted_langchain_model

            return scripted_langchain_model(self.scripted_decide), {}
        from langchain_openai import ChatOpenAI

        # Our own HTTP client (closed with the team): langchain-openai otherwise shares one cached client
        # between all ChatOpenAI instances, which no team may close. langchain-openai sends the token limit
        # as max_completion_tokens only; the client's transport also sends it as max_tokens to servers
        # that read that name (llama-cpp-python ignored the other: 2,712 tokens against a limit of 256).
        kwargs: dict[str, Any] = {"model": self.model.model, "api_key": self.model.api_key(),
                                  "timeout": self.model.timeout, "max_retries": 0,
                                  "http_async_client": self.http_client()}
        if self.model.base_url:
            kwargs["base_url"] = self.model.base_url
        kwargs.update(self.model.sampling())
        return ChatOpenAI(**kwargs), {"tool_choice": self.model.effective_tool_choice(), "parallel_tool_calls": False}

    async def build_agent(self, turn: Turn, router: ToolRouter) -> Any:
        model, bind_kwargs = self.chat_model()
        system, _ = turn_messages(turn)
        over_mcp = None
        if self.tools_mode == "mcp":
            # langchain-mcp-adapters: one session for the seat, opened by MultiServerMCPClient.session()
            # (identity in the Authorization header) and kept open by a task of its own until aclose; the
            # adapter's tools give the model its tool definitions, the session makes the calls.
            from ...mcp_server.clients import langchain_session, to_tool_result

            session = await self.mcp.hold(langchain_session(*self.mcp.seat(turn.agent_id)))
            tools = await mcp_tools(session, router)

            async def over_mcp(tool: str, args: dict[str, Any]) -> Any:
                return to_tool_result(await session.call_tool(tool, args))
        else:
            tools = [langchain_tool(b) for b in tool_bindings(turn.tools, router)]

        async def call_tool(name: str, args: Any) -> str:
            return result_text(await router.call(name, args, via=over_mcp))

        return build_graph(model, tools, system=system, budget=self.budgets[turn.agent_id], team=self,
                           agent_id=turn.agent_id, bind_kwargs=bind_kwargs, call_tool=call_tool)

    async def step(self, graph: Any, turn: Turn, router: ToolRouter) -> str:
        from langchain_core.messages import AIMessage, HumanMessage

        out = await graph.ainvoke({"messages": [HumanMessage(turn_messages(turn)[1])]},
                                  {"configurable": {"thread_id": turn.agent_id}})
        answer = next((m for m in reversed(out["messages"]) if isinstance(m, AIMessage)), None)
        content = answer.content if answer is not None else ""
        return content if isinstance(content, str) else ""


make_team = team_factory(LangGraphTeam, ("langgraph", "langchain_core", "langchain_openai"), extra="langgraph")
