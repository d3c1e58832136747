"""What the four framework plugins share: prompts, tools, history budget, retries and accounting.

- **Tools.** :class:`ToolRouter` is one agent's way to the 13 tools. Every framework's tool objects call
  ``router.call(name, args)``, which goes to ``turn.port.call`` in process. With ``options["tools"] == "mcp"``
  the episode starts its MCP server (``tool_server``), ``start(view)`` finds each agent's seat in the view, and
  each framework builds its tool objects
  from its OWN MCP client bound to the agent's seat (AutoGen's ``McpWorkbench``, langchain-mcp-adapters,
  CAMEL's ``MCPClient``, the MCP SDK's ``ClientSession`` for the plain agent); those clients make the call
  and hand it to ``router.call(name, args, via=...)`` for the same metering. Either way every call goes
  through the turn gate, so a second call in the same turn is refused there and the refusal text is what
  the model reads as the tool result: the same text, word for word, in both modes.
- **The raw call reaches the gate.** Every framework hands the gate each call exactly as the model emitted
  it (unknown tool names and unparseable or non-object arguments included) and the gate alone decides
  (docs/protocol.md, "The turn contract"). Where a framework would answer such a call itself (AutoGen and
  CAMEL parse the arguments and look the tool up; LangGraph's ToolNode checks the name), the plugin
  routes around that: see each plugin's module docstring.
- **History budget.** Each agent keeps its own conversation in its framework's own memory. Before a model
  call, the oldest turns are folded into one summary line until the history fits the agent's budget
  (:class:`HistoryBudget`): ``context_budget`` characters, or what the model's context window leaves after
  the agent's system prompt and tool schemas (``ModelSpec.history_budget``; the window is given, read from
  the server's ``/v1/models``, or learned from a context-length error). The number of messages folded is
  reported as ``TurnOutcome.context_trimmed``.
- **Endpoints.** Every real model client is given :meth:`FrameworkTeam.http_client`, whose transport
  (``compat.py``) makes stock OpenAI-compatible servers work: tool_choice fallback, one trimmed retry after
  a context-length error, and the request/answer details llama.cpp reads differently.
- **Retries.** :func:`call_model` wraps every model request: timeouts, connection errors, 5xx and
  malformed responses are retried with exponential backoff; when the attempts run out the turn reports
  ``TurnOutcome.infra_error`` (the episode goes on).
- **History of a fork.** A team that takes over mid-episode (``agentworld fork``) is primed with each
  agent's earlier turns (``Team.prime``, ``core/play/history.py``): :meth:`FrameworkTeam.prime` keeps them and
  puts them, as one text within the agent's history budget, in front of the agent's first prompt
  (:func:`primed_turn`), the same way for every framework; a scripted model's policy is primed too.
- **Accounting.** :class:`TurnMeter` counts tokens, model latency, model calls and time spent in the
  tools (the harness) per turn, and writes each model request (``ModelAttempt``) and each emitted call
  (``RawCall``) into the turn's trace as it happens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Sequence, TypeVar

from ...core.world.effects import ToolResult
from ...core.play.models import ModelSpec
from ...core.play import calls
from ...core.play.history import HistoryTurn, TeamHistory, render_history
from ...core.play.protocol import Team, TeamSpec, Turn, TurnOutcome, TurnTrace
from ...core.play.records import ModelAttempt, RawCall
from ...core.world.tools import TOOLS, ToolSpec

log = logging.getLogger("agentworld.frameworks")
T = TypeVar("T")
M = TypeVar("M")  # a message of any framework's type


# ---------------------------------------------------------------------- accounting


def chars_to_tokens(chars: int) -> int:
    """A tokenizer-free estimate (4 characters a token) for models that report no usage (scripted ones)."""
    return math.ceil(chars / 4)


def approx_tokens(text: str) -> int:
    """:func:`chars_to_tokens` of a text."""
    return chars_to_tokens(len(text))


def decode_arguments(arguments: Any) -> Any:
    """Tool-call arguments as the model wrote them: JSON text decoded (blank text is ``{}``); text that is
    not JSON, and anything already decoded, is kept as it is. For display and history only: the turn gate
    gets the call as emitted and decides (``core/play/calls.py``)."""
    value, problem, emitted = calls.resolve(arguments)
    return value if problem is None else emitted


@dataclass
class TurnMeter:
    """What one agent's turn cost: filled by the model wrapper and the tool router. Each model request and
    each emitted call also goes into the turn's trace (``Turn.trace``) as it happens, so the episode records
    them even when the turn times out."""

    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0
    model_calls: int = 0  # attempts, failed ones included
    tool_s: float = 0.0  # time inside tool calls (the harness: gate, world, recording)
    trimmed: int = 0  # history messages folded into the summary this turn
    trace: TurnTrace = field(default_factory=TurnTrace)

    @property
    def raw_calls(self) -> list[RawCall]:
        return self.trace.raw_calls

    def usage(self, tokens_in: int | None, tokens_out: int | None) -> None:
        self.tokens_in += int(tokens_in or 0)
        self.tokens_out += int(tokens_out or 0)
        if self.trace.attempts:  # the answer's usage belongs to the attempt that got it
            last = self.trace.attempts[-1]
            last.tokens_in += int(tokens_in or 0)
            last.tokens_out += int(tokens_out or 0)

    def attempt(self, ok: bool, latency_s: float, error: str | None = None) -> None:
        self.model_calls += 1
        self.model_latency_s += latency_s
        self.trace.attempts.append(ModelAttempt(ok=ok, error=error, latency_s=round(latency_s, 6)))

    def emitted(self, name: Any, arguments: Any) -> None:
        """Record a call as the model emitted it (arguments decoded when they are JSON, else as sent)."""
        self.trace.raw_calls.append(RawCall(name=calls.sanitize(str(name)), arguments=calls.as_emitted(arguments)))

    def outcome(self, *, thinking: str = "", infra_error: str | None = None) -> TurnOutcome:
        return TurnOutcome(thinking=thinking, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                           model_latency_s=round(self.model_latency_s, 6), model_calls=self.model_calls,
                           infra_error=infra_error, context_trimmed=self.trimmed,
                           raw_calls=[c.model_dump() for c in self.trace.raw_calls])


@dataclass
class TurnTiming:
    """Per-turn timings kept by every team for the framework-overhead benchmark."""

    agent_id: str
    total_s: float
    model_s: float
    tool_s: float

    @property
    def framework_s(self) -> float:
        return max(0.0, self.total_s - self.model_s - self.tool_s)


# ---------------------------------------------------------------------- retries


class ModelServiceError(RuntimeError):
    """The model service failed (after retries, or with an error that retrying cannot fix)."""


class MalformedResponse(ValueError):
    """The model service answered, but not with a usable completion."""


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "status"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return v
    resp = getattr(exc, "response", None)
    v = getattr(resp, "status_code", None)
    return v if isinstance(v, int) else None


def describe_error(exc: BaseException) -> str:
    """A model-service failure written the same whatever the framework calls it: ``HTTP 500: <the client's
    first line>``, ``no answer within 30s``, ``malformed response: ...``, else ``<exception type>: <first line>``."""
    status = _status_of(exc)
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    if isinstance(exc, MalformedResponse):
        return f"malformed response: {text}"
    if status is not None and status >= 400:
        return f"HTTP {status}: {text}" if text else f"HTTP {status}"  # the service's reason, said plainly
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return text or "timed out"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def is_retryable(exc: BaseException) -> bool:
    """5xx, 408/409/429, timeouts, connection errors and malformed answers are retried; other 4xx are not."""
    status = _status_of(exc)
    if status is not None and status >= 400:  # a 2xx here means the body was unusable: malformed, retry
        return status >= 500 or status in (408, 409, 429)
    return True  # timeouts, connection resets, JSON/validation errors: all transient from our side


async def call_model(request: Callable[[], Awaitable[T]], spec: ModelSpec, meter: TurnMeter,
                     validate: Callable[[T], None] | None = None) -> T:
    """Run one model request with the spec's timeout, retries and exponential backoff, metering each attempt.

    ``validate`` raises :class:`MalformedResponse` (or anything) for an unusable answer, which is retried
    like a 5xx. Raises :class:`ModelServiceError` when no attempt succeeded."""
    attempts = spec.retries + 1
    trace = meter.trace
    for attempt in range(1, attempts + 1):
        started = time.perf_counter()
        # while this is set a turn timeout is the service's (infra), not the agent's: it stays set when the
        # episode cancels the turn, and through the backoff before a retry
        trace.model_pending, trace.pending_since = True, started
        try:
            result = await asyncio.wait_for(request(), timeout=spec.timeout)
            if validate is not None:
                validate(result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of the model service is classified here
            if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) and not str(exc):
                exc = TimeoutError(f"no answer within {spec.timeout:g}s")
            what = describe_error(exc)
            meter.attempt(False, time.perf_counter() - started, what)
            if not is_retryable(exc):
                trace.model_pending = False
                raise ModelServiceError(f"model service error (not retried): {what}") from exc
            if attempt == attempts:
                trace.model_pending = False
                raise ModelServiceError(f"model service failed {attempts} time(s); last: {what}") from exc
            delay = min(spec.backoff_max, spec.backoff * 2 ** (attempt - 1))
            log.warning("model request failed (%s), attempt %d/%d; retrying in %.2fs", what, attempt, attempts, delay)
            await asyncio.sleep(delay)
        else:
            trace.model_pending = False
            meter.attempt(True, time.perf_counter() - started)
            return result
    raise AssertionError("unreachable")  # pragma: no cover


def find_model_error(exc: BaseException) -> ModelServiceError | None:
    """Frameworks wrap exceptions raised in the model layer; dig ours out of the chain."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        cur = stack.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, ModelServiceError):
            return cur
        stack.extend([cur.__cause__, cur.__context__])
        stack.extend(getattr(cur, "exceptions", []) or [])
    return None


# ---------------------------------------------------------------------- prompts


def turn_messages(turn: Turn) -> tuple[str, str]:
    """The two texts each framework sends per turn: the constant system prompt and this turn's user prompt
    (observation, chat received, what to do), both rendered by the episode (``core/play/prompts.py``)."""
    system = turn.system_prompt or f"You are {turn.username}, a player in a shared 2D RPG world."
    user = turn.user_prompt or turn.observation_text
    return system, user


def primed_turn(turn: Turn, history: str) -> Turn:
    """``turn`` with ``history`` (an agent's earlier turns, :func:`render_history`) in front of its user prompt
    and in ``extra["history"]``: the agent's first turn after a fork hands it over (same port and trace)."""
    return Turn(agent_id=turn.agent_id, username=turn.username, round=turn.round, observation=turn.observation,
                observation_text=lambda: turn.observation_text, system_prompt=lambda: turn.system_prompt,
                user_prompt=lambda: f"{history}\n\n{turn.user_prompt}", tools=turn.tools, port=turn.port,
                last_result=turn.last_result, extra={**turn.extra, "history": history}, trace=turn.trace)


def result_text(result: ToolResult) -> str:
    """What the model reads back from a tool call (refusals and failures say so up front)."""
    if result.ok:
        return result.text
    return f"FAILED ({result.error or 'error'}): {result.text}"


# ---------------------------------------------------------------------- tools


class ToolRouter:
    """One agent's tool access for the current turn.

    The team sets :attr:`turn` before it invokes the framework; tool objects call :meth:`call`. In process
    the call goes to ``turn.port``; over MCP the framework's own MCP client makes it and hands it over as
    ``via``, so both ways are metered and checked alike."""

    def __init__(self, agent_id: str, mcp_call: Callable[[str, str, dict[str, Any]], Awaitable[ToolResult]] | None = None):
        self.agent_id = agent_id
        self.turn: Turn | None = None
        self.meter = TurnMeter()
        self.results: list[ToolResult] = []
        self._mcp_call = mcp_call

    def begin(self, turn: Turn) -> TurnMeter:
        self.turn = turn
        self.meter = TurnMeter(trace=turn.trace)
        self.results = []
        return self.meter

    async def call(self, name: str, arguments: Any,
                   via: Callable[[str, dict[str, Any]], Awaitable[ToolResult]] | None = None) -> ToolResult:
        """Hand one call, as the model emitted it, to the turn gate: through ``via`` (a framework's MCP
        client) when given, else the turn's port. The gate alone decides what a malformed call is; MCP
        carries arguments as an object only, so others travel in the wire form (``calls.wire_arguments``)."""
        if self.turn is None:
            return ToolResult.fail("refused", f"{self.agent_id}: no turn is open")
        remote = via
        if remote is None and self._mcp_call is not None:
            async def remote(n: str, a: dict[str, Any]) -> ToolResult:
                return await self._mcp_call(self.agent_id, n, a)  # type: ignore[misc]
        started = time.perf_counter()
        try:
            if remote is not None:
                result = await remote(str(name), calls.wire_arguments(arguments))
            else:
                result = await self.turn.port.call(name, arguments)
        finally:
            self.meter.tool_s += time.perf_counter() - started
        self.results.append(result)
        return result


@dataclass(frozen=True)
class ToolBinding:
    """A tool as every framework needs it: name, description, JSON schema, and an async runner."""

    spec: ToolSpec
    router: ToolRouter

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    def schema(self) -> dict[str, Any]:
        return self.spec.json_schema()

    def openai_schema(self) -> dict[str, Any]:
        return self.spec.openai_schema()

    async def run(self, arguments: Any) -> str:
        return result_text(await self.router.call(self.spec.name, arguments))


def tool_bindings(tools: Sequence[ToolSpec] | None, router: ToolRouter) -> list[ToolBinding]:
    """The turn's tools (variant-dependent; all 13 when the episode gives none) bound to one agent."""
    specs = list(tools) if tools else list(TOOLS.values())
    return [ToolBinding(s, router) for s in specs]


# ---------------------------------------------------------------------- history budget


def drop_count(sizes: Sequence[int], budget: int, keep_last: int = 1) -> int:
    """How many of the oldest groups to drop so the rest fits ``budget`` (the newest ``keep_last`` stay)."""
    total = sum(sizes)
    k = 0
    while total > budget and k < len(sizes) - keep_last:
        total -= sizes[k]
        k += 1
    return k


class HistoryBudget:
    """Keeps one agent's history within ``budget`` characters by folding the oldest turns into a summary.

    A *group* is one past turn: the user prompt, the model's answer and the tool results. Groups are
    dropped whole (so every tool call keeps its result) and remembered as counts of the tools used."""

    def __init__(self, budget: int):
        self.budget = budget
        self.turns_folded = 0
        self.messages_folded = 0
        self.tools_used: Counter[str] = Counter()

    def plan(self, sizes: Sequence[int], keep_last: int = 1) -> int:
        reserve = max(300, len(self.summary() or "") + 100)  # the summary line itself must fit too
        return drop_count(sizes, max(0, self.budget - reserve), keep_last)

    def snapshot(self) -> tuple[int, int, Counter[str]]:
        return self.turns_folded, self.messages_folded, Counter(self.tools_used)

    def restore(self, snap: tuple[int, int, Counter[str]]) -> None:
        self.turns_folded, self.messages_folded, self.tools_used = snap[0], snap[1], Counter(snap[2])

    def fold(self, n_messages: int, tool_names: Iterable[str]) -> None:
        self.turns_folded += 1
        self.messages_folded += n_messages
        self.tools_used.update(tool_names)

    def fold_oldest(self, groups: Sequence[Sequence[M]], tool_names: Callable[[Sequence[M]], Iterable[str]],
                    incoming_chars: int | None = None) -> Sequence[Sequence[M]]:
        """Fold the oldest groups (see :func:`split_turns`) until the rest fits, together with this turn's
        prompt of ``incoming_chars`` when it is not in ``groups`` yet; returns the folded groups, which the
        caller removes from the framework's memory."""
        sizes = [sum(message_chars(m) for m in g) for g in groups]
        k = self.plan(sizes if incoming_chars is None else [*sizes, incoming_chars])
        for g in groups[:k]:
            self.fold(len(g), tool_names(g))
        return groups[:k]

    def summary(self) -> str | None:
        if not self.turns_folded:
            return None
        used = ", ".join(f"{name} x{n}" for name, n in sorted(self.tools_used.items(), key=lambda kv: (-kv[1], kv[0])))
        return (f"[History summary: your {self.turns_folded} earliest turns were removed to stay within the "
                f"context budget. Tools you called in them: {used or 'none'}. Your current state is in the "
                f"latest observation.]")


def split_turns(messages: Iterable[M], starts_turn: Callable[[M], bool]) -> list[list[M]]:
    """Group a history into turns, each starting at a message for which ``starts_turn`` holds (this turn's
    user prompt); messages before the first such one form a group of their own."""
    groups: list[list[M]] = []
    for m in messages:
        if starts_turn(m) or not groups:
            groups.append([m])
        else:
            groups[-1].append(m)
    return groups


def openai_groups(messages: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """Split OpenAI-format messages into a head (system messages) and per-turn groups (each starts at a user message)."""
    n_head = next((i for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")), len(messages))
    return list(messages[:n_head]), split_turns(messages[n_head:], lambda m: m.get("role") == "user")


def message_chars(m: Any) -> int:
    """Size of one message in characters (content plus tool-call arguments), for any framework's type."""
    if isinstance(m, dict):
        content = m.get("content")
        calls = m.get("tool_calls") or []
    else:
        content = getattr(m, "content", None)
        calls = getattr(m, "tool_calls", None) or []
    if isinstance(content, str):
        n = len(content)
    elif isinstance(content, list):
        n = sum(len(json.dumps(c, default=str)) if not isinstance(c, str) else len(c) for c in content)
    elif content is None:
        n = 0
    else:
        n = len(str(content))
    return n + sum(len(json.dumps(c, default=str)) for c in calls)


def approx_message_tokens(messages: Iterable[Any]) -> int:
    """The estimated size in tokens of the messages a framework sent (any framework's message type)."""
    return chars_to_tokens(sum(message_chars(m) for m in messages))


def openai_tool_names(group: Sequence[dict[str, Any]]) -> list[str]:
    return [c.get("function", {}).get("name", "?") for m in group for c in (m.get("tool_calls") or [])]


def trim_openai_history(history: list[dict[str, Any]], budget: HistoryBudget, incoming_chars: int = 0) -> int:
    """Fold the oldest turns of an OpenAI-format history (no system message) in place; returns messages folded."""
    _, groups = openai_groups(history)
    folded = sum(len(g) for g in budget.fold_oldest(groups, openai_tool_names, incoming_chars))
    del history[:folded]
    return folded


async def close_openai_client(client: Any) -> None:
    """Close an ``openai.AsyncOpenAI`` held inside a framework object. Left to the garbage collector, the SDK
    schedules the close on whatever loop runs then, which fails for connections of a loop already closed."""
    if client is not None and hasattr(client, "close"):
        try:
            await client.close()
        except RuntimeError:  # its loop is gone already; nothing left to release
            pass


# ---------------------------------------------------------------------- team base


class FrameworkTeam(Team):
    """Common skeleton of the four framework teams: one agent per character, built on its first turn.

    Subclasses implement :meth:`build_agent` (framework objects for one character) and :meth:`step`
    (one framework invocation; returns the model's text). Everything else (tool routing, metering,
    infra errors, the budget and the MCP tool source) lives here."""

    framework = "base"

    def __init__(self, spec: TeamSpec):
        self.spec = spec
        self.model = ModelSpec.from_team_spec(spec)
        if not self.model.is_scripted:
            self.model.api_key()  # fail now, naming the variable, rather than on every turn (key not kept)
        self.tools_mode = str(spec.options.get("tools", "inproc"))
        if self.tools_mode not in ("inproc", "mcp"):
            raise ValueError(f"{self.framework}: option tools={self.tools_mode!r}; use 'inproc' or 'mcp' (--tools)")
        self.routers: dict[str, ToolRouter] = {}
        self.budgets: dict[str, HistoryBudget] = {}
        self.agents: dict[str, Any] = {}
        self.timings: list[TurnTiming] = []
        self._mcp: Any = None  # MCP tool source, opened in start() when tools == "mcp"
        self.window: int | None = None  # the model's context window as read from the server or its errors
        self._http: list[Any] = []  # httpx clients handed to framework model clients, closed in aclose
        self._policy: Any = None  # scripted policy shared by the team's fake models
        self._policy_turn: Turn | None = None
        self._earlier: dict[str, Sequence[HistoryTurn]] = {}  # a fork's history, until each agent's first turn

    # --- scripted models: one policy per team, asked once per turn (fakes read the current turn)
    def scripted_policy(self) -> Any:
        if self._policy is None:
            from ...core.play.policies import make_policy

            # the oracle plays the reference plan, which the runner hands scripted:oracle teams alone
            self._policy = make_policy(self.model.model, self.spec.seed, self.spec.reference_plan)
        return self._policy

    def current_turn(self) -> Turn:
        if self._policy_turn is None:
            raise RuntimeError("scripted model called outside a turn")
        return self._policy_turn

    def scripted_decide(self) -> Any:
        """The ``decide()`` each fake model (``fakes.py``) is given: the policy's call for the current turn."""
        return self.scripted_policy().decide(self.current_turn())

    # --- a fork's history
    def prime(self, history: TeamHistory) -> bool:
        """Keep each agent's earlier turns for its first prompt (:meth:`act`); a scripted model's policy is
        primed as a PolicyTeam's is."""
        self._earlier.update({a: list(turns) for a, turns in history.items() if turns})
        if self.model.is_scripted:
            self.scripted_policy().prime(history)
        return True

    def _with_history(self, turn: Turn) -> Turn:
        """The agent's first turn after :meth:`prime`: its earlier turns in front of the prompt, as many of the
        newest as its history budget leaves room for beside this turn's prompt."""
        earlier = self._earlier.pop(turn.agent_id, None)
        if not earlier:
            return turn
        room = self.budgets[turn.agent_id].budget - len(turn_messages(turn)[1])
        return primed_turn(turn, render_history(earlier, turn.round, max(room, 0)))

    # --- model endpoint
    def http_client(self) -> Any:
        """An ``httpx.AsyncClient`` for one framework model client (compat.py's transport; the spec's
        request timeout), closed with the team."""
        from .compat import compat_http_client

        http = compat_http_client(self.model, on_overflow=self._context_overflow)
        self._http.append(http)
        return http

    def _agent_budget(self, turn: Turn) -> HistoryBudget:
        system, _ = turn_messages(turn)
        tools = list(turn.tools) if turn.tools else list(TOOLS.values())
        tools_chars = sum(len(json.dumps(t.openai_schema())) for t in tools)
        return HistoryBudget(self.model.history_budget(system_chars=len(system), tools_chars=tools_chars,
                                                       window=self.window))

    def _context_overflow(self, dropped: int, window: int | None) -> None:
        """The server said a prompt of the current agent did not fit: the transport dropped ``dropped`` old
        messages from that request; shrink the agent's budget (to what the window the server named leaves,
        else by half) so that its later turns fold their history themselves."""
        turn = self._policy_turn
        if turn is None or turn.agent_id not in self.budgets:
            return
        self.routers[turn.agent_id].meter.trimmed += dropped
        if window and self.model.context_window is None:
            self.window = window
        budget = self.budgets[turn.agent_id]
        target = self._agent_budget(turn).budget if window else budget.budget
        budget.budget = target if target < budget.budget else budget.budget // 2

    @property
    def tool_server(self) -> str | None:  # type: ignore[override]
        """"mcp" with ``--tools mcp``: the episode then starts its MCP server and puts the seats in the view."""
        return "mcp" if self.tools_mode == "mcp" else None

    async def start(self, view: Any) -> None:
        if (not self.model.is_scripted and self.model.context_budget is None and self.model.context_window is None
                and self.model.provider == "openai-compatible"):
            from .compat import discover_context_window

            self.window = await discover_context_window(self.model)
        if self.tools_mode == "mcp":
            # The same 13 tools, reached through the episode's MCP server with each agent's own seat token
            # (URL and token in the view); the server calls the same turn gate, so results are identical.
            from ...mcp_server.clients import McpToolSource

            self._mcp = McpToolSource.from_view(view)

    async def aclose(self) -> None:
        for agent in self.agents.values():
            await self.close_agent(agent)
        if self._mcp is not None:
            await self._mcp.aclose()
            self._mcp = None
        for http in self._http:
            try:
                await http.aclose()
            except RuntimeError:  # its loop is gone already; nothing left to release
                pass
        self._http.clear()

    @property
    def mcp(self) -> Any:
        """The episode's MCP server as this team reaches it (``mcp_server.clients.McpToolSource``):
        ``seat(agent_id) -> (url, token)``, ``await hold(client_context)``. Only with ``tools == "mcp"``."""
        if self._mcp is None:
            raise RuntimeError(f"{self.framework}: tools over MCP need Team.start(view) first "
                               f"(tools={self.tools_mode!r})")
        return self._mcp

    async def close_agent(self, agent: Any) -> None:  # noqa: B027 - optional
        """Release one agent's framework objects (clients, sessions)."""

    # --- one turn
    async def act(self, turn: Turn) -> TurnOutcome:
        started = time.perf_counter()
        router = self.routers.get(turn.agent_id)
        if router is None:
            mcp_call = self._mcp.call if self._mcp is not None else None
            router = self.routers[turn.agent_id] = ToolRouter(turn.agent_id, mcp_call)
            self.budgets[turn.agent_id] = self._agent_budget(turn)
        turn = self._with_history(turn)
        meter = router.begin(turn)
        self._policy_turn = turn
        infra: str | None = None
        thinking = ""
        try:
            agent = self.agents.get(turn.agent_id)
            if agent is None:
                agent = self.agents[turn.agent_id] = await self.build_agent(turn, router)
            meter.trimmed += await self.trim(agent, turn, self.budgets[turn.agent_id])
            thinking = await self.step(agent, turn, router)
        except Exception as exc:  # noqa: BLE001 - a failing model service must not end the episode
            err = find_model_error(exc)
            if err is None:
                raise
            infra = str(err)
            log.warning("%s %s round %s: %s", self.framework, turn.agent_id, turn.round, infra)
        finally:
            self._policy_turn = None
        self.timings.append(TurnTiming(turn.agent_id, time.perf_counter() - started, meter.model_latency_s, meter.tool_s))
        return meter.outcome(thinking=thinking, infra_error=infra)

    async def build_agent(self, turn: Turn, router: ToolRouter) -> Any:
        raise NotImplementedError

    async def trim(self, agent: Any, turn: Turn, budget: HistoryBudget) -> int:
        """Fold old history so it fits the budget together with this turn's prompt; returns messages folded."""
        return 0

    async def step(self, agent: Any, turn: Turn, router: ToolRouter) -> str:
        raise NotImplementedError


# ---------------------------------------------------------------------- framework packages

class FrameworkNotInstalled(ImportError):
    """A framework plugin's own packages are missing: the message names the extra that installs them."""


def require_installed(framework: str, modules: Sequence[str], extra: str) -> None:
    """Fail at once, before any episode runs, when the framework's packages are not installed (they are
    optional extras); otherwise every turn would fail as an infrastructure error."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise FrameworkNotInstalled(
            f"framework {framework!r} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed: "
            f"pip install 'agentworld[{extra}]' (or 'agentworld[all]')")


def team_factory(team_cls: type, modules: Sequence[str], extra: str) -> Callable[[Any], Any]:
    """The registered factory of a framework plugin: ``make_team(TeamSpec) -> Team``. It checks the
    framework's packages first; ``make_team.check_installed()`` lets the CLI check before a run starts."""

    def check_installed() -> None:
        require_installed(team_cls.framework, modules, extra)

    def make_team(spec: Any) -> Any:
        check_installed()
        return team_cls(spec)

    make_team.check_installed = check_installed  # type: ignore[attr-defined]
    make_team.__doc__ = f"Build a {team_cls.__name__} for one episode (needs agentworld[{extra}])."
    return make_team


def char_token_counter():
    """A CAMEL token counter that needs no tokenizer files (CAMEL's default downloads tiktoken's at step time)."""
    from camel.utils import BaseTokenCounter

    class CharTokenCounter(BaseTokenCounter):
        def count_tokens_from_messages(self, messages) -> int:
            return approx_message_tokens(messages)

        def encode(self, text: str) -> list[int]:
            return [0] * approx_tokens(text)

        def decode(self, token_ids: list[int]) -> str:
            return ""

    return CharTokenCounter()
