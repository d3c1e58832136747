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

A fact is known only while it is true. A place tied to a mob (a Nearby row, "wolf#12 at (395,384)" in chat or
a brief) stands for where that mob is: once the mob has moved more than NEAR tiles away (a roaming or patrolling
mob; a raider that died is gone) the place is stale, and known again only when the agent learns the new one. A value a task's event
changed (a verifier check's count or place, ``change_objective``) is stale from the event's round for what was
learned before it: a teammate who relayed the old order passed on a fact that is no longer true.

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
ANCHOR_GAP = 40  # characters: a place this close after a mob's id on one line is that mob's position

_ID = re.compile(r"\b[a-z][a-z0-9_]*#\d+\b")
_PAIR = re.compile(r"\(?\b(\d{1,4})\s*,\s*(\d{1,4})\b\)?")
_WORD = re.compile(r"\b[a-z][a-z0-9_]*\b")
_NUM = re.compile(r"\b\d+\b")


@dataclass
class Knowledge:
    """What one agent has read so far, as facts: ids, places, words and (brief or chat) numbers. A place read
    right after a mob's id (on the same line) is where that mob was: kept apart in ``mob_places``, true only
    while the mob is still there."""

    ids: set[str] = field(default_factory=set)
    places: set[tuple[int, int]] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    numbers: set[int] = field(default_factory=set)
    mob_places: dict[tuple[int, int], set[str]] = field(default_factory=dict)  # place -> mobs seen or told there

    def read(self, text: str, *, numbers: bool, is_mob: Any = None) -> None:
        self.ids.update(_ID.findall(text))
        if is_mob is None or "#" not in text:
            self.places.update((int(x), int(y)) for x, y in _PAIR.findall(text))
        else:
            for line in text.splitlines():
                self._read_places(line, is_mob)
        self.words.update(_WORD.findall(text.lower()))
        if numbers:
            self.numbers.update(int(n) for n in _NUM.findall(text))

    def _read_places(self, line: str, is_mob: Any) -> None:
        ids = [(m.end(), m.group(0)) for m in _ID.finditer(line)]
        last_end = 0
        for m in _PAIR.finditer(line):
            place = (int(m.group(1)), int(m.group(2)))
            owner = None
            for end, eid in reversed(ids):  # the id just before it, with no other place between them
                if last_end <= end <= m.start():
                    owner = eid if m.start() - end <= ANCHOR_GAP and is_mob(eid) else None
                    break
            if owner is None:
                self.places.add(place)
            else:
                self.mob_places.setdefault(place, set()).add(owner)
            last_end = m.end()

    def knows_place(self, x: int, y: int, where: Any = None) -> bool:
        """Whether a place within NEAR of (x, y) is known and still true (``where(mob)``: where it is now)."""
        if any(abs(px - x) + abs(py - y) <= NEAR for px, py in self.places):
            return True
        return any(abs(px - x) + abs(py - y) <= NEAR and (where is None or any(_still(where(m), px, py) for m in mobs))
                   for (px, py), mobs in self.mob_places.items())

    def forget(self, numbers: set[int], places: set[tuple[int, int]]) -> None:
        """Drop facts an event made false (learned before it: what is read afterwards counts again)."""
        self.numbers -= numbers
        self.places -= places
        for place in places:
            self.mob_places.pop(place, None)


def _still(now: tuple[int, int] | None, x: int, y: int) -> bool:
    """Whether a mob told or seen at (x, y) is still there: within NEAR of it (knowing a place is knowing the
    tiles round it), and not gone."""
    return now is not None and abs(now[0] - x) + abs(now[1] - y) <= NEAR


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
    # where each mob the agent has read of stood at this turn (roaming, patrolling, spawned by an event; a mob
    # missing is gone); None: the recording did not say (a mob's place then counts as known for good)
    moved: dict[str, tuple[int, int]] | None = None


@dataclass(frozen=True)
class Stale:
    """Facts a world event made false from ``round`` on: numbers and places (a check's old count or place)."""

    round: int
    numbers: frozenset[int] = frozenset()
    places: frozenset[tuple[int, int]] = frozenset()


def _unknown(k: Knowledge, tool: str, args: dict[str, Any], held: dict[str, int],
             where: Any = None) -> list[tuple[str, Any]]:
    """The arguments of one call that ``k`` does not cover (``where(mob)``: where a mob is now)."""
    out: list[tuple[str, Any]] = []
    target = args.get("targetInstance")
    if tool in ("harvest_resource", "attack_entity", "pickup_resource") and target not in k.ids:
        out.append(("targetInstance", target))
    if tool == "move_character":
        try:
            x, y = int(args.get("x")), int(args.get("y"))
        except (TypeError, ValueError):
            return out
        if not k.knows_place(x, y, where):
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
            if not k.knows_place(int(x), int(y), where):
                out.append(("message", f"({x},{y})"))
    return out


class Minds:
    """Every agent's knowledge, fed one turn at a time (so a replay can stop at the first gap). ``stale``: the
    facts the task's events made false, by round; ``placements``: mob id -> its placed tile (which ids are mobs;
    where each stands at a turn is the turn's ``moved``)."""

    def __init__(self, *, without_chat: bool = False, stale: Iterable[Stale] = (),
                 placements: dict[str, tuple[int, int]] | None = None):
        self.without_chat = without_chat
        self.minds: dict[str, Knowledge] = {}
        self.stale = sorted(stale, key=lambda s: s.round)
        self.forgotten: dict[str, int] = {}  # agent -> how many of ``stale`` it has applied
        self.placements = placements if placements is not None else _mob_placements()

    def _is_mob(self, eid: str) -> bool:
        return eid in self.placements or _is_spawned(eid)

    def turn(self, t: TurnSeen) -> list[Gap]:
        """Read what the turn showed its agent, then the gaps of the call it made."""
        k = self.minds.get(t.agent_id)
        if k is None:
            k = self.minds[t.agent_id] = Knowledge()
            k.read(t.system_prompt, numbers=True, is_mob=self._is_mob)
        done = self.forgotten.get(t.agent_id, 0)
        while done < len(self.stale) and self.stale[done].round <= t.round:  # what events made false by now
            k.forget(set(self.stale[done].numbers), set(self.stale[done].places))
            done += 1
        self.forgotten[t.agent_id] = done
        k.read(t.observation_text, numbers=False, is_mob=self._is_mob)
        if not self.without_chat:
            for line in t.chat:
                k.read(line, numbers=True, is_mob=self._is_mob)
        if t.tool is None or (self.without_chat and t.tool in CHAT_TOOLS):
            return []
        where = t.moved.get if t.moved is not None else None
        return [Gap(t.agent_id, t.round, t.tool, arg, value)
                for arg, value in _unknown(k, t.tool, t.args, t.held, where)]


def _is_spawned(eid: str) -> bool:
    """A mob a task's event spawned (its id number is above every placed one; core/world/events.py)."""
    from ..world.events import SPAWN_BASE

    number = eid.rpartition("#")[2]
    return number.isdigit() and int(number) >= SPAWN_BASE


def _mob_placements() -> dict[str, tuple[int, int]]:
    from ..world.datapack import load_world

    return {m.id: (m.x, m.y) for m in load_world().mobs}


def knowledge_gaps(turns: Iterable[TurnSeen], *, without_chat: bool = False, stale: Iterable[Stale] = ()) -> list[Gap]:
    """Every argument a recorded agent used before it could know it (empty: the plan is knowable)."""
    minds = Minds(without_chat=without_chat, stale=stale)
    return [g for t in turns for g in minds.turn(t)]


def fact_handoffs(gaps: list[Gap], silent: list[Gap]) -> int:
    """Step arguments an agent could know only from a teammate's chat: facts handed over by talking.
    ``gaps`` and ``silent`` are ``knowledge_gaps`` of the same turns, with and without chat."""
    with_chat = {(g.agent_id, g.round, g.argument, str(g.value)) for g in gaps}
    return len({(g.agent_id, str(g.value)) for g in silent
                if (g.agent_id, g.round, g.argument, str(g.value)) not in with_chat})
