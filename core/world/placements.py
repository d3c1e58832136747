"""What a generated world places on its map: resource nodes, mob spawns and stations, and the hash that pins them.

Kept apart from ``generate.py`` (which computes them with numpy) because the built-world cache pickles these
values: loading a cached world then imports this small module, not the generator and numpy.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class NodePlacement:
    """Where the generator put a resource node: its instance id, node type and tile."""

    id: str
    type: str
    x: int
    y: int


@dataclass(frozen=True)
class MobPlacement:
    """Where the generator put a mob: its instance id, mob type and tile."""

    id: str
    type: str
    x: int
    y: int


@dataclass(frozen=True)
class StationPlacement:
    """Where the generator put a crafting station: its kind, tile and the landmark it belongs to."""

    kind: str
    x: int
    y: int
    landmark: str


def placements_sha256(nodes, mobs, stations) -> str:
    """Hash of every placement (ids, types, tiles): pins instance ids the way tiles_sha256 pins tiles."""
    h = hashlib.sha256()
    for n in nodes:
        h.update(f"n {n.id} {n.type} {n.x} {n.y}\n".encode())
    for m in mobs:
        h.update(f"m {m.id} {m.type} {m.x} {m.y}\n".encode())
    for s in stations:
        h.update(f"s {s.kind} {s.x} {s.y} {s.landmark}\n".encode())
    return h.hexdigest()
