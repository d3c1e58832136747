"""What a tool call did, as data.

Every action returns a :class:`ToolResult`: ``ok``, a short ``text`` for the model and structured
:class:`Effects`. Verifiers, the grounded CCE judge, exporters and reports read effects; nothing downstream
parses the text. Item movements always name the agent and a ``source`` so that causal chains can be
followed (``harvest:oak_tree#12`` produced the logs that ``transfer:agent_2`` moved and ``craft:stick``
consumed).
"""

from typing import Any, Literal

from pydantic import BaseModel, Field

from .factories import empty_list

ErrorKind = Literal[
    "bad_args",  # arguments failed validation (type, range, unknown enum value)
    "unknown_tool",  # no such tool (or removed by the protocol variant, e.g. chat under no-communication)
    "unknown_target",  # instance id, item key, player or recipe that does not exist (or is not visible)
    "out_of_range",  # target exists but is farther than the rules allow for this action
    "blocked",  # destination is not walkable / unreachable
    "missing_items",  # not enough materials, no such item in the inventory
    "missing_tool",  # a gathering or crafting tool is needed
    "level_too_low",  # skill level below the requirement
    "no_station",  # crafting needs a furnace / anvil / fire / workbench nearby
    "inventory_full",
    "depleted",  # resource node is depleted and respawning
    "dead",  # the acting agent is dead
    "not_active",  # the acting agent already completed or left the episode
    "refused",  # the turn gate refused the call (out of turn, second call, another agent's character)
    "no_call",  # the model returned no tool call
    "infra",  # the model service failed after retries (not the agent's fault)
    "timeout",  # the agent did not act within the turn timeout
    "harness_error",  # the engine or harness raised while serving the turn (not held against the agent)
    "invalid",  # anything else the world refuses
]


class ItemDelta(BaseModel):
    """Items entering (``gained``) or leaving (``lost``) one agent's inventory."""

    agent: str  # agent id (the task's YAML key, e.g. "agent_1")
    item: str  # item key
    count: int
    source: str = ""  # e.g. "harvest:oak_tree#12", "loot:goblin#3", "craft:stick", "transfer:agent_2", "eat", "death"


class Transfer(BaseModel):
    from_agent: str
    to_agent: str
    item: str
    count: int


class Crafted(BaseModel):
    recipe: str
    skill: str
    item: str
    count: int


class Kill(BaseModel):
    mob: str  # mob type key
    instance: str  # mob instance id
    level: int
    by: str  # agent id
    name: str = ""  # the mob's display name when the world says it (a game server's), else from the data pack


class Harvest(BaseModel):
    node: str  # node type key
    instance: str
    skill: str
    items: dict[str, int] = Field(default_factory=dict)


class Move(BaseModel):
    start: tuple[int, int]
    end: tuple[int, int]
    path_length: int
    reached: bool  # False when the destination was farther than one move allows
    engaged_by: str | None = None  # the aggressive mob whose range the walk entered, which stopped it there


class ChatDelivery(BaseModel):
    scope: Literal["global", "local", "team"]
    recipients: list[str]  # agent ids that received it
    message: str


class Equip(BaseModel):
    item: str
    slot: str
    unequipped: str | None = None


class HpChange(BaseModel):
    agent: str
    before: int
    after: int
    cause: str = ""  # "combat:goblin#3", "eat:cooked_trout", "regen", "aggro:wolf#7"


class Effects(BaseModel):
    """Structured consequences of one action (or of one world tick)."""

    gained: list[ItemDelta] = Field(default_factory=empty_list)
    lost: list[ItemDelta] = Field(default_factory=empty_list)
    transfers: list[Transfer] = Field(default_factory=empty_list)
    crafted: list[Crafted] = Field(default_factory=empty_list)
    kills: list[Kill] = Field(default_factory=empty_list)
    harvests: list[Harvest] = Field(default_factory=empty_list)
    move: Move | None = None
    chat: ChatDelivery | None = None
    equipped: Equip | None = None
    hp: list[HpChange] = Field(default_factory=empty_list)
    xp: dict[str, int] = Field(default_factory=dict)  # skill -> xp gained by the acting agent
    level_ups: dict[str, int] = Field(default_factory=dict)  # skill -> new level
    deaths: list[str] = Field(default_factory=empty_list)  # agent ids that died
    portal: str | None = None  # portal key used
    completed: bool = False  # the acting agent declared its part done
    target: str | None = None  # instance id or player the action was aimed at

    def is_empty(self) -> bool:
        return self == Effects()


class ToolResult(BaseModel):
    """The answer to one tool call."""

    ok: bool
    text: str  # short, for the model: what happened, or exactly what was wrong and how to fix it
    effects: Effects = Field(default_factory=Effects)
    error: ErrorKind | None = None

    @classmethod
    def fail(cls, error: ErrorKind, text: str) -> "ToolResult":
        return cls(ok=False, text=text, error=error)


# -- made by the engine ------------------------------------------------------------------------------------
def engine_effects(**values: Any) -> Effects:
    """``Effects(**values)``."""
    return Effects.model_validate(values)


def engine_result(text: str, effects: Effects | None = None) -> ToolResult:
    """``ToolResult(ok=True, text=text, effects=effects)``."""
    return ToolResult(ok=True, text=text, effects=effects if effects is not None else engine_effects())


def engine_failure(error: ErrorKind, text: str) -> ToolResult:
    """``ToolResult.fail(error, text)``."""
    return ToolResult(ok=False, text=text, error=error)
