"""The contract between the episode and a team of agents.

The episode owns the loop (like PettingZoo's agent-environment cycle). For each agent's turn it opens the
turn gate for that agent, hands the team a :class:`Turn`, and awaits ``team.act(turn)``. The team (any
framework) acts by calling ``turn.port.call(tool, arguments)`` exactly once: in process, or through the MCP
server, which calls the same gate. The gate executes the first call, refuses any other (out of turn, second
call, another agent's character) with a message the model can read, and records everything. ``act`` returns
a :class:`TurnOutcome` with what only the team knows: its reasoning, tokens, model latency and model errors.
While it plays, the team writes what its model does into ``turn.trace`` (each request to the model service,
each call as the model emitted it), so that it is recorded even when the turn times out.

The turn contract itself (what a malformed call, a failing model service or an engine exception counts
as) is written in docs/protocol.md and enforced by the gate alone.

A team is built from a :class:`TeamSpec` and started with ``Team.start(view)``: both carry the episode's
read-only :class:`~agentworld.core.play.view.TeamView` (briefs, tools, rules, MCP seats), never the episode,
its world or its task; only the scripted oracle also gets the reference plan (``core/play/view.py``).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from pydantic import BaseModel, Field

from ..world.effects import ToolResult
from ..world.factories import empty_list
from .records import ModelAttempt, RawCall

if TYPE_CHECKING:  # pragma: no cover
    from ..world.observation import Observation
    from ..world.tools import ToolSpec
    from .history import TeamHistory
    from .view import ReferencePlan, TeamView


class ToolPort(Protocol):
    """One agent's handle on the tools for one turn (bound to that agent by the episode)."""

    agent_id: str

    async def call(self, tool: str, arguments: Any = None) -> ToolResult:
        """Hand the gate one call as emitted (``arguments``: an object, JSON text, any JSON value, or the
        wire form ``{"_raw_arguments": ...}``). Never raises for bad input: every outcome is a result."""
        ...


class ToolServer(Protocol):
    """An episode's tool server for a team outside the in-process port (registered by ``register_tool_servers``;
    the MCP server plugin registers ``"mcp"``), started by the episode, never by the team."""

    seats: Mapping[str, tuple[str, str]]  # agent_id -> (url, bearer token), for the team's agents

    async def aclose(self) -> None:
        """Stop serving (a server the episode joined rather than started is left running)."""
        ...


@dataclass
class TurnTrace:
    """What the team's model did this turn, written as it happens (kept when the turn times out)."""

    attempts: list[ModelAttempt] = field(default_factory=list)  # each request to the model service
    raw_calls: list[RawCall] = field(default_factory=list)  # each tool call as the model emitted it
    model_pending: bool = False  # a model request is in flight (a turn timeout now is the service's, not the agent's)
    pending_since: float = 0.0  # time.perf_counter() when that request started
    harness_error: str | None = None  # set by the episode: traceback of the team's own exception


Text = "str | Callable[[], str]"


class Turn:
    """Everything an agent may know at the start of its turn.

    ``observation_text``, ``system_prompt`` and ``user_prompt`` may be handed in as text or as a function
    that renders it: the episode passes functions, so a team that never reads its prompts (the scripted
    policies) never pays for rendering them; a team that does gets the same text, rendered once."""

    __slots__ = ("agent_id", "username", "round", "observation", "tools", "port", "last_result", "extra", "trace",
                 "_texts")

    def __init__(self, agent_id: str, username: str, round: int, observation: "Observation",
                 observation_text: Text, system_prompt: Text, user_prompt: Text, tools: list["ToolSpec"],
                 port: ToolPort, last_result: ToolResult | None = None, extra: dict[str, Any] | None = None,
                 trace: TurnTrace | None = None):
        self.agent_id = agent_id
        self.username = username
        self.round = round
        self.observation = observation
        self.tools = tools  # the tools this agent may call this episode (variant-dependent)
        self.port = port
        self.last_result = last_result
        self.extra = extra if extra is not None else {}  # variant data, e.g. the shared plan
        self.trace = trace if trace is not None else TurnTrace()
        self._texts: dict[str, Any] = {"observation_text": observation_text, "system_prompt": system_prompt,
                                       "user_prompt": user_prompt}

    def _text(self, name: str) -> str:
        value = self._texts[name]
        if callable(value):
            value = self._texts[name] = value()
        return value

    @property
    def observation_text(self) -> str:
        """The observation rendered in the episode's observation format."""
        return self._text("observation_text")

    @property
    def system_prompt(self) -> str:
        """Rendered from the task (Jinja2), constant over the episode."""
        return self._text("system_prompt")

    @property
    def user_prompt(self) -> str:
        """The per-turn prompt: observation + chat + what to do."""
        return self._text("user_prompt")

    def __repr__(self) -> str:
        return f"Turn(agent_id={self.agent_id!r}, round={self.round})"


class TurnOutcome(BaseModel):
    """What the team reports back about a turn, beyond the tool call the gate already recorded."""

    thinking: str = ""  # the model's text besides the tool call (kept in the trajectory)
    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0  # time spent waiting for the model
    model_calls: int = 0
    infra_error: str | None = None  # model service failed after retries: recorded apart from agent failures
    context_trimmed: int = 0  # history messages dropped or summarised this turn to stay within budget
    raw_calls: list[dict[str, Any]] = Field(default_factory=empty_list)  # tool calls the model emitted, as emitted


class Team(ABC):
    """A team of agents built in some framework. One instance per episode."""

    @abstractmethod
    async def act(self, turn: Turn) -> TurnOutcome:
        """Play one turn of ``turn.agent_id``: call ``turn.port.call(...)`` once, then return."""

    # The tool server this team's agents reach their tools through, when not the in-process port: "mcp" for
    # teams whose tools go over MCP (--tools mcp). The episode starts that server through the plugin host
    # before Team.start and puts each agent's seat (URL, token) in the view start receives.
    tool_server: str | None = None

    async def start(self, view: "TeamView") -> None:  # noqa: B027 - optional hook
        """Called once by the episode before the first turn with the team's read-only view (each agent's
        brief, tools and rules; with ``tool_server == "mcp"``, each agent's MCP seat). Never the episode."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients, sessions, servers."""

    def prime(self, history: "TeamHistory") -> bool:
        """A fork (``agentworld fork``, ``core/play/fork.py``) hands the team, before its first turn, each
        agent's earlier turns of the episode (``core/play/history.py``): what it observed, the calls it made and
        their results. A team that carries them into its agents' context returns True; the default keeps
        nothing and returns False (the fork records that its agents started without their history)."""
        return False


@dataclass(frozen=True)
class TeamSpec:
    """What a framework plugin's factory receives to build a team for one episode.

    ``view`` is all the team may know of the episode (``core/play/view.py``): no world, no task object, no
    reference solution. ``reference_plan`` is set for one team only, the scripted oracle baseline, which
    plays the task's reference solution by definition (the episode records the grant)."""

    view: "TeamView | None"  # None only for teams built outside an episode (unit tests of a framework)
    model: str  # model spec string, e.g. "openai:gpt-4.1-mini", "scripted:oracle" (see core/play/models.py)
    seed: int = 0
    agent_ids: list[str] = field(default_factory=list)  # the agents this team plays (all, for the usual case)
    options: dict[str, Any] = field(default_factory=dict)  # framework options: tools="inproc"|"mcp", base_url...
    reference_plan: "ReferencePlan | None" = None  # the oracle baseline's grant, and no one else's
