"""Task-authoring helper: what is near a place in the real world (nodes, mobs, stations, landmarks).

    python tests/data/author_helper.py LANDMARK_OR_X,Y [RADIUS]
    python tests/data/author_helper.py --landmarks

Prints instance ids (for reference solutions), their coordinates and requirements, and walkable tiles
next to a point (for spawns), so task files only name things the world really has.
"""

from __future__ import annotations

import sys

from agentworld.core.world.datapack import load_world


def main(argv: list[str]) -> None:
    w = load_world()
    if not argv or argv[0] == "--landmarks":
        for lm in w.data.landmarks:
            print(f"{lm.key:24} {lm.kind:8} ({lm.x},{lm.y}) r={lm.radius} stations={list(lm.stations)}")
        return
    where = argv[0]
    radius = int(argv[1]) if len(argv) > 1 else 20
    if "," in where:
        x, y = (int(v) for v in where.split(","))
    else:
        lm = w.landmark(where)
        x, y = lm.x, lm.y
    d = lambda a, b: abs(a - x) + abs(b - y)  # noqa: E731
    print(f"around ({x},{y}) r={radius}: biome {w.map.biome_at(x, y)}, walkable {w.map.walkable(x, y)}, "
          f"nearest walkable {w.map.nearest_walkable(x, y)}")
    types = {n.key: n for n in w.data.node_types}
    for n in sorted(w.nodes, key=lambda n: d(n.x, n.y)):
        if d(n.x, n.y) <= radius:
            t = types[n.type]
            print(f"  node {n.id:22} ({n.x},{n.y}) d={d(n.x, n.y):3} {t.skill} {t.level} tool={t.tool} "
                  f"yields={[y.item for y in t.yields]}")
    mtypes = {m.key: m for m in w.data.mob_types}
    for m in sorted(w.mobs, key=lambda m: d(m.x, m.y)):
        if d(m.x, m.y) <= radius:
            t = mtypes[m.type]
            print(f"  mob  {m.id:22} ({m.x},{m.y}) d={d(m.x, m.y):3} lv {t.level} hp {t.hp} aggro {t.aggro_range}")
    for s in w.stations:
        if d(s.x, s.y) <= radius:
            print(f"  station {s.kind:10} ({s.x},{s.y}) d={d(s.x, s.y)} {s.landmark}")


if __name__ == "__main__":
    main(sys.argv[1:])
