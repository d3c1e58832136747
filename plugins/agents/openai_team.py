"""``openai``: the paper's own agent. One Chat Completions request per turn with the 13 function tools,
the model's ``tool_choice`` (``required`` on the OpenAI API, as the paper) and no parallel calls; the system prompt carries the role and rules, the user
prompt the observation and chat. Works with the OpenAI API and any OpenAI-compatible server (vLLM, Ollama,
llama.cpp) via ``--model openai-compatible:NAME --base-url URL``; ``--model scripted:oracle`` runs the same
code (the real ``openai`` SDK) against an in-process transport. With ``--tools mcp`` the agent's tools come
from its seat's MCP SDK ``ClientSession`` (``list_tools`` gives the schemas, ``call_tool`` makes the call).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...core.play import calls
from ...core.play.protocol import TeamSpec, Turn
from .common import (FrameworkTeam, HistoryBudget, team_factory, MalformedResponse, ToolBinding, ToolRouter, call_model,
                     result_text, tool_bindings, trim_openai_history, turn_messages)


@dataclass
class OpenAIAgent:
    system: str
    tools: list[ToolBinding]
    history: list[dict[str, Any]] = field(default_factory=list)  # user/assistant/tool messages, no system
    schemas: list[dict[str, Any]] = field(default_factory=list)  # the tools' function schemas, built once
    # over MCP: the seat's MCP SDK session (the plain agent's own MCP client), else None (in process)
    session: Any = None


def validate_completion(resp: Any) -> None:
    """Reject answers the SDK parsed leniently but that carry no usable message."""
    choices = getattr(resp, "choices", None)
    if not choices:
        raise MalformedResponse("completion has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedResponse("completion choice has no message")
    for call in getattr(message, "tool_calls", None) or []:
        fn = getattr(call, "function", None)
        if fn is None or not getattr(fn, "name", None):
            raise MalformedResponse("tool call without a function name")


def history_arguments(arguments: str | None) -> str:
    """A call's arguments for the conversation history: the text as emitted when it is a JSON object,
    else the wire form (``{"_raw_arguments": ...}``) as JSON text."""
    wired = calls.wire_arguments(arguments or "")
    return json.dumps(wired) if calls.is_wrapped(wired) else (arguments or "{}")


class OpenAITeam(FrameworkTeam):
    framework = "openai"

    def __init__(self, spec: TeamSpec):
        super().__init__(spec)
        self._client: Any = None
        # "chat" (default, as the other frameworks): system = role and rules, one user message per turn
        # with the observation. "paper": the paper's layout: the system message carries the *current*
        # observation and chat (rebuilt every turn), a per-task user message states the objective, and
        # each turn adds only a one-line user nudge, so old observations never pile up in the history.
        self.layout = str(spec.options.get("prompt_layout", "chat"))
        if self.layout not in ("chat", "paper"):
            raise ValueError(f"openai: option prompt_layout={self.layout!r}; use 'chat' or 'paper'")

    def client(self) -> Any:
        if self._client is None:
            if self.model.is_scripted:
                from .fakes import scripted_openai_client

                self._client = scripted_openai_client(self.scripted_decide)
            else:
                from openai import AsyncOpenAI

                # Retries and timeouts are ours (call_model), so the SDK's own are off.
                self._client = AsyncOpenAI(api_key=self.model.api_key(), base_url=self.model.base_url,
                                           timeout=self.model.timeout, max_retries=0, http_client=self.http_client())
        return self._client

    def turn_text(self, turn: Turn) -> str:
        if self.layout == "paper":  # the observation is in the system message; a fork's history goes here
            nudge = f"Round {turn.round}: it is your turn, {turn.username}. Make exactly one tool call."
            history = turn.extra.get("history")
            return f"{history}\n\n{nudge}" if history else nudge
        return turn_messages(turn)[1]

    async def build_agent(self, turn: Turn, router: ToolRouter) -> OpenAIAgent:
        system, _ = turn_messages(turn)
        if self.tools_mode == "mcp":
            # The plain agent's own MCP client is the MCP SDK itself: one ClientSession for the seat, its
            # function schemas from list_tools (the same as core.tools.openai_tools()), calls via call_tool.
            from ...mcp_server.clients import mcp_session, openai_tool_schemas

            session = await self.mcp.hold(mcp_session(*self.mcp.seat(turn.agent_id)))
            return OpenAIAgent(system=system, tools=[], schemas=await openai_tool_schemas(session), session=session)
        tools = tool_bindings(turn.tools, router)
        return OpenAIAgent(system=system, tools=tools, schemas=[t.openai_schema() for t in tools])

    async def call_tool(self, agent: OpenAIAgent, router: ToolRouter, name: str, args: Any) -> str:
        """One emitted call, through the gate (in process) or the seat's MCP session; the model's text."""
        if agent.session is None:
            return result_text(await router.call(name, args))
        from ...mcp_server.clients import to_tool_result

        async def over_mcp(tool: str, arguments: dict[str, Any]) -> Any:
            # structuredContent carries the gate's ok / error / text: the model reads what it reads in process
            return to_tool_result(await agent.session.call_tool(tool, arguments))

        return result_text(await router.call(name, args, via=over_mcp))

    async def trim(self, agent: OpenAIAgent, turn: Turn, budget: HistoryBudget) -> int:
        return trim_openai_history(agent.history, budget, incoming_chars=len(self.turn_text(turn)))

    def request(self, agent: OpenAIAgent, budget: HistoryBudget, turn: Turn) -> dict[str, Any]:
        if self.layout == "paper":
            objective = self.spec.view.objective if self.spec.view is not None else ""
            messages = [{"role": "system", "content": f"{agent.system}\n\n# Your current state\n{turn.observation_text}"},
                        {"role": "user", "content": f"Task: {objective}".strip()}]
        else:
            messages = [{"role": "system", "content": agent.system}]
        summary = budget.summary()
        if summary:
            messages.append({"role": "user", "content": summary})
        messages.extend(agent.history)
        req: dict[str, Any] = {"model": self.model.model, "messages": messages,
                               "tools": agent.schemas,
                               "tool_choice": self.model.effective_tool_choice(), "parallel_tool_calls": False}
        req.update(self.model.sampling())
        return req

    async def step(self, agent: OpenAIAgent, turn: Turn, router: ToolRouter) -> str:
        meter = router.meter
        agent.history.append({"role": "user", "content": self.turn_text(turn)})
        req = self.request(agent, self.budgets[turn.agent_id], turn)
        client = self.client()
        resp = await call_model(lambda: client.chat.completions.create(**req), self.model, meter, validate_completion)
        if resp.usage is not None:
            meter.usage(resp.usage.prompt_tokens, resp.usage.completion_tokens)
        message = resp.choices[0].message
        calls = list(message.tool_calls or [])
        entry: dict[str, Any] = {"role": "assistant", "content": message.content}
        if calls:
            # arguments that are not a JSON object are kept in the history in the wire form, which a model
            # server accepts (some refuse a conversation holding broken JSON)
            entry["tool_calls"] = [{"id": c.id, "type": "function",
                                    "function": {"name": c.function.name,
                                                 "arguments": history_arguments(c.function.arguments)}}
                                   for c in calls]
        agent.history.append(entry)
        # Every emitted call goes to the gate as emitted: the first is the turn's action (valid or not), any
        # further one is refused there, and the model reads each answer as that call's result.
        for c in calls:
            meter.emitted(c.function.name, c.function.arguments or "")
            text = await self.call_tool(agent, router, c.function.name, c.function.arguments or "")
            agent.history.append({"role": "tool", "tool_call_id": c.id, "content": text})
        return message.content or ""

    async def aclose(self) -> None:
        await super().aclose()
        if self._client is not None:
            await self._client.close()
            self._client = None


make_team = team_factory(OpenAITeam, ("openai",), extra="openai")
