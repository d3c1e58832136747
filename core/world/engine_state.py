"""Mutable state records of the embedded engine (players, resource nodes, mobs, ground items).

Portal ends are static: ``datapack.PortalEnd``."""

from __future__ import annotations

from dataclasses import dataclass, field

from .observation import ChatMessage
from .inventory import Inventory
from .models import MobTypeDef, NodeTypeDef
from .roaming import Motion
from .spatial import CELL, Cells

__all__ = ["CELL", "MAX_CHAT_SHOWN", "GroundItem", "MobState", "NodeState", "Player", "Roster", "SeenBy", "manhattan",
           "same_equipment"]
MAX_CHAT_SHOWN = 30  # chat messages an observation shows (the last ones since the previous observation; older ones are dropped)


def manhattan(ax: int, ay: int, bx: int, by: int) -> int:
    return abs(ax - bx) + abs(ay - by)


def same_equipment(was: dict, now: dict) -> bool:
    """Whether a copy of a player's equipment (slot -> [item, count]) still matches it, slot order included:
    observations and states show it in slot order, which dict equality ignores."""
    return was == now and (len(now) < 2 or list(was) == list(now))


class SeenBy:
    """What a player's last observation was built from (observe.py), each value beside a copy of what it came
    from: reused while the copy still matches (slots, skill levels and equipment entries change in place)."""

    __slots__ = ("x", "y", "biome", "place", "slots", "inventory", "levels", "max_hp", "combat_level", "equipment",
                 "equipment_names")

    def __init__(self) -> None:
        self.x = self.y = self.slots = self.levels = self.equipment = None  # copies: match nothing yet
        self.biome = self.place = self.inventory = self.max_hp = self.combat_level = self.equipment_names = None


@dataclass(slots=True)
class Player:
    """One agent's character in the embedded world: position, skills, inventory, equipment, health."""

    agent_id: str
    username: str
    order: int  # join order: the fixed order of recipients, tick attacks, snapshots
    x: int
    y: int
    spawn: tuple[int, int]
    hp: int
    xp: dict[str, int]
    levels: dict[str, int]
    inv: Inventory
    equipment: dict[str, list]  # slot -> [item_key, count] (count > 1 only for ammo)
    alive: bool = True
    active: bool = True
    left_reason: str = ""
    kills: dict[str, int] = field(default_factory=dict)
    crafted: dict[str, int] = field(default_factory=dict)
    mailbox: list[ChatMessage] = field(default_factory=list)
    chat_dropped: int = 0
    chat_read: int = 0  # how far along the world's broadcast log the mailbox is filled (engine._take_broadcasts)
    notes: list[str] = field(default_factory=list)  # world messages for the next observation
    # the rest of the last long move: a repeated move_character to the same goal from where the last one
    # stopped continues along it instead of searching the map again (tiles never change walkability)
    route_goal: tuple[int, int] | None = None
    route_at: tuple[int, int] | None = None
    route_rest: list[tuple[int, int]] = field(default_factory=list)

    # the engine's index of players by tile, told about every change of x or y (however it is made)
    cells: "Cells | None" = field(default=None, repr=False, compare=False)
    # the engine's roster, told about every change of alive or active (however it is made)
    roster: "Roster | None" = field(default=None, repr=False, compare=False)
    # what its last observation was built from, reused while it holds (observe.py; only the engine sets it)
    seen: SeenBy | None = field(default=None, repr=False, compare=False)
    # the Nearby rows showing it to others, by distance, while it stands on the tile they were made for (observe.py)
    shown: list | None = field(default=None, repr=False, compare=False)

    def place(self, x: int, y: int) -> None:
        """Stand on (x, y): both coordinates, then the index told once (setting x and y in turn tells it twice,
        the first time with a tile half old and half new)."""
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        if self.cells is not None:
            self.cells.put(self.agent_id, self)

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        if name in ("x", "y", "cells"):
            cells = getattr(self, "cells", None)  # not set yet while the dataclass __init__ runs
            if cells is not None:
                cells.put(self.agent_id, self)
        elif name in ("alive", "active"):
            roster = getattr(self, "roster", None)
            if roster is not None:
                roster.version += 1


class Roster:
    """A number that changes whenever a player joins, leaves play or comes back (its ``alive`` or ``active``
    flag is set): what the engine works out from who is in play (chat's recipients) is kept until it does."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = 0


@dataclass(slots=True)
class NodeState:
    """A resource node (tree, rock, fishing spot) as the episode changes it: gathers left, respawn."""

    id: str
    type: NodeTypeDef
    x: int
    y: int
    left: int  # gathers left before depletion
    respawn_at: int | None = None  # round from which it is available again (None: available)
    total: int | None = None  # a finite node (scarcity.py): items it can still give, never regrown (None: not finite)
    shown: dict | None = field(default=None, repr=False, compare=False)  # its Nearby rows by distance (observe.py)


@dataclass(slots=True)
class MobState:
    """A mob as the episode changes it: position, hit points, respawn."""

    id: str
    type: MobTypeDef
    x: int
    y: int
    hp: int
    respawn_at: int | None = None  # None: alive
    motion: "Motion | None" = field(default=None, repr=False, compare=False)  # how it moves (roaming.py; None: it stays)
    at: int = 1  # the round its x, y are for (a moving mob is caught up when read: roaming.advance)
    leg: int = 0  # a patrolling mob's index along its loop
    shown: list | None = field(default=None, repr=False, compare=False)  # [hp, its Nearby rows by distance] (observe.py)


@dataclass(slots=True)
class GroundItem:
    """A stack of items lying on a tile (dropped or looted), until someone picks it up."""

    id: str
    item: str
    count: int
    x: int
    y: int
