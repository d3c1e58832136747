"""The AutoGen side of the ``autogen`` framework plugin: tools that run through the turn gate (a workbench and
an agent whose tool step hands every emitted call to it as emitted), a budgeted history, and a metered model
client. A module of its own, imported only when an AutoGen team is built, so
that ``agentworld --help`` and the other frameworks never import AutoGen.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import ChatCompletionClient, CreateResult, FunctionExecutionResult, UserMessage
from autogen_core.tools import BaseTool, StaticWorkbench, TextResultContent, ToolSchema
from autogen_core.tools import ToolResult as WorkbenchResult
from pydantic import BaseModel, ConfigDict

from ...core.play import calls
from .common import (HistoryBudget, MalformedResponse, ToolBinding, ToolRouter, call_model, result_text,
                     split_turns)

if TYPE_CHECKING:  # pragma: no cover
    from .autogen_team import AutoGenTeam


def _tool_names(group: list[Any]) -> list[str]:
    """The FunctionCalls in the assistant messages of one turn of an AutoGen history."""
    return [c.name for m in group if isinstance(getattr(m, "content", None), list)
            for c in m.content if hasattr(c, "name") and hasattr(c, "arguments")]


class RawArgs(BaseModel):
    """Accepts whatever the model sent: validation is the gate's job (its message reaches the model)."""

    model_config = ConfigDict(extra="allow")

class GateTool(BaseTool[RawArgs, str]):
    def __init__(self, binding: ToolBinding):
        super().__init__(RawArgs, str, binding.name, binding.description)
        self.binding = binding
        # Built once: AssistantAgent reads every tool's schema on every model call.
        self._schema = ToolSchema(name=binding.name, description=binding.description,
                                  parameters=binding.schema(), strict=False)

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    async def run(self, args: RawArgs, cancellation_token: Any) -> str:
        return await self.binding.run(args.model_dump())

    async def run_json(self, args: Any, cancellation_token: Any, call_id: str | None = None) -> Any:
        return await self.binding.run(args)  # as emitted: the gate decides what is wrong with it


class GateWorkbench(StaticWorkbench):
    """The in-process tools: their schemas are the GateTools', and every call, whatever its name or
    arguments, goes to the gate (StaticWorkbench would answer an unknown name itself)."""

    def __init__(self, bindings: list[ToolBinding], router: ToolRouter):
        super().__init__([GateTool(b) for b in bindings])
        self.router = router

    async def call_tool(self, name: str, arguments: Any = None, cancellation_token: Any = None,
                        call_id: str | None = None) -> Any:
        result = await self.router.call(name, arguments)
        return WorkbenchResult(name=name, result=[TextResultContent(content=result_text(result))], is_error=False)


class GateAssistantAgent(AssistantAgent):
    """AssistantAgent whose tool step hands every emitted call to the agent's workbench as emitted: AutoGen's
    own step answers an unknown tool name and unparseable arguments itself, so such a call would never reach
    the turn gate (which decides it, and uses the turn)."""

    @staticmethod
    async def _execute_tool_call(tool_call: Any, workbench: Any, handoff_tools: Any, agent_name: str,
                                 cancellation_token: Any, stream: Any) -> Any:
        result = await workbench[0].call_tool(name=tool_call.name, arguments=tool_call.arguments,
                                              cancellation_token=cancellation_token, call_id=tool_call.id)
        return tool_call, FunctionExecutionResult(content=result.to_text(), call_id=tool_call.id,
                                                  is_error=result.is_error, name=tool_call.name)

class BudgetedContext(ChatCompletionContext):
    """The agent's history; :meth:`fold` drops the oldest turns and keeps a summary message in front."""

    def __init__(self) -> None:
        super().__init__()
        self.summary: str | None = None

    async def get_messages(self) -> list:
        head = [UserMessage(content=self.summary, source="history")] if self.summary else []
        return head + list(self._messages)

    def fold(self, budget: HistoryBudget, incoming_chars: int) -> int:
        groups = split_turns(self._messages, lambda m: isinstance(m, UserMessage))
        folded = sum(len(g) for g in budget.fold_oldest(groups, _tool_names, incoming_chars))
        del self._messages[:folded]
        self.summary = budget.summary()
        return folded

class MeteredClient(ChatCompletionClient):
    """Delegates to the real (or scripted) client; adds timeout, retries, token and latency accounting."""

    def __init__(self, inner: ChatCompletionClient, team: "AutoGenTeam", agent_id: str):
        self.inner, self.team, self.agent_id = inner, team, agent_id

    async def create(self, messages, **kwargs) -> CreateResult:
        meter = self.team.routers[self.agent_id].meter
        if kwargs.get("tools"):  # AssistantAgent has no tool_choice option: the model spec's, as everywhere
            kwargs["tool_choice"] = self.team.model.effective_tool_choice()
        result = await call_model(lambda: self.inner.create(messages, **kwargs), self.team.model, meter, _validate)
        meter.usage(result.usage.prompt_tokens, result.usage.completion_tokens)
        if result.thought:  # text the model wrote next to its tool call
            self.team.thoughts[self.agent_id] = result.thought
        if isinstance(result.content, list):
            for call in result.content:
                meter.emitted(call.name, call.arguments)
                # AutoGen parses the arguments itself and answers broken JSON on its own: hand it the wire
                # form instead, which the gate unwraps (and which keeps the history valid JSON)
                wired = calls.wire_arguments(call.arguments)
                if calls.is_wrapped(wired):
                    call.arguments = json.dumps(wired)
        return result

    def create_stream(self, messages, **kwargs):
        return self.inner.create_stream(messages, **kwargs)

    async def close(self) -> None:
        await self.inner.close()

    def actual_usage(self):
        return self.inner.actual_usage()

    def total_usage(self):
        return self.inner.total_usage()

    def count_tokens(self, messages, **kwargs) -> int:
        return self.inner.count_tokens(messages, **kwargs)

    def remaining_tokens(self, messages, **kwargs) -> int:
        return self.inner.remaining_tokens(messages, **kwargs)

    @property
    def capabilities(self):
        return self.inner.model_info

    @property
    def model_info(self):
        return self.inner.model_info

def _validate(result: Any) -> None:
    content = getattr(result, "content", None)
    if isinstance(content, list):
        for call in content:
            if not getattr(call, "name", None):
                raise MalformedResponse("function call without a name")
    elif not isinstance(content, str):
        raise MalformedResponse(f"unexpected completion content {type(content).__name__}")

