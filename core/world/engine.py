"""The embedded world engine: the default :class:`~agentworld.core.world.api.World`, pure Python.

One instance holds one episode's state. Every action resolves completely within the call (walking,
the whole fight, the whole harvest) and never raises for bad input: it returns a ``ToolResult`` whose
text says exactly what was wrong and how to fix it. All randomness comes from one ``random.Random(seed)``
and every loop runs in a fixed order, so the same seed and the same action sequence give the same states
and effects. Game numbers (hit chance, damage, HP, XP) are in ``stats.py``.
"""

from __future__ import annotations

import difflib
import random
from collections import defaultdict
from operator import attrgetter
from typing import Any

from pydantic import ValidationError

from .effects import (ChatDelivery, Crafted, Effects, Equip, Harvest, HpChange, ItemDelta, Move, ToolResult,
                       Transfer, engine_effects, engine_failure, engine_result)
from .observation import ChatMessage, InvItem
from . import stats
from .api import InventorySlot, PlayerSpec, PlayerState, TickReport, World
from .combat import CombatMixin
from .datapack import LoadedWorld, PortalEnd, load_world, portal_ends, recipes_by_output
from .events import NEVER, Mechanics, TaskMechanics, event_line
from .engine_state import CELL, MAX_CHAT_SHOWN, GroundItem, MobState, NodeState, Player, Roster, same_equipment
from .engine_state import manhattan as _dist
from .inventory import Inventory
from .observe import ObservationMixin
from .spatial import Cells, GroundItems, LazyStates
from .models import PRODUCTION_SKILLS, SKILLS, ItemDef, RecipeDef, Rules, Yield
from .pathing import reachable, route
from .roaming import Movers, hold, movers_for, send_home
from .scarcity import exhausted_text, finite_totals, full_text
from .wording import tiles as _tiles

_set = object.__setattr__  # a Player attribute write past its __setattr__ (for the fields it does not watch)
_username = attrgetter("username")


def _in_play(q: Player) -> bool:
    return q.active and q.alive


REACH_ADJACENT = 1  # harvest and melee happen from a tile next to the target
PLAYER_CELL = 4  # side of the buckets of the player index



def _bends(start: tuple[int, int], end: tuple[int, int], walked: int) -> str:
    """What a walk result adds when the path went round something: players plan by |dx|+|dy| (the brief's
    rule) and otherwise wonder why 60 tiles of walking moved them 57."""
    straight = _dist(*start, *end)
    return "" if walked == straight else f" The path bent round obstacles: {walked} tiles walked, {straight} as |dx|+|dy|."


def _goal_text(asked: tuple[int, int] | None, goal: tuple[int, int], arrived: bool) -> str:
    """What a walk toward a tile that cannot be stood on (``asked``) says of the tile it goes to instead: "you
    stand beside it" only once there (a walk cut short by the move range said so before it arrived)."""
    if asked is None:
        return ""
    if _dist(*goal, *asked) != 1:
        return f"the nearest walkable tile is at ({goal[0]},{goal[1]}). "
    return f"{'you stand beside it at' if arrived else 'the tile beside it is'} ({goal[0]},{goal[1]}). "


def _path_left_text(goal: tuple[int, int], blocked: bool, now: tuple[int, int], left: int, bends: str) -> str:
    """The end of a walk result cut short by the move range, toward ``goal`` (``blocked``: it is the tile beside
    one that cannot be stood on, which the result names already). A player already beside the tile asked for is
    told so: a porter 1 tile from a crate read "1 tiles of path left, call again" and spent a turn on it, though a
    pickup reaches a ground item from beside it."""
    tiles = f"{_tiles(left)} of path left"
    again = f"move_character(x={goal[0]}, y={goal[1]})"
    if not blocked and _dist(*now, *goal) == 1:
        return f", beside ({goal[0]},{goal[1]}): {tiles}, only to stand on it; call {again} again for that.{bends}"
    return f", {tiles}.{bends} Call {again} again to continue."


class EmbeddedWorld(CombatMixin, ObservationMixin, World):
    def __init__(self, loaded: "LoadedWorld | None" = None, *, seed: int = 0, rules: dict | None = None,
                 mechanics: "TaskMechanics | None" = None, mobs: dict[str, dict] | None = None,
                 nodes: dict[str, dict] | None = None):
        """``mechanics``: a task's events, joint actions and hidden information (events.py); ``mobs``: its
        movement overrides by mob type or instance id (``roam``, ``patrol``, ``speed``; roaming.py); ``nodes``:
        its finite nodes by node type or instance id (``total``; scarcity.py)."""
        if loaded is None:
            loaded = load_world()  # the built-in world (cached per process)
        self.loaded = loaded
        self.data = loaded.data
        self.map = loaded.map
        self.version = self.data.version
        self.seed = seed
        self.rules = make_rules(self.data.rules, rules)
        self.rng = random.Random(seed)
        self.round = 1
        self.xp_table = stats.XpTable(self.data.xp_curve)

        self.items: dict[str, ItemDef] = {i.key: i for i in self.data.items}
        self.biome_names = {b.key: b.name for b in self.data.biomes}
        self.recipes: dict[str, RecipeDef] = {r.key: r for r in self.data.recipes}
        # (skill, output item) -> recipes making it, main recipe first (as LoadedWorld.recipes_for):
        # craft_item uses the first one the agent can make
        self.recipes_by_output = recipes_by_output(self.data.recipes)
        node_types = {n.key: n for n in self.data.node_types}
        mob_types = {m.key: m for m in self.data.mob_types}
        # what moves (shared by every episode of this configuration); the fixed index leaves the movers out
        self.mob_overrides: dict[str, dict] = _checked_keys(mobs, "mobs", loaded) or {}  # also for spawned mobs
        self.movers: Movers = movers_for(loaded, self.mob_overrides or None, self.rules.roaming)
        motions = self.movers.motions
        totals = finite_totals(loaded, _checked_keys(nodes, "nodes", loaded))
        # live node and mob state, made on first touch (most of the map is never visited in an episode)
        fixed = fixed_index(loaded, self.movers)
        self.nodes: LazyStates = LazyStates(
            fixed.nodes, lambda n: NodeState(n.id, node_types[n.type], n.x, n.y, left=node_types[n.type].harvests,
                                             total=totals.get(n.id, totals.get(n.type))))
        self.mobs: LazyStates = LazyStates(
            fixed.mobs, lambda m: MobState(m.id, mob_types[m.type], m.x, m.y, hp=mob_types[m.type].hp,
                                           motion=motions.get(m.id)))
        self.stations = list(loaded.stations)
        self.portal_ends: list[PortalEnd] = fixed.portal_ends
        self.max_aggro = max((mob_types[m.type].aggro_range for m in loaded.mobs), default=0)
        self._mob_types = mob_types
        self._aggro_kept: dict[tuple[int, int], tuple[str, ...]] = {}  # tile -> ids of the mobs whose aggro reaches it
        # static spatial buckets, shared by every episode on this world: (cell x, cell y) -> [(x, y, kind, ref, entity id)]
        # (nodes and mobs by placement, resolved to their live state when found; portals, stations, npcs)
        self._cells = fixed.cells
        self._fixed = fixed
        self._places = fixed.places
        self._areas = fixed.areas

        self.players: dict[str, Player] = {}
        self._roster = Roster()  # changes whenever someone joins or leaves play (Player tells it)
        self._in_play: tuple | None = None  # (roster version, _in_play_lists()'s answer for it)
        # players by tile, in small buckets (a crowd fills few tiles); each Player keeps it up to date as it moves
        self._player_cells = Cells(size=PLAYER_CELL)
        self.by_username: dict[str, str] = {}
        self.ground: GroundItems = GroundItems()
        self.taken: dict[str, str] = {}  # ground id -> who picked the last of it up, and when (for a late pickup)
        self._ground_seq = 0
        self.depleted: dict[str, NodeState] = {}
        self.dead_mobs: dict[str, MobState] = {}
        self.wounded: dict[str, MobState] = {}
        self._inv_rows: dict[tuple[int, str, int], InvItem] = {}
        self._entity_rows: dict[tuple, Any] = {}  # observation rows of nearby things, reused (observe.py)
        self._type_notes: dict[str, str] = {}  # node type key -> its rows' note (observe.py)
        self._mob_notes: dict[str, str] = {}  # mob type key -> a live mob's row note
        self._npc_heard: dict[str, dict[str, str]] = {}  # agent id -> npc key -> the line it was last shown
        self._xp_next: dict[str, tuple[dict, dict]] = {}  # agent id -> (its XP, XP to each next level) (observe.py)
        self._state_slots: dict[tuple[int, str, int], InventorySlot] = {}
        self._states: dict[str, tuple[PlayerState, tuple, list]] = {}  # the last state built per player
        # messages to every other player in play (team and global chat): a player's mailbox takes them in when
        # it is next read or written (_take_broadcasts), so that one message to 1,000 players is not 1,000
        # appends; Player.chat_read is how far along the log it is. _missed_at holds, per player, the log
        # positions of the messages that did not reach it (its own, those sent while it was out of play), so
        # that taking the news costs the messages an observation shows, not every message since its last turn
        self._broadcasts: list[ChatMessage] = []
        self._missed_at: dict[str, list[int]] = {}  # agent id -> log positions not for it, from its chat_read on
        self._broadcast_base = 0  # log position of self._broadcasts[0] (the log is cut once everyone read it)
        self._broadcast_trim_at = 256
        # the task's events, joint actions and hidden information (events.py); None: none, and no hook costs
        self.mech: Mechanics | None = Mechanics(self, mechanics) if mechanics else None

    # =============================================================================================
    # setup
    # =============================================================================================
    def add_player(self, spec: PlayerSpec) -> None:
        problems = []
        if spec.agent_id in self.players:
            problems.append(f"agent id {spec.agent_id!r} is already in the world")
        if spec.username in self.by_username or spec.username in self.players:
            problems.append(f"username {spec.username!r} is already taken")
        bad_skills = sorted(s for s in spec.skills if s not in SKILLS)
        if bad_skills:
            problems.append(f"unknown skills {bad_skills} (known: {', '.join(SKILLS)})")
        for s, lv in sorted(spec.skills.items()):
            if s in SKILLS and not 1 <= lv <= self.xp_table.max_level:
                problems.append(f"skill {s} level {lv} is outside 1..{self.xp_table.max_level}")
        bad_items = sorted({st.item for st in [*spec.inventory, *spec.equipment] if st.item not in self.items})
        if bad_items:
            problems.append(f"unknown items {bad_items}" + _close_hint(bad_items[0], self.items))
        for st in spec.equipment:
            item = self.items.get(st.item)
            if item is not None and item.slot is None:
                problems.append(f"equipment item {st.item!r} cannot be equipped (it has no slot)")
        if any(st.count < 1 for st in [*spec.inventory, *spec.equipment]):
            problems.append("item counts must be at least 1")
        if not self.map.walkable(spec.x, spec.y):
            near = self.map.nearest_walkable(spec.x, spec.y) if self.map.in_bounds(spec.x, spec.y) else None
            problems.append(f"spawn ({spec.x},{spec.y}) is not walkable" + (f"; nearest walkable tile is {near}" if near else ""))
        if problems:
            raise ValueError(f"player {spec.agent_id}: " + "; ".join(problems))

        levels = {s: spec.skills.get(s, 1) for s in SKILLS}
        xp = {s: self.xp_table.xp_for(lv) for s, lv in levels.items()}
        inv = Inventory(self.rules.inventory_slots, self._stackable, self.rules.carry_limit)
        for st in spec.inventory:
            if inv.add(st.item, st.count) < st.count:
                limit = f" or under the carry limit of {inv.limit} items" if inv.limit else ""
                raise ValueError(f"player {spec.agent_id}: the starting inventory does not fit in "
                                 f"{self.rules.inventory_slots} slots{limit}")
        equipment: dict[str, list] = {}
        for st in spec.equipment:
            slot = self.items[st.item].slot
            if slot in equipment:
                raise ValueError(f"player {spec.agent_id}: two equipment items for slot {slot!r}")
            equipment[slot] = [st.item, st.count if self.items[st.item].stackable else 1]
        p = Player(spec.agent_id, spec.username, len(self.players), spec.x, spec.y, (spec.x, spec.y),
                   hp=stats.max_hp(levels["health"]), xp=xp, levels=levels, inv=inv, equipment=equipment)
        p.chat_read = self._broadcast_base + len(self._broadcasts)  # no message sent before it joined
        self.players[p.agent_id] = p
        self.by_username[p.username] = p.agent_id
        p.cells = self._player_cells
        p.roster = self._roster
        self._roster.version += 1
        if self.mech is not None:
            self.mech.joined(p)

    def remove_player(self, agent_id: str, reason: str) -> None:
        p = self._player(agent_id)
        p.active = False
        p.left_reason = reason

    # =============================================================================================
    # actions
    # =============================================================================================
    def move_character(self, agent_id: str, x: int, y: int) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        gm = self.map
        if not gm.in_bounds(x, y):
            cx, cy = min(max(x, 0), gm.width - 1), min(max(y, 0), gm.height - 1)
            near = gm.nearest_walkable(cx, cy, 30)
            hint = f"; the nearest walkable tile on the map edge is ({near[0]},{near[1]})" if near else ""
            return engine_failure("blocked", f"({x},{y}) is off the map: x must be 0..{gm.width - 1} and "
                                             f"y 0..{gm.height - 1}{hint}.")
        if (x, y) == (p.x, p.y):
            return engine_result(f"You are already at ({x},{y}).",
                                 effects=engine_effects(move=Move(start=(x, y), end=(x, y), path_length=0, reached=True)))
        said = ""  # what the result says first when the target tile cannot be stood on
        asked = None  # that tile, when the walk goes to the tile beside it instead
        wm = self._walk_map(p)  # the map without the areas closed now (closures.py); gm when none is
        if not wm.walkable(x, y):
            # accept more: a node's own tile, water off the shore, a wall, a closed area: walk beside it (what a
            # teammate or a guide quoting the thing's coordinates means), and say so
            near = self._nearest_reachable(p, x, y, wm)
            if near is None:
                return engine_failure("blocked", f"({x},{y}) cannot be entered ({self._what_blocks(x, y)}) and no "
                                                 f"walkable tile near it can be reached on foot from ({p.x},{p.y}).")
            said = f"({x},{y}) is {self._blocked_tile(x, y)}; "
            asked = (x, y)
            x, y = near
            if (x, y) == (p.x, p.y):
                return engine_result(f"{said}you already stand beside it at ({x},{y}).",
                                     effects=engine_effects(move=Move(start=(x, y), end=(x, y), path_length=0,
                                                                      reached=True), target=f"{x},{y}"))
        elif wm.component(x, y) != wm.component(p.x, p.y):
            if gm.component(x, y) == gm.component(p.x, p.y):  # one area, cut in two by a closure
                return engine_failure("blocked", self._closed_way(p, (x, y), 0, f"({x},{y})"))
            portal = self._nearest_portal_end(p.x, p.y)
            hint = f" The nearest portal is {portal.name} at ({portal.x},{portal.y})." if portal else ""
            return engine_failure("blocked", f"({x},{y}) cannot be reached on foot from ({p.x},{p.y}): it lies in "
                                             f"a separate area (across water or walls); use a portal.{hint}")
        if p.route_goal == (x, y) and p.route_at == (p.x, p.y) and p.route_rest and wm is gm \
                and (self.mech is None or not self.mech.closures.ever):
            path = p.route_rest  # continuing the previous call's path: no new search (the same path a search gives)
            detour = ""
        else:
            path = route(wm, (p.x, p.y), (x, y))
            detour = self._detour_text(p, wm, (x, y), path) if wm is not gm else ""  # a way round a closed area
        if not path:  # cannot happen for connected tiles; kept so that a map bug never raises
            return engine_failure("blocked", f"No path from ({p.x},{p.y}) to ({x},{y}).")
        mr = self.rules.move_range
        steps = path[:mr]
        start = (p.x, p.y)
        hazard = self._walk_hazard(start, steps)
        if hazard is not None:  # an aggressive mob engages on the way: the walk ends there
            eff = engine_effects(target=f"{x},{y}")
            arrived = hazard[0] == len(path) - 1
            text = said + _goal_text(asked, (x, y), arrived) + detour + self._ambushed(
                p, start, steps, hazard[0], hazard[1], eff, f"({x},{y})", reached_goal=arrived)
            return engine_result(text, effects=eff)
        p.place(*steps[-1])
        p.route_goal, p.route_at, p.route_rest = ((x, y), (p.x, p.y), path[mr:]) if len(path) > mr else (None, None, [])
        reached = len(path) <= mr
        move = Move(start=start, end=(p.x, p.y), path_length=len(steps), reached=reached)
        bends = _bends(start, (p.x, p.y), len(steps))
        said += _goal_text(asked, (x, y), reached) + detour
        if reached:
            text = f"{said}Walked {_tiles(len(steps))} to ({x},{y}).{bends}"
        else:
            text = (f"{said}Walked {_tiles(len(steps))} toward ({x},{y}) (one move covers {mr}); now at ({p.x},{p.y})"
                    + _path_left_text((x, y), asked is not None, (p.x, p.y), len(path) - len(steps), bends))
        return engine_result(text, effects=engine_effects(move=move, target=f"{x},{y}"))

    def send_chat_message(self, agent_id: str, message: str, global_: bool = False) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        if global_:
            return self._deliver(p, message, "global", None)
        return self._deliver(p, message, "local", self._players_near(p, self.rules.chat_radius))

    def chat(self, agent_id: str, message: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        return self._deliver(p, message, "team", None)

    def enter_portal(self, agent_id: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        pr = self.rules.portal_range
        here = sorted((e for e in self.portal_ends if _dist(p.x, p.y, e.x, e.y) <= pr),
                      key=lambda e: (_dist(p.x, p.y, e.x, e.y), e.id))
        if not here:
            near = self._nearest_portal_end(p.x, p.y, same_area=False)
            hint = (f" The nearest is {near.name} ({near.id}) at ({near.x},{near.y}), "
                    f"{_tiles(_dist(p.x, p.y, near.x, near.y))} away: move_character(x={near.x}, y={near.y}) first.") if near else ""
            return engine_failure("out_of_range", f"No portal within {_tiles(pr)} of ({p.x},{p.y}).{hint}")
        end = here[0]
        portal = end.portal
        if self.mech is not None and (refused := self.mech.portal_refusal(p, end)) is not None:
            return refused
        if portal.requires_item and not self._has_item(p, portal.requires_item):
            return engine_failure("missing_items", f"{end.name} needs {_a(portal.requires_item)} in your inventory "
                                                   f"(it is kept, not used up).")
        for skill, lv in sorted(portal.requires_level.items()):
            if p.levels[skill] < lv:
                return engine_failure("level_too_low", f"{end.name} needs {skill} {lv}; you have {p.levels[skill]}.")
        dest = (end.to_x, end.to_y) if self.map.walkable(end.to_x, end.to_y) else self.map.nearest_walkable(end.to_x, end.to_y, 30)
        if dest is None:
            return engine_failure("blocked", f"{end.name} leads nowhere walkable (map data problem); try another portal.")
        start = (p.x, p.y)
        p.place(*dest)
        eff = engine_effects(portal=portal.key, target=end.id,
                             move=Move(start=start, end=dest, path_length=0, reached=True))
        where = self._where_name(p.x, p.y)
        # the end's name, not the portal's: the far end of a two-way portal is named for where it leads
        return engine_result(f"You used {end.name} and arrived at ({p.x},{p.y})"
                             + (f", {where}." if where else "."), effects=eff)

    def stop_action(self, agent_id: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        return engine_result("Nothing to stop (actions finish within your turn); your turn passes.")

    def sleep(self, agent_id: str, seconds: int) -> ToolResult:
        # seconds: the paper's argument; a turn-based world waits one turn whatever it says
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        return engine_result(f"You wait; your turn passes (a wait uses no action). HP {p.hp}/{self._max_hp(p)}; "
                             f"it regenerates {self.rules.hp_regen_per_round} per round.")

    def complete(self, agent_id: str, response: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        p.active = False
        p.left_reason = "completed"
        return engine_result("You declared your part done and left the episode.",
                             effects=engine_effects(completed=True))

    # -- equipment and food -------------------------------------------------------------------------
    def equip_item(self, agent_id: str, index: int | None = None, item_key: str | None = None) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        inv = p.inv
        if index is not None:
            if not isinstance(index, int) or not 0 <= index < inv.size or inv.slots[index] is None:
                return engine_failure("missing_items", f"Inventory slot {index} is empty or does not exist. "
                                                       f"Your inventory: {self._inv_summary(p)}.")
            slot_i = inv.last_slot(inv.slots[index][0])  # one of the row's items, from its last slot: the row stays
        else:
            key = (item_key or "").strip()
            slot_i = inv.last_slot(key)
            if slot_i is None:
                if key not in self.items:
                    return engine_failure("unknown_target", f"There is no item {key!r}{_close_hint(key, self.items)}. "
                                                            f"Your inventory: {self._inv_summary(p)}.")
                if any(e[0] == key for e in p.equipment.values()):
                    return engine_failure("invalid", f"{key} is already equipped.")
                return engine_failure("missing_items", f"You have no {key}. Your inventory: {self._inv_summary(p)}.")
        key, count = inv.slots[slot_i]
        item = self.items[key]
        if item.heal > 0:
            return self._eat(p, slot_i, item)
        if item.kind in ("food", "potion"):
            cook = next((r for r in self.data.recipes if key in r.inputs and r.skill == "cooking"), None)
            hint = (f" Cook it first: craft_item(skill='Cooking', itemKey='{next(iter(cook.outputs))}')"
                    + (f" near {_a(cook.station)}" if cook.station else "") + ".") if cook else ""
            return engine_failure("invalid", f"{item.name} ({key}) restores no HP as it is.{hint}")
        if item.slot is None:
            return engine_failure("invalid", f"{item.name} ({key}) is a {item.kind}: it cannot be equipped or eaten.")
        for skill, lv in sorted(item.requirements.items()):
            if p.levels[skill] < lv:
                return engine_failure("level_too_low", f"{item.name} needs {skill} {lv} to equip; you have {p.levels[skill]}.")
        take = count if item.stackable else 1
        inv.take_slot(slot_i, take)
        prev = p.equipment.get(item.slot)
        if prev is not None and prev[0] == key and item.stackable:  # more of the same ammo: top up the stack
            prev[1] += take
            return engine_result(f"Added {take} {item.name} to your {item.slot} slot (now {prev[1]}).",
                                 effects=engine_effects(equipped=Equip(item=key, slot=item.slot), target=key))
        if prev is not None and inv.add(prev[0], prev[1]) < prev[1]:
            inv.add(key, take)  # undo: there was room for it a moment ago
            return engine_failure("inventory_full", f"No room to take off your {prev[0]}; free a slot first.")
        p.equipment[item.slot] = [key, take]
        swapped = f" ({prev[0]} went back to your inventory)" if prev else ""
        return engine_result(f"Equipped {item.name} in your {item.slot} slot{swapped}.",
                             effects=engine_effects(equipped=Equip(item=key, slot=item.slot, unequipped=prev[0] if prev else None),
                                                    target=key))

    def _eat(self, p: Player, slot_i: int, item: ItemDef) -> ToolResult:
        before = p.hp
        p.inv.take_slot(slot_i, 1)
        p.hp = min(self._max_hp(p), p.hp + item.heal)
        eff = engine_effects(lost=[ItemDelta(agent=p.agent_id, item=item.key, count=1, source="eat")],
                             hp=[HpChange(agent=p.agent_id, before=before, after=p.hp, cause=f"eat:{item.key}")], target=item.key)
        return engine_result(f"You ate {item.name}: HP {before} -> {p.hp}/{self._max_hp(p)}.", effects=eff)

    # -- gathering --------------------------------------------------------------------------------
    def harvest_resource(self, agent_id: str, target_instance: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        node = self.nodes.get(target_instance)
        if node is None:
            return self._unknown_target(p, target_instance, "resource", "harvest_resource")
        nt = node.type
        if node.total is not None and node.total <= 0:
            return engine_failure("depleted", exhausted_text(nt.name, node.id, nt.kind))
        if node.respawn_at is not None:
            if node.respawn_at >= NEVER:
                return engine_failure("depleted", f"{nt.name} {node.id} is exhausted: it does not come back. "
                                                  f"Pick another {nt.kind}.")
            return engine_failure("depleted", f"{nt.name} {node.id} is depleted; it is back in "
                                              f"{max(1, node.respawn_at - self.round)} round(s). Pick another {nt.kind}.")
        have = p.levels[nt.skill]
        if have < nt.level:
            return engine_failure("level_too_low", f"{nt.name} needs {nt.skill} {nt.level}; you have {have}. "
                                                   f"Gather lower-level {nt.kind}s first.")
        bonus_chance = 0.0
        if nt.tool:
            tool = self._usable_tool(p, nt.tool)
            if isinstance(tool, ToolResult):
                return tool
            bonus_chance = stats.tool_bonus_chance(tool.tool_tier)
        yield_items = [y.item for y in nt.yields]
        if yield_items and all(p.inv.room_for(i, 1) == 0 for i in yield_items):
            if p.inv.limit and p.inv.carry_room() == 0:
                return engine_failure("inventory_full", full_text(p.inv, "more"))
            return engine_failure("inventory_full", f"Your inventory is full ({p.inv.size} slots); drop into a "
                                                    f"teammate's inventory with transfer_items or use items first.")
        eff = engine_effects(target=node.id)
        walked = self._walk_near(p, node.x, node.y, REACH_ADJACENT, f"{nt.name} {node.id}", eff)
        if walked is not None:
            return walked
        got: dict[str, int] = {}
        gathers = 0
        full = False
        dropped: dict[str, int] = {}  # what did not fit and went to the ground
        finite = node.total is not None
        while node.left > 0 and not full and not (finite and node.total <= 0):
            node.left -= 1
            gathers += 1
            for k, y in enumerate(nt.yields):
                n = self._roll(y)
                if n is None:
                    continue
                if k == 0 and bonus_chance and self.rng.random() < bonus_chance:
                    n += 1  # a better tool gathers more per call
                if finite:  # what is left of its total, and no more
                    n = min(n, node.total)
                    node.total -= n
                    node.shown = None  # its Nearby row says how many are left
                    if n <= 0:
                        continue
                added = p.inv.add(y.item, n)
                if added:
                    got[y.item] = got.get(y.item, 0) + added
                if added < n:
                    self._drop(y.item, n - added, p.x, p.y)
                    dropped[y.item] = dropped.get(y.item, 0) + n - added
                    full = True
            self._gain_xp(p, nt.skill, nt.xp, eff)
            if any(p.inv.room_for(i, 1) == 0 for i in yield_items):
                full = True
        for item, n in got.items():
            eff.gained.append(ItemDelta(agent=p.agent_id, item=item, count=n, source=f"harvest:{node.id}"))
        eff.harvests.append(Harvest(node=nt.key, instance=node.id, skill=nt.skill, items=dict(got)))
        parts = [f"Harvested {nt.name} {node.id} ({gathers} gather{'s' if gathers != 1 else ''}): "
                 + (", ".join(f"+{n} {i}" for i, n in got.items()) or "nothing this time") + "."]
        parts.append(self._xp_text(eff))
        if finite:
            node.left = nt.harvests if node.left <= 0 else node.left  # no depletion cycle: only its total ends it
            parts.append(f"It is exhausted: it never regrows." if node.total <= 0
                         else f"It has {node.total} item(s) left in all (it never regrows).")
            if full:
                parts.append(self._full_after(p, None, dropped))
        elif node.left <= 0:
            node.respawn_at = self.round + self._respawn(nt.respawn_rounds)
            self.depleted[node.id] = node
            parts.append(f"It is depleted, back in {node.respawn_at - self.round} round(s).")
        elif full:
            parts.append(self._full_after(p, node.left, dropped))
        return engine_result(" ".join(s for s in parts if s), effects=eff)

    @staticmethod
    def _full_after(p: Player, left: int | None, dropped: dict[str, int]) -> str:
        """What a harvest that filled the inventory (or reached the carry limit) says; the ground gets a mention
        only when something went there (a harvest that just reached the limit dropped nothing)."""
        what = (f"carry limit of {p.inv.limit} items reached" if p.inv.limit and p.inv.carry_room() == 0
                else "Inventory full")
        what = what[0].upper() + what[1:]
        stop = "stopped" if left is None else f"stopped with {left} gather(s) left in it"
        if not dropped:
            return f"{what}: {stop}."
        lost = ", ".join(f"{n} {item}" for item, n in dropped.items())
        return f"{what}: {stop}; {lost} did not fit and lie on the ground at ({p.x},{p.y})."

    def pickup_resource(self, agent_id: str, target_instance: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        g = self.ground.get(target_instance)
        if g is None and target_instance in self.taken:
            # a porter whose partner had already lifted the load this round read "No ground item with id ..." as
            # if the load had never been there (pilot of task_319)
            return engine_failure("unknown_target", f"{target_instance} is no longer on the ground: "
                                                    f"{self.taken[target_instance]}.")
        if g is None:
            return self._unknown_target(p, target_instance, "ground_item", "pickup_resource")
        room = p.inv.room_for(g.item, g.count)
        if room == 0:
            if p.inv.limit and p.inv.carry_room() == 0:
                return engine_failure("inventory_full", full_text(p.inv, g.item))
            return engine_failure("inventory_full", f"No room for {g.item}: your inventory is full ({p.inv.size} slots).")
        eff = engine_effects(target=g.id)
        walked = self._walk_near(p, g.x, g.y, 0, f"{g.item} ({g.id})", eff)
        if walked is not None:
            return walked
        lifted = self.mech.lift(p, g, eff) if self.mech is not None else ""  # a heavy load: held, or lifted with whom
        if not isinstance(lifted, str):
            return lifted
        added = p.inv.add(g.item, room)
        g.count -= added
        if g.count <= 0:
            del self.ground[g.id]
            self.taken[g.id] = f"{p.username} picked up the last of the {g.item} in round {self.round}"
        eff.gained.append(ItemDelta(agent=p.agent_id, item=g.item, count=added, source=f"pickup:{g.id}"))
        why = f"carry limit of {p.inv.limit} items reached" if p.inv.limit and p.inv.carry_room() == 0 else "inventory full"
        rest = f" {g.count} left on the ground ({why})." if g.count > 0 else ""
        return engine_result(f"{lifted}Picked up {added} {g.item}.{rest}", effects=eff)

    # -- combat -----------------------------------------------------------------------------------
    def attack_entity(self, agent_id: str, target_instance: str) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        mob = self.mobs.get(target_instance)
        if mob is not None and self.mech is not None and not self.mech.may_target(p, mob):
            mob = None  # a raider nobody has seen: the same answer as an id that does not exist
        if mob is None:
            if target_instance in self.players or target_instance in self.by_username:
                return engine_failure("invalid", "Players cannot attack each other; attack a mob from the Nearby list.")
            if self.mech is not None and target_instance in self.mech.gone:
                # a raider killed in an earlier round is removed at the tick; "no mob with that id" read as a bad
                # id to a player sent after it by a teammate (pilot of task_303), as a placed mob's answer does not
                kind = self._mob_types.get(target_instance.partition("#")[0])
                name = f"{kind.name} {target_instance}" if kind is not None else target_instance
                return engine_failure("invalid", f"{name} is dead; it does not come back.")
            return self._unknown_target(p, target_instance, "mob", "attack_entity")
        mt = mob.type
        self._mob_at(mob)  # a moving mob: where it stands now
        if mob.respawn_at is not None:
            if mob.respawn_at >= NEVER:
                return engine_failure("invalid", f"{mt.name} {mob.id} is dead; it does not come back.")
            return engine_failure("invalid", f"{mt.name} {mob.id} is dead; it respawns in "
                                             f"{max(1, mob.respawn_at - self.round)} round(s).")
        weapon = self._equipped_item(p, "weapon")
        style = weapon.attack_style if weapon and weapon.attack_style else "melee"
        if style == "ranged" and self._ammo_source(p) is None:
            return engine_failure("missing_items", f"Your {weapon.name} needs ammunition: equip arrows (ammo) or carry them.")
        eff = engine_effects(target=mob.id)
        walked = self._walk_near(p, mob.x, mob.y, REACH_ADJACENT, f"{mt.name} {mob.id}", eff, target_mob=mob.id)
        if walked is not None:
            return walked
        joint = self.mech.guard(p, mob, eff) if self.mech is not None else ""  # a guarded mob: held, or broken with whom
        if not isinstance(joint, str):
            return joint
        result = self._fight(p, mob, style, eff)
        if joint:
            result = engine_result(joint + result.text, effects=result.effects)
        if mob.respawn_at is None:
            hold(mob, mob.motion, self.seed, self.round, self.map)  # in a fight: it stands its ground this tick
        return result

    # -- crafting ---------------------------------------------------------------------------------
    def craft_item(self, agent_id: str, skill: str, item_key: str, count: int) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        skill = (skill or "").strip().lower()
        if skill not in PRODUCTION_SKILLS:
            return engine_failure("bad_args", f"skill must be one of {', '.join(s.capitalize() for s in PRODUCTION_SKILLS)}; got {skill!r}.")
        key = (item_key or "").strip()
        count = max(1, int(count)) if isinstance(count, int) else 1
        candidates = list(self.recipes_by_output.get((skill, key), []))
        if key in self.recipes and self.recipes[key].skill == skill and self.recipes[key] not in candidates:
            candidates.insert(0, self.recipes[key])
        if not candidates:
            return self._unknown_recipe(p, skill, key)
        first_problem = None
        for recipe in candidates:  # several recipes may make one item: use the first one that works now
            problem = self._recipe_problem(p, recipe, skill)
            if problem is None:
                return self._craft(p, recipe, skill, count)
            first_problem = first_problem or problem
        return first_problem

    def _recipe_problem(self, p: Player, recipe: RecipeDef, skill: str) -> ToolResult | None:
        """Why ``p`` cannot make one ``recipe`` here and now (None: it can)."""
        if p.levels[skill] < recipe.level:
            return engine_failure("level_too_low", f"{recipe.key} needs {skill} {recipe.level}; you have {p.levels[skill]}.")
        if recipe.station:
            st = self._nearest_station(p, recipe.station)
            if st is None or _dist(p.x, p.y, st.x, st.y) > self.rules.station_range:
                where = (f" The nearest {recipe.station} is at ({st.x},{st.y})"
                         + (f" ({self._landmark_name(st.landmark)})" if getattr(st, "landmark", None) else "")
                         + f", {_tiles(_dist(p.x, p.y, st.x, st.y))} away.") if st else f" There is no {recipe.station} in this world."
                return engine_failure("no_station", f"{recipe.key} must be made within "
                                                    f"{_tiles(self.rules.station_range)} of {_a(recipe.station)}.{where}")
        if recipe.tool and not self._tool_items(p, recipe.tool):
            return engine_failure("missing_tool", f"{recipe.key} needs {_a(recipe.tool)} in your inventory or equipped"
                                                  f"{self._tool_example(recipe.tool)}.")
        possible = min(p.inv.count(i) // n for i, n in recipe.inputs.items()) if recipe.inputs else 1
        if possible == 0:
            missing = ", ".join(f"{n} {i} (you have {p.inv.count(i)})" for i, n in recipe.inputs.items() if p.inv.count(i) < n)
            need = ", ".join(f"{n} {i}" for i, n in recipe.inputs.items())
            return engine_failure("missing_items", f"Missing for one {recipe.key}: {missing}. One craft uses {need}.")
        return None

    def _craft(self, p: Player, recipe: RecipeDef, skill: str, count: int) -> ToolResult:
        possible = min(p.inv.count(i) // n for i, n in recipe.inputs.items()) if recipe.inputs else count
        made = 0
        for _ in range(min(count, possible)):
            for i, n in recipe.inputs.items():
                p.inv.remove(i, n)
            if not p.inv.fits(recipe.outputs):
                for i, n in recipe.inputs.items():
                    p.inv.add(i, n)
                break
            for i, n in recipe.outputs.items():
                p.inv.add(i, n)
            made += 1
        if made == 0:
            if p.inv.limit and p.inv.held() - sum(recipe.inputs.values()) + sum(recipe.outputs.values()) > p.inv.limit:
                return engine_failure("inventory_full", f"One {recipe.key} would take you over the carry limit of "
                                                        f"{p.inv.limit} items (you carry {p.inv.held()}); hand "
                                                        f"items to a teammate with transfer_items first.")
            return engine_failure("inventory_full", f"No room for the {recipe.key} output; free an inventory slot first.")
        src = f"craft:{recipe.key}"
        eff = engine_effects(target=recipe.key)
        for i, n in recipe.inputs.items():
            eff.lost.append(ItemDelta(agent=p.agent_id, item=i, count=n * made, source=src))
        for i, n in recipe.outputs.items():
            eff.gained.append(ItemDelta(agent=p.agent_id, item=i, count=n * made, source=src))
            eff.crafted.append(Crafted(recipe=recipe.key, skill=skill, item=i, count=n * made))
            p.crafted[i] = p.crafted.get(i, 0) + n * made
        self._gain_xp(p, skill, recipe.xp * made, eff)
        # count is in crafts, not items: say both apart ("3 of the 30 crafts ... one craft makes 10 arrows")
        per = ", ".join(f"{n} {i}" for i, n in recipe.outputs.items())
        outs = ", ".join(f"+{n * made} {i}" for i, n in recipe.outputs.items())
        crafts = f"craft{'s' if count != 1 else ''}"
        if made < count:
            why = "materials ran out" if made == possible else "inventory full"
            head = f"Made {made} of the {count} {crafts} asked for ({why}; one craft makes {per})"
        else:
            head = f"Made {made} {crafts} as asked (one craft makes {per})"
        return engine_result(f"{head}: {outs}. {self._xp_text(eff)}".strip(), effects=eff)

    def _unknown_recipe(self, p: Player, skill: str, key: str) -> ToolResult:
        other = sorted(s for (s, out) in self.recipes_by_output if out == key and s != skill)
        if other:
            return engine_failure("unknown_target", f"{key} is made with {other[0].capitalize()}, not {skill.capitalize()}: "
                                                    f"craft_item(skill='{other[0].capitalize()}', itemKey='{key}').")
        outputs = sorted({out for (s, out) in self.recipes_by_output if s == skill})
        close = difflib.get_close_matches(key, outputs, n=5, cutoff=0.5)
        if close:
            return engine_failure("unknown_target", f"No {skill} recipe makes {key!r}. Did you mean: {', '.join(close)}?")
        mine = sorted((rs[0].level, out) for (s, out), rs in self.recipes_by_output.items()
                      if s == skill and rs[0].level <= p.levels[skill])
        listed = ", ".join(out for _, out in mine[:12]) or "none at your level"
        return engine_failure("unknown_target", f"No {skill} recipe makes {key!r}. {skill.capitalize()} recipes at your "
                                                f"level {p.levels[skill]}: {listed}.")

    # -- trading ----------------------------------------------------------------------------------
    def transfer_items(self, agent_id: str, target_player: str, item_key: str, count: int) -> ToolResult:
        p = self._actor(agent_id)
        if isinstance(p, ToolResult):
            return p
        name = (target_player or "").strip()
        tid = self.by_username.get(name) or (name if name in self.players else None)
        if tid is None:
            low = {u.lower(): a for u, a in self.by_username.items()}
            tid = low.get(name.lower())
        if tid is None:
            names = ", ".join(q.username for q in sorted(self.players.values(), key=lambda q: q.order) if q is not p)
            return engine_failure("unknown_target", f"No player {name!r}. Teammates: {names or 'none'} (use the username).")
        q = self.players[tid]
        if q is p:
            return engine_failure("invalid", "You cannot give items to yourself.")
        if not (q.active and q.alive):
            return engine_failure("invalid", f"{q.username} is no longer in the game.")
        key = (item_key or "").strip()
        if key not in self.items:
            return engine_failure("unknown_target", f"There is no item {key!r}{_close_hint(key, self.items)}.")
        if not isinstance(count, int) or count < 1:
            return engine_failure("bad_args", "count must be at least 1.")
        have = p.inv.count(key)
        if have < count:
            worn = " (equipped items cannot be given)" if any(e[0] == key for e in p.equipment.values()) else ""
            return engine_failure("missing_items", f"You have {have} {key}, not {count}{worn}. Give at most {have}." if have
                                  else f"You have no {key} in your inventory{worn}.")
        d = _dist(p.x, p.y, q.x, q.y)
        if d > self.rules.transfer_range:
            need = self.rules.transfer_range
            if d <= self.rules.view_radius:  # in view: the observation lists where they stand anyway
                return engine_failure("out_of_range", f"{q.username} is at ({q.x},{q.y}), {_tiles(d)} away; transfers "
                                                      f"need {need} or less: move_character(x={q.x}, y={q.y}) first.")
            # out of view: the text must not tell the sender what only the teammate can know (the blackbox)
            return engine_failure("out_of_range", f"{q.username} is not within {_tiles(need)} of you (not in view); "
                                                  f"transfers need {need} or less: meet up first.")
        if q.inv.room_for(key, count) < count:
            room = q.inv.carry_room()
            if room is not None and room < count:
                return engine_failure("inventory_full", f"{q.username} can take only {room} more item(s) under the carry "
                                                        f"limit of {q.inv.limit}; give at most {room} {key}.")
            return engine_failure("inventory_full", f"{q.username}'s inventory has no room for {count} {key}.")
        p.inv.remove(key, count)
        q.inv.add(key, count)
        src = f"transfer:{p.agent_id}"
        eff = engine_effects(target=q.username,
                             transfers=[Transfer(from_agent=p.agent_id, to_agent=q.agent_id, item=key, count=count)],
                             lost=[ItemDelta(agent=p.agent_id, item=key, count=count, source=src)],
                             gained=[ItemDelta(agent=q.agent_id, item=key, count=count, source=src)])
        q.notes.append(f"{p.username} gave you {count} {key} in round {self.round}.")
        return engine_result(f"Gave {count} {key} to {q.username}.", effects=eff)

    # =============================================================================================
    # reading
    # =============================================================================================
    def player_state(self, agent_id: str) -> PlayerState:
        """The player's state now. The last one built is kept per player and handed out again while nothing it
        shows has changed (the turn, the tick's verifier and the final state read the same player over and
        over, and most of a crowd does not change between two reads): treat it as read-only."""
        p = self._player(agent_id)
        kept = self._states.get(agent_id)
        if kept is not None and self._unchanged(p, kept[1]):
            return kept[0]
        # a new state; the parts that did not change (a move changes only the position, an equip the equipment
        # and the inventory) are the last state's own values and copies, shared: states are read-only
        old, was = kept if kept is not None else (None, None)
        same_inv = was is not None and was[9] == p.inv.slots
        eq = p.equipment
        same_eq = was is not None and same_equipment(was[10], eq)
        same_levels = was is not None and was[5] == p.levels
        same_xp = was is not None and was[6] == p.xp
        same_kills = was is not None and was[7] == p.kills
        same_crafted = was is not None and was[8] == p.crafted
        if same_levels:
            levels, max_hp, combat = old.skills, old.max_hp, old.combat_level
        else:
            levels = dict(p.levels)
            max_hp, combat = self._max_hp(p), stats.combat_level(levels)
        equipment = p.equipment
        st = PlayerState(**{
            "agent_id": p.agent_id, "username": p.username, "x": p.x, "y": p.y, "hp": p.hp, "max_hp": max_hp,
            "alive": p.alive, "active": p.active, "skills": levels, "xp": old.xp if same_xp else dict(p.xp),
            "inventory": old.inventory if same_inv else [self._slot(i, k, n) for i, k, n in p.inv.filled()],
            "equipment": old.equipment if same_eq else {slot: e[0] for slot, e in equipment.items()},
            "equipment_counts": old.equipment_counts if same_eq else {slot: e[1] for slot, e in equipment.items()},
            "kills": old.kills if same_kills else dict(sorted(p.kills.items())),
            "crafted": old.crafted if same_crafted else dict(sorted(p.crafted.items())),
            "combat_level": combat})
        # what it was built from, copied (inventory slots and equipment entries are lists changed in place; the
        # state's own skill and xp copies serve, as a state is read-only)
        self._states[agent_id] = (st, (
            p.x, p.y, p.hp, p.alive, p.active, levels, st.xp, was[7] if same_kills else dict(p.kills),
            was[8] if same_crafted else dict(p.crafted),
            was[9] if same_inv else [s[:] if s is not None else None for s in p.inv.slots],
            was[10] if same_eq else {k: e[:] for k, e in equipment.items()}))
        return st

    @staticmethod
    def _unchanged(p: Player, was: tuple) -> bool:
        """Whether everything a player's state shows is as it was (``was``, copied when it was built). Skill and
        xp dicts never lose keys (their order is fixed at join) and kills and crafted are shown sorted, so
        dict equality is enough for them; equipment is shown in slot order, which is compared too."""
        return (was[0] == p.x and was[1] == p.y and was[2] == p.hp and was[3] == p.alive and was[4] == p.active
                and was[9] == p.inv.slots and same_equipment(was[10], p.equipment)
                and was[5] == p.levels and was[6] == p.xp and was[7] == p.kills and was[8] == p.crafted)

    def _slot(self, index: int, key: str, count: int) -> InventorySlot:
        """Inventory slots of player states are immutable values: reuse them like observation rows."""
        k = (index, key, count)
        slot = self._state_slots.get(k)
        if slot is None:
            if len(self._state_slots) > 50_000:
                self._state_slots.clear()
            slot = self._state_slots[k] = InventorySlot(index=index, item=key, name=self.items[key].name, count=count)
        return slot

    def mob_position(self, mob_id: str) -> tuple[int, int] | None:
        """Where a mob stands now (a moving one caught up to this round first); None when there is no such mob
        (or a raider that died and is gone). For the proofs' knowledge check: a fact is known while it is true."""
        mob = self.mobs.get(mob_id)
        if mob is None:
            return None
        mob = self._mob_at(mob)
        return (mob.x, mob.y)

    def out_of_play(self, agent_ids: list[str]) -> list[str]:
        return [a for a in agent_ids if not ((p := self._player(a)).alive and p.active)]

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "seed": self.seed,
            "round": self.round,
            "rules": dict(self.rules),  # its fields are plain values: what model_dump() gives, no serializer built
            "players": {aid: {**self.player_state(aid).model_dump(),
                              "equipment_counts": {s: e[1] for s, e in p.equipment.items()},
                              "left_reason": p.left_reason}
                        for aid, p in self.players.items()},
            "depleted_nodes": {nid: {"left": n.left, "respawn_at": n.respawn_at}
                               for nid, n in sorted(self.depleted.items())},
            "partly_harvested": {nid: n.left for nid, n in sorted(self.nodes.live.items())
                                 if n.respawn_at is None and n.left < n.type.harvests},
            "mobs": {mid: {"hp": m.hp, "dead": m.respawn_at is not None, "respawn_at": m.respawn_at}
                     for mid, m in sorted({**self.wounded, **self.dead_mobs}.items())},
            # where every moving mob stands now, placed or spawned, touched in the episode or not
            "moving_mobs": self._moving_mobs_now(),
            "finite_nodes": {nid: n.total for nid, n in sorted(self.nodes.live.items()) if n.total is not None},
            "ground_items": [{"id": g.id, "item": g.item, "count": g.count, "x": g.x, "y": g.y}
                             for g in self.ground.values()],
            **({"mechanics": self.mech.snapshot()} if self.mech is not None else {}),
        }

    def _moving_mobs_now(self) -> dict[str, list[int]]:
        """id -> [x, y] of every mob that moves, where it stands this round. A mob nobody came near has no live
        state (roaming.py works a position out only when it is needed): a fresh copy is caught up instead and
        dropped, so writing the final state changes nothing in the episode."""
        out: dict[str, list[int]] = {}
        live = self.mobs.live
        for mid in sorted(set(self.movers.motions) | {m for m, s in live.items() if s.motion is not None}):
            m = live.get(mid) or self.mobs.fresh(mid)
            self._mob_at(m)
            out[mid] = [m.x, m.y]
        return out

    # =============================================================================================
    # the tick
    # =============================================================================================
    def end_round(self, round: int) -> TickReport:
        r = self.rules
        eff = engine_effects()
        lines: list[str] = []
        players = list(self.players.values())  # join order: the dict is filled in that order
        nxt = round + 1
        moving = bool(self.movers.motions)
        if moving:  # a wounded mob holds still (moving mobs take their step into round nxt lazily: roaming.py)
            for mid in sorted(self.wounded):
                m = self.wounded[mid]
                hold(m, m.motion, self.seed, round, self.map)
        mech = self.mech
        if mech is not None:  # the raiders a task's event brought take their step into round nxt (as movers do)
            mech.step_spawned(nxt)
        if r.aggro and (self.max_aggro > 0 or mech is not None):
            for p in players:
                if not (p.active and p.alive):
                    continue
                # the moving mobs where they stand after this tick's step
                for mob in self._aggressors(p, nxt) if mech is None else self._aggressors(p, nxt) + mech.aggressors(p):
                    if not (p.active and p.alive):
                        break
                    self._aggro_exchange(p, mob, eff, lines)
                    if moving:
                        hold(mob, mob.motion, self.seed, nxt, self.map)
        for nid in sorted(self.depleted):
            n = self.depleted[nid]
            if n.respawn_at is not None and n.respawn_at <= nxt:
                n.respawn_at = None
                n.left = n.type.harvests
                del self.depleted[nid]
        for mid in sorted(self.dead_mobs):
            m = self.dead_mobs[mid]
            if m.respawn_at is not None and m.respawn_at <= nxt:
                m.respawn_at = None
                m.hp = m.type.hp
                send_home(m, m.motion, nxt)
                del self.dead_mobs[mid]
                lines.append(f"{mid} respawned")
        if r.mob_regen_per_round:
            for mid in sorted(self.wounded):
                m = self.wounded[mid]
                m.hp = min(m.type.hp, m.hp + r.mob_regen_per_round)
                if m.hp >= m.type.hp:
                    del self.wounded[mid]
        if r.hp_regen_per_round:
            for p in players:
                if p.active and p.alive:
                    mhp = self._max_hp(p)
                    if p.hp < mhp:
                        before = p.hp
                        p.hp = min(mhp, p.hp + r.hp_regen_per_round)
                        eff.hp.append(HpChange(agent=p.agent_id, before=before, after=p.hp, cause="regen"))
        if mech is not None:
            events = mech.tick(round)  # the events due from the next round, what joint actions did this round
            lines += [event_line(e) for e in events]
            self.round = nxt
            return TickReport(round=round, effects=eff, lines=lines, events=events)
        self.round = nxt
        return TickReport(round=round, effects=eff, lines=lines)

    # =============================================================================================
    # helpers
    # =============================================================================================
    def _player(self, agent_id: str) -> Player:
        """The player for the harness's reading calls (KeyError naming the known ids if there is none)."""
        p = self.players.get(agent_id)
        if p is None:
            raise KeyError(f"unknown agent {agent_id!r}; known: {', '.join(self.players) or 'none'}")
        return p

    def _actor(self, agent_id: str) -> Player | ToolResult:
        p = self.players.get(agent_id)
        if p is None:
            return engine_failure("invalid", f"Unknown agent {agent_id!r}; known: {', '.join(self.players) or 'none'}.")
        if not p.alive:
            return engine_failure("dead", "You are dead and cannot act any more.")
        if not p.active:
            return engine_failure("not_active", f"You have left the episode ({p.left_reason or 'inactive'}) and cannot act.")
        return p

    def _in_play_lists(self) -> tuple[list[Player], list[str], list[str], dict[str, int]]:
        """(players in play in join order, their ids, their usernames, agent id -> position): worked out again
        only when someone joined or left play since (a team chat to 999 players reads all four)."""
        kept = self._in_play
        if kept is not None and kept[0] == self._roster.version:
            return kept[1]
        players = [q for q in self.players.values() if q.active and q.alive]
        ids = [q.agent_id for q in players]
        lists = (players, ids, [q.username for q in players], {a: i for i, a in enumerate(ids)})
        self._in_play = (self._roster.version, lists)
        return lists

    def _players_near(self, p: Player, radius: int) -> list[Player]:
        """Other players in play within Manhattan ``radius`` of ``p``, in join order (from the player index)."""
        near = [q for _, q in self._player_cells.near(p.x, p.y, radius) if q is not p and q.active and q.alive]
        near.sort(key=lambda q: q.order)
        return near

    def _nearest_players(self, p: Player, radius: int, limit: int) -> list[tuple[int, Player]]:
        """(distance, player) of the ``limit`` other players in play within ``radius`` that come first by
        distance, then username, in any order (an observation lists at most that many entities of any kind, and
        sorts them with the rest)."""
        return self._player_cells.nearest(p.x, p.y, radius, limit, _in_play, _username, skip=p, ordered=False)

    def _deliver(self, p: Player, message: str, scope: str, recipients: list[Player] | None) -> ToolResult:
        """Post the message to each recipient's mailbox; ``recipients`` None: every other player in play (a
        broadcast), and the message goes to the broadcast log once instead (with the ids it did not reach)."""
        msg = ChatMessage(round=self.round, sender=p.username, text=str(message), scope=scope)
        if recipients is None:
            players, all_ids, all_names, at = self._in_play_lists()
            i = at[p.agent_id]  # the sender is in play (an actor)
            ids, names = all_ids[:i] + all_ids[i + 1:], all_names[:i] + all_names[i + 1:]
            missed = {p.agent_id}
            if len(players) < len(self.players):
                missed.update(self.players.keys() - set(all_ids))
            self._broadcast(msg, missed)
        else:
            ids, names = [q.agent_id for q in recipients], [q.username for q in recipients]
            for q in recipients:
                self._take_broadcasts(q)  # the messages before this one first
                self._post(q, msg)
        eff = engine_effects(chat=ChatDelivery(scope=scope, recipients=ids, message=str(message)))
        if scope == "local" and not recipients:  # "Message delivered to nobody (...)" read as a delivery
            return engine_result(f"No teammate received your message: none is within {_tiles(self.rules.chat_radius)} "
                                 "of you; use global=true or chat to reach everyone.",
                                 effects=eff)
        return engine_result(f"Message delivered to {', '.join(names) or 'nobody'}.", effects=eff)

    @staticmethod
    def _post(q: Player, msg: ChatMessage) -> None:
        # a mailbox shows its last MAX_CHAT_SHOWN messages (observe.py counts the rest as dropped); it is cut
        # back now and then rather than at every message
        mailbox = q.mailbox
        mailbox.append(msg)
        if len(mailbox) >= 2 * MAX_CHAT_SHOWN:
            cut = len(mailbox) - MAX_CHAT_SHOWN
            del mailbox[:cut]
            q.chat_dropped += cut

    def _broadcast(self, msg: ChatMessage, missed: set[str]) -> None:
        """Put a team or global message on the log; ``missed``: the ids it does not reach."""
        at = self._broadcast_base + len(self._broadcasts)
        self._broadcasts.append(msg)
        missed_at = self._missed_at
        for a in missed:
            positions = missed_at.get(a)
            if positions is None:
                missed_at[a] = [at]
            else:
                positions.append(at)
        if len(self._broadcasts) >= self._broadcast_trim_at:
            self._trim_broadcasts()

    def _take_broadcasts(self, q: Player) -> None:
        """Move the broadcast messages ``q`` has not taken yet into its mailbox, in the order they were sent
        (before anything reads the mailbox or posts to it)."""
        log, base = self._broadcasts, self._broadcast_base
        start = q.chat_read - base
        end = len(log)
        if start >= end:
            return
        _set(q, "chat_read", base + end)  # (a Player's own __setattr__ only watches position and play flags)
        # only the last MAX_CHAT_SHOWN messages that reach q can still be shown: those are posted, the ones
        # before them only counted as dropped (a thousand players chatting would otherwise mean a thousand
        # appends per observation, most of them cut again at once)
        missed = self._missed_at.pop(q.agent_id, None)  # all within [start, end) of the log, in order
        if missed is None:  # every message since q's last read reaches it: the log's last ones, as they are
            i = max(start, end - MAX_CHAT_SHOWN)
            shown = log[i:end]
            older = i - start
        else:
            skip = {k - base for k in missed}
            shown = []
            i = end
            while i > start and len(shown) < MAX_CHAT_SHOWN:
                i -= 1
                if i not in skip:
                    shown.append(log[i])
            shown.reverse()
            older = i - start - sum(1 for k in skip if k < i)
        mailbox = q.mailbox
        if older or len(shown) == MAX_CHAT_SHOWN:  # the mailbox's own messages are older still: all dropped
            _set(q, "chat_dropped", q.chat_dropped + older + len(mailbox))
            _set(q, "mailbox", shown)
        else:  # as posting each in turn (_post) would leave it: cut back once it reached twice what is shown
            mailbox += shown
            if len(mailbox) >= 2 * MAX_CHAT_SHOWN:
                cut = len(mailbox) - MAX_CHAT_SHOWN
                del mailbox[:cut]
                _set(q, "chat_dropped", q.chat_dropped + cut)

    def _trim_broadcasts(self) -> None:
        """Drop the log's messages every player has taken (players out of play take theirs now: they never
        read their mailbox again in turn); the next trim waits until the log has doubled if this one could
        not shrink it by half (a player in play that never observes holds it back)."""
        end = self._broadcast_base + len(self._broadcasts)
        upto = min((q.chat_read for q in self.players.values() if q.active and q.alive), default=end)
        for q in self.players.values():
            if q.chat_read < upto:
                self._take_broadcasts(q)
        cut = upto - self._broadcast_base
        if cut > 0:
            del self._broadcasts[:cut]
            self._broadcast_base = upto
        if len(self._broadcasts) * 2 >= self._broadcast_trim_at:
            self._broadcast_trim_at *= 2

    def _walk_near(self, p: Player, tx: int, ty: int, reach: int, what: str, eff: Effects,
                   target_mob: str | None = None) -> ToolResult | None:
        """Walk next to (``reach``) a target for an interaction; sets ``eff.move``. None on success; an aggressive
        mob other than ``target_mob`` that the walk passes stops it (combat.py)."""
        d = _dist(p.x, p.y, tx, ty)
        if d <= reach:
            return None
        ir = self.rules.interact_range
        wm = self._walk_map(p)
        if not reachable(wm, (p.x, p.y), (tx, ty), reach):
            if wm is not self.map and reachable(self.map, (p.x, p.y), (tx, ty), reach):
                return engine_failure("blocked", self._closed_way(p, (tx, ty), reach, f"{what} at ({tx},{ty})"))
            return engine_failure("blocked", f"{what} at ({tx},{ty}) cannot be reached on foot from ({p.x},{p.y}) "
                                             f"(separate area: use a portal).")
        if d - reach > ir:
            return engine_failure("out_of_range", f"{what} at ({tx},{ty}) is {_tiles(d)} away; you walk to targets up to "
                                                  f"{_tiles(ir)} away. move_character(x={tx}, y={ty}) toward it first.")
        path = route(wm, (p.x, p.y), (tx, ty), reach, max_len=ir)
        if path is None:
            why = "obstacles in the way" if wm is self.map else "obstacles or a closed area in the way"
            return engine_failure("out_of_range", f"{what} at ({tx},{ty}) is more than {_tiles(ir)} of walking away "
                                                  f"({why}). move_character(x={tx}, y={ty}) toward it first.")
        start = (p.x, p.y)
        hazard = self._walk_hazard(start, path, skip=target_mob)
        if hazard is not None:  # an aggressive mob engages on the way: the walk ends there, the action is not done
            text = self._ambushed(p, start, path, hazard[0], hazard[1], eff, what)
            if p.agent_id not in eff.deaths:  # refused ("blocked"), yet it walked and was struck: say what was done
                text += (f" Only the walk was done: {what} was not reached, so nothing else happened; call again to "
                         "go on (a walk that starts within its range is not stopped by it).")
            return self._stopped_result(text, eff)
        p.place(*path[-1])
        eff.move = Move(start=start, end=(p.x, p.y), path_length=len(path), reached=True)
        return None

    def _unknown_target(self, p: Player, target: str, wanted: str, tool: str) -> ToolResult:
        if wanted != "resource" and target in self.nodes:
            return engine_failure("invalid", f"{target} is a resource node: use harvest_resource(targetInstance='{target}').")
        if wanted != "mob" and target in self.mobs:
            return engine_failure("invalid", f"{target} is a mob: use attack_entity(targetInstance='{target}').")
        if wanted != "ground_item" and target in self.ground:
            return engine_failure("invalid", f"{target} is an item on the ground: use pickup_resource(targetInstance='{target}').")
        example = {"resource": "oak_tree#12", "mob": "goblin#3", "ground_item": "ground#4"}[wanted]
        near = [e.id for e in self._nearby_of_kind(p, wanted)][:5]
        seen = f" Nearby now: {', '.join(near)}." if near else f" Nothing of that kind is within {self.rules.view_radius} tiles."
        # "No mob with id X" read as untrue to a fighter whose guessed id named a ghoul 13 tiles off that nobody had
        # seen yet (pilot of task_311): such a raider answers as an id that does not exist, and the text says both
        unseen = "; a mob that rose where nobody of the team has looked yet cannot be named" if wanted == "mob" else ""
        return engine_failure("unknown_target", f"No {wanted.replace('_', ' ')} with id {target!r} that you can target. "
                                                f"{tool} takes an id from the Nearby list of your observation or one a "
                                                f"teammate has had in view (for example '{example}'){unseen}.{seen}")

    def _nearby_of_kind(self, p: Player, kind: str) -> list[Any]:
        vr = self.rules.view_radius
        if kind == "ground_item":
            items = [g for _, g in self.ground.near(p.x, p.y, vr)]
            return sorted(items, key=lambda g: (_dist(p.x, p.y, g.x, g.y), g.id))
        out = [ref for d, k, ref in self._static_near(p.x, p.y, vr) if k == kind]
        return sorted(out, key=lambda r: (_dist(p.x, p.y, r.x, r.y), r.id))

    def _static_near(self, x: int, y: int, radius: int):
        """(distance, kind, ref) of every bucketed entity (node, mob, portal end, station, NPC) within
        Manhattan ``radius`` of (x, y), in bucket order (callers sort). Nodes and mobs come as live state."""
        nodes, mobs = self.nodes, self.mobs
        for d, kind, ref, eid in self._fixed.near(x, y, radius):
            if kind == "resource":
                ref = nodes[eid]
            elif kind == "mob":
                ref = mobs[eid]
            yield d, kind, ref
        if self.movers.motions:
            for d, m in self._movers_near(x, y, radius):
                yield d, "mob", m

    def _stackable(self, item: str) -> bool:
        d = self.items.get(item)
        return d.stackable if d is not None else True

    def _max_hp(self, p: Player) -> int:
        return stats.max_hp(p.levels["health"])

    def _respawn(self, rounds: int) -> int:
        return max(1, round(rounds * self.rules.respawn_scale))

    def _roll(self, y: Yield) -> int | None:
        """How many items one gather or kill gives of a node yield or mob drop; None when its chance fails."""
        if y.chance < 1.0 and self.rng.random() >= y.chance:
            return None
        return self.rng.randint(y.min, max(y.min, y.max))

    def _gain_xp(self, p: Player, skill: str, amount: int, eff: Effects) -> None:
        if amount <= 0:
            return
        old = p.levels[skill]
        p.xp[skill] += amount
        new = self.xp_table.level_for(p.xp[skill])
        eff.xp[skill] = eff.xp.get(skill, 0) + amount
        if new > old:
            p.levels[skill] = new
            eff.level_ups[skill] = new
            if skill == "health":  # a higher max HP comes with the HP to fill it
                p.hp += stats.max_hp(new) - stats.max_hp(old)

    @staticmethod
    def _xp_text(eff: Effects) -> str:
        if not eff.xp:
            return ""
        parts = [f"{s} +{n}" + (f" (level {eff.level_ups[s]}!)" if s in eff.level_ups else "") for s, n in eff.xp.items()]
        return "XP: " + ", ".join(parts) + "."

    def _equipped_item(self, p: Player, slot: str) -> ItemDef | None:
        e = p.equipment.get(slot)
        return self.items[e[0]] if e else None

    def _tool_items(self, p: Player, tool_type: str) -> list[ItemDef]:
        keys = [k for _, k, _ in p.inv.filled()] + [e[0] for e in p.equipment.values()]
        return [self.items[k] for k in keys if self.items[k].tool_type == tool_type]

    def _usable_tool(self, p: Player, tool_type: str) -> ItemDef | ToolResult:
        tools = self._tool_items(p, tool_type)
        if not tools:
            return engine_failure("missing_tool", f"You need {_a(tool_type)} in your inventory or equipped"
                                                  f"{self._tool_example(tool_type)}.")
        usable = [t for t in tools if all(p.levels[s] >= lv for s, lv in t.requirements.items())]
        if not usable:
            t = tools[0]
            need = ", ".join(f"{s} {lv}" for s, lv in sorted(t.requirements.items()))
            return engine_failure("level_too_low", f"Your {t.name} needs {need} to use.")
        return max(usable, key=lambda t: (t.tool_tier, t.key))

    def _tool_example(self, tool_type: str) -> str:
        ex = sorted((i.tool_tier, i.key) for i in self.data.items if i.tool_type == tool_type)
        return f" (for example {ex[0][1]})" if ex else ""

    def _has_item(self, p: Player, key: str) -> bool:
        return p.inv.count(key) > 0 or any(e[0] == key for e in p.equipment.values())

    def _inv_summary(self, p: Player) -> str:
        return ", ".join(f"[{i}] {k} x{n}" for i, k, n, _ in p.inv.rows()) or "empty"

    def _drop(self, item: str, count: int, x: int, y: int) -> None:
        """Put items on the ground; a non-stackable item lies as one ground item per piece."""
        pieces = [count] if self._stackable(item) else [1] * count
        for n in pieces:
            self._ground_seq += 1
            gid = f"ground#{self._ground_seq}"
            self.ground[gid] = GroundItem(gid, item, n, x, y)

    def _nearest_station(self, p: Player, kind: str):
        best = None
        for s in self.stations:
            if s.kind == kind:
                key = (_dist(p.x, p.y, s.x, s.y), s.y, s.x)
                if best is None or key < best[0]:
                    best = (key, s)
        return best[1] if best else None

    def _nearest_portal_end(self, x: int, y: int, same_area: bool = True) -> PortalEnd | None:
        comp = self.map.component(x, y) if self.map.walkable(x, y) else -1
        best = None
        for e in self.portal_ends:
            if same_area and not any(self.map.component(ax, ay) == comp
                                     for ax, ay in [(e.x, e.y), *self.map.adjacent_walkable(e.x, e.y)] if self.map.walkable(ax, ay)):
                continue
            key = (_dist(x, y, e.x, e.y), e.id)
            if best is None or key < best[0]:
                best = (key, e)
        return best[1] if best else None

    def _walk_map(self, p: Player):
        """The map ``p`` walks on: the world's, or while areas are closed the one without them (closures.py)."""
        mech = self.mech
        if mech is None or not mech.closures.active:
            return self.map
        return mech.closures.map_for(p.x, p.y)

    def _closed_way(self, p: Player, target: tuple[int, int], reach: int, what: str) -> str:
        """Why a walk to ``what`` is refused: closed areas cut every way there on foot."""
        closures = self.mech.closures  # type: ignore[union-attr]  (a walk map other than the world's has them)
        cut = closures.cutting((p.x, p.y), target, reach)
        return (f"{what} cannot be reached on foot from ({p.x},{p.y}) now: the way is closed ("
                f"{closures.text(cut)}). Every way there on foot crosses {'it' if len(cut) == 1 else 'them'}; wait "
                f"until it opens again, or find another way (a portal).")

    def _detour_text(self, p: Player, wm, goal: tuple[int, int], path: list | None) -> str:
        """ "The way round the closed area ... is N tiles longer. " when the walk's path goes round a closure."""
        if not path:
            return ""
        open_path = route(self.map, (p.x, p.y), goal)
        if open_path is None or len(open_path) >= len(path):
            return ""
        closures = self.mech.closures  # type: ignore[union-attr]
        on_it = [c for c in closures.in_the_way(wm) if any(t in c.tiles for t in open_path)]
        if not on_it:
            return ""
        return (f"The short way is closed ({closures.text(on_it)}): your path goes round, "
                f"{_tiles(len(path) - len(open_path))} longer. ")

    def _nearest_reachable(self, p: Player, x: int, y: int, gm=None) -> tuple[int, int] | None:
        """Nearest walkable tile to (x, y) in the agent's own area (else any walkable tile); ``gm``: the map it
        walks on (default: the world's)."""
        gm = self.map if gm is None else gm
        comp = gm.component(p.x, p.y)
        for radius in (4, 12, 30):
            best = None
            for dy in range(-radius, radius + 1):
                span = radius - abs(dy)
                for dx in range(-span, span + 1):
                    tx, ty = x + dx, y + dy
                    if gm.walkable(tx, ty) and gm.component(tx, ty) == comp:
                        # nearest the target, then nearest the walker (the side it comes from)
                        key = (abs(dx) + abs(dy), _dist(p.x, p.y, tx, ty), ty, tx)
                        if best is None or key < best:
                            best = key
            if best is not None:
                return (best[3], best[2])
        # far out at sea or deep in rock: the first tile of the agent's own area on the way back to it
        steps = max(abs(x - p.x), abs(y - p.y))
        for i in range(1, steps + 1):
            tx, ty = x + round((p.x - x) * i / steps), y + round((p.y - y) * i / steps)
            if gm.walkable(tx, ty) and gm.component(tx, ty) == comp:
                return (tx, ty)
        return None

    def _blocked_tile(self, x: int, y: int) -> str:
        """What a tile no one can stand on is, for a walk that ends beside it: "oak_tree#12's tile", "water",
        "closed ..." (an area closed by an event)."""
        if self.mech is not None and self.map.walkable(x, y):
            held = self.mech.closures.holding(x, y)
            if held:
                return "in a closed area: " + self.mech.closures.text(held)
        for n in self._cells.get((x // CELL, y // CELL), ()):
            if (n[0], n[1]) == (x, y) and n[2] in ("resource", "station"):
                return f"{n[4] if n[2] == 'resource' else 'the ' + n[3].kind}'s tile"
        return f"{self._biome_name(x, y).lower()} (not walkable)"

    def _what_blocks(self, x: int, y: int) -> str:
        if self.mech is not None and self.map.walkable(x, y) and self.mech.closures.holding(x, y):
            return "a closed area: " + self.mech.closures.text(self.mech.closures.holding(x, y))
        for n in self._cells.get((x // CELL, y // CELL), ()):
            if n[2] == "resource" and (n[0], n[1]) == (x, y):
                node = self.nodes[n[3].id]
                return f"{node.type.name} {node.id} stands there"
        return f"{self._biome_name(x, y)} is not walkable"

class FixedIndex:
    """What never changes in a loaded world, indexed once and shared by every engine on it (read-only):
    placements by id, portal ends, and the fixed things by bucket (nodes and mobs by placement)."""

    def __init__(self, loaded: LoadedWorld, movers: Movers | None = None):
        moving = movers.motions if movers is not None else {}
        self.nodes = {n.id: n for n in loaded.nodes}
        self.mobs = {m.id: m for m in loaded.mobs}
        self.portal_ends: list[PortalEnd] = portal_ends(loaded.data.portals)
        # (x, y, kind, placement or fixed thing, entity id) by bucket
        cells: dict[tuple[int, int], list[tuple[int, int, str, Any, str]]] = defaultdict(list)
        for n in loaded.nodes:
            cells[(n.x // CELL, n.y // CELL)].append((n.x, n.y, "resource", n, n.id))
        for m in loaded.mobs:
            if m.id not in moving:  # a moving mob is found through its Movers' index, where it can be
                cells[(m.x // CELL, m.y // CELL)].append((m.x, m.y, "mob", m, m.id))
        for e in self.portal_ends:
            cells[(e.x // CELL, e.y // CELL)].append((e.x, e.y, "portal", e, e.id))
        for s in loaded.stations:
            cells[(s.x // CELL, s.y // CELL)].append((s.x, s.y, "station", s, f"{s.kind}@{s.x},{s.y}"))
        for npc in loaded.data.npcs:
            cells[(npc.x // CELL, npc.y // CELL)].append((npc.x, npc.y, "npc", npc, npc.key))
        self.cells = dict(cells)
        # landmarks by the buckets their radius reaches: a tile's place name reads a few, not all of them
        places: dict[tuple[int, int], list[Any]] = defaultdict(list)
        for lm in loaded.data.landmarks:
            for cy in range((lm.y - lm.radius) // CELL, (lm.y + lm.radius) // CELL + 1):
                for cx in range((lm.x - lm.radius) // CELL, (lm.x + lm.radius) // CELL + 1):
                    places[(cx, cy)].append(lm)
        self.places = dict(places)
        self.areas = landmark_areas(loaded)
        self._near: dict[tuple[int, int, int], tuple[tuple[int, str, Any, str], ...]] = {}

    NEAR_KEEP = 20_000  # (tile, radius) answers kept (a few entities each; cleared when full)

    def near(self, x: int, y: int, radius: int) -> tuple[tuple[int, str, Any, str], ...]:
        """(distance, kind, placement or fixed thing, entity id) of every fixed thing within Manhattan ``radius``
        of (x, y), in bucket order: kept per tile and radius (nothing here ever moves, and an agent that did
        not move asks again next turn)."""
        key = (x, y, radius)
        found = self._near.get(key)
        if found is None:
            out = []
            cells = self.cells
            for cy in range((y - radius) // CELL, (y + radius) // CELL + 1):
                for cx in range((x - radius) // CELL, (x + radius) // CELL + 1):
                    for ex, ey, kind, ref, eid in cells.get((cx, cy), ()):
                        d = abs(ex - x) + abs(ey - y)
                        if d <= radius:
                            out.append((d, kind, ref, eid))
            found = tuple(out)
            if len(self._near) >= self.NEAR_KEEP:
                self._near.clear()
            self._near[key] = found
        return found


def landmark_areas(loaded: LoadedWorld) -> dict[int, Any]:
    """The walkable areas named by a landmark (walkable component -> landmark): those that hold exactly one, an
    island, a cave or a dungeon (the mainland holds many). A landmark's area is the component of the walkable
    tile nearest its centre, the rule of the verifiers' ``at_location`` check with ``area:``
    (plugins/verifiers/checks.py), so a player the observation says is in it passes that check."""
    gm = loaded.map
    named: dict[int, list[Any]] = defaultdict(list)
    for lm in loaded.data.landmarks:
        spot = gm.nearest_walkable(lm.x, lm.y, max_radius=lm.radius + 5)
        if spot is not None:
            named[gm.component(*spot)].append(lm)
    return {comp: lms[0] for comp, lms in named.items() if len(lms) == 1}


def fixed_index(loaded: LoadedWorld, movers: Movers | None = None) -> FixedIndex:
    """The loaded world's :class:`FixedIndex` for a configuration of moving mobs (kept on its ``Movers``; without
    one, every mob at its spawn, kept on the loaded world), built on first use."""
    holder = movers.__dict__ if movers is not None and movers.motions else loaded.__dict__
    index = holder.get("_fixed_index")
    if index is None:
        index = holder["_fixed_index"] = FixedIndex(loaded, movers)
    return index


def _checked_keys(block: dict[str, dict] | None, what: str, loaded: LoadedWorld) -> dict[str, dict] | None:
    """A task's ``mobs:`` or ``nodes:`` block with its keys checked against the world (type keys or instance
    ids); ValueError naming the key and the fix (a task file is checked earlier, by tasks validate)."""
    if not block:
        return None
    if what == "mobs":
        types, ids = {t.key for t in loaded.data.mob_types}, {m.id for m in loaded.mobs}
    else:
        types, ids = {t.key for t in loaded.data.node_types}, {n.id for n in loaded.nodes}
    bad = sorted(k for k in block if k not in types and k not in ids)
    if bad:
        raise ValueError(f"{what}: unknown {what[:-1]} type or instance id(s) {bad}; use a type key from the data "
                         f"pack or an id from `agentworld world near PLACE`")
    return block


def make_rules(base: Rules, overrides: dict | None) -> Rules:
    """``base`` with ``overrides`` applied; unknown rule names or bad values raise ValueError naming the fix."""
    if not overrides:
        return base
    allowed = list(Rules.model_fields)
    unknown = sorted(k for k in overrides if k not in allowed)
    if unknown:
        raise ValueError(f"unknown world rule(s) {unknown}; allowed rules: {', '.join(allowed)}")
    try:
        return Rules(**{**base.model_dump(), **overrides})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']} (got {e.get('input')!r})" for e in exc.errors())
        raise ValueError(f"bad world rule value(s): {problems}") from None


def _close_hint(key: str, known: dict[str, Any]) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun.replace("_", " ") if noun else "a tool"
