"""Combat for the embedded engine: the fight loop, loot, death, and the aggro exchange at the tick.

A mixin of :class:`~agentworld.core.world.engine.EmbeddedWorld` (it uses the engine's state and helpers).
A fight resolves completely in one call: exchanges alternate (the agent acts first: eat when low on HP,
otherwise attack; then the mob strikes) until one side dies or ``rules.max_fight_exchanges`` is reached.
The mob keeps its wounds, so several agents can wear a boss down over several turns. Formulas: stats.py.

Hazards act (issue 26): an aggressive mob engages a player whose walk enters its aggro range (the walk stops on
that tile and the mob strikes once; the fight or the flight is the player's next turn), and at the round's tick
every aggressive mob strikes the players within its range, after moving mobs took their step. A mob already in
range of where a walk starts does not stop it (so a player can always walk away). A mob in a fight holds still
through the next tick (roaming.hold).
"""

from __future__ import annotations

from .effects import Effects, HpChange, ItemDelta, Kill, Move, ToolResult, engine_result
from . import stats
from .engine_state import CELL, MobState, Player, manhattan
from .models import ItemStats
from .roaming import advance, hold
from .wording import tiles


class CombatMixin:
    def _fight(self, p: Player, mob: MobState, style: str, eff: Effects) -> ToolResult:
        mt, r, rng = mob.type, self.rules, self.rng
        style_skill = stats.STYLE_SKILL[style]
        bonus = self._bonus(p)
        p_hit = stats.hit_chance(p.levels["accuracy"] + bonus["accuracy"], mt.defense)
        max_hit = stats.agent_max_hit(p.levels[style_skill], bonus[style_skill])
        m_hit = stats.hit_chance(mt.accuracy, p.levels["defense"] + bonus["defense"])
        mob_max = max(1, mt.attack)
        hp_before = p.hp
        dealt = taken = exchanges = 0
        ammo_used: dict[str, int] = {}
        ended = ""
        while exchanges < r.max_fight_exchanges:
            exchanges += 1
            mhp = self._max_hp(p)
            food_i = self._best_food(p) if p.hp < r.auto_eat_below * mhp else None
            if food_i is not None:
                res = self._eat(p, food_i, self.items[p.inv.slots[food_i][0]])
                eff.lost.extend(res.effects.lost)
                eff.hp.extend(res.effects.hp)
            elif r.retreat_below > 0 and p.hp < r.retreat_below * mhp:
                ended = "retreat"
                break
            else:
                if style == "ranged":
                    ammo_key = self._use_ammo(p)
                    if ammo_key is None:
                        ended = "ammo"
                        break
                    ammo_used[ammo_key] = ammo_used.get(ammo_key, 0) + 1
                if rng.random() < p_hit:
                    dmg = min(mob.hp, rng.randint(1, max_hit))
                    mob.hp -= dmg
                    dealt += dmg
                    if mob.hp <= 0:
                        ended = "kill"
                        break
            if rng.random() < m_hit:
                dmg = min(p.hp, rng.randint(1, mob_max))
                p.hp -= dmg
                taken += dmg
                if p.hp <= 0:
                    ended = "died"
                    break
        for ammo_key, n in ammo_used.items():
            eff.lost.append(ItemDelta(agent=p.agent_id, item=ammo_key, count=n, source=f"combat:{mob.id}"))
        eff.hp.append(HpChange(agent=p.agent_id, before=hp_before, after=p.hp, cause=f"combat:{mob.id}"))
        # XP: per point of damage dealt (style 4, accuracy 2, health 1), defense per point taken, kill bonus
        if dealt:
            self._gain_xp(p, style_skill, 4 * dealt, eff)
            self._gain_xp(p, "accuracy", 2 * dealt, eff)
            self._gain_xp(p, "health", dealt, eff)
        if taken:
            self._gain_xp(p, "defense", taken, eff)
        lines = [f"Fought {mt.name} {mob.id} for {exchanges} exchange(s): you dealt {dealt}, took {taken}."]
        if ended == "kill":
            self._gain_xp(p, style_skill, mt.xp, eff)
            mob.hp = 0
            mob.respawn_at = self.round + self._respawn(mt.respawn_rounds)
            self.dead_mobs[mob.id] = mob
            self.wounded.pop(mob.id, None)
            p.kills[mt.key] = p.kills.get(mt.key, 0) + 1
            eff.kills.append(Kill(mob=mt.key, instance=mob.id, level=mt.level, by=p.agent_id))
            loot = self._roll_loot(p, mob, eff)
            lines.append(f"You killed it. Loot: {loot}.")
            self._tell_witnesses(p, mob, mt.name)
        else:
            if mob.hp < mt.hp:
                self.wounded[mob.id] = mob
            if ended == "died":
                lines.append(f"{mt.name} survives with {mob.hp}/{mt.hp} HP.")
            elif ended == "retreat":
                lines.append(f"You retreated at HP {p.hp}; {mt.name} has {mob.hp}/{mt.hp} HP left.")
            elif ended == "ammo":
                lines.append(f"Out of ammunition; {mt.name} has {mob.hp}/{mt.hp} HP left.")
            else:
                lines.append(f"The fight broke off after {exchanges} exchanges; {mt.name} has {mob.hp}/{mt.hp} HP left "
                             f"(it keeps its wounds: attack again or bring help).")
        if ended == "died":
            lines.append(self._agent_dies(p, f"combat:{mob.id}", eff))
        else:
            lines.append(f"Your HP: {p.hp}/{self._max_hp(p)}.")
        lines.append(self._xp_text(eff))
        return engine_result(" ".join(s for s in lines if s), effects=eff)

    def _tell_witnesses(self, killer: Player, mob: MobState, name: str) -> None:
        """Teammates who have the mob in view see it fall, and by whose hand: pilots read a mob gone from Nearby
        as maybe walked off, and spent actions attacking one a teammate had killed before their turn."""
        vr = self.rules.view_radius
        for q in self.players.values():
            if q is not killer and q.active and q.alive and manhattan(q.x, q.y, mob.x, mob.y) <= vr:
                q.notes.append(f"{killer.username} killed {name} {mob.id} at ({mob.x},{mob.y}) in round {self.round}.")

    def _roll_loot(self, p: Player, mob: MobState, eff: Effects) -> str:
        got: dict[str, int] = {}
        dropped: dict[str, int] = {}
        for d in mob.type.drops:
            n = self._roll(d)
            if n is None:
                continue
            added = p.inv.add(d.item, n)
            if added:
                got[d.item] = got.get(d.item, 0) + added
            if added < n:
                self._drop(d.item, n - added, mob.x, mob.y)
                dropped[d.item] = dropped.get(d.item, 0) + n - added
        for item, n in got.items():
            eff.gained.append(ItemDelta(agent=p.agent_id, item=item, count=n, source=f"loot:{mob.id}"))
        text = ", ".join(f"+{n} {i}" for i, n in got.items()) or "nothing"
        if dropped:
            text += "; inventory full, left on the ground: " + ", ".join(f"{n} {i}" for i, n in dropped.items())
        return text

    def _agent_dies(self, p: Player, cause: str, eff: Effects) -> str:
        eff.deaths.append(p.agent_id)
        if self.rules.death == "out":
            p.alive = False
            p.active = False
            p.hp = 0
            p.left_reason = "died"
            return "You died and are out of the episode."
        where = (p.x, p.y)
        at = f"({p.x},{p.y})"  # as every other position reads, not a Python tuple's "(3, 4)"
        for item, n in p.inv.clear():
            eff.lost.append(ItemDelta(agent=p.agent_id, item=item, count=n, source="death"))
            self._drop(item, n, *where)
        p.place(*p.spawn)
        p.hp = self._max_hp(p)
        eff.hp.append(HpChange(agent=p.agent_id, before=0, after=p.hp, cause="respawn"))
        p.notes.append(f"You died ({cause}) in round {self.round}; your inventory lies on the ground at {at}.")
        return f"You died; you respawned at ({p.x},{p.y}) with full HP and your inventory was dropped at {at}."

    def _aggressors(self, p: Player, when: int | None = None) -> list[MobState]:
        """The live mobs that attack ``p`` at the tick (within their aggro range, not dead), by id; moving mobs
        where they stand in round ``when`` (default: now)."""
        return self._aggressors_at(p.x, p.y, when)

    def _aggressors_at(self, x: int, y: int, when: int | None = None) -> list[MobState]:
        mobs = self.mobs
        found = [m for m in map(mobs.__getitem__, self._aggro_reach(x, y)) if m.respawn_at is None]
        moving = self.movers.aggro_near(x, y) if self.movers.motions else ()
        if moving:
            for mid in moving:
                m = self._mob_at(mobs[mid], when)
                if m.respawn_at is None and abs(m.x - x) + abs(m.y - y) <= m.type.aggro_range:
                    found.append(m)
            found.sort(key=lambda m: m.id)
        return found

    def _mob_at(self, mob: MobState, when: int | None = None) -> MobState:
        """``mob`` where it stands in round ``when`` (default: now): a moving mob is caught up first."""
        motion = mob.motion
        if motion is not None:
            to = self.round if when is None else when
            if mob.at < to:
                advance(mob, motion, self.seed, to, self.map)
        return mob

    def _movers_near(self, x: int, y: int, radius: int) -> list[tuple[int, MobState]]:
        """(distance, live state) of the moving mobs within Manhattan ``radius`` of (x, y) now, by id."""
        out = []
        mobs = self.mobs
        for mid in self.movers.near(x, y, radius):
            m = self._mob_at(mobs[mid])
            d = abs(m.x - x) + abs(m.y - y)
            if d <= radius:
                out.append((d, m))
        return out

    def _walk_hazard(self, start: tuple[int, int], steps: list[tuple[int, int]],
                     skip: str | None = None) -> tuple[int, MobState] | None:
        """(index of the step, mob) where a walk along ``steps`` first enters the aggro range of a live aggressive
        mob (the nearest there, then the lowest id), leaving out ``skip`` (the walk's own target) and the mobs in
        range of ``start``; None if it never does. Tiles are looked at only in buckets some aggressive mob can
        reach (``Movers.danger``): most walks cross none. Mobs a task's event brought (a raid) stop a walk like
        the world's own (``Mechanics.walk_threats``)."""
        if not (self.rules.aggro and self.rules.walk_aggro):
            return None
        mech = self.mech
        raiders = mech.walk_threats(start, steps) if mech is not None and mech.spawned else []
        if self.max_aggro <= 0 and not raiders:
            return None
        zones = self.movers.zones
        ids: set[str] = set()
        last = None
        for x, y in (start, *steps):  # the aggressive mobs that can reach some tile of the walk
            b = (x // CELL, y // CELL)
            if b != last:
                last = b
                here = zones.get(b)
                if here:
                    ids.update(here)
        if not ids and not raiders:
            return None
        mobs, (sx, sy) = self.mobs, start
        best: tuple[int, int, str] | None = None  # (step, distance, mob id) of the first engagement
        found: dict[str, MobState] = {}
        for m in [*(self._mob_at(mobs[mid]) for mid in ids if mid != skip), *(r for r in raiders if r.id != skip)]:
            mid = m.id
            found[mid] = m
            reach = m.type.aggro_range
            if m.respawn_at is not None or abs(m.x - sx) + abs(m.y - sy) <= reach:
                continue  # dead, or already in range where the walk starts
            mx, my = m.x, m.y
            for i, (x, y) in enumerate(steps):
                if best is not None and i > best[0]:
                    break
                d = abs(mx - x) + abs(my - y)
                if d <= reach:
                    if best is None or (i, d, mid) < best:
                        best = (i, d, mid)
                    break
        return (best[0], found[best[2]]) if best is not None else None

    def _ambushed(self, p: Player, start: tuple[int, int], steps: list[tuple[int, int]], i: int, mob: MobState,
                  eff: Effects, goal: str, reached_goal: bool = False) -> str:
        """Stop a walk at ``steps[i]``, where ``mob`` engages ``p``: the move, the mob's strike (hit or miss, death
        as the rules say) go into ``eff``; returns the text saying what happened."""
        taken = steps[:i + 1]
        p.place(*taken[-1])
        p.route_goal, p.route_at, p.route_rest = None, None, []
        eff.move = Move(start=start, end=(p.x, p.y), path_length=len(taken), reached=reached_goal, engaged_by=mob.id)
        mt = mob.type
        d = abs(mob.x - p.x) + abs(mob.y - p.y)
        text = (f"{mt.name} {mob.id} (lv {mt.level}, aggressive, range {mt.aggro_range}) at ({mob.x},{mob.y}) engaged "
                f"you at ({p.x},{p.y}), {tiles(d)} from it: your walk toward {goal} stopped there after "
                f"{tiles(len(taken))}. ")
        dmg = self._strike(p, mob, eff)
        if dmg is None:
            text += "It attacked and missed."
        else:
            text += f"It hit you for {dmg} (HP {p.hp}/{self._max_hp(p)})."
            if p.hp <= 0:
                return text + " " + self._agent_dies(p, f"aggro:{mob.id}", eff)
        hold(mob, mob.motion, self.seed, self.round, self.map)
        return text + (f" Fight it (attack_entity(targetInstance='{mob.id}')) or walk away: it strikes again at the "
                       f"end of the round while you are within {tiles(mt.aggro_range)} of it.")

    @staticmethod
    def _stopped_result(text: str, eff: Effects) -> ToolResult:
        """A walk to a target that an aggressive mob stopped: refused (``blocked``), with what it did."""
        return ToolResult(ok=False, text=text, effects=eff, error="blocked")

    def _strike(self, p: Player, mob: MobState, eff: Effects) -> int | None:
        """One strike of ``mob`` at ``p`` (the hit roll, then the damage roll): the damage dealt, None on a miss."""
        mt = mob.type
        bonus = self._bonus(p)
        before = p.hp
        if self.rng.random() < stats.hit_chance(mt.accuracy, p.levels["defense"] + bonus["defense"]):
            dmg = min(p.hp, self.rng.randint(1, max(1, mt.attack)))
            p.hp -= dmg
            eff.hp.append(HpChange(agent=p.agent_id, before=before, after=p.hp, cause=f"aggro:{mob.id}"))
            return dmg
        return None

    AGGRO_KEEP = 20_000  # tiles whose aggressive mobs in reach are kept (cleared when full)

    def _aggro_reach(self, x: int, y: int) -> tuple[str, ...]:
        """Ids of the mobs whose aggro range reaches (x, y), sorted: placements and types never change, so kept
        per tile (most tiles have none; the tick asks for every player's tile every round)."""
        kept = self._aggro_kept
        ids = kept.get((x, y))
        if ids is None:
            types = self._mob_types
            ids = tuple(sorted(eid for d, kind, ref, eid in self._fixed.near(x, y, self.max_aggro)
                               if kind == "mob" and 0 < types[ref.type].aggro_range >= d))
            if len(kept) >= self.AGGRO_KEEP:
                kept.clear()
            kept[(x, y)] = ids
        return ids

    def _aggro_exchange(self, p: Player, mob: MobState, eff: Effects, lines: list[str]) -> None:
        mt = mob.type
        dmg = self._strike(p, mob, eff)
        if dmg is not None:
            lines.append(f"{mob.id} hit {p.agent_id} for {dmg}")
            p.notes.append(f"{mt.name} {mob.id} at ({mob.x},{mob.y}) attacked you for {dmg} at the end of round "
                           f"{self.round} (HP {p.hp}/{self._max_hp(p)} after the hit{self._before_regen()}).")
            if p.hp <= 0:
                text = self._agent_dies(p, f"aggro:{mob.id}", eff)
                lines.append(f"{p.agent_id} died: {text}")
        else:
            p.notes.append(f"{mt.name} {mob.id} at ({mob.x},{mob.y}) attacked you again at the end of round {self.round} "
                           "and missed.")

    def _before_regen(self) -> str:
        # the hit lands in the round's tick before regeneration, so the status line a player reads next shows
        # more HP than the note: say why the two figures differ
        r = self.rules.hp_regen_per_round
        return f", before the round's regeneration of {r}" if r else ""

    def _bonus(self, p: Player) -> dict[str, int]:
        """Equipment bonus per combat stat (the fields of ``ItemStats``), summed over what is worn."""
        b = dict.fromkeys(ItemStats.model_fields, 0)
        for key, _ in p.equipment.values():
            st = self.items[key].stats
            for stat in b:
                b[stat] += getattr(st, stat)
        return b

    def _ammo_source(self, p: Player) -> str | None:
        """Where the next arrow comes from: "equipped", an inventory item key, or None."""
        e = p.equipment.get("ammo")
        if e and e[1] > 0:
            return "equipped"
        for _, key, _ in p.inv.filled():
            if self.items[key].kind == "ammo":
                return key
        return None

    def _use_ammo(self, p: Player) -> str | None:
        src = self._ammo_source(p)
        if src is None:
            return None
        if src == "equipped":
            e = p.equipment["ammo"]
            e[1] -= 1
            key = e[0]
            if e[1] <= 0:
                del p.equipment["ammo"]
            return key
        p.inv.remove(src, 1)
        return src

    def _best_food(self, p: Player) -> int | None:
        best, best_heal = None, 0
        for i, key, _ in p.inv.filled():
            heal = self.items[key].heal
            if heal > best_heal:
                best, best_heal = i, heal
        return best
