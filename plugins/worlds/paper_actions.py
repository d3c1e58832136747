"""The 13 actions of the ``paper-server`` world, each resolved within its turn.

Each action is a macro over the API, as the paper's client had them, but bounded: walk next to the target
when needed, start the action, then poll ``observe`` until its effect is visible (the node is gone, the mob
is dead, the item is in the inventory) or a configured timeout passes, after which the action is stopped so
that nothing of it leaks into later turns. Refusals of the server (HTTP 400) become failed results whose text
quotes the server and says what to do; only infrastructure failures raise (``WorldUnavailable``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agentworld.core.world.effects import (ChatDelivery, Crafted, Effects, Equip, Harvest, HpChange, ItemDelta, Kill,
                                           Move, ToolResult, Transfer)
from agentworld.core.world.wording import tiles

from . import paper_view as view
from .paper_client import PaperRefusal

if TYPE_CHECKING:  # pragma: no cover
    from .paper_world import Character

GATHER_REACH = 2  # the server gathers from within 2 tiles
WEAPON_RANGE = {"staff": 6, "bow": 8}  # by keyword in the weapon key; melee otherwise (1 tile)
RESOURCE_SKILL = {"tree": "lumberjacking", "rock": "mining", "fishing": "fishing", "plant": "foraging"}
CRAFT_CHUNKS = (10, 5, 1)  # the server crafts 1, 5 or 10 at a time


def _dist(a: tuple[int, int], b: tuple[int, int]) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _distance_text(distance: Any) -> str:
    """The server's own distance of a refused move: "1 tile", "80 tiles" (or as it came, when not a number)."""
    return tiles(distance) if isinstance(distance, int) else f"{distance} tiles"


def _at(pos: tuple[int, int]) -> str:
    """A position as the engine writes it, "(53,43)" (not a Python tuple's "(53, 43)")."""
    return f"({pos[0]},{pos[1]})"


def _refusal(error: str, exc: PaperRefusal, hint: str = "", eff: Effects | None = None) -> ToolResult:
    """The server refused the call. ``eff``: what the call did first (the walk to its target), which the result
    keeps and says: a refused harvest after a walk said only "The server refused", and its effects had no move."""
    text = f"The server refused: {exc.message}." + (f" {hint}" if hint else "")
    move = eff.move if eff is not None else None
    if move is not None and move.path_length > 0:
        text += f" Only the walk to it was done: you are now at {_at(move.end)}."
    return ToolResult(ok=False, text=text, error=error, effects=eff if eff is not None else Effects())  # type: ignore[arg-type]


class PaperActions:
    """Mixed into :class:`~.paper_world.PaperServerWorld` (which provides ``call``, ``current``, ``wait``...)."""

    # -- shared pieces -----------------------------------------------------------------------------------
    def _actor(self, agent_id: str) -> "Character | ToolResult":
        c = self.chars.get(agent_id)
        if c is None:
            return ToolResult.fail("invalid", f"Unknown agent {agent_id!r}; known: {', '.join(self.chars)}.")
        if c.dead:
            return ToolResult.fail("dead", "You are dead and cannot act any more.")
        if not c.active:
            return ToolResult.fail("not_active", f"You have left the episode ({c.left_reason or 'inactive'}).")
        self.stale()  # the real-time world moved on since anyone last looked
        return c

    def _free_tile_near(self, raw: dict[str, Any], tx: int, ty: int, reach: int) -> tuple[int, int]:
        """The tile within ``reach`` of (tx, ty) closest to the agent that is not a collision tile."""
        here = view.position(raw)
        blocked = {(b["x"], b["y"]) for b in raw.get("collisions") or []}
        m = raw.get("map") or {}
        width, height = int(m.get("width", 10**6)), int(m.get("height", 10**6))
        best = None
        for dy in range(-reach, reach + 1):
            for dx in range(-(reach - abs(dy)), reach - abs(dy) + 1):
                x, y = tx + dx, ty + dy
                if (dx, dy) == (0, 0) and reach > 0 or (x, y) in blocked or not (0 <= x < width and 0 <= y < height):
                    continue
                key = (_dist(here, (x, y)), y, x)
                if best is None or key < best:
                    best = key
        return (best[2], best[1]) if best else (tx, ty)

    def _walk(self, c: "Character", x: int, y: int) -> tuple[dict[str, Any], Move | None, str | None]:
        """Walk to (x, y) and wait for arrival: (observation, move, refusal text or None)."""
        raw = self.current(c)
        start = view.position(raw)
        if start == (x, y):
            return raw, None, None
        try:
            self.call(c, "/ai/move", {"x": x, "y": y})
        except PaperRefusal as exc:
            b = exc.body
            if "maxDistance" in b:
                return raw, None, (f"The server refused: {exc.message} ({_distance_text(b.get('distance'))}, at most "
                                   f"{b.get('maxDistance')} per move).")
            return raw, None, f"The server refused: {exc.message}."
        last: list[tuple[int, int]] = []

        def arrived(r: dict[str, Any]) -> bool:
            pos = view.position(r)
            last.append(pos)
            stuck = len(last) >= 3 and len(set(last[-3:])) == 1 and not (r.get("playerStatus") or {}).get("moving")
            return pos == (x, y) or stuck

        raw, _ = self.wait(c, arrived, self.options.move_timeout_s)
        end = view.position(raw)
        if end != (x, y):
            self.call(c, "/ai/stop", {})
            raw = self.observe_raw(c)
            end = view.position(raw)
        return raw, Move(start=start, end=end, path_length=_dist(start, end), reached=end == (x, y)), None

    def _approach(self, c: "Character", raw: dict[str, Any], tx: int, ty: int, reach: int, what: str,
                  eff: Effects) -> tuple[dict[str, Any], ToolResult | None]:
        """Walk within ``reach`` of a target (not farther than one move) for an interaction."""
        here = view.position(raw)
        if _dist(here, (tx, ty)) <= reach:
            return raw, None
        if _dist(here, (tx, ty)) - reach > self.rules.move_range:
            return raw, ToolResult.fail("out_of_range", f"{what} at ({tx},{ty}) is {tiles(_dist(here, (tx, ty)))} away; "
                                                        f"move_character(x={tx}, y={ty}) toward it first.")
        x, y = self._free_tile_near(raw, tx, ty, reach)
        raw, move, refused = self._walk(c, x, y)
        if move is not None:
            eff.move = move
        if refused or _dist(view.position(raw), (tx, ty)) > reach:
            # refused, yet the player may have walked part of the way: the result keeps that move (effects are
            # what trajectories and the grounded CCE read)
            return raw, ToolResult(ok=False, error="blocked", effects=eff,
                                   text=f"Could not get next to {what} at ({tx},{ty}); now at "
                                        f"{_at(view.position(raw))}. {refused or 'The way is blocked.'}")
        return raw, None

    def _deltas(self, c: "Character", before: dict[str, Any], after: dict[str, Any], source: str, eff: Effects) -> None:
        gained, lost = view.inventory_delta(before, after)
        eff.gained += [ItemDelta(agent=c.agent_id, item=k, count=n, source=source) for k, n in gained.items()]
        eff.lost += [ItemDelta(agent=c.agent_id, item=k, count=n, source=source) for k, n in lost.items()]
        h0, h1 = view.hp(before)[0], view.hp(after)[0]
        if h0 != h1:
            eff.hp.append(HpChange(agent=c.agent_id, before=h0, after=h1, cause=source))
        eff.xp.update(view.xp_gained(before, after))
        if c.dead:
            eff.deaths.append(c.agent_id)

    @staticmethod
    def _items_text(eff: Effects) -> str:
        got = ", ".join(f"+{d.count} {d.item}" for d in eff.gained)
        gone = ", ".join(f"-{d.count} {d.item}" for d in eff.lost)
        return "; ".join(s for s in (got, gone) if s) or "no item changes"

    def _unknown(self, raw: dict[str, Any], kind: str, what: str, target: str, tool: str) -> ToolResult:
        near = sorted(raw.get(kind) or [], key=lambda e: e.get("distanceFrom", 0))
        ids = ", ".join(f"{e.get('instance')} ({e.get('name') or e.get('key')})" for e in near[:5])
        return ToolResult.fail("unknown_target", f"No {what} with id {target!r} in view. {tool} takes an id from "
                                                 f"the Nearby list." + (f" Nearby now: {ids}." if ids else ""))

    # -- movement -----------------------------------------------------------------------------------------
    def move_character(self, agent_id: str, x: int, y: int) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        raw = self.current(c)
        here = view.position(raw)
        if here == (x, y):
            return ToolResult(ok=True, text=f"You are already at ({x},{y}).",
                              effects=Effects(move=Move(start=here, end=here, path_length=0, reached=True)))
        goal, far = (x, y), _dist(here, (x, y)) > self.rules.move_range
        if far:  # one call covers at most the move range: walk the first stretch toward the goal
            k = self.rules.move_range / _dist(here, (x, y))
            goal = self._free_tile_near(raw, round(here[0] + (x - here[0]) * k), round(here[1] + (y - here[1]) * k), 0)
        raw, move, refused = self._walk(c, *goal)
        if refused:
            return ToolResult.fail("blocked", f"{refused} Try another tile near ({x},{y}).")
        assert move is not None
        eff = Effects(move=move.model_copy(update={"reached": move.end == (x, y)}), target=f"{x},{y}")
        if move.end == (x, y):
            return ToolResult(ok=True, text=f"Walked {tiles(move.path_length)} to ({x},{y}).", effects=eff)
        why = (f"one move covers {tiles(self.rules.move_range)}" if far else "the way is blocked or the walk timed out")
        return ToolResult(ok=True, text=f"Walked toward ({x},{y}) ({why}); now at ({move.end[0]},{move.end[1]}). "
                                        f"Call move_character(x={x}, y={y}) again to continue.", effects=eff)

    def enter_portal(self, agent_id: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        start = view.position(self.current(c))
        try:
            ans = self.call(c, "/ai/enter", {})
        except PaperRefusal as exc:
            if "level" in exc.message.lower():
                return _refusal("level_too_low", exc)
            raw = self.current(c)
            near = sorted(raw.get("entries") or [], key=lambda e: _dist(start, (e["x"], e["y"])))
            hint = (f"The nearest portal is at ({near[0]['x']},{near[0]['y']}): move_character(x={near[0]['x']}, "
                    f"y={near[0]['y']}) first." if near else "")
            return _refusal("out_of_range", exc, hint)
        raw = self.observe_raw(c)
        end = view.position(raw)
        dest = ans.get("destination") or {}
        eff = Effects(portal=str(dest.get("name") or f"{dest.get('x')},{dest.get('y')}"), target=f"{start[0]},{start[1]}",
                      move=Move(start=start, end=end, path_length=0, reached=True))
        return ToolResult(ok=True, text=f"You went through the portal and arrived at {_at(end)}.", effects=eff)

    def stop_action(self, agent_id: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        ans = self.call(c, "/ai/stop", {})
        stopped = [k for k, v in (ans.get("stopped") or {}).items() if v]
        return ToolResult(ok=True, text=f"Stopped {' and '.join(stopped)}." if stopped else "Nothing to stop.")

    def sleep(self, agent_id: str, seconds: int) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        before = self.current(c)
        time.sleep(min(float(seconds), self.options.sleep_cap_s))
        after = self.observe_raw(c)
        eff = Effects()
        self._deltas(c, before, after, "sleep", eff)
        cur, mx = view.hp(after)
        return ToolResult(ok=True, text=f"You waited {seconds}s. HP {cur}/{mx}.", effects=eff)

    def complete(self, agent_id: str, response: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        c.active, c.left_reason = False, "completed"
        return ToolResult(ok=True, text="You declared your part done and left the episode.",
                          effects=Effects(completed=True))

    # -- chat ---------------------------------------------------------------------------------------------
    def send_chat_message(self, agent_id: str, message: str, global_: bool = False) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        if global_:
            return self._say(c, message, "global", self._others(c))
        here = view.position(self.current(c))
        close = []
        for q in self._others(c):
            pos = view.position(self.current(q))
            if _dist(here, pos) <= self.rules.chat_radius:
                close.append(q)
        return self._say(c, message, "local", close)

    def chat(self, agent_id: str, message: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        return self._say(c, message, "team", self._others(c))

    def _others(self, c: "Character") -> list["Character"]:
        return [q for q in sorted(self.chars.values(), key=lambda q: q.order) if q is not c and q.active and not q.dead]

    def _say(self, c: "Character", message: str, scope: str, recipients: list["Character"]) -> ToolResult:
        self.call(c, "/ai/chat", {"message": str(message), "global": scope != "local"})
        ids = [q.agent_id for q in recipients]
        self._sent.append((c.agent_id, str(message), scope, ids))
        eff = Effects(chat=ChatDelivery(scope=scope, recipients=ids, message=str(message)))  # type: ignore[arg-type]
        if scope == "local" and not recipients:  # as the embedded engine says it: not "delivered to nobody"
            return ToolResult(ok=True, text=f"No teammate received your message: none is within "
                                            f"{tiles(self.rules.chat_radius)} of you; use global=true or chat to "
                                            "reach everyone.", effects=eff)
        who = ", ".join(q.username for q in recipients) or "nobody"
        return ToolResult(ok=True, text=f"Message delivered to {who}.", effects=eff)

    # -- items --------------------------------------------------------------------------------------------
    def equip_item(self, agent_id: str, index: int | None = None, item_key: str | None = None) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        before = self.current(c)
        inv = view.items(before)
        if index is None:
            slot = next((i for i in inv if i.get("key") == (item_key or "").strip()), None)
            if slot is None:
                listing = ", ".join(f"[{i.get('index')}] {i.get('key')}" for i in inv) or "empty"
                return ToolResult.fail("missing_items", f"You have no {item_key!r}. Your inventory: {listing}.")
            index = int(slot.get("index", 0))
        try:
            self.call(c, "/ai/equip", {"index": index})
        except PaperRefusal as exc:
            b = exc.body
            if "requiredLevel" in b:
                return _refusal("level_too_low", exc)
            return _refusal("missing_items" if "No item" in exc.message else "invalid", exc)
        after = self.observe_raw(c)
        eff = Effects()
        self._deltas(c, before, after, "equip", eff)
        old, new = view.equipped(before), view.equipped(after)
        changed = [(s, k) for s, k in new.items() if old.get(s) != k]
        if changed:
            slot, key = changed[0]
            eff.equipped = Equip(item=key, slot=slot, unequipped=old.get(slot))
            eff.target = key
            eff.gained = []  # the old piece going back to the inventory is not a gain
            eff.lost = []
            return ToolResult(ok=True, text=f"Equipped {key} in your {slot} slot.", effects=eff)
        for d in eff.lost:
            d.source = "eat"
        h0, h1 = view.hp(before)[0], view.hp(after)[0]
        return ToolResult(ok=True, text=f"Used it: {self._items_text(eff)}; HP {h0} -> {h1}.", effects=eff)

    def pickup_resource(self, agent_id: str, target_instance: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        raw = self.current(c)
        g = view.find(raw, "groundItems", target_instance)
        if g is None:
            return self._unknown(raw, "groundItems", "ground item", target_instance, "pickup_resource")
        return self._pickup(c, raw, g, f"pickup:{target_instance}", Effects(target=str(target_instance)))

    def _pickup(self, c: "Character", raw: dict[str, Any], g: dict[str, Any], source: str, eff: Effects) -> ToolResult:
        raw, problem = self._approach(c, raw, int(g["x"]), int(g["y"]), 0 if self._free(raw, g) else 1,
                                      f"{g.get('key')} ({g.get('instance')})", eff)
        if problem:
            return problem
        before = raw
        try:
            self.call(c, "/ai/pickup", {"targetInstance": str(g["instance"])})
        except PaperRefusal as exc:
            return _refusal("inventory_full" if "full" in exc.message.lower() else "invalid", exc, eff=eff)
        after, _ = self.wait(c, lambda r: view.find(r, "groundItems", g["instance"]) is None, self.options.pickup_timeout_s)
        self._deltas(c, before, after, source, eff)
        return ToolResult(ok=True, text=f"Picked up: {self._items_text(eff)}.", effects=eff)

    @staticmethod
    def _free(raw: dict[str, Any], g: dict[str, Any]) -> bool:
        return {"x": g["x"], "y": g["y"]} not in (raw.get("collisions") or [])

    # -- gathering ----------------------------------------------------------------------------------------
    def harvest_resource(self, agent_id: str, target_instance: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        raw = self.current(c)
        node = view.find(raw, "resources", target_instance)
        if node is None:
            return self._unknown(raw, "resources", "resource", target_instance, "harvest_resource")
        eff = Effects(target=str(target_instance))
        raw, problem = self._approach(c, raw, int(node["x"]), int(node["y"]), GATHER_REACH,
                                      f"{node.get('name')} {target_instance}", eff)
        if problem:
            return problem
        before = raw
        try:
            self.call(c, "/ai/collect", {"targetInstance": str(target_instance)})
        except PaperRefusal as exc:
            low, b = exc.message.lower(), exc.body
            kind = ("missing_tool" if "requiredTool" in b or "need a" in low else "level_too_low" if "requiredLevel" in b
                    else "depleted" if "depleted" in low else "out_of_range" if "far" in low else "invalid")
            return _refusal(kind, exc, eff=eff)
        progress: list[int] = []
        t0 = time.monotonic()

        def finished(r: dict[str, Any]) -> bool:  # the node is gone, or nothing has come for stall_s
            n = sum(view.counts(r).values())
            if not progress or n != progress[-1]:
                progress[:] = [n]
                nonlocal t0
                t0 = time.monotonic()
            return view.find(r, "resources", target_instance) is None or time.monotonic() - t0 >= self.options.stall_s

        after, _ = self.wait(c, finished, self.options.harvest_timeout_s)
        depleted = view.find(after, "resources", target_instance) is None
        if not depleted:
            self.call(c, "/ai/stop", {})  # bounded: gathering must not go on into later turns
            after = self.observe_raw(c)
        self._deltas(c, before, after, f"harvest:{target_instance}", eff)
        got = {d.item: d.count for d in eff.gained}
        eff.harvests.append(Harvest(node=view.mob_key(str(node.get("name"))), instance=str(target_instance),
                                    skill=RESOURCE_SKILL.get(str(node.get("type")), str(node.get("type"))), items=got))
        tail = " It is depleted." if depleted else " Stopped before it was depleted (inventory full or time limit)."
        return ToolResult(ok=True, text=f"Harvested {node.get('name')} {target_instance}: {self._items_text(eff)}.{tail}",
                          effects=eff)

    # -- combat -------------------------------------------------------------------------------------------
    def attack_entity(self, agent_id: str, target_instance: str) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        raw = self.current(c)
        mob = view.find(raw, "mobs", target_instance)
        if mob is None:
            if self.resolve(target_instance) is not None:
                return ToolResult.fail("invalid", "Players cannot attack each other; attack a mob from the Nearby list.")
            return self._unknown(raw, "mobs", "mob", target_instance, "attack_entity")
        if int(mob.get("hitPoints", 1)) <= 0:
            return ToolResult.fail("invalid", f"{mob.get('name')} {target_instance} is already dead.")
        weapon = view.equipped(raw).get("weapon", "")
        reach = next((r for k, r in WEAPON_RANGE.items() if k in weapon), 1)
        eff = Effects(target=str(target_instance))
        raw, problem = self._approach(c, raw, int(mob["x"]), int(mob["y"]), reach, f"{mob.get('name')} {target_instance}", eff)
        if problem:
            return problem
        before = raw
        ground_before = {str(g.get("instance")) for g in raw.get("groundItems") or []}
        try:
            self.call(c, "/ai/attack", {"targetInstance": str(target_instance)})
        except PaperRefusal as exc:
            return _refusal("unknown_target" if "not found" in exc.message.lower() else "invalid", exc, eff=eff)

        def over(r: dict[str, Any]) -> bool:
            m = view.find(r, "mobs", target_instance)
            return m is None or int(m.get("hitPoints", 1)) <= 0 or view.hp(r)[0] <= 0

        after, done = self.wait(c, over, self.options.combat_timeout_s)
        m = view.find(after, "mobs", target_instance)
        killed = done and not c.dead and (m is None or int(m.get("hitPoints", 1)) <= 0)
        if not done:
            self.call(c, "/ai/stop", {})  # bounded: the fight must not go on into later turns
            after = self.observe_raw(c)
        self._deltas(c, before, after, f"combat:{target_instance}", eff)
        name = str(mob.get("name"))
        if killed:
            eff.kills.append(Kill(mob=view.mob_key(name), instance=str(target_instance), level=int(mob.get("level") or 1),
                                  by=c.agent_id, name=name))
            c.kills[view.mob_key(name)] += 1
            loot = [g for g in after.get("groundItems") or [] if str(g.get("instance")) not in ground_before
                    and _dist((int(g["x"]), int(g["y"])), (int(mob["x"]), int(mob["y"]))) <= 2]
            for g in loot:  # walk to the body and pick up what it dropped, as the paper's client did
                picked = self._pickup(c, self.current(c), g, f"loot:{target_instance}", Effects())
                eff.gained += picked.effects.gained
            cur, mx = view.hp(self.current(c))
            text = f"You killed {name} {target_instance}. HP {cur}/{mx}." + (f" Loot: {self._items_text(Effects(gained=eff.gained))}." if eff.gained else "")
            return ToolResult(ok=True, text=text, effects=eff)
        if c.dead:
            return ToolResult(ok=True, text=f"You were killed by {name} {target_instance}.", effects=eff)
        left = int((m or {}).get("hitPoints", 0))
        return ToolResult(ok=True, text=f"The fight with {name} {target_instance} did not end within "
                                        f"{self.options.combat_timeout_s:g}s; it has {left} HP left. Attack again to go on.",
                          effects=eff)

    # -- crafting -----------------------------------------------------------------------------------------
    def craft_item(self, agent_id: str, skill: str, item_key: str, count: int) -> ToolResult:
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        kind = (skill or "").strip().capitalize()
        before = self.current(c)
        left, failure = max(1, int(count)), None
        while left > 0 and failure is None:
            chunk = next(n for n in CRAFT_CHUNKS if n <= left)
            try:
                self._craft_once(c, kind, item_key, chunk)
                left -= chunk
            except PaperRefusal as exc:
                failure = exc
        after = self.observe_raw(c)
        eff = Effects(target=item_key)
        self._deltas(c, before, after, f"craft:{item_key}", eff)
        made = sum(d.count for d in eff.gained if d.item == item_key)
        if made:
            eff.crafted.append(Crafted(recipe=item_key, skill=kind.lower(), item=item_key, count=made))
            c.crafted[item_key] += made
            why = f" (then the server refused: {failure.message})" if failure else ""
            return ToolResult(ok=True, text=f"Made {made} {item_key}{why}. {self._items_text(eff)}.", effects=eff)
        assert failure is not None
        return self._craft_refusal(failure)

    def _craft_once(self, c: "Character", kind: str, item_key: str, chunk: int) -> None:
        try:
            self.call(c, "/ai/craft", {"type": kind, "itemKey": item_key, "count": chunk})
        except PaperRefusal as exc:
            wait_ms = exc.body.get("cooldown")
            if not isinstance(wait_ms, (int, float)) or wait_ms > 5000:
                raise
            time.sleep(wait_ms / 1000 + self.options.poll_s)  # a short cooldown is waited out within the turn
            self.call(c, "/ai/craft", {"type": kind, "itemKey": item_key, "count": chunk})

    @staticmethod
    def _craft_refusal(exc: PaperRefusal) -> ToolResult:
        b = exc.body
        if b.get("missingMaterials"):
            need = ", ".join(f"{m.get('missing')} more {m.get('key')} (have {m.get('available')}, need {m.get('required')})"
                             for m in b["missingMaterials"])
            return ToolResult.fail("missing_items", f"The server refused: missing materials: {need}.")
        if "requiredLevel" in b:
            return ToolResult.fail("level_too_low", f"The server refused: {exc.message} (you have {b.get('currentLevel')}).")
        if "cooldown" in b:
            return ToolResult.fail("invalid", f"The server refused: {exc.message} ({b['cooldown']} ms left); try next turn.")
        return _refusal("unknown_target" if "recipe" in exc.message.lower() else "invalid", exc)

    # -- trading ------------------------------------------------------------------------------------------
    def transfer_items(self, agent_id: str, target_player: str, item_key: str, count: int) -> ToolResult:
        """Built on setInventory, as the paper's was: remove from the sender, add to the target, roll back."""
        c = self._actor(agent_id)
        if isinstance(c, ToolResult):
            return c
        q = self.resolve(target_player)
        if q is None:
            names = ", ".join(o.username for o in self._others(c))
            return ToolResult.fail("unknown_target", f"No teammate {target_player!r}. Teammates: {names or 'none'}.")
        if q is c:
            return ToolResult.fail("invalid", "You cannot give items to yourself.")
        if not q.active or q.dead:
            return ToolResult.fail("invalid", f"{q.username} is no longer in the game.")
        key = (item_key or "").strip()
        before = self.current(c)
        have = view.counts(before)[key]
        if have < count:
            return ToolResult.fail("missing_items", f"You have {have} {key}, not {count}." if have
                                   else f"You have no {key} in your inventory.")
        here, there = view.position(before), view.position(self.current(q))
        if _dist(here, there) > self.rules.transfer_range:
            return ToolResult.fail("out_of_range", f"{q.username} is at ({there[0]},{there[1]}), "
                                                   f"{tiles(_dist(here, there))} away; transfers "
                                                   f"need {self.rules.transfer_range} or less: move_character(x={there[0]}, "
                                                   f"y={there[1]}) first.")
        original = [{"key": i["key"], "count": i["count"], "index": i.get("index")} for i in view.items(before)]
        remaining, take = [], count
        for it in original:
            if it["key"] == key and take:
                n = min(take, it["count"])
                take -= n
                if it["count"] > n:
                    remaining.append({**it, "count": it["count"] - n})
            else:
                remaining.append(it)
        self.call(c, "/ai/setInventory", {"items": remaining, "clearFirst": True})
        try:
            ans = self.call(c, "/ai/setInventory", {"items": [{"key": key, "count": count}], "clearFirst": False,
                                                    "targetPlayer": q.name})
            failed = (ans.get("results") or {}).get("failedItems") or []
        except PaperRefusal as exc:
            failed = [{"key": key, "reason": exc.message}]
        if failed:
            self.call(c, "/ai/setInventory", {"items": original, "clearFirst": True})  # roll back
            return ToolResult.fail("inventory_full", f"{q.username} could not take {count} {key}: "
                                                     f"{failed[0].get('reason', 'refused')}. Nothing was moved.")
        q.fresh = False
        q.notes.append(f"{c.username} gave you {count} {key} in round {self.round}.")
        src = f"transfer:{c.agent_id}"
        eff = Effects(target=q.username, transfers=[Transfer(from_agent=c.agent_id, to_agent=q.agent_id, item=key, count=count)],
                      lost=[ItemDelta(agent=c.agent_id, item=key, count=count, source=src)],
                      gained=[ItemDelta(agent=q.agent_id, item=key, count=count, source=src)])
        return ToolResult(ok=True, text=f"Gave {count} {key} to {q.username}.", effects=eff)
