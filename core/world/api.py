"""The ``World`` interface: the only way the harness reaches a game world.

The embedded engine (``core/world/engine.py``) implements it in process. Another backend (for example a
client of a licensed AgentWorld/Kaetram server's ``/ai/*`` HTTP API) can implement the same methods and be
registered through the ``register_worlds`` hook. One method per tool: the tool definitions in
``core/world/tools.py`` call exactly these, so the set of actions cannot drift from the tool surface.
"""

from abc import ABC, abstractmethod
from dataclasses import field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from .effects import Effects, ToolResult
from .factories import empty_list
from .record import Record, record

if TYPE_CHECKING:  # pragma: no cover
    from .observation import Observation
    from .models import Rules


class WorldUnavailable(RuntimeError):
    """A world backend that cannot be reached after its retries (a game server that is down): an
    infrastructure error. The episode ends with it (``end_reason: error``) and a resumed run reruns it."""


class StackSpec(BaseModel):
    item: str
    count: int = 1
    enchant: int = 0  # the paper's enchantment level; task validation refuses it where a world has none


class PlayerSpec(BaseModel):
    """How one agent enters the world (from the task's ``agent_N`` block)."""

    agent_id: str  # the task's YAML key: "agent_1"
    username: str
    x: int
    y: int
    skills: dict[str, int] = Field(default_factory=dict)  # skill -> level (others start at 1)
    inventory: list[StackSpec] = Field(default_factory=empty_list)
    equipment: list[StackSpec] = Field(default_factory=empty_list)


# frozen: the engine hands the same slot rows to every state that shows them (a record: core/world/record.py)
@record(frozen=True, schema_doc=False)
class InventorySlot(Record):
    """One filled inventory slot of a player state."""

    index: int
    item: str
    name: str
    count: int


# frozen: the embedded world hands out the same state while nothing it shows changes (player_state), to the
# turn, the verifier's checks and the final state alike: one reader's edit must not reach the others
@record(frozen=True)
class PlayerState(Record):
    """One agent's full state: read by verifiers, exporters and the final state file (never by teammates)."""

    agent_id: str
    username: str
    x: int
    y: int
    hp: int
    max_hp: int
    alive: bool
    active: bool  # False once completed, dead (with death: out) or retired by the episode
    skills: dict[str, int]  # level per skill
    xp: dict[str, int]
    inventory: list[InventorySlot]
    equipment: dict[str, str]  # slot -> item key
    equipment_counts: dict[str, int] = field(default_factory=dict)  # slot -> how many (an ammo stack; 1 for a piece)
    kills: dict[str, int] = field(default_factory=dict)  # mob type -> kills (from engine effects)
    crafted: dict[str, int] = field(default_factory=dict)  # item key -> count crafted by this agent
    combat_level: int = 1

    def count(self, item: str) -> int:
        return sum(s.count for s in self.inventory if s.item == item)


class TickReport(BaseModel):
    """What happened at the end-of-round tick (aggro attacks, respawns, regeneration, deaths)."""

    round: int
    effects: Effects = Field(default_factory=Effects)
    lines: list[str] = Field(default_factory=empty_list)  # short human-readable log lines
    # the task's world events that fired (from the next round on) and the joint actions done this round, each
    # a record with its kind, round and what it touched (core/world/events.py); empty for a task without them
    events: list[dict[str, Any]] = Field(default_factory=empty_list)


class World(ABC):
    """A game world holding one episode's state. Not thread-safe: the episode serialises all calls."""

    version: str
    rules: "Rules"

    # -- setup ------------------------------------------------------------------------------------
    @abstractmethod
    def add_player(self, spec: PlayerSpec) -> None: ...

    @abstractmethod
    def remove_player(self, agent_id: str, reason: str) -> None:
        """Take an agent out of play (completed, retired); it stays in the state, inactive."""

    # -- the 13 actions (arguments already validated by the tool's pydantic model) -------------------
    @abstractmethod
    def move_character(self, agent_id: str, x: int, y: int) -> ToolResult: ...

    @abstractmethod
    def send_chat_message(self, agent_id: str, message: str, global_: bool = False) -> ToolResult: ...

    @abstractmethod
    def enter_portal(self, agent_id: str) -> ToolResult: ...

    @abstractmethod
    def stop_action(self, agent_id: str) -> ToolResult: ...

    @abstractmethod
    def equip_item(self, agent_id: str, index: int | None = None, item_key: str | None = None) -> ToolResult: ...

    @abstractmethod
    def harvest_resource(self, agent_id: str, target_instance: str) -> ToolResult: ...

    @abstractmethod
    def pickup_resource(self, agent_id: str, target_instance: str) -> ToolResult: ...

    @abstractmethod
    def attack_entity(self, agent_id: str, target_instance: str) -> ToolResult: ...

    @abstractmethod
    def sleep(self, agent_id: str, seconds: int) -> ToolResult: ...

    @abstractmethod
    def craft_item(self, agent_id: str, skill: str, item_key: str, count: int) -> ToolResult: ...

    @abstractmethod
    def complete(self, agent_id: str, response: str) -> ToolResult: ...

    @abstractmethod
    def chat(self, agent_id: str, message: str) -> ToolResult: ...

    @abstractmethod
    def transfer_items(self, agent_id: str, target_player: str, item_key: str, count: int) -> ToolResult: ...

    # -- reading ---------------------------------------------------------------------------------
    @abstractmethod
    def observe(self, agent_id: str) -> "Observation":
        """The agent's own view. Round/budget fields are filled in by the episode."""

    @abstractmethod
    def peek(self, agent_id: str) -> "Observation":
        """The same view as ``observe`` without handing over (clearing) chat and notes: for showing the
        state after an action (MCP tool results) without stealing what belongs to the next turn."""

    @abstractmethod
    def player_state(self, agent_id: str) -> PlayerState: ...

    def out_of_play(self, agent_ids: list[str]) -> list[str]:
        """Those of ``agent_ids`` that are dead or no longer active, in the given order. A backend can answer
        this more cheaply than by building every agent's full state (the episode asks after every tick)."""
        out = []
        for agent_id in agent_ids:
            st = self.player_state(agent_id)
            if not (st.alive and st.active):
                out.append(agent_id)
        return out

    @abstractmethod
    def end_round(self, round: int) -> TickReport:
        """The end-of-round tick: aggro attacks, respawns, HP regeneration."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A JSON-able picture of the whole world state (``final_state.json``)."""

    def close(self) -> None:
        """Release what the world holds outside this process (a server backend logs its characters out)."""
