"""``autogen``: one AutoGen AgentChat ``AssistantAgent`` per character, one ``on_messages`` per turn.

``max_tool_iterations=1`` and ``reflect_on_tool_use=False`` make each ``on_messages`` one model call plus the
tool call(s) it emitted; the tools are a workbench of AutoGen ``BaseTool`` objects whose schemas come from
``core/world/tools.py`` and whose execution goes through the turn gate (with ``--tools mcp``: AutoGen's own
``McpWorkbench`` on the agent's seat instead, see ``SeatWorkbench``). Every emitted call reaches the gate as
emitted: ``GateAssistantAgent`` hands each call to the workbench without AutoGen's own tool-name check and
JSON parsing, and the metered client turns arguments that are not a JSON object into the wire form
(``core/play/calls.py``). The agent keeps its history in a budgeted
``ChatCompletionContext``; the model client is wrapped so that every request is timed, counted and retried.
"""

from __future__ import annotations

import functools
from typing import Any

from ...core.play.protocol import TeamSpec, Turn
from .common import (FrameworkTeam, HistoryBudget, team_factory, ToolRouter, result_text, tool_bindings, turn_messages)


def _autogen_classes() -> dict[str, Any]:
    """The AutoGen adapter classes, imported on first use (keeps ``agentworld --help`` free of AutoGen)."""
    from . import autogen_parts

    return {"GateTool": autogen_parts.GateTool, "BudgetedContext": autogen_parts.BudgetedContext,
            "MeteredClient": autogen_parts.MeteredClient, "GateWorkbench": autogen_parts.GateWorkbench,
            "GateAssistantAgent": autogen_parts.GateAssistantAgent}



@functools.cache
def seat_workbench_class() -> type:
    """Built on first use with ``--tools mcp`` only (autogen_ext.tools.mcp imports the MCP client stack)."""
    from autogen_core.tools import TextResultContent, ToolResult, ToolSchema
    from autogen_ext.tools.mcp import McpWorkbench

    class SeatWorkbench(McpWorkbench):
        """AutoGen's own ``McpWorkbench`` for one seat (``--tools mcp``), given to ``AssistantAgent(workbench=)``.

        Two adjustments, both so that the model reads exactly what it reads in process:
        - the result: McpWorkbench keeps the text and ``isError`` of the MCP result (the server frames a
          failure as ``[kind] text``); it is turned back into the gate's outcome and written as
          ``result_text`` does, with ``is_error=False`` as the in-process tools return (their text says
          FAILED);
        - the tool list is fetched once (AssistantAgent lists the workbench's tools before every model call
          and every tool call, and the episode's tools do not change), and written as the in-process tools
          write theirs: McpWorkbench adds ``"required": []`` to tools without required parameters and
          leaves ``strict`` out."""

        def __init__(self, params: Any, router: ToolRouter):
            super().__init__(params)
            self.router = router
            self._listed: list[Any] | None = None

        async def list_tools(self) -> list[Any]:
            if self._listed is None:
                self._listed = [ToolSchema(name=t["name"], description=t.get("description", ""), strict=False,
                                           parameters={k: v for k, v in t["parameters"].items()
                                                       if k != "required" or v})
                                for t in await super().list_tools()]
            return list(self._listed)

        async def call_tool(self, name: str, arguments: Any = None, cancellation_token: Any = None,
                            call_id: str | None = None) -> Any:
            from ...mcp_server.clients import seat_result

            async def over_mcp(tool: str, args: dict[str, Any]) -> Any:
                r = await McpWorkbench.call_tool(self, tool, args, cancellation_token, call_id)
                return seat_result(r.is_error, r.to_text())

            result = await self.router.call(name, arguments, via=over_mcp)
            return ToolResult(name=name, result=[TextResultContent(content=result_text(result))], is_error=False)

    return SeatWorkbench


class AutoGenTeam(FrameworkTeam):
    framework = "autogen"

    def __init__(self, spec: TeamSpec):
        super().__init__(spec)
        self.thoughts: dict[str, str] = {}  # agent id -> text the model wrote beside its tool call this turn

    def model_client(self) -> Any:
        if self.model.is_scripted:
            from .fakes import scripted_autogen_client

            return scripted_autogen_client(self.scripted_decide)
        from autogen_core.models import ModelFamily, ModelInfo
        from autogen_ext.models.openai import OpenAIChatCompletionClient

        kwargs: dict[str, Any] = {"model": self.model.model, "api_key": self.model.api_key(),
                                  "timeout": self.model.timeout, "max_retries": 0, "parallel_tool_calls": False,
                                  "http_client": self.http_client()}
        if self.model.base_url:
            kwargs["base_url"] = self.model.base_url
        kwargs.update(self.model.sampling())
        if self.model.provider != "openai" or self.model.base_url:
            # Unknown model names need their capabilities spelled out, else AssistantAgent refuses tools.
            # multiple_system_messages: else the client merges system messages and strips the prompt's
            # trailing newline, and AutoGen's agents would read a system prompt the others do not.
            kwargs["model_info"] = ModelInfo(vision=False, function_calling=True, json_output=False,
                                             family=ModelFamily.UNKNOWN, structured_output=False,
                                             multiple_system_messages=True)
        return OpenAIChatCompletionClient(**kwargs)

    async def build_agent(self, turn: Turn, router: ToolRouter) -> Any:
        cls = _autogen_classes()
        system, _ = turn_messages(turn)
        if self.tools_mode == "mcp":
            # AutoGen's own MCP client: an McpWorkbench holding one streamable-HTTP session for the seat
            # (identity in the Authorization header), kept open by a task of its own until aclose.
            from ...mcp_server.clients import autogen_server_params

            params = autogen_server_params(*self.mcp.seat(turn.agent_id))
            tools: dict[str, Any] = {"workbench": await self.mcp.hold(seat_workbench_class()(params, router))}
        else:
            tools = {"workbench": cls["GateWorkbench"](tool_bindings(turn.tools, router), router)}
        return cls["GateAssistantAgent"](
            name=turn.agent_id, model_client=cls["MeteredClient"](self.model_client(), self, turn.agent_id),
            model_context=cls["BudgetedContext"](), system_message=system,
            max_tool_iterations=1, reflect_on_tool_use=False, **tools)

    async def trim(self, agent: Any, turn: Turn, budget: HistoryBudget) -> int:
        return agent.model_context.fold(budget, len(turn_messages(turn)[1]))

    async def step(self, agent: Any, turn: Turn, router: ToolRouter) -> str:
        from autogen_agentchat.messages import TextMessage
        from autogen_core import CancellationToken

        self.thoughts.pop(turn.agent_id, None)
        response = await agent.on_messages([TextMessage(content=turn_messages(turn)[1], source="game")],
                                           CancellationToken())
        message = response.chat_message
        # With a tool call the final message is the tool summary; the model's own words are its "thought".
        if isinstance(message, TextMessage):
            return message.content
        return self.thoughts.pop(turn.agent_id, "")

    async def close_agent(self, agent: Any) -> None:
        await agent._model_client.close()


make_team = team_factory(AutoGenTeam, ("autogen_agentchat", "autogen_ext"), extra="autogen")
