"""One agent's view of the world for one turn: a structured object, rendered as compact text or JSON.

The world fills in what the agent can see (its own state, entities within the view radius, chat it
received); the episode fills in the round and budget fields. An agent never sees another agent's
inventory, prompts or reasoning: ``party`` (teammates' HP) is filled only under the party-status variant.
"""

from dataclasses import field
from typing import Literal

from .factories import empty_list
from .record import Record, record

EntityKind = Literal["mob", "resource", "player", "ground_item", "portal", "npc", "station", "landmark"]


# Records (core/world/record.py): plain dataclasses in the engine, pydantic where one is validated or written.
# The rows are frozen: the engine hands the same row to every observation that shows it, agent after agent.
@record(frozen=True, schema_doc=False)
class InvItem(Record):
    """One inventory row of an observation."""

    index: int  # slot index, as equip_item(index=...) takes it
    key: str
    name: str
    count: int
    slots: int | None = None  # slots the row's items fill when more than one (a non-stackable item takes one each)


@record(frozen=True, schema_doc=False)
class Entity(Record):
    """One row of the Nearby list: a mob, node, player, ground item, portal, NPC, station or landmark."""

    kind: EntityKind
    id: str  # instance id for targetInstance, username for players, key for portals/landmarks
    name: str
    x: int
    y: int
    distance: int  # Manhattan tiles from the agent (a lower bound of the walking distance)
    level: int | None = None
    hp: int | None = None
    max_hp: int | None = None
    note: str = ""  # requirements, yield, state ("depleted, back in 3 rounds", "aggressive", "needs axe, lumberjacking 10")


# frozen: one message object is in every recipient's observation (a team that edited its copy would change
# what the others read)
@record(frozen=True, schema_doc=False)
class ChatMessage(Record):
    """A chat message as its recipients see it."""

    round: int
    sender: str  # username
    text: str
    scope: Literal["global", "local", "team"]


@record(schema_doc=False)
class PartyMember(Record):
    """A teammate's HP, shown under the party-status variant."""

    username: str
    hp: int
    max_hp: int
    alive: bool


@record(schema_doc=False)
class Observation(Record):
    """One agent's view of the world for one turn (the module's docstring says what it holds)."""

    agent_id: str
    username: str
    round: int = 0
    max_rounds: int = 0
    actions_left: int | None = None
    x: int
    y: int
    biome: str
    place: str | None = None  # nearest landmark within its radius
    hp: int
    max_hp: int
    alive: bool = True
    combat_level: int = 1
    skills: dict[str, int] = field(default_factory=dict)  # levels; skills at 1 are omitted by the renderer
    xp_to_next: dict[str, int] = field(default_factory=dict)  # XP a skill still needs for its next level
    inventory: list[InvItem] = field(default_factory=empty_list)
    inventory_slots: int = 28
    inventory_used: int | None = None  # slots filled (identical items in several slots show as one row)
    carry_limit: int | None = None  # most item pieces this agent may carry (world_rules.carry_limit); None: no limit
    equipment: dict[str, str] = field(default_factory=dict)  # slot -> item name
    nearby: list[Entity] = field(default_factory=empty_list)
    last_result: str | None = None
    chat: list[ChatMessage] = field(default_factory=empty_list)
    party: list[PartyMember] | None = None
    notes: list[str] = field(default_factory=empty_list)  # NPC lines, world messages (aggro hits at the tick...)
    turn: str | None = None  # where this agent's turn falls in the round ("you act 2nd of 3 this round; ...")
    over: str | None = None  # set once the episode has ended: how it ended (no round, no actions left then)

    @property
    def rounds_left(self) -> int:
        return max(0, self.max_rounds - self.round + 1) if self.max_rounds else 0

    def render(self, fmt: Literal["text", "json"] = "text") -> str:
        return self.render_text() if fmt == "text" else self.model_dump_json(exclude_none=True)

    def render_text(self) -> str:
        """Compact, line-oriented text: a few hundred bytes to a few KB."""
        out: list[str] = []
        if self.over is not None:  # no round is under way and no action can be taken
            out.append(f"The episode is over: {self.over}. No more turns; what follows is where you ended.")
        else:
            head = f"Round {self.round}/{self.max_rounds}" if self.max_rounds else f"Round {self.round}"
            if self.actions_left is not None:
                head += f" | actions left {self.actions_left}"
            if self.turn:
                head += f" | {self.turn}"
            out.append(head)
        where = f"({self.x},{self.y}) {self.biome}" + (f", {self.place}" if self.place else "")
        out.append(f"You: {self.username} | HP {self.hp}/{self.max_hp} | combat lv {self.combat_level} | at {where}")
        if not self.alive:
            out.append("You are dead.")
        nxt = self.xp_to_next
        lv = ", ".join(f"{k} {v}" + (f" ({nxt[k]} XP to {v + 1})" if k in nxt else "")
                       for k, v in sorted(self.skills.items()) if v > 1 or k in nxt)
        # a skill at level 1 has no row: a woodcutter read a missing Crafting as "cannot saw plank" (Crafting 1)
        out.append(f"Skills: {lv}; every other skill level 1" if lv else "Skills: all level 1")
        if self.equipment:
            out.append("Equipped: " + ", ".join(f"{slot}={name}" for slot, name in self.equipment.items()))
        inv = ", ".join(f"[{i.index}] {i.key} x{i.count}" + (f" ({i.slots} slots)" if i.slots else "")
                        for i in self.inventory)
        used = len(self.inventory) if self.inventory_used is None else self.inventory_used
        carry = (f"; carrying {sum(i.count for i in self.inventory)}/{self.carry_limit} items"
                 if self.carry_limit else "")
        out.append(f"Inventory ({used}/{self.inventory_slots} slots{carry}): {inv or 'empty'}")
        if self.party:
            out.append("Party: " + ", ".join(
                f"{p.username} {p.hp}/{p.max_hp}" + ("" if p.alive else " (dead)") for p in self.party))
        if self.nearby:
            out.append("Nearby (id | name | x,y | dist | info):")
            for e in self.nearby:
                info = []
                if e.level is not None:
                    info.append(f"lv {e.level}")
                if e.hp is not None and e.max_hp is not None:
                    info.append(f"hp {e.hp}/{e.max_hp}")
                if e.note:
                    info.append(e.note)
                out.append(f"- {e.kind} {e.id} | {e.name} | {e.x},{e.y} | {e.distance} | {'; '.join(info)}".rstrip(" |"))
        else:
            out.append("Nearby: nothing within view")
        for n in self.notes:
            out.append(f"Note: {n}")
        if self.last_result:
            out.append(f"Last action: {self.last_result}")
        if self.chat:
            out.append("Chat since your last turn:")
            for m in self.chat:
                out.append(f"- [r{m.round} {m.scope}] {m.sender}: {m.text}")
        return "\n".join(out)
