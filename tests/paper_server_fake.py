"""A fake of the paper's game server API (``/ai/*``), for contract tests. Test code, not a product feature.

Written from ``shared/reference/agentworld-server-api.md`` only (no Kaetram code or data): a small in-memory
real-time game served over plain HTTP on 127.0.0.1. It keeps the quirks a backend must cope with:

- ``move`` only starts walking (the character advances ``tiles_per_s`` tiles a second);
- ``collect`` starts gathering that goes on until the node is depleted (one item per ``gather_s``);
- ``attack`` starts a fight that goes on in real time (one exchange per ``combat_s``); a dead mob stays in
  the observation with ``hitPoints: 0`` for ``corpse_s`` and its loot lands on the ground;
- aggressive mobs hit players standing next to them between turns;
- the chat log is global (every character's messages, not scoped to one episode);
- 400 bodies carry the structured details of the reference page, 401 means a bad token, and a test can
  inject 500s (``fail_next``) or stop the server and start it again on the same port (``stop``/``start``).

The server stops by itself after ``lifetime_s`` (a forgotten fixture cannot leave it running).
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

SKILLS = ("Lumberjacking", "Accuracy", "Archery", "Health", "Magic", "Mining", "Strength", "Defense", "Fishing",
          "Cooking", "Smithing", "Crafting", "Fletching", "Foraging", "Eating", "Loitering")
COMBAT_SKILLS = ("Accuracy", "Archery", "Health", "Magic", "Strength", "Defense")
SLOTS = ("weapon", "helmet", "pendant", "arrows", "chestplate", "shield", "ring", "legplates", "cape", "boots")
INVENTORY_SLOTS = 25
MAX_MOVE = 120


class Refused(Exception):
    """A game-logic refusal: HTTP 400 with ``message`` and structured details."""

    def __init__(self, message: str, status: int = 400, **details: Any):
        super().__init__(message)
        self.status = status
        self.body = {"status": "error", "message": message, **details}


# ----------------------------------------------------------------------------------------------- content
ITEMS: dict[str, dict[str, Any]] = {
    # key: name, edible heal, equipment type, requirements (skill -> level), tool kind
    "logs": {"name": "Logs"}, "stick": {"name": "Stick"}, "bead": {"name": "Bead"},
    "ironore": {"name": "Iron Ore"}, "coal": {"name": "Coal"}, "ironbar": {"name": "Iron Bar"},
    "shrimp": {"name": "Raw Shrimp"}, "cookedshrimp": {"name": "Cooked Shrimp", "heal": 12},
    "apple": {"name": "Apple", "heal": 5}, "flask": {"name": "Flask", "heal": 20},
    "bone": {"name": "Bone"}, "ratfur": {"name": "Rat Fur"}, "blueberry": {"name": "Blueberry", "heal": 3},
    "axe": {"name": "Axe", "slot": "weapon", "tool": "axe"},
    "pickaxe": {"name": "Pickaxe", "slot": "weapon", "tool": "pickaxe"},
    "fishingpole": {"name": "Fishing Pole", "slot": "weapon", "tool": "fishing"},
    "knife": {"name": "Knife", "tool": "knife"},
    "sword": {"name": "Sword", "slot": "weapon", "attack": 4},
    "heavysword": {"name": "Heavy Sword", "slot": "weapon", "attack": 9, "twohanded": True,
                   "requires": {"Strength": 20}},
    "staff": {"name": "Staff", "slot": "weapon", "attack": 3, "range": 6},
    "woodenbow": {"name": "Wooden Bow", "slot": "weapon", "attack": 3, "range": 8},
    "leatherarmor": {"name": "Leather Armor", "slot": "chestplate"},
    "leatherboots": {"name": "Leather Boots", "slot": "boots"},
    "woodenshield": {"name": "Wooden Shield", "slot": "shield"},
}
RECIPES: dict[tuple[str, str], dict[str, Any]] = {
    ("Fletching", "stick"): {"materials": {"logs": 1}, "level": 1, "tool": "knife", "yield": 2},
    ("Crafting", "staff"): {"materials": {"stick": 3, "bead": 1}, "level": 5},
    ("Smelting", "ironbar"): {"materials": {"ironore": 1, "coal": 1}, "level": 1},
    ("Cooking", "cookedshrimp"): {"materials": {"shrimp": 1}, "level": 1},
    ("Smithing", "sword"): {"materials": {"ironbar": 2}, "level": 10},
    ("Alchemy", "flask"): {"materials": {"blueberry": 2}, "level": 1, "quest": "Herbalist's Request"},
}
RESOURCE_KINDS = {  # type: (skill, tool, item)
    "tree": ("Lumberjacking", "axe", "logs"), "rock": ("Mining", "pickaxe", "ironore"),
    "fishing": ("Fishing", "fishing", "shrimp"), "plant": ("Foraging", None, "blueberry"),
}


@dataclass
class Resource:
    instance: str
    type: str
    name: str
    x: int
    y: int
    level: int = 1
    amount: int = 3
    left: int = 3
    back_at: float | None = None  # depleted until then


@dataclass
class Mob:
    instance: str
    name: str
    level: int
    x: int
    y: int
    max_hp: int
    damage: int
    drops: dict[str, int]
    aggressive: bool = False
    hp: int = 0
    died_at: float | None = None

    def __post_init__(self) -> None:
        self.hp = self.hp or self.max_hp


@dataclass
class Player:
    username: str
    password: str
    x: int = 50
    y: int = 50
    token: str | None = None
    hp: int = 69
    max_hp: int = 69
    mana: int = 20
    max_mana: int = 20
    levels: dict[str, int] = field(default_factory=lambda: {s: 1 for s in SKILLS})
    xp: dict[str, int] = field(default_factory=lambda: {s: 0 for s in SKILLS})
    slots: list[list[Any] | None] = field(default_factory=lambda: [None] * INVENTORY_SLOTS)  # [key, count, ench]
    equipped: dict[str, list[Any]] = field(default_factory=dict)  # slot -> [key, count, enchantments]
    path: list[tuple[int, int]] = field(default_factory=list)
    step_due: float = 0.0
    gathering: str | None = None
    gather_due: float = 0.0
    fighting: str | None = None
    fight_due: float = 0.0
    craft_ready: float = 0.0
    poisoned: bool = False
    hit_due: float = 0.0  # next time an aggressive mob may hit this player

    @property
    def alive(self) -> bool:
        return self.hp > 0

    def count(self, key: str) -> int:
        return sum(s[1] for s in self.slots if s and s[0] == key)

    def add(self, key: str, count: int) -> int:
        """Add up to ``count`` (stacks of one key share a slot); returns how many fitted."""
        for s in self.slots:
            if s and s[0] == key:
                s[1] += count
                return count
        for i, s in enumerate(self.slots):
            if s is None:
                self.slots[i] = [key, count, {}]
                return count
        return 0

    def remove(self, key: str, count: int) -> None:
        for i, s in enumerate(self.slots):
            if s and s[0] == key and count:
                take = min(count, s[1])
                s[1] -= take
                count -= take
                if s[1] == 0:
                    self.slots[i] = None


class FakeGame:
    """The game state and its real-time rules; every method runs under the server's lock."""

    def __init__(self, *, tiles_per_s: float = 200.0, gather_s: float = 0.03, combat_s: float = 0.02,
                 corpse_s: float = 0.4, respawn_s: float = 30.0, craft_cooldown_s: float = 0.0,
                 width: int = 160, height: int = 120):
        self.tiles_per_s, self.gather_s, self.combat_s = tiles_per_s, gather_s, combat_s
        self.corpse_s, self.respawn_s, self.craft_cooldown_s = corpse_s, respawn_s, craft_cooldown_s
        self.width, self.height = width, height
        self.collisions: set[tuple[int, int]] = {(x, 60) for x in range(30, 70)} | {(80, 80), (81, 80)}
        self.players: dict[str, Player] = {}
        self.tokens: dict[str, str] = {}
        self.resources = {r.instance: r for r in [
            Resource("61889701", "tree", "Oak Tree", 52, 40, amount=3, left=3),
            Resource("61889702", "tree", "Oak Tree", 55, 41, amount=2, left=2),
            Resource("61889703", "tree", "Willow Tree", 58, 44, level=30, amount=2, left=2),
            Resource("61889801", "rock", "Iron Rock", 90, 50, amount=2, left=2),
            Resource("61889901", "fishing", "Shrimp Spot", 20, 20, amount=3, left=3),
            Resource("61890001", "plant", "Blueberry Bush", 48, 70, amount=2, left=2),
        ]}
        self.mobs = {m.instance: m for m in [
            Mob("4001", "Rat", 2, 60, 52, max_hp=12, damage=1, drops={"ratfur": 1, "bone": 1}),
            Mob("4002", "Rat", 2, 63, 53, max_hp=12, damage=1, drops={"ratfur": 1}),
            Mob("4003", "Ogre", 40, 120, 100, max_hp=400, damage=30, drops={"bone": 3}),
            Mob("4004", "Snake", 6, 100, 30, max_hp=20, damage=4, drops={"bone": 1}, aggressive=True),
        ]}
        self.entries = [
            {"x": 70, "y": 45, "destination": {"x": 140, "y": 20, "name": "Cave"}, "levelRequirement": 0},
            {"x": 72, "y": 45, "destination": {"x": 150, "y": 110, "name": "Tower"}, "levelRequirement": 50},
        ]
        self.ground: dict[str, dict[str, Any]] = {}
        self._ground_seq = 9000
        self.chat_log: list[dict[str, Any]] = []

    def restart(self) -> None:
        """What a restarted game server holds: the map's resources and mobs are back, nothing lies on the
        ground, and nobody is mid-walk, mid-gather or mid-fight; accounts, inventories and positions are kept.
        (Without it a resumed run raced the 0.2 s respawn of a tree the killed run had just cut.)"""
        for r in self.resources.values():
            r.back_at, r.left = None, r.amount
        for m in self.mobs.values():
            m.died_at, m.hp = None, m.max_hp
        self.ground.clear()
        for p in self.players.values():
            p.path, p.gathering, p.fighting = [], None, None

    # -- time ----------------------------------------------------------------------------------------
    def advance(self, now: float) -> None:
        for r in self.resources.values():
            if r.back_at is not None and now >= r.back_at:
                r.back_at, r.left = None, r.amount
        for m in self.mobs.values():
            if m.died_at is not None and now >= m.died_at + self.respawn_s:
                m.died_at, m.hp = None, m.max_hp
        for p in self.players.values():
            if not p.alive:
                p.path, p.gathering, p.fighting = [], None, None
                continue
            while p.path and now >= p.step_due:
                p.x, p.y = p.path.pop(0)
                p.step_due += 1.0 / self.tiles_per_s
                p.gathering = None  # walking away ends gathering
            if p.gathering:
                self._gather(p, now)
            if p.fighting:
                self._fight(p, now)
            self._aggro(p, now)

    def _gather(self, p: Player, now: float) -> None:
        r = self.resources.get(p.gathering or "")
        while r is not None and p.gathering and now >= p.gather_due:
            if r.back_at is not None or r.left <= 0:
                p.gathering = None
                return
            item = RESOURCE_KINDS[r.type][2]
            if not p.add(item, 1):
                p.gathering = None  # inventory full
                return
            r.left -= 1
            skill = RESOURCE_KINDS[r.type][0]
            p.xp[skill] += 25
            p.gather_due += self.gather_s
            if r.left <= 0:
                r.back_at = now + self.respawn_s
                p.gathering = None

    def _fight(self, p: Player, now: float) -> None:
        m = self.mobs.get(p.fighting or "")
        while m is not None and p.fighting and now >= p.fight_due and p.alive:
            if m.died_at is not None:
                p.fighting = None
                return
            p.fight_due += self.combat_s
            if _dist(p.x, p.y, m.x, m.y) > self._weapon_range(p):
                continue  # out of range: the fight waits (the fake's characters do not chase)
            m.hp = max(0, m.hp - self._damage(p))
            p.xp["Strength"] += 10
            if m.hp == 0:
                m.died_at = now
                p.fighting = None
                for key, n in m.drops.items():
                    self._ground_seq += 1
                    gid = str(self._ground_seq)
                    self.ground[gid] = {"instance": gid, "key": key, "name": ITEMS[key]["name"], "count": n,
                                        "x": m.x, "y": m.y}
                return
            p.hp = max(0, p.hp - max(0, m.damage - p.levels["Defense"] // 10))

    def _aggro(self, p: Player, now: float) -> None:
        for m in self.mobs.values():
            if m.aggressive and m.died_at is None and _dist(p.x, p.y, m.x, m.y) <= 1 and now >= p.hit_due:
                p.hp = max(0, p.hp - m.damage)
                p.hit_due = now + 10 * self.combat_s

    def _damage(self, p: Player) -> int:
        w = p.equipped.get("weapon")
        return 2 + p.levels["Strength"] // 5 + (ITEMS[w[0]].get("attack", 0) if w else 0)

    @staticmethod
    def _weapon_range(p: Player) -> int:
        w = p.equipped.get("weapon")
        return ITEMS[w[0]].get("range", 1) if w else 1

    # -- helpers ---------------------------------------------------------------------------------------
    def player(self, token: str | None) -> Player:
        name = self.tokens.get(token or "")
        if name is None:
            raise Refused("Invalid or expired token", status=401)
        return self.players[name]

    def walkable(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height and (x, y) not in self.collisions

    def _alive(self, p: Player) -> None:
        if not p.alive:
            raise Refused("You are dead")

    def has_tool(self, p: Player, kind: str) -> bool:
        keys = [s[0] for s in p.slots if s] + [e[0] for e in p.equipped.values()]
        return any(ITEMS.get(k, {}).get("tool") == kind for k in keys)

    # -- session ---------------------------------------------------------------------------------------
    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        name, pw = str(body.get("username") or ""), str(body.get("password") or "")
        if not name or not pw:
            raise Refused("username and password are required")
        if len(name) > 32:
            raise Refused("Username is too long (max 32 characters)")
        if name in self.players:
            raise Refused("Username already exists")
        p = self.players[name] = Player(name, pw)
        return {"token": self._login(p), "message": f"Created {name}"}

    def login(self, body: dict[str, Any]) -> dict[str, Any]:
        p = self.players.get(str(body.get("username")))
        if p is None or p.password != body.get("password"):
            raise Refused("Invalid username or password")
        if p.token is not None and not body.get("force"):
            raise Refused("Player is already logged in")
        return {"token": self._login(p)}

    def _login(self, p: Player) -> str:
        if p.token:
            self.tokens.pop(p.token, None)
        p.token = secrets.token_hex(12)
        self.tokens[p.token] = p.username
        return p.token

    def logout(self, p: Player) -> dict[str, Any]:
        self.tokens.pop(p.token or "", None)
        p.token, p.path, p.gathering, p.fighting = None, [], None, None
        return {"message": "Logged out"}

    # -- observation ---------------------------------------------------------------------------------
    def observe(self, p: Player, radius: int) -> dict[str, Any]:
        def near(x: int, y: int) -> bool:
            return _dist(p.x, p.y, x, y) <= radius

        def d(x: int, y: int) -> int:
            return _dist(p.x, p.y, x, y)

        now = time.monotonic()
        mobs = [{"instance": m.instance, "name": m.name, "level": m.level, "x": m.x, "y": m.y, "hitPoints": m.hp,
                 "maxHitPoints": m.max_hp, "aggressive": m.aggressive, "distanceFrom": d(m.x, m.y), "type": "mob"}
                for m in self.mobs.values()
                if near(m.x, m.y) and (m.died_at is None or now < m.died_at + self.corpse_s)]
        resources = [{"instance": r.instance, "type": r.type, "name": r.name, "x": r.x, "y": r.y,
                      "distanceFrom": d(r.x, r.y)}
                     for r in self.resources.values() if r.back_at is None and near(r.x, r.y)]
        players = [{"instance": q.username, "name": q.username, "level": _combat_level(q), "x": q.x, "y": q.y,
                    "rank": "player", "distanceFrom": d(q.x, q.y)}
                   for q in self.players.values() if q is not p and q.token and near(q.x, q.y)]
        ground = [{**g, "distanceFrom": d(g["x"], g["y"])} for g in self.ground.values() if near(g["x"], g["y"])]
        return {
            "status": "success",
            "location": {"x": p.x, "y": p.y, "regionId": (p.x // 32) + (p.y // 32) * 8, "mapName": "fakeland"},
            "map": {"name": "fakeland", "width": self.width, "height": self.height, "tileSize": 16, "version": 3},
            "entries": [{**e, "distanceFrom": d(e["x"], e["y"])} for e in self.entries],
            "mobs": mobs, "resources": resources, "players": players, "groundItems": ground,
            "inventory": {
                "items": [{"index": i, "key": s[0], "name": ITEMS[s[0]]["name"], "count": s[1],
                           "edible": "heal" in ITEMS[s[0]], "equippable": "slot" in ITEMS[s[0]],
                           "description": ITEMS[s[0]]["name"]} for i, s in enumerate(p.slots) if s],
                "equipped": [{"type": slot, "key": e[0], "count": e[1], "enchantments": e[2], "attackStyle": "melee"}
                             for slot, e in p.equipped.items()]},
            "playerStatus": {
                "name": p.username, "level": _combat_level(p), "experience": sum(p.xp.values()),
                "hitPoints": p.hp, "maxHitPoints": p.max_hp, "mana": p.mana, "maxMana": p.max_mana,
                "orientation": "down", "combat": p.fighting is not None, "moving": bool(p.path),
                "poisoned": p.poisoned,
                "skills": {"skills": [{"type": i, "name": s, "level": p.levels[s], "experience": p.xp[s]}
                                      for i, s in enumerate(SKILLS)]}},
            "collisions": [{"x": x, "y": y} for x, y in sorted(self.collisions) if near(x, y)],
            "observationRadius": radius,
        }

    # -- actions ---------------------------------------------------------------------------------------
    def move(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        x, y = _int(body, "x"), _int(body, "y")
        dist = _dist(p.x, p.y, x, y)
        if dist > MAX_MOVE:
            raise Refused("Target is too far away", currentPosition={"x": p.x, "y": p.y},
                          targetPosition={"x": x, "y": y}, distance=dist, maxDistance=MAX_MOVE)
        if not self.walkable(x, y):
            raise Refused("Target position is not walkable", targetPosition={"x": x, "y": y})
        path, cx, cy = [], p.x, p.y
        while (cx, cy) != (x, y):  # x first, then y: the fake ignores obstacles on the way
            cx += (x > cx) - (x < cx) if cx != x else 0
            if cx == x:
                cy += (y > cy) - (y < cy)
            path.append((cx, cy))
        p.path, p.step_due, p.gathering, p.fighting = path, time.monotonic() + 1.0 / self.tiles_per_s, None, None
        return {"startPosition": {"x": p.x, "y": p.y}, "targetPosition": {"x": x, "y": y}}

    def enter(self, p: Player) -> dict[str, Any]:
        self._alive(p)
        e = next((e for e in self.entries if (e["x"], e["y"]) == (p.x, p.y)), None)
        if e is None:
            raise Refused("No portal or door at your position", position={"x": p.x, "y": p.y})
        if _combat_level(p) < e["levelRequirement"]:
            raise Refused(f"You need level {e['levelRequirement']} to enter", levelRequirement=e["levelRequirement"],
                          currentLevel=_combat_level(p))
        prev = {"x": p.x, "y": p.y}
        p.x, p.y, p.path = e["destination"]["x"], e["destination"]["y"], []
        return {"previousPosition": prev, "destination": e["destination"]}

    def stop(self, p: Player) -> dict[str, Any]:
        out = {"movement": bool(p.path), "combat": p.fighting is not None}
        p.path, p.fighting, p.gathering = [], None, None
        return {"stopped": out}

    def equip(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        i = _int(body, "index")
        if not 0 <= i < INVENTORY_SLOTS or p.slots[i] is None:
            raise Refused(f"No item in inventory slot {i}", index=i)
        key = p.slots[i][0]
        item = ITEMS[key]
        if "heal" in item:  # using food eats it
            p.remove(key, 1)
            before = p.hp
            p.hp = min(p.max_hp, p.hp + item["heal"])
            return {"item": {"key": key, "name": item["name"], "equipmentType": None}, "healed": p.hp - before}
        if "slot" not in item:
            raise Refused(f"{item['name']} cannot be equipped", key=key)
        for skill, lv in item.get("requires", {}).items():
            if p.levels[skill] < lv:
                raise Refused(f"You need {skill} level {lv} to equip {item['name']}", requiredLevel=lv,
                              currentLevel=p.levels[skill], skill=skill)
        slot = item["slot"]
        p.slots[i] = None
        old = p.equipped.pop(slot, None)
        if old:
            p.add(old[0], old[1])
        p.equipped[slot] = [key, 1, {}]
        return {"item": {"key": key, "name": item["name"], "equipmentType": slot}}

    def collect(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        r = self.resources.get(str(body.get("targetInstance")))
        if r is None or r.back_at is not None:
            raise Refused("Resource not found or depleted", targetInstance=body.get("targetInstance"))
        dist = _dist(p.x, p.y, r.x, r.y)
        if dist > 2:
            raise Refused("You are too far from the resource", distance=dist, maxDistance=2)
        skill, tool, _ = RESOURCE_KINDS[r.type]
        if tool and not self.has_tool(p, tool):
            raise Refused(f"You need a {tool} to gather {r.name}", requiredTool=tool)
        if p.levels[skill] < r.level:
            raise Refused(f"You need {skill} level {r.level}", requiredLevel=r.level, currentLevel=p.levels[skill])
        p.gathering, p.gather_due, p.path = r.instance, time.monotonic() + self.gather_s, []
        return {"resource": {"instance": r.instance, "type": r.type, "name": r.name, "x": r.x, "y": r.y,
                             "distance": dist}}

    def pickup(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        g = self.ground.get(str(body.get("targetInstance")))
        if g is None:
            raise Refused("Item not found on the ground", targetInstance=body.get("targetInstance"))
        if _dist(p.x, p.y, g["x"], g["y"]) > 1:
            raise Refused("You are too far from the item", distance=_dist(p.x, p.y, g["x"], g["y"]), maxDistance=1)
        if not p.add(g["key"], g["count"]):
            raise Refused("Your inventory is full")
        del self.ground[g["instance"]]
        return {"item": {"key": g["key"], "name": g["name"], "count": g["count"]}}

    def craft(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        kind, key, count = body.get("type"), str(body.get("itemKey")), body.get("count", 1)
        if kind not in ("Smithing", "Cooking", "Crafting", "Alchemy", "Smelting", "Fletching", "Chiseling"):
            raise Refused(f"Unknown crafting type {kind!r}")
        if count not in (1, 5, 10):
            raise Refused("count must be 1, 5 or 10", count=count)
        rec = RECIPES.get((kind, key))
        if rec is None:
            raise Refused(f"No {kind} recipe for {key}", itemKey=key)
        if rec.get("quest"):
            raise Refused(f"You must finish the quest {rec['quest']} first", quest=rec["quest"])
        skill = "Smithing" if kind == "Smelting" else kind
        if skill in p.levels and p.levels[skill] < rec["level"]:
            raise Refused(f"You need {skill} level {rec['level']}", requiredLevel=rec["level"],
                          currentLevel=p.levels[skill])
        now = time.monotonic()
        if now < p.craft_ready:
            raise Refused("You must wait before crafting again", cooldown=round((p.craft_ready - now) * 1000))
        if rec.get("tool") and not self.has_tool(p, rec["tool"]):
            raise Refused(f"You need a {rec['tool']}", requiredTool=rec["tool"])
        missing = [{"key": k, "name": ITEMS[k]["name"], "required": n * count, "available": p.count(k),
                    "missing": n * count - p.count(k)} for k, n in rec["materials"].items() if p.count(k) < n * count]
        if missing:
            raise Refused("Missing materials", missingMaterials=missing)
        for k, n in rec["materials"].items():
            p.remove(k, n * count)
        made = rec.get("yield", 1) * count
        p.add(key, made)
        if skill in p.xp:
            p.xp[skill] += 30 * count
        p.craft_ready = now + self.craft_cooldown_s
        return {"details": {"itemKey": key, "count": made, "type": kind}}

    def attack(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        self._alive(p)
        m = self.mobs.get(str(body.get("targetInstance")))
        if m is None or m.died_at is not None:
            raise Refused("Target not found", targetInstance=body.get("targetInstance"))
        p.fighting, p.fight_due, p.gathering = m.instance, time.monotonic(), None
        return {"target": {"instance": m.instance, "name": m.name, "hitPoints": m.hp}}

    def chat(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        msg = str(body.get("message") or "")
        if not msg:
            raise Refused("message is required")
        self.chat_log.append({"timestamp": int(time.time() * 1000), "player": p.username, "message": msg})
        return {"message": "Message sent"}

    # -- setup endpoints -------------------------------------------------------------------------------
    def teleport(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        x, y = _int(body, "x"), _int(body, "y")
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise Refused(f"Position ({x},{y}) is outside the map", mapWidth=self.width, mapHeight=self.height)
        prev = {"x": p.x, "y": p.y}
        p.x, p.y, p.path, p.fighting, p.gathering = x, y, [], None, None
        return {"previousPosition": prev, "newPosition": {"x": x, "y": y}}

    def set_status(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        if "maxHitPoints" in body:
            p.max_hp = _clamp(_int(body, "maxHitPoints"), 1, 9999)
        if "hitPoints" in body:
            p.hp = _clamp(_int(body, "hitPoints"), 0, p.max_hp)
        if "maxMana" in body:
            p.max_mana = _clamp(_int(body, "maxMana"), 0, 9999)
        if "mana" in body:
            p.mana = _clamp(_int(body, "mana"), 0, p.max_mana)
        if "poison" in body:
            p.poisoned = bool(body["poison"])
        return {"playerStatus": {"hitPoints": p.hp, "maxHitPoints": p.max_hp, "mana": p.mana}}

    def set_inventory(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        target = p
        if body.get("targetPlayer"):
            target = self.players.get(str(body["targetPlayer"]))  # type: ignore[assignment]
            if target is None:
                raise Refused(f"Player {body['targetPlayer']} not found")
        clear = body.get("clearFirst", True)
        if clear:
            target.slots = [None] * INVENTORY_SLOTS
        added, failed = [], []
        for it in body.get("items") or []:
            key, count = str(it.get("key")), int(it.get("count", 1))
            if key not in ITEMS:
                failed.append({"key": key, "reason": "Item does not exist"})
            elif not target.add(key, count):
                failed.append({"key": key, "reason": "Inventory is full"})
            else:
                added.append({"key": key, "count": count})
        return {"results": {"addedItems": added, "failedItems": failed, "clearedFirst": bool(clear)}}

    def set_equipment(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        eq = body.get("equipment") or {}
        if body.get("clearFirst", True):
            p.equipped = {}
        done, failed = [], []
        for slot, spec in eq.items():
            key = str((spec or {}).get("key"))
            item = ITEMS.get(key)
            if slot not in SLOTS:
                failed.append({"slot": slot, "key": key, "reason": f"Unknown slot (slots: {', '.join(SLOTS)})"})
            elif item is None:
                failed.append({"slot": slot, "key": key, "reason": "Item does not exist"})
            elif item.get("slot") != slot:
                failed.append({"slot": slot, "key": key, "reason": f"{item['name']} does not go in {slot}"})
            elif any(p.levels[s] < lv for s, lv in item.get("requires", {}).items()):
                failed.append({"slot": slot, "key": key, "reason": "Requirements not met"})
            else:
                p.equipped[slot] = [key, int(spec.get("count", 1)), spec.get("enchantments") or {}]
                done.append({"slot": slot, "key": key})
        w = p.equipped.get("weapon")
        if w and ITEMS[w[0]].get("twohanded") and "shield" in p.equipped:
            failed.append({"slot": "shield", "key": p.equipped.pop("shield")[0],
                           "reason": "Two-handed weapons cannot be used with a shield"})
        return {"results": {"equipped": done, "failed": failed}}

    def set_combat_level(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        lv = _int(body, "level")
        if not 1 <= lv <= 120:
            raise Refused("level must be between 1 and 120", level=lv)
        for s in COMBAT_SKILLS:
            p.levels[s] = lv
        return {"level": lv}

    def set_skill_level(self, p: Player, body: dict[str, Any]) -> dict[str, Any]:
        skill, lv = body.get("skill"), _int(body, "level")
        if skill not in SKILLS:
            raise Refused(f"Unknown skill {skill!r}", skills=list(SKILLS))
        if not 1 <= lv <= 120:
            raise Refused("level must be between 1 and 120", level=lv)
        p.levels[skill] = lv
        if skill == "Health":
            p.max_hp = p.hp = 50 + 10 * lv
        return {"skill": skill, "level": lv}


def _dist(x1: int, y1: int, x2: int, y2: int) -> int:
    return abs(x1 - x2) + abs(y1 - y2)


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def _int(body: dict[str, Any], key: str) -> int:
    try:
        return int(body[key])
    except (KeyError, TypeError, ValueError):
        raise Refused(f"{key} must be an integer") from None


def _combat_level(p: Player) -> int:
    return max(1, sum(p.levels[s] for s in COMBAT_SKILLS) // len(COMBAT_SKILLS))


# ------------------------------------------------------------------------------------------------ HTTP
POST_ROUTES = {
    "/ai/move": "move", "/ai/enter": "enter", "/ai/stop": "stop", "/ai/equip": "equip",
    "/ai/collect": "collect", "/ai/pickup": "pickup", "/ai/craft": "craft", "/ai/attack": "attack",
    "/ai/chat": "chat", "/ai/teleport": "teleport", "/ai/setPlayerStatus": "set_status",
    "/ai/setInventory": "set_inventory", "/ai/setEquipments": "set_equipment",
    "/ai/setCombatLevel": "set_combat_level", "/ai/setSkillLevel": "set_skill_level", "/ai/logout": "logout",
}
NO_BODY = {"enter", "stop", "logout"}


class FakePaperServer:
    """Serves a :class:`FakeGame` on 127.0.0.1. ``with FakePaperServer() as srv: srv.url``."""

    def __init__(self, game: FakeGame | None = None, *, port: int = 0, lifetime_s: float = 120.0):
        self.game = game or FakeGame()
        self.lock = threading.Lock()
        self.port = port
        self.lifetime_s = lifetime_s
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, for assertions
        self._fail: list[tuple[int, str | None]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._conns: set[socket.socket] = set()  # open keep-alive connections (a stopped server drops them)
        self._stop_after: str | None = None
        self._stopping: threading.Thread | None = None
        self._stop_due = False
        self._started = False  # a later start() is a restart: the game's world comes back as a server's would

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop_after(self, path: str) -> None:
        """Stop serving (as if killed) right after answering the next request to ``path``."""
        self._stop_after = path

    def fail_next(self, count: int = 1, status: int = 500, path: str | None = None) -> None:
        """The next ``count`` requests (to ``path`` when given) answer ``status`` without touching the game."""
        with self.lock:
            self._fail += [(status, path)] * count

    def start(self) -> "FakePaperServer":
        if self._stopping is not None:  # a stop_after stop still under way: let it finish first
            self._stopping.join(timeout=10)
            self._stopping = None
        if self._started:
            with self.lock:
                self.game.restart()
        self._started = True
        handler = _make_handler(self)
        ThreadingHTTPServer.allow_reuse_address = True
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name=f"fake-paper-server:{self.port}")
        self._thread.start()
        if self._timer is None:
            self._timer = threading.Timer(self.lifetime_s, self.stop)
            self._timer.daemon = True
            self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving (the game state is kept: ``start()`` serves it again on the same port)."""
        # take what this stop ends before anything else: a stop_after stop runs in its own thread, and a
        # start() that follows must not have its new server's thread or connections ended by it
        httpd, self._httpd = self._httpd, None
        thread, self._thread = self._thread, None
        conns = list(self._conns)
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        for conn in conns:  # like a killed process: clients see their connections reset
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if thread is not None:
            thread.join(timeout=5)

    def close(self) -> None:
        self.stop()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __enter__(self) -> "FakePaperServer":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- dispatch --------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, query: dict[str, str], body: dict[str, Any]) -> tuple[int, dict]:
        with self.lock:
            self.requests.append((method, path))
            for i, (status, only) in enumerate(self._fail):
                if only is None or only == path:
                    del self._fail[i]
                    return status, {"status": "error", "message": "Internal server error"}
            g = self.game
            g.advance(time.monotonic())
            try:
                if method == "POST" and path == "/ai/create":
                    out = g.create(body)
                elif method == "POST" and path == "/ai/login":
                    out = g.login(body)
                elif method == "GET" and path == "/ai/observe":
                    out = g.observe(g.player(query.get("token")), int(query.get("radius", 64)))
                elif method == "GET" and path == "/ai/chat":
                    g.player(query.get("token"))
                    out = {"messages": list(g.chat_log[-200:])}
                elif method == "POST" and path in POST_ROUTES:
                    name = POST_ROUTES[path]
                    p = g.player(body.get("token"))
                    fn = getattr(g, name)
                    out = fn(p) if name in NO_BODY else fn(p, body)
                else:
                    return 404, {"status": "error", "message": f"No endpoint {method} {path}"}
            except Refused as exc:
                return exc.status, exc.body
            if self._stop_after == path:  # stopped once this answer is sent (see answered)
                self._stop_after = None
                self._stop_due = True
        return 200, {"status": "success", **out}

    def answered(self) -> None:
        """An answer went out: a due ``stop_after`` stop begins now, so the client has its answer first."""
        with self.lock:
            due, self._stop_due = self._stop_due, False
        if due:
            self._stopping = threading.Thread(target=self.stop, daemon=True)
            self._stopping.start()


def _make_handler(server: FakePaperServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small answer per request: no 40 ms delayed-ACK stalls

        def setup(self) -> None:
            super().setup()
            server._conns.add(self.connection)

        def finish(self) -> None:
            server._conns.discard(self.connection)
            super().finish()

        def _answer(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            body: dict[str, Any] = {}
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, {"status": "error", "message": "Body is not JSON"})
                    return
            status, out = server.handle(method, parts.path, query, body if isinstance(body, dict) else {})
            self._send(status, out)
            self.wfile.flush()
            server.answered()

        def _send(self, status: int, out: dict[str, Any]) -> None:
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    return Handler
