"""What an episode writes: the events of ``trajectory.jsonl`` and ``result.json``.

One definition read by everything downstream (verifiers' history, CCE, exporters, reports, resume).
``trajectory.jsonl`` holds one JSON object per line: a ``start`` event, then per round one ``turn`` event
per acting agent and one ``tick`` event, then an ``end`` event. Each line is flushed as it is written,
so a killed run leaves a readable prefix.
"""

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..tasks.verify import Checkpoint
from ..world.effects import Effects, ErrorKind
from ..world.factories import empty_list
from ..world.record import Record, record

EndReason = Literal["verifier_passed", "round_budget", "no_active_agents", "budget_stop", "aborted", "error"]


@record
class AgentStatus(Record):
    """A compact picture of one agent after its action (what the paper's `status` and inventory carried)."""

    hp: int
    max_hp: int
    x: int
    y: int
    level: int  # combat level
    alive: bool
    inventory: list[dict[str, Any]]  # [{"key", "name", "count"}]
    xp: int = 0  # total XP over all skills (the paper's status line shows it); added by EPISODE
    equipment: dict[str, str] | None = None  # slot -> item key (None in trajectories written before it existed)


class ForkOrigin(BaseModel):
    """Where a fork (``agentworld fork``) comes from: its first ``at_round - 1`` rounds replay this parent
    episode's recorded calls; from ``at_round`` on the fork's own team plays."""

    parent_episode_id: str
    parent_dir: str  # the parent episode's folder, as given to the fork
    at_round: int
    parent_framework: str
    parent_model: str
    parent_record_sha256: str | None = None  # the parent's record files when forked (replay.record_digest)


class StartEvent(BaseModel):
    type: Literal["start"] = "start"
    episode_id: str
    task_id: str
    seed: int
    variant: str
    framework: str
    model: str
    world_version: str
    agents: list[dict[str, Any]]  # [{"agent_id", "username", "x", "y"}] in turn order
    max_rounds: int
    max_action_steps: int
    timestamp: str
    # what the team was handed beyond its view: ["reference_plan"] for the scripted oracle baseline alone
    grants: list[str] = Field(default_factory=empty_list)
    # what a replay needs (core/play/fingerprint.py; None in records made before v0.3): the harness version,
    # where the task came from and its file's sha256, the world's pins, the world backend and the turn timeout
    harness_version: str | None = None
    task_file: str | None = None  # "<suite>/<file>" for a shipped task, else the path it was loaded from
    task_sha256: str | None = None
    world_pins: dict[str, Any] | None = None
    world_backend: str | None = None
    turn_timeout: float | None = None
    fork: ForkOrigin | None = None  # set in a fork's record: its parent and the round it took over


@record(schema_doc=False)
class RefusedCall(Record):
    """A call the turn gate refused, and why."""

    tool: str
    arguments: dict[str, Any] | None = None
    reason: str


@record
class RawCall(Record):
    """A tool call as it was emitted: arguments decoded when they were JSON, else the text as sent (sanitised)."""

    name: str
    arguments: Any = None


class ModelAttempt(BaseModel):
    """One request to the model service during a turn (failed ones included)."""

    ok: bool
    error: str | None = None  # canonical: "HTTP 500", "no answer within 30s", "malformed response: ..."
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0


class TurnEvent(BaseModel):
    type: Literal["turn"] = "turn"
    step: int  # global sequence number of this turn in the episode (0-based)
    round: int
    agent: str  # agent id (YAML key)
    username: str
    tool: str | None  # None: no tool call this turn
    arguments: dict[str, Any] | None = None  # as the agent sent them
    parsed_arguments: dict[str, Any] | None = None  # as validated: what the world acted on (None: refused)
    ok: bool = False
    result: str = ""  # the text the agent saw
    error: ErrorKind | None = None
    effects: Effects = Field(default_factory=Effects)
    refused: list[RefusedCall] = Field(default_factory=empty_list)  # further calls in the same turn, refused
    counts_as_action: bool = True  # False for chat and sleep (max_action_steps counts the others)
    status: AgentStatus | None = None
    thinking: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0
    harness_s: float = 0.0  # time in the harness for this turn (observation, prompts, tool, recording)
    infra_error: str | None = None
    harness_error: str | None = None  # traceback of an engine or harness exception (not the agent's failure)
    raw_calls: list[RawCall] = Field(default_factory=empty_list)  # the tool calls as emitted, in order
    attempts: list[ModelAttempt] = Field(default_factory=empty_list)  # requests to the model service this turn
    context_trimmed: int = 0
    timestamp: str = ""
    observation_sha256: str | None = None  # the observation the agent was handed (None: recorded before v0.3)


class TickEvent(BaseModel):
    type: Literal["tick"] = "tick"
    round: int
    effects: Effects = Field(default_factory=Effects)
    lines: list[str] = Field(default_factory=empty_list)
    # the task's world events fired at this tick and the joint actions of the round (core/world/events.py);
    # left out of the line when there are none, so a task without mechanics writes what it always wrote
    events: list[dict[str, Any]] = Field(default_factory=empty_list, exclude_if=lambda v: not v)
    checkpoints_passed: int = 0
    timestamp: str = ""


class EndEvent(BaseModel):
    type: Literal["end"] = "end"
    reason: EndReason
    rounds: int
    # out-of-turn calls whose caller had no later turn to report them with (agent id -> refused calls)
    refused: dict[str, list[RefusedCall]] = Field(default_factory=dict)
    timestamp: str = ""


Event = Annotated[Union[StartEvent, TurnEvent, TickEvent, EndEvent], Field(discriminator="type")]
# built on first use (reading a trajectory back): a run that only writes events never needs it
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))


def parse_event(line: str) -> StartEvent | TurnEvent | TickEvent | EndEvent:
    return EVENT_ADAPTER.validate_json(line)


END_REASON_TEXT: dict[str, str] = {
    "verifier_passed": "the verifier passed", "round_budget": "the round budget is used up",
    "no_active_agents": "no agent is active any more", "budget_stop": "the run's token or cost budget was reached",
    "aborted": "the episode was aborted", "error": "the episode stopped with an error",
}


class EpisodeOutcome(BaseModel):
    """How an episode ended, as the players are told (the MCP server's last results, every later call)."""

    success: bool
    end_reason: EndReason
    rounds: int
    checkpoints_passed: int
    checkpoints_total: int
    psr: float
    message: str = ""  # the verifier's one-line message

    def text(self) -> str:
        verdict = "success" if self.success else "not solved"
        # a lost team is told which checks held and which fell short: pilots read "checkpoints 2/3" and could
        # not tell which of the objective's parts they had missed
        checks = f" (the checks: {self.message})" if not self.success and self.message else ""
        return (f"{verdict}, checkpoints {self.checkpoints_passed}/{self.checkpoints_total} (PSR {self.psr:.2f}); "
                f"it ended in round {self.rounds}: {END_REASON_TEXT.get(self.end_reason, self.end_reason)}{checks}")


class EpisodeResult(BaseModel):
    episode_id: str
    task_id: str
    category: str | None = None
    n_agents: int
    seed: int
    variant: str = "vanilla"
    framework: str
    model: str
    verifiable: bool = True  # False for a paper-format task without a verifier
    success: bool
    psr: float  # share of checkpoints achieved
    checkpoints: list[Checkpoint] = Field(default_factory=empty_list)
    message: str = ""  # "staff with wizard: 1/1, all alive: yes"
    end_reason: EndReason
    rounds: int
    max_rounds: int
    actions: int  # tool calls that use the action budget (everything but chat and sleep; unknown tools too)
    chats: int  # chat messages delivered (a refused chat is a tool error, not a chat)
    tool_errors: int  # calls the world refused (bad args, out of range...)
    no_calls: int  # turns where the model made no tool call
    refused_calls: int  # calls refused by the turn gate
    infra_errors: int
    turns: int | None = None  # turn events in the trajectory (None: recorded before this field existed)
    waits: int = 0  # sleeps: turns passed on purpose (0 in results recorded before waits were counted apart)
    harness_errors: int = 0  # turns an engine or harness exception spoiled (recorded, not held against agents)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    harness_s: float = 0.0
