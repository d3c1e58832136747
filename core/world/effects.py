"""What a tool call did, as data.

Every action returns a :class:`ToolResult`: ``ok``, a short ``text`` for the model and structured
:class:`Effects`. Verifiers, the grounded CCE judge, exporters and reports read effects; nothing downstream
parses the text. Item movements always name the agent and a ``source`` so that causal chains can be
followed (``harvest:oak_tree#12`` produced the logs that ``transfer:agent_2`` moved and ``craft:stick``
consumed).
"""

from dataclasses import field
from typing import Any, Literal

from .factories import empty_list
from .record import Record, record

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


@record
class ItemDelta(Record):
    """Items entering (``gained``) or leaving (``lost``) one agent's inventory."""

    agent: str  # agent id (the task's YAML key, e.g. "agent_1")
    item: str  # item key
    count: int
    source: str = ""  # e.g. "harvest:oak_tree#12", "loot:goblin#3", "craft:stick", "transfer:agent_2", "eat", "death"


@record(schema_doc=False)
class Transfer(Record):
    """Items one agent handed to another (transfer_items)."""

    from_agent: str
    to_agent: str
    item: str
    count: int


@record(schema_doc=False)
class Crafted(Record):
    """What one craft_item call made: the recipe, its skill, and the item and count produced."""

    recipe: str
    skill: str
    item: str
    count: int


@record(schema_doc=False)
class Kill(Record):
    """A mob killed by an agent."""

    mob: str  # mob type key
    instance: str  # mob instance id
    level: int
    by: str  # agent id
    name: str = ""  # the mob's display name when the world says it (a game server's), else from the data pack


@record(schema_doc=False)
class Harvest(Record):
    """A resource node harvested, and the items it gave."""

    node: str  # node type key
    instance: str
    skill: str
    items: dict[str, int] = field(default_factory=dict)


@record(schema_doc=False)
class Move(Record):
    """A walk: where it started and ended, and whether it reached the destination."""

    start: tuple[int, int]
    end: tuple[int, int]
    path_length: int
    reached: bool  # False when the destination was farther than one move allows
    engaged_by: str | None = None  # the aggressive mob whose range the walk entered, which stopped it there


@record(schema_doc=False)
class ChatDelivery(Record):
    """A chat message and the agents it reached."""

    scope: Literal["global", "local", "team"]
    recipients: list[str]  # agent ids that received it
    message: str


@record(schema_doc=False)
class Equip(Record):
    """An item equipped, and the one it replaced in that slot."""

    item: str
    slot: str
    unequipped: str | None = None


@record(schema_doc=False)
class HpChange(Record):
    """A change of an agent's HP, and its cause."""

    agent: str
    before: int
    after: int
    cause: str = ""  # "combat:goblin#3", "eat:cooked_trout", "regen", "aggro:wolf#7"


@record
class Effects(Record):
    """Structured consequences of one action (or of one world tick)."""

    gained: list[ItemDelta] = field(default_factory=empty_list)
    lost: list[ItemDelta] = field(default_factory=empty_list)
    transfers: list[Transfer] = field(default_factory=empty_list)
    crafted: list[Crafted] = field(default_factory=empty_list)
    kills: list[Kill] = field(default_factory=empty_list)
    harvests: list[Harvest] = field(default_factory=empty_list)
    move: Move | None = None
    chat: ChatDelivery | None = None
    equipped: Equip | None = None
    hp: list[HpChange] = field(default_factory=empty_list)
    xp: dict[str, int] = field(default_factory=dict)  # skill -> xp gained by the acting agent
    level_ups: dict[str, int] = field(default_factory=dict)  # skill -> new level
    deaths: list[str] = field(default_factory=empty_list)  # agent ids that died
    portal: str | None = None  # portal key used
    completed: bool = False  # the acting agent declared its part done
    target: str | None = None  # instance id or player the action was aimed at

    def is_empty(self) -> bool:
        return self == Effects()


@record
class ToolResult(Record):
    """The answer to one tool call."""

    ok: bool
    text: str  # short, for the model: what happened, or exactly what was wrong and how to fix it
    effects: Effects = field(default_factory=Effects)
    error: ErrorKind | None = None

    @classmethod
    def fail(cls, error: ErrorKind, text: str) -> "ToolResult":
        return cls(ok=False, text=text, error=error)


# -- made by the engine ------------------------------------------------------------------------------------
def engine_effects(**values: Any) -> Effects:
    """``Effects(**values)``."""
    return Effects(**values)


def engine_result(text: str, effects: Effects | None = None) -> ToolResult:
    """``ToolResult(ok=True, text=text, effects=effects)``."""
    return ToolResult(ok=True, text=text, effects=effects if effects is not None else engine_effects())


def engine_failure(error: ErrorKind, text: str) -> ToolResult:
    """``ToolResult.fail(error, text)``."""
    return ToolResult(ok=False, text=text, error=error)
