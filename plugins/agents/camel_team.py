"""``camel``: one CAMEL ``ChatAgent`` per character, one ``astep`` per turn.

``max_iteration=1`` gives one model call per ``astep``; the tool calls in that answer run (through the turn
gate) and control returns. The model backend is wrapped in a metering backend that times, counts and
retries each request and puts the history summary in front; a character-based token counter is passed
everywhere because CAMEL's default counter downloads tiktoken files at step time (fatal offline). CAMEL's
own summarisation is off: the history budget folds old turns out of the agent's memory instead. With
``--tools mcp`` the tools run over CAMEL's own ``MCPClient`` on the agent's seat (:func:`mcp_function_tools`).
Every emitted call reaches the gate as emitted: the agent's tool step is :func:`gate_chat_agent`'s (no name
check of CAMEL's own), and arguments that are not a JSON object reach CAMEL in the wire form.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ...core.play import calls
from ...core.play.protocol import Turn
from .common import (FrameworkTeam, HistoryBudget, team_factory, MalformedResponse, ToolBinding, ToolRouter,
                     call_model, close_openai_client, result_text,
                     char_token_counter, tool_bindings, turn_messages)

# Effectively unbounded for CAMEL's own context creator: our budget is the one that trims.
CAMEL_TOKEN_LIMIT = 10_000_000


def camel_tool(binding: ToolBinding) -> Any:
    async def run(**kwargs: Any) -> str:
        return await binding.run(kwargs)

    return gate_function_tool(binding.name, binding.description, binding.openai_schema(), run)


def gate_function_tool(name: str, description: str, schema: dict[str, Any], run: Any) -> Any:
    """A CAMEL ``FunctionTool`` for one of our tools: ``run(**kwargs) -> str`` with a fixed schema."""
    from camel.toolkits import FunctionTool

    class GateFunctionTool(FunctionTool):
        """CAMEL re-validates every tool schema against the JSON-schema meta-schema on every step (about 5 ms
        per tool, 13 tools per turn); ours are fixed, so they are validated once, here."""

        def __init__(self, func: Any, schema: dict[str, Any]):
            super().__init__(func, openai_tool_schema=schema)
            self.validate_openai_tool_schema(schema)
            self._validated_schema = schema

        def get_openai_tool_schema(self) -> dict[str, Any]:
            return self._validated_schema

    run.__name__ = name
    run.__doc__ = description
    return GateFunctionTool(run, schema)


async def mcp_function_tools(client: Any, router: ToolRouter) -> list[Any]:
    """The seat's 13 tools as CAMEL ``FunctionTool``s over CAMEL's own ``MCPClient`` (its session, its
    ``list_mcp_tools`` and ``call_tool``).

    The FunctionTools are ours, not ``MCPToolkit.get_tools()``: camel-ai 0.2.90 builds a Python signature per
    tool, which fails for ``send_chat_message`` (its parameter ``global`` is a Python keyword: the tool is
    dropped with a warning); it returns the text of a failed call as if it had succeeded (``isError`` is
    ignored); and it answers a call missing a required argument itself ("Missing required parameters."),
    so the call never reaches the turn gate, which in process would record it as bad_args and use the
    turn. Ours keep all 13, put each call through the router, and give the model the gate's outcome
    (``structuredContent``) as the in-process tools write it."""
    from ...mcp_server.clients import openai_function_schema, to_tool_result

    async def over_mcp(tool: str, args: dict[str, Any]) -> Any:
        return to_tool_result(await client.call_tool(tool, args))

    def runner(name: str) -> Any:  # the name is bound here, not a parameter a model could set
        async def run(**kwargs: Any) -> str:
            return result_text(await router.call(name, kwargs, via=over_mcp))

        return run

    tools = []
    for t in (await client.list_mcp_tools()).tools:
        tools.append(gate_function_tool(t.name, t.description or "", openai_function_schema(t), runner(t.name)))
    return tools


def _validate(resp: Any) -> None:
    choices = getattr(resp, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        raise MalformedResponse("completion has no message")


def metered_backend(inner: Any, team: "CamelTeam", agent_id: str) -> Any:
    """A CAMEL ``BaseModelBackend`` that delegates to ``inner`` with metering, retries and the history summary."""
    from camel.models import BaseModelBackend

    counter = char_token_counter()

    class MeteredBackend(BaseModelBackend):
        inner = None  # the wrapped backend (set below), for closing its client

        def __init__(self) -> None:
            super().__init__(inner.model_type, model_config_dict=dict(inner.model_config_dict),
                             token_counter=counter)

        @property
        def token_counter(self):
            return counter

        @property
        def token_limit(self) -> int:
            return CAMEL_TOKEN_LIMIT

        def _with_summary(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            summary = team.budgets[agent_id].summary()
            if not summary:
                return messages
            n_head = next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), len(messages))
            return [*messages[:n_head], {"role": "user", "content": summary}, *messages[n_head:]]

        async def _arun(self, messages, response_format=None, tools=None):
            meter = team.routers[agent_id].meter
            msgs = self._with_summary(list(messages))
            resp = await call_model(lambda: inner.arun(msgs, response_format, tools), team.model, meter, _validate)
            if getattr(resp, "usage", None) is not None:
                meter.usage(resp.usage.prompt_tokens, resp.usage.completion_tokens)
            for c in resp.choices[0].message.tool_calls or []:
                meter.emitted(c.function.name, c.function.arguments)
                # CAMEL parses the arguments itself (and raises on broken JSON): hand it the wire form
                # instead, which the gate unwraps (and which keeps the agent's memory valid JSON)
                wired = calls.wire_arguments(c.function.arguments)
                if calls.is_wrapped(wired):
                    c.function.arguments = json.dumps(wired)
            return resp

        def _run(self, messages, response_format=None, tools=None):
            raise RuntimeError("agentworld drives CAMEL agents with astep (async) only")

        def check_model_config(self) -> None:
            return None

    backend = MeteredBackend()
    backend.inner = inner
    return backend


@functools.cache
def gate_chat_agent_class() -> type:
    """A CAMEL ``ChatAgent`` whose tool step hands every call to its ``route(name, args) -> str`` (the turn
    gate): CAMEL's own step answers an unknown tool name itself and calls the tool with ``**args``, so a call
    with a wrong name or with arguments that are not an object would never reach the gate."""
    from camel.agents import ChatAgent

    class GateChatAgent(ChatAgent):
        route: Any = None

        async def _aexecute_tool(self, tool_call_request: Any) -> Any:
            req = tool_call_request
            result = await self.route(req.tool_name, req.args)
            return self._record_tool_calling(req.tool_name, req.args, result, req.tool_call_id,
                                             extra_content=req.extra_content)

    return GateChatAgent


class CamelTeam(FrameworkTeam):
    framework = "camel"

    def backend(self) -> Any:
        if self.model.is_scripted:
            from .fakes import scripted_camel_backend

            return scripted_camel_backend(self.scripted_decide)
        from camel.models import ModelFactory
        from camel.types import ModelPlatformType

        from openai import AsyncOpenAI

        config: dict[str, Any] = {"tool_choice": self.model.effective_tool_choice(), "parallel_tool_calls": False,
                                  **self.model.sampling()}
        platform = ModelPlatformType.OPENAI if self.model.provider == "openai" else ModelPlatformType.OPENAI_COMPATIBLE_MODEL
        # CAMEL's async OpenAI client is ours, so that its requests go through the team's endpoint transport.
        client = AsyncOpenAI(api_key=self.model.api_key(), base_url=self.model.base_url, timeout=self.model.timeout,
                             max_retries=0, http_client=self.http_client())
        return ModelFactory.create(model_platform=platform, model_type=self.model.model, model_config_dict=config,
                                   api_key=self.model.api_key(), url=self.model.base_url,
                                   token_counter=char_token_counter(), timeout=self.model.timeout, max_retries=0,
                                   async_client=client)

    async def build_agent(self, turn: Turn, router: ToolRouter) -> Any:
        system, _ = turn_messages(turn)
        if self.tools_mode == "mcp":
            # CAMEL's own MCP client (camel.utils.mcp_client.MCPClient, what MCPToolkit holds per server):
            # one streamable-HTTP session for the seat, kept open by a task of its own until aclose.
            from ...mcp_server.clients import camel_client, to_tool_result

            client = await self.mcp.hold(camel_client(*self.mcp.seat(turn.agent_id)))
            tools = await mcp_function_tools(client, router)

            listed = {t.get_function_name() for t in tools}

            async def over_mcp(tool: str, args: dict[str, Any]) -> Any:
                # CAMEL's client refuses a name it did not list before sending it: such a call goes out on the
                # client's own session instead, so that the gate decides it (an unknown tool uses the turn)
                call = client.call_tool if tool in listed else client.session.call_tool
                return to_tool_result(await call(tool, args))
        else:
            tools = [camel_tool(b) for b in tool_bindings(turn.tools, router)]
            over_mcp = None

        async def route(name: str, args: Any) -> str:
            return result_text(await router.call(name, args, via=over_mcp))

        agent = gate_chat_agent_class()(system_message=system, tools=tools,
                                        model=metered_backend(self.backend(), self, turn.agent_id),
                                        max_iteration=1, token_limit=CAMEL_TOKEN_LIMIT, summarize_threshold=None,
                                        retry_attempts=1, agent_id=turn.agent_id)
        agent.route = route
        return agent

    async def trim(self, agent: Any, turn: Turn, budget: HistoryBudget) -> int:
        """Fold whole old turns out of the agent's memory (a turn starts at a user message)."""
        from camel.types import OpenAIBackendRole

        records = agent.memory.retrieve()
        groups: list[list[int]] = []
        sizes: list[int] = []
        names: list[list[str]] = []
        for i, rec in enumerate(records):
            mem = rec.memory_record
            role = mem.role_at_backend
            if role in (OpenAIBackendRole.SYSTEM, OpenAIBackendRole.DEVELOPER) and not groups:
                continue
            if role == OpenAIBackendRole.USER or not groups:
                groups.append([])
                sizes.append(0)
                names.append([])
            groups[-1].append(i)
            msg = mem.message
            # assistant tool calls live in meta_dict["tool_calls"]; results in FunctionCallingMessage.result
            calls = (getattr(msg, "meta_dict", None) or {}).get("tool_calls") or []
            sizes[-1] += (len(str(getattr(msg, "content", "") or "")) + len(str(getattr(msg, "result", "") or ""))
                          + sum(len(json.dumps(c, default=str)) for c in calls))
            if role in (OpenAIBackendRole.FUNCTION, OpenAIBackendRole.TOOL) and getattr(msg, "func_name", None):
                names[-1].append(msg.func_name)
        k = budget.plan(sizes + [len(turn_messages(turn)[1])])
        if not k:
            return 0
        drop = [i for g in groups[:k] for i in g]
        for g, n in zip(groups[:k], names[:k]):
            budget.fold(len(g), n)
        agent.memory.remove_records_by_indices(drop)
        return len(drop)

    async def close_agent(self, agent: Any) -> None:
        for backend in agent.model_backend.models:
            inner = getattr(backend, "inner", None)
            await close_openai_client(getattr(inner, "_async_client", None))

    async def step(self, agent: Any, turn: Turn, router: ToolRouter) -> str:
        response = await agent.astep(turn_messages(turn)[1])
        texts = [m.content for m in response.msgs if isinstance(getattr(m, "content", None), str)]
        return "\n".join(t for t in texts if t)


make_team = team_factory(CamelTeam, ("camel",), extra="camel")
