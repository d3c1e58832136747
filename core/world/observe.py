"""Observations for the embedded engine: what one agent sees this turn (DESIGN section 4).

A mixin of :class:`~agentworld.core.world.engine.EmbeddedWorld`. Entities within ``rules.view_radius``
(Manhattan) come from spatial buckets (fixed ones for nodes, mobs, portals, stations and NPCs; live ones for
players and ground items), so an observation never scans the whole world; they are sorted by distance then
id and capped at ``rules.max_nearby``. Other players appear with their username and position only.
Building pydantic objects is the main cost of an observation: immutable inventory and Nearby rows are
reused.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from .observation import Entity, InvItem, Observation
from . import stats
from .engine_state import CELL, MAX_CHAT_SHOWN, SeenBy, same_equipment
from .events import NEVER
from .scarcity import finite_note
from .wording import tiles
from .engine_state import manhattan as _dist


_BY_DISTANCE_ID = itemgetter(0, 1)  # Nearby order: distance, then id
NEAR_PLACE = 12  # tiles beyond a landmark's radius within which an observation says how far it is
_set = object.__setattr__  # past Player.__setattr__, which watches only position and play flags




def _row(kind: str, id: str, name: str, x: int, y: int, distance: int, level: int | None, hp: int | None,
         max_hp: int | None, note: str) -> Entity:
    """A Nearby row from the engine's own values."""
    return Entity(kind=kind, id=id, name=name, x=x, y=y, distance=distance, level=level, hp=hp, max_hp=max_hp,
                  note=note)


def _node_note(nt: Any) -> str:
    """What a node's row says of its type (the same for every node of it while it is not depleted)."""
    need = f"needs {nt.tool} + {nt.skill} {nt.level}" if nt.tool else f"needs {nt.skill} {nt.level}"
    return f"{need}; gives {'/'.join(y.item for y in nt.yields[:2])}"


def _moving_tag(motion: Any) -> str:
    if motion.loop:
        return f"patrols ({len(motion.waypoints)} waypoint(s), {tiles(motion.speed)}/round)"
    return f"roams within {motion.leash} of ({motion.home[0]},{motion.home[1]})"


def _mob_tags(mt: Any, aggro: bool = True) -> list[str]:
    """What a mob's row says of its type (the rest of its note is whether it is dead). ``aggro``: the world's
    rule; where it is off (a task's ``world_rules``) no mob attacks unprovoked, and no row says it does."""
    tags = []
    if mt.boss:
        tags.append("boss")
    if mt.aggro_range > 0 and aggro:
        tags.append(f"aggressive (range {mt.aggro_range})")
    return tags


class ObservationMixin:
    def observe(self, agent_id: str) -> Observation:
        """The agent's view; hands over (and clears) the chat and world notes received since the last one."""
        return self._observation(agent_id, consume=True)

    def peek(self, agent_id: str) -> Observation:
        """The same view without consuming chat or notes (for tool results that show the new state)."""
        return self._observation(agent_id, consume=False)

    def _observation(self, agent_id: str, consume: bool) -> Observation:
        p = self.players.get(agent_id)
        if p is None:
            p = self._player(agent_id)  # raises, naming the known ids
        r = self.rules
        vr = r.view_radius
        cands: list[tuple[int, str, str, Any]] = []
        nodes, mobs = self.nodes, self.mobs
        live_nodes, live_mobs = nodes.live, mobs.live  # the states made so far (read first: most are)
        for d, kind, ref, eid in self._fixed.near(p.x, p.y, vr):  # nodes and mobs as their live state
            if kind == "resource":
                ref = live_nodes.get(eid) or nodes[eid]
            elif kind == "mob":
                ref = live_mobs.get(eid) or mobs[eid]
            cands.append((d, eid, kind, ref))
        mech = self.mech
        if mech is not None and mech.spawned:
            cands += mech.seen_near(p.x, p.y, vr)  # mobs a task's event brought (a raid)
        if self.movers.motions:  # moving mobs where they stand this round (roaming.py)
            for d, m in self._movers_near(p.x, p.y, vr):
                cands.append((d, m.id, "mob", m))
        # only the players that can make the list (max_nearby of them at most): a crowd is not scanned whole
        players = self._nearest_players(p, vr, r.max_nearby)
        for d, q in players:
            cands.append((d, q.username, "player", q))
        for d, g in self.ground.near(p.x, p.y, vr):
            cands.append((d, g.id, "ground_item", g))
        cands.sort(key=_BY_DISTANCE_ID)
        notes: list[str] = []
        nearby = []
        limit, entity = r.max_nearby, self._entity
        heard = self._npc_heard.setdefault(agent_id, {})
        for d, eid, kind, ref in cands:
            # an NPC's line is a note when it comes into view and when it says something new, not every turn
            if kind == "npc" and heard.get(eid) != ref.says:
                notes.append(f"{ref.name} (npc at {ref.x},{ref.y}) says: {ref.says}")
                if consume:
                    heard[eid] = ref.says
            if len(nearby) < limit:
                # the commonest row, a player's kept on it (_entity), read here without the call
                if kind == "player" and (shown := ref.shown) is not None and shown[0] == ref.x \
                        and shown[1] == ref.y and (row := shown[2].get(d)) is not None:
                    nearby.append(row)
                else:
                    nearby.append(entity(d, eid, kind, ref))
        notes = p.notes + notes
        if len(cands) > limit:  # a crowd is cut, and an agent that is not told would take the list for all
            more = len(cands) - limit
            more_s = f"{more} or more" if len(players) >= limit > 0 else str(more)
            notes.append(f"Nearby lists the {limit} nearest things in view; {more_s} farther ones are not listed.")
        if mech is not None and mech.objective_news:
            notes += mech.standing_changes(agent_id, notes)
        if mech is not None and mech.closures.active:  # a closed area in view (closures.py)
            notes += mech.closure_note(p.x, p.y, vr)
        self._take_broadcasts(p)
        over = len(p.mailbox) - MAX_CHAT_SHOWN  # the mailbox is cut back to its last messages only now and then
        chat = p.mailbox[-MAX_CHAT_SHOWN:] if over > 0 else list(p.mailbox)
        dropped = p.chat_dropped + max(over, 0)
        if dropped:
            notes.append(f"{dropped} older chat message(s) were dropped (only the last {MAX_CHAT_SHOWN} are kept).")
        if consume:  # emptied in place (the observation holds copies): a Player's attribute writes cost more
            p.notes.clear()
            p.mailbox.clear()
            if p.chat_dropped:
                p.chat_dropped = 0
        # what the player's last observation was built from, reused while it holds (SeenBy)
        seen = p.seen
        if seen is None:
            seen = SeenBy()
            _set(p, "seen", seen)
        x, y = p.x, p.y
        if seen.x != x or seen.y != y:
            seen.x, seen.y, seen.biome, seen.place = x, y, self._biome_name(x, y), self._where_name(x, y)
        slots = p.inv.slots
        if seen.slots == slots:
            inv = list(seen.inventory)
        else:
            inv = [self._inv_item(i, key, n, k) for i, key, n, k in p.inv.rows()]
            seen.slots, seen.inventory = [s[:] if s is not None else None for s in slots], inv[:]
        levels = p.levels
        if seen.levels != levels:
            seen.levels, seen.max_hp, seen.combat_level = dict(levels), self._max_hp(p), stats.combat_level(levels)
        eq = p.equipment
        if seen.equipment is None or not same_equipment(seen.equipment, eq):
            seen.equipment = {slot: e[:] for slot, e in eq.items()}
            seen.equipment_names = {slot: self.items[e[0]].name + (f" x{e[1]}" if e[1] > 1 else "")
                                    for slot, e in eq.items()}
        return Observation(**{
            "xp_to_next": self._xp_to_next(p),
            "agent_id": p.agent_id, "username": p.username, "round": 0, "max_rounds": 0, "actions_left": None,
            "x": x, "y": y, "biome": seen.biome, "place": seen.place,
            "hp": p.hp, "max_hp": seen.max_hp, "alive": p.alive, "combat_level": seen.combat_level,
            "skills": dict(levels), "inventory": inv, "inventory_slots": p.inv.size,
            "inventory_used": p.inv.size - p.inv.free_slots(),
            "carry_limit": p.inv.limit or None,
            "equipment": dict(seen.equipment_names),
            "nearby": nearby, "last_result": None, "chat": chat, "party": None, "notes": notes})

    def _xp_to_next(self, p: Any) -> dict[str, int]:
        """XP each skill still needs for its next level (skills above level 1 or with XP, below the cap): kept
        per player while its XP does not change (most turns it does not)."""
        kept = self._xp_next.get(p.agent_id)
        if kept is not None and kept[0] == p.xp:
            return dict(kept[1])
        table = self.xp_table
        out = {s: table.xp_for(lv + 1) - p.xp[s] for s, lv in p.levels.items()
               if (lv > 1 or p.xp.get(s, 0) > 0) and lv < table.max_level}
        self._xp_next[p.agent_id] = (dict(p.xp), out)
        return dict(out)

    def _inv_item(self, index: int, key: str, count: int, slots: int = 1) -> InvItem:
        """Observation inventory rows are immutable values: reuse them (building pydantic objects is the
        main cost of an observation). ``slots``: how many slots the row's items fill (non-stackable ones
        take one each)."""
        k = (index, key, count, slots)
        item = self._inv_rows.get(k)
        if item is None:
            if len(self._inv_rows) > 50_000:
                self._inv_rows.clear()
            item = self._inv_rows[k] = InvItem(index=index, key=key, name=self.items[key].name, count=count,
                                               slots=slots if slots > 1 else None)
        return item

    def _entity(self, d: int, eid: str, kind: str, ref: Any) -> Entity:
        """The observation's row for one nearby thing. Rows are immutable values like inventory rows, and the
        same ones recur turn after turn (a crowd sees the same players, a village the same stations): they
        are reused. A player's, a node's and a mob's rows are kept on the thing itself, by distance, while the
        rest of what they show holds (the player's tile, the live mob's HP, the node not depleted): the thing is
        read anyway, and the world's table of rows is not (at 1,000 agents, a cold lookup in a big dict per
        row). The other rows are kept in that table, keyed by everything they show."""
        rows: dict[int, Entity] | None = None
        if kind == "player":
            shown = ref.shown
            if shown is None or shown[0] != ref.x or shown[1] != ref.y:
                shown = [ref.x, ref.y, {}]
                _set(ref, "shown", shown)
            rows = shown[2]
        elif kind == "resource" and ref.respawn_at is None:
            rows = ref.shown
            if rows is None:
                rows = ref.shown = {}
        elif kind == "mob" and ref.respawn_at is None:
            shown = ref.shown
            if shown is None or shown[0] != ref.hp or shown[2] != ref.x or shown[3] != ref.y:
                shown = ref.shown = [ref.hp, {}, ref.x, ref.y]  # (a moving mob's rows hold while it stands there)
            rows = shown[1]
        if rows is not None:
            row = rows.get(d)
            if row is None:
                row = rows[d] = self._new_entity(d, eid, kind, ref)
            return row
        if kind in ("resource", "mob"):  # depleted or dead: the row counts the rounds until it is back
            back = None if ref.respawn_at is None else max(1, ref.respawn_at - self.round)
            k = (kind, eid, ref.x, ref.y, d, back)
        elif kind == "ground_item":  # (a heavy load's note says who holds it this round)
            k = (kind, eid, ref.item, ref.count, ref.x, ref.y, d, self.mech.load_note(eid) if self.mech else "")
        elif kind == "portal" and self.mech is not None:  # a task's events may close it
            k = (kind, eid, d, self.mech.portal_note(ref.key, ref.returning))
        else:  # portals, stations and NPCs never change
            k: tuple = (kind, eid, d)
        row = self._entity_rows.get(k)
        if row is None:
            if len(self._entity_rows) > 20_000:  # bounded: a long episode visits ever new rows
                self._entity_rows.clear()
            row = self._entity_rows[k] = self._new_entity(d, eid, kind, ref)
        return row

    def _new_entity(self, d: int, eid: str, kind: str, ref: Any) -> Entity:
        if kind == "resource":
            nt = ref.type
            note = self._type_notes.get(nt.key)  # (per node type: the type never changes)
            if note is None:
                note = self._type_notes[nt.key] = _node_note(nt)
            if ref.respawn_at is not None:
                note += ("; exhausted, does not come back" if ref.respawn_at >= NEVER
                         else f"; depleted, back in {max(1, ref.respawn_at - self.round)} rounds")
            if ref.total is not None and not (ref.respawn_at is not None and ref.respawn_at >= NEVER):
                note += finite_note(ref)  # (an exhausted node shows no count: an event may have killed it with items left)
            return _row(kind=kind, id=eid, name=nt.name, x=ref.x, y=ref.y, distance=d, level=nt.level,
                        hp=None, max_hp=None, note=note)
        if kind == "mob":
            mt = ref.type
            if ref.respawn_at is not None:
                back = ref.respawn_at - self.round
                dead = "dead" if back >= NEVER // 2 else f"dead, back in {max(1, back)} rounds"  # a raider: never
                note = "; ".join([*_mob_tags(mt, self.rules.aggro), dead])
                return _row(kind=kind, id=eid, name=mt.name, x=ref.x, y=ref.y, distance=d, level=mt.level,
                            hp=None, max_hp=None, note=note)
            note = self._mob_notes.get(mt.key)
            if note is None:
                note = self._mob_notes[mt.key] = "; ".join(_mob_tags(mt, self.rules.aggro))
            if self.mech is not None:
                note += self.mech.mob_note(eid)
            if ref.motion is not None:  # a moving mob says so: what an agent saw of it may not hold next round
                note = "; ".join(filter(None, [note, _moving_tag(ref.motion)]))
            return _row(kind=kind, id=eid, name=mt.name, x=ref.x, y=ref.y, distance=d, level=mt.level,
                        hp=ref.hp, max_hp=mt.hp, note=note)
        if kind == "player":
            return _row(kind=kind, id=eid, name=ref.username, x=ref.x, y=ref.y, distance=d, level=None,
                        hp=None, max_hp=None, note="")
        if kind == "ground_item":
            return _row(kind=kind, id=eid, name=self.items[ref.item].name, x=ref.x, y=ref.y, distance=d,
                        level=None, hp=None, max_hp=None,
                        note=f"{ref.item} x{ref.count}" + (self.mech.load_note(eid) if self.mech is not None else ""))
        if kind == "portal":
            pt = ref.portal
            dest = self._place_name(ref.to_x, ref.to_y)
            note = f"portal to {dest or f'({ref.to_x},{ref.to_y})'}"
            if pt.requires_item:
                note += f"; needs {pt.requires_item}"
            if pt.requires_level:
                note += "; needs " + ", ".join(f"{s} {lv}" for s, lv in sorted(pt.requires_level.items()))
            if self.mech is not None:
                note += self.mech.portal_note(pt.key, ref.returning)
            # the return side of a two-way portal says so: "Ferry to Palm Isle" on the island leads off it
            return _row(kind=kind, id=eid, name=ref.name, x=ref.x, y=ref.y, distance=d, level=None,
                        hp=None, max_hp=None, note=note)
        if kind == "station":
            where = self._landmark_name(getattr(ref, "landmark", None))
            return _row(kind=kind, id=eid, name=ref.kind, x=ref.x, y=ref.y, distance=d, level=None,
                        hp=None, max_hp=None, note=f"crafting station{f' ({where})' if where else ''}")
        return _row(kind="npc", id=eid, name=ref.name, x=ref.x, y=ref.y, distance=d, level=None,
                    hp=None, max_hp=None, note="npc")

    def _biome_name(self, x: int, y: int) -> str:
        key = self.map.biome_at(x, y)
        return self.biome_names.get(key, key)

    def _place_name(self, x: int, y: int) -> str | None:
        best = None
        for lm in self._places.get((x // CELL, y // CELL), ()):  # the landmarks whose radius reaches this bucket
            d = _dist(x, y, lm.x, lm.y)
            if d <= lm.radius and (best is None or (d, lm.key) < best[0]):
                best = ((d, lm.key), lm.name)
        return best[1] if best else None

    def _where_name(self, x: int, y: int) -> str | None:
        """What an observation calls the place at (x, y): the landmark whose radius covers it; else, in an area
        named by one landmark (an island, a cave), that landmark and how far its centre is; else "N tiles from"
        the nearest landmark's centre within NEAR_PLACE of its radius. A guide may accept more than a landmark's radius
        (within 10 of Oakridge's centre, whose radius is 8): the distance lets a player at 9 tiles see it is there.
        And a player at the Palm Isle ferry landing, told only "Jungle", could not tell it was on Palm Isle."""
        name = self._place_name(x, y)
        if name is not None:
            return name
        area = self._areas.get(self.map.component(x, y))
        if area is not None:
            return f"{area.name} ({tiles(_dist(x, y, area.x, area.y))} from its centre)"
        best = None
        for lm in self.data.landmarks:
            d = _dist(x, y, lm.x, lm.y)
            if d <= lm.radius + NEAR_PLACE and (best is None or (d, lm.key) < best[0]):
                best = ((d, lm.key), lm)
        if best is None:
            return None
        # the centre is named: a quartermaster 4 tiles from its post read "8 tiles from Sunscar Outpost" and took
        # it for its distance from the post it was told, (582,620), not from the place's centre (580,618)
        lm = best[1]
        return f"{tiles(best[0][0])} from {lm.name}'s centre ({lm.x},{lm.y})"

    def _landmark_name(self, key: str | None) -> str | None:
        if not key:
            return None
        for lm in self.data.landmarks:
            if lm.key == key:
                return lm.name
        return key
