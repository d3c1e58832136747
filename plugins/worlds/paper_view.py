"""Reading the paper server's raw observation (tens of KB) into our compact one, and diffing two of them.

The raw observation (``GET /ai/observe``) lists every portal of the map and every mob, resource, player and
ground item in a 64-tile radius; an agent gets only what lies within the view radius, closest first, capped
at ``max_nearby``. Effects of an action are the differences between the observations before and after it
(inventory, equipment, HP, position, mob HP), because the server's answers only say that something started.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from agentworld.core.world.api import InventorySlot
from agentworld.core.world.observation import Entity, InvItem, Observation

# the server's display names of the skills our tasks use (the paper's skill keys are their lower case)
SKILL_NAMES = ("Lumberjacking", "Accuracy", "Archery", "Health", "Magic", "Mining", "Strength", "Defense",
               "Fishing", "Cooking", "Smithing", "Crafting", "Fletching", "Foraging", "Eating", "Loitering")
SKILL_BY_KEY = {s.lower(): s for s in SKILL_NAMES}
INVENTORY_SLOTS = 25


def position(raw: dict[str, Any]) -> tuple[int, int]:
    loc = raw.get("location") or {}
    return int(loc.get("x", 0)), int(loc.get("y", 0))


def hp(raw: dict[str, Any]) -> tuple[int, int]:
    st = raw.get("playerStatus") or {}
    return int(st.get("hitPoints", 0)), int(st.get("maxHitPoints", 0))


def items(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return list((raw.get("inventory") or {}).get("items") or [])


def equipped(raw: dict[str, Any]) -> dict[str, str]:
    return {str(e.get("type")): str(e.get("key")) for e in (raw.get("inventory") or {}).get("equipped") or []}


def counts(raw: dict[str, Any]) -> Counter[str]:
    c: Counter[str] = Counter()
    for it in items(raw):
        c[str(it.get("key"))] += int(it.get("count", 1))
    return c


def inventory_delta(before: dict[str, Any], after: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """(gained, lost) item counts between two observations."""
    a, b = counts(before), counts(after)
    gained = {k: b[k] - a[k] for k in sorted(b) if b[k] > a[k]}
    lost = {k: a[k] - b[k] for k in sorted(a) if a[k] > b[k]}
    return gained, lost


def skills(raw: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """(level, experience) per skill, keyed by the paper's lower-case skill key."""
    rows = (((raw.get("playerStatus") or {}).get("skills") or {}).get("skills")) or []
    levels = {str(r.get("name", "")).lower(): int(r.get("level", 1)) for r in rows if r.get("name")}
    xp = {str(r.get("name", "")).lower(): int(r.get("experience", 0)) for r in rows if r.get("name")}
    return levels, xp


def xp_gained(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    _, a = skills(before)
    _, b = skills(after)
    return {k: b[k] - a.get(k, 0) for k in sorted(b) if b[k] > a.get(k, 0)}


def find(raw: dict[str, Any], kind: str, instance: str) -> dict[str, Any] | None:
    return next((e for e in raw.get(kind) or [] if str(e.get("instance")) == str(instance)), None)


def inventory_slots(raw: dict[str, Any]) -> list[InventorySlot]:
    return [InventorySlot(index=int(i.get("index", n)), item=str(i.get("key")), name=str(i.get("name", i.get("key"))),
                          count=int(i.get("count", 1))) for n, i in enumerate(items(raw))]


def mob_key(name: str) -> str:
    """A mob type key from the server's display name ("Giant Rat" -> "giant_rat")."""
    return "_".join(str(name).lower().split())


def condense(raw: dict[str, Any], *, agent_id: str, username: str, view_radius: int, max_nearby: int,
             player_label: Callable[[str], tuple[str, str] | None]) -> Observation:
    """Our Observation from the raw one. ``player_label(server name)`` gives a teammate's (id, note) or None."""
    x, y = position(raw)
    cur, mx = hp(raw)
    levels, _ = skills(raw)
    st = raw.get("playerStatus") or {}
    loc = raw.get("location") or {}
    nearby: list[Entity] = []

    def add(kind: str, eid: str, name: str, ex: int, ey: int, **extra: Any) -> None:
        d = abs(ex - x) + abs(ey - y)
        if d <= view_radius:
            # validated: the values come from the server's JSON (a level or HP as text is converted, garbage refused)
            nearby.append(Entity.model_validate({"kind": kind, "id": eid, "name": name, "x": ex, "y": ey, "distance": d,
                                                 **extra}))

    for m in raw.get("mobs") or []:
        dead = int(m.get("hitPoints", 1)) <= 0
        add("mob", str(m.get("instance")), str(m.get("name")), int(m["x"]), int(m["y"]), level=m.get("level"),
            hp=m.get("hitPoints"), max_hp=m.get("maxHitPoints"),
            note="dead" if dead else ("aggressive" if m.get("aggressive") else ""))
    for r in raw.get("resources") or []:
        add("resource", str(r.get("instance")), str(r.get("name")), int(r["x"]), int(r["y"]), note=str(r.get("type", "")))
    for g in raw.get("groundItems") or []:
        add("ground_item", str(g.get("instance")), f"{g.get('key')} x{g.get('count', 1)}", int(g["x"]), int(g["y"]))
    for p in raw.get("players") or []:
        label = player_label(str(p.get("name")))
        if label is not None:  # strangers on a shared server are not part of the game
            add("player", label[0], label[0], int(p["x"]), int(p["y"]), level=p.get("level"), note=label[1])
    portals = sorted(raw.get("entries") or [], key=lambda e: abs(e["x"] - x) + abs(e["y"] - y))
    for e in portals:
        dest = e.get("destination") or {}
        name = str(dest.get("name") or f"to ({dest.get('x')},{dest.get('y')})")
        need = int(e.get("levelRequirement") or 0)
        add("portal", f"portal@{e['x']},{e['y']}", name, int(e["x"]), int(e["y"]),
            note=f"stand on it and enter_portal{'; needs level ' + str(need) if need else ''}")
    nearby.sort(key=lambda e: (e.distance, e.kind, e.id))
    if len(nearby) > max_nearby:
        nearby = nearby[:max_nearby]
    if not any(e.kind == "portal" for e in nearby) and portals:  # always show the way out
        e = portals[0]
        dest = e.get("destination") or {}
        nearby.append(Entity(kind="portal", id=f"portal@{e['x']},{e['y']}", name=str(dest.get("name") or "portal"),
                             x=int(e["x"]), y=int(e["y"]), distance=abs(e["x"] - x) + abs(e["y"] - y),
                             note="nearest portal"))
    inv = [InvItem(index=s.index, key=s.item, name=s.name, count=s.count) for s in inventory_slots(raw)]
    return Observation.model_validate(dict(  # validated: the server's values (the rows above are already)
        agent_id=agent_id, username=username, x=x, y=y,
        biome=f"{loc.get('mapName', 'map')} region {loc.get('regionId', '?')}", hp=cur, max_hp=mx, alive=cur > 0,
        combat_level=int(st.get("level", 1)), skills={k: v for k, v in levels.items() if k in SKILL_BY_KEY},
        inventory=inv, inventory_slots=INVENTORY_SLOTS, equipment=equipped(raw), nearby=nearby))
