"""The knowledge check: could each agent have known every argument of its reference steps?

An agent may act only on what it can know: its brief (the system prompt: task, objective, its own guideline
and the shared game context), its own observations so far (position, inventory, what is within view, the
results of its own actions, NPC lines), and the chat messages it received. :func:`knowledge_gaps` replays
what a recorded episode showed each agent, turn by turn, and lists every step argument the agent could not
have known at that moment:

- ``targetInstance`` (harvest, attack, pick up): the instance id appeared in what the agent knew;
- ``x, y`` (move): a place the agent knew lies within :data:`NEAR` tiles (a known coordinate pair, its own
  position, or an entity it saw); walking "to the furnace at (453,400)" may end on a tile beside it;
- ``itemKey`` (craft, equip, give): the key appeared (a recipe in the brief, its own inventory, chat);
- ``targetPlayer``: a teammate's username (the brief lists the team);
- ``count`` of a transfer: one, or the number appeared in the brief or in chat, or it is everything the
  agent holds of that item (observations are full of incidental numbers, so they do not count as knowing
  "how many");
- a chat message: every instance id and coordinate pair in it is known to the sender (an agent can only
  pass on what it knows).

``without_chat=True`` drops the chat an agent received (and the plan's own chat steps): the proof that a
task needs communication is that this version has gaps while the full one has none. Knowledge is textual
on purpose: it is what a model reading the same prompts could use, nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..world.tools import CHAT_TOOLS

NEAR = 4  # tiles: knowing a place means knowing the tiles around it (a station's range)

_ID = re.compile(r"\b[a-z][a-z0-9_]*#\d+\b")
_PAIR = re.compile(r"\(?\b(\d{1,4})\s*,\s*(\d{1,4})\b\)?")
_WORD = re.compile(r"\b[a-z][a-z0-9_]*\b")
_NUM = re.compile(r"\b\d+\b")


@dataclass
class Knowledge:
    """What one agent has read so far, as facts: ids, places, words and (brief or chat) numbers."""

    ids: set[str] = field(default_factory=set)
    places: set[tuple[int, int]] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    numbers: set[int] = field(default_factory=set)

    def read(self, text: str, *, numbers: bool) -> None:
        self.ids.update(_ID.findall(text))
        self.places.update((int(x), int(y)) for x, y in _PAIR.findall(text))
        self.words.update(_WORD.findall(text.lower()))
        if numbers:
            self.numbers.update(int(n) for n in _NUM.findall(text))

    def knows_place(self, x: int, y: int) -> bool:
        return any(abs(px - x) + abs(py - y) <= NEAR for px, py in self.places)


@dataclass(frozen=True)
class Gap:
    agent_id: str
    round: int
    tool: str
    argument: str
    value: Any

    def __str__(self) -> str:
        return f"{self.agent_id} round {self.round} {self.tool}: {self.argument}={self.value!r} was never shown to it"


@dataclass
class TurnSeen:
    """What one turn showed its agent, and the call it made (recorded by the proof's RecordingTeam)."""

    agent_id: str
    round: int
    system_prompt: str
    observation_text: str  # rendered without the chat lines
    chat: list[str]  # chat lines received since the agent's last turn
    held: dict[str, int]  # the agent's inventory counts at the start of the turn
    tool: str | None
    args: dict[str, Any]


def _unknown(k: Knowledge, tool: str, args: dict[str, Any], held: dict[str, int]) -> list[tuple[str, Any]]:
    """The arguments of one call that ``k`` does not cover."""
    out: list[tuple[str, Any]] = []
    target = args.get("targetInstance")
    if tool in ("harvest_resource", "attack_entity", "pickup_resource") and target not in k.ids:
        out.append(("targetInstance", target))
    if tool == "move_character":
        try:
            x, y = int(args.get("x")), int(args.get("y"))
        except (TypeError, ValueError):
            return out
        if not k.knows_place(x, y):
            out.append(("x,y", f"({x},{y})"))
    item = args.get("itemKey")
    if tool in ("craft_item", "equip_item", "transfer_items") and item is not None and str(item).lower() not in k.words:
        out.append(("itemKey", item))
    if tool == "transfer_items":
        player = args.get("targetPlayer")
        if player is not None and str(player).lower() not in k.words:
            out.append(("targetPlayer", player))
        count = args.get("count")
        if isinstance(count, int) and count > 1 and count not in k.numbers and held.get(str(item), 0) != count:
            out.append(("count", count))
    if tool in CHAT_TOOLS:
        text = str(args.get("message", ""))
        for fact in _ID.findall(text):
            if fact not in k.ids:
                out.append(("message", fact))
        for x, y in _PAIR.findall(text):
            if not k.knows_place(int(x), int(y)):
                out.append(("message", f"({x},{y})"))
    return out


class Minds:
    """Every agent's knowledge, fed one turn at a time (so a replay can stop at the first gap)."""

    def __init__(self, *, without_chat: bool = False):
        self.without_chat = without_chat
        self.minds: dict[str, Knowledge] = {}

    def turn(self, t: TurnSeen) -> list[Gap]:
        """Read what the turn showed its agent, then the gaps of the call it made."""
        k = self.minds.get(t.agent_id)
        if k is None:
            k = self.minds[t.agent_id] = Knowledge()
            k.read(t.system_prompt, numbers=True)
        k.read(t.observation_text, numbers=False)
        if not self.without_chat:
            for line in t.chat:
                k.read(line, numbers=True)
        if t.tool is None or (self.without_chat and t.tool in CHAT_TOOLS):
            return []
        return [Gap(t.agent_id, t.round, t.tool, arg, value) for arg, value in _unknown(k, t.tool, t.args, t.held)]


def knowledge_gaps(turns: Iterable[TurnSeen], *, without_chat: bool = False) -> list[Gap]:
    """Every argument a recorded agent used before it could know it (empty: the plan is knowable)."""
    minds = Minds(without_chat=without_chat)
    return [g for t in turns for g in minds.turn(t)]


def fact_handoffs(gaps: list[Gap], silent: list[Gap]) -> int:
    """Step arguments an agent could know only from a teammate's chat: facts handed over by talking.
    ``gaps`` and ``silent`` are ``knowledge_gaps`` of the same turns, with and without chat."""
    with_chat = {(g.agent_id, g.round, g.argument, str(g.value)) for g in gaps}
    return len({(g.agent_id, str(g.value)) for g in silent
                if (g.agent_id, g.round, g.argument, str(g.value)) not in with_chat})
