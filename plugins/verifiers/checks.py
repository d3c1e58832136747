"""The built-in verifier checks, one checkpoint each, registered through ``register_verifiers``.

Every check reads engine state (``PlayerState``) or the effects history, never text. Where a check takes
``agent`` (one agent, by id or username), ``agents`` (a list) or ``role`` (every agent with that role), it
counts only those agents; without them, the team.

- ``item_count``  at least ``count`` of ``item``: held by the named agent(s) together, or by any one agent
  (``scope: any``, the default without a name), or by the team together (``scope: team``). Equipped pieces
  count, an equipped stack (arrows) with its size. ``origin: crafted|harvested|looted|kit`` counts only
  units that came from that source (followed through transfers; see :func:`provenance`).
- ``kills``       at least ``count`` kills of mob type ``mob``, each credited to the agent that made it.
- ``all_alive``   every agent is alive. A guard: it can fail the task but is never progress.
- ``at_location`` agents within ``radius`` (Manhattan) of (``x``, ``y``) or of a ``landmark``, or inside an
  ``area`` (an interior: the walkable area that holds that underground or island landmark, whatever its
  shape), optionally only on tiles of a ``biome``; ``require: all`` (default) or ``any``. ``guard: true``
  makes it a constraint (a post the team must keep) rather than progress.
- ``equipped``    at least ``count`` (default 1) of ``item`` worn by the named agent(s) together (an ammo
  stack counts its size; each wearer of a piece counts one).
- ``crafted``     at least ``count`` of ``item`` were crafted by the named agent(s) (or the team);
  ``from_origin: {input: origin}`` counts only crafts whose consumed ``input`` had that origin (a staff
  made from a bead fired in a furnace, not one looted from a goblin).
- ``delivered``   ``item`` ends with agent ``to`` (at least ``count``) and came to it by transfer (from
  ``from`` when given; of ``origin`` when given).

``exact: true`` on ``item_count``, ``crafted`` and ``delivered`` asks for exactly ``count``: the checkpoint is
met only at that amount, and more fails it (an objective that says "the amounts asked" or "exactly 3" is
checked as it reads, so a team cannot over-deliver instead of asking). Its label starts "exactly N". The
checkpoint's value is still the amount there, so partial progress reads as before ("2/3") and an overshoot
shows as such ("5/3 (over by 2: exactly 3 asked)"); PSR counts the checkpoint only while it is met exactly.
What counts as "the amount" for each:

- ``item_count``: what the named agents hold together (or the team, ``scope: team``); with no agent named
  and ``scope: any``, met when some one agent holds exactly ``count`` (the value shown is then ``count``,
  else the largest holding).
- ``crafted``: every unit crafted (by the named agents), so an over-production cannot be undone.
- ``delivered``: every unit transferred to ``to`` (from ``from``), so an over-delivery cannot be undone by
  handing units back; below or at ``count`` the value is, as without ``exact``, what ``to`` still holds of
  what it received.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentworld.core.hookspecs import hookimpl
from agentworld.core.tasks.task import did_you_mean
from agentworld.core.tasks.verify import Check, VerifyContext

Origin = Literal["crafted", "harvested", "looted", "picked_up", "kit"]


class _Params(BaseModel):
    # defer_build: a check's parameters are built on first validation, so a run pays only for its task's checks
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class _Who(_Params):
    """The agents a check counts: ``agent``, ``agents`` or ``role`` (none: the team)."""

    agent: str | None = None
    agents: list[str] | None = None
    role: str | None = None


def _who(ctx: VerifyContext, p: _Who) -> list[str] | None:
    """Agent ids the parameters name, or None when they name nobody (the team)."""
    if not (p.agent or p.agents or p.role):
        return None
    ids = ctx.agents(p.agent) if p.agent else []
    ids += ctx.agents(refs=p.agents) if p.agents else []
    if p.role:
        ids += [a.agent_id for a in ctx.task.agents if a.role == p.role]
    return list(dict.fromkeys(ids))


def _who_label(p: _Who, task: Any) -> str:
    if p.agent:
        return task.agent(p.agent).username
    if p.agents:
        return ", ".join(task.agent(a).username for a in p.agents)
    if p.role:
        return f"the {p.role}s"
    return ""


# -- shared reference checks ----------------------------------------------------------------------------
def _agent_ref(field: str, ref: str | None, task: Any) -> list[tuple[str, str, str]]:
    if ref is None or task.resolve_agent(ref):
        return []
    names = task.agent_ids + [a.username for a in task.agents]
    return [(field, f"no agent '{ref}' in this task", did_you_mean(ref, names, "agent id or username"))]


def _who_refs(p: _Who, task: Any) -> list[tuple[str, str, str]]:
    out = _agent_ref("agent", p.agent, task)
    for i, a in enumerate(p.agents or []):
        out += _agent_ref(f"agents[{i}]", a, task)
    roles = {a.role for a in task.agents}
    if p.role is not None and p.role not in roles:
        out.append(("role", f"no agent has the role '{p.role}'", did_you_mean(p.role, roles, "role")))
    return out


def _item_ref(field: str, item: str, w: Any) -> list[tuple[str, str, str]]:
    if item in w.items:
        return []
    return [(field, f"unknown item '{item}'", did_you_mean(item, w.items, "item key"))]


def _held(ctx: VerifyContext, agent_id: str, item: str) -> int:
    st = ctx.state(agent_id)
    worn = sum(st.equipment_counts.get(slot, 1) for slot, key in st.equipment.items() if key == item)
    return st.count(item) + worn


# -- provenance ------------------------------------------------------------------------------------------
_ORIGIN = {"craft": "crafted", "harvest": "harvested", "loot": "looted", "pickup": "picked_up"}


class Ledger:
    """Where each agent's units of each item came from, replayed from the effects history.

    Every agent starts with its kit (origin ``kit``). A unit gained by harvesting, looting, picking up or
    crafting takes that origin; a transfer moves units with their origins; consuming (a craft, eating, a
    shot, a death) takes units first in, first out. ``consumed[(agent, recipe)]`` keeps the origins each
    craft used up, for ``crafted`` with ``from_origin``."""

    def __init__(self, ctx: VerifyContext):
        self.units: dict[tuple[str, str], deque[list[Any]]] = {}
        self.crafts: list[tuple[str, str, int, dict[str, set[str]]]] = []  # (agent, item, count, input origins)
        for a in ctx.task.agents:
            for s in a.inventory + a.equipment:
                self._add(a.agent_id, s.item, s.count, "kit")
        for _agent, eff in ctx.history:
            self._apply(eff)

    def _add(self, agent: str, item: str, n: int, origin: str) -> None:
        q = self.units.setdefault((agent, item), deque())
        if q and q[-1][0] == origin:
            q[-1][1] += n
        else:
            q.append([origin, n])

    def _take(self, agent: str, item: str, n: int) -> list[tuple[str, int]]:
        q = self.units.get((agent, item), deque())
        out = []
        while n > 0 and q:
            take = min(n, q[0][1])
            out.append((q[0][0], take))
            q[0][1] -= take
            n -= take
            if q[0][1] == 0:
                q.popleft()
        return out

    def _apply(self, eff: Any) -> None:
        for t in eff.transfers:
            for origin, n in self._take(t.from_agent, t.item, t.count):
                self._add(t.to_agent, t.item, n, origin)
        used: dict[str, set[str]] = {}
        for d in eff.lost:
            if d.source.startswith("transfer:"):
                continue
            taken = self._take(d.agent, d.item, d.count)
            if d.source.startswith("craft:"):
                used.setdefault(d.item, set()).update(o for o, _ in taken)
        for d in eff.gained:
            kind = d.source.split(":", 1)[0]
            if kind in _ORIGIN:
                self._add(d.agent, d.item, d.count, _ORIGIN[kind])
        for c in eff.crafted:
            agent = next((d.agent for d in eff.gained if d.source.startswith("craft:")), None)
            if agent is not None:
                self.crafts.append((agent, c.item, c.count, used))

    def held(self, agent: str, item: str, origin: str | None) -> int:
        return sum(n for o, n in self.units.get((agent, item), ()) if origin is None or o == origin)


def provenance(ctx: VerifyContext) -> Ledger:
    """The context's ledger, built once per verification."""
    ledger = getattr(ctx, "_ledger", None)
    if ledger is None:
        ledger = Ledger(ctx)
        object.__setattr__(ctx, "_ledger", ledger)
    return ledger


def _holding(ctx: VerifyContext, agent_id: str, item: str, origin: str | None) -> int:
    if origin is None:
        return _held(ctx, agent_id, item)
    return min(_held(ctx, agent_id, item), provenance(ctx).held(agent_id, item, origin))


# -- item_count -------------------------------------------------------------------------------------------
class ItemCountParams(_Who):
    item: str
    count: int = Field(1, ge=1)
    scope: Literal["any", "team"] = "any"
    origin: Origin | None = None
    exact: bool = False  # exactly count (more fails), not at least


def _item_count(ctx: VerifyContext, p: ItemCountParams) -> tuple[float, float]:
    named = _who(ctx, p)
    if named is not None:
        return sum(_holding(ctx, a, p.item, p.origin) for a in named), p.count
    counts = [_holding(ctx, a, p.item, p.origin) for a in ctx.agents()]
    if p.scope == "team":
        return sum(counts), p.count
    if p.exact and p.count in counts:  # one agent holds exactly the amount: another's larger stack is not it
        return p.count, p.count
    return max(counts, default=0), p.count


def _exactly(p: Any) -> str:
    """The label's prefix for an exact amount ("exactly 3 "), empty without ``exact``."""
    return f"exactly {p.count} " if getattr(p, "exact", False) else ""


def _item_count_label(p: ItemCountParams, task: Any) -> str:
    what = _exactly(p) + p.item + (f" ({p.origin})" if p.origin else "")
    who = _who_label(p, task)
    if who:
        return f"{what} with {who}"
    return f"{what} ({'team total' if p.scope == 'team' else 'one agent'})"


ITEM_COUNT = Check(
    "item_count", ItemCountParams, _item_count, _item_count_label,
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _who_refs(p, t),
    items=lambda p: [p.item], exact=lambda p: p.exact)


# -- kills ---------------------------------------------------------------------------------------------------
class KillsParams(_Who):
    mob: str
    count: int = Field(1, ge=1)


def _kills(ctx: VerifyContext, p: KillsParams) -> tuple[float, float]:
    named = _who(ctx, p)
    return sum(ctx.state(a).kills.get(p.mob, 0) for a in (named if named is not None else ctx.agents())), p.count


def _mob_ref(p: KillsParams, t: Any, w: Any) -> list[tuple[str, str, str]]:
    out = _who_refs(p, t)
    if p.mob not in w.mob_types:
        out.append(("mob", f"unknown mob type '{p.mob}'", did_you_mean(p.mob, w.mob_types, "mob type")))
    return out


KILLS = Check("kills", KillsParams, _kills,
              lambda p, t: f"{p.mob} killed" + (f" by {_who_label(p, t)}" if _who_label(p, t) else ""), refs=_mob_ref)


# -- all_alive -------------------------------------------------------------------------------------------------
class NoParams(_Params):
    pass


def _all_alive(ctx: VerifyContext, p: NoParams) -> tuple[float, float]:
    agents = ctx.agents()
    return sum(1 for a in agents if ctx.state(a).alive), len(agents)


ALL_ALIVE = Check("all_alive", NoParams, _all_alive, lambda p, t: "all alive", style="yesno", guard=True)


# -- at_location ---------------------------------------------------------------------------------------------
class AtLocationParams(_Who):
    x: int | None = None
    y: int | None = None
    landmark: str | None = None
    radius: int | None = Field(None, ge=0)
    area: str | None = None  # an interior (underground or island landmark key): its whole walkable area
    biome: str | None = None
    require: Literal["all", "any"] = "all"

    @model_validator(mode="after")
    def _where(self) -> "AtLocationParams":
        if self.area is None and self.landmark is None and (self.x is None or self.y is None):
            raise ValueError("give an area, a landmark key, or both x and y")
        if self.area is not None and (self.landmark is not None or self.x is not None):
            raise ValueError("give an area or a place (landmark, x/y), not both")
        return self


def at_location_target(p: AtLocationParams) -> tuple[int, int, int] | None:
    """(x, y, radius) of a place check: the landmark's place and radius, or x, y and radius 3; None for an area."""
    if p.area:
        return None
    if p.landmark:
        from agentworld.core.tasks.task import world_index

        lm = world_index().landmarks[p.landmark]
        return lm.x, lm.y, p.radius if p.radius is not None else lm.radius
    assert p.x is not None and p.y is not None
    return p.x, p.y, p.radius if p.radius is not None else 3


def _area_component(area: str) -> int:
    from agentworld.core.tasks.task import world_index

    w = world_index()
    lm = w.landmarks[area]
    spot = w.loaded.map.nearest_walkable(lm.x, lm.y, max_radius=lm.radius + 5)
    return w.loaded.map.component(*spot) if spot else -1


def _inside(ctx: VerifyContext, p: AtLocationParams, agent_id: str) -> bool:
    from agentworld.core.tasks.task import world_index

    st = ctx.state(agent_id)
    gmap = world_index().loaded.map
    if p.biome and gmap.biome_at(st.x, st.y) != p.biome:
        return False
    if p.area:
        return gmap.component(st.x, st.y) == _area_component(p.area)
    target = at_location_target(p)
    assert target is not None
    x, y, r = target
    return abs(st.x - x) + abs(st.y - y) <= r


def _at_location(ctx: VerifyContext, p: AtLocationParams) -> tuple[float, float]:
    named = _who(ctx, p)
    agents = named if named is not None else ctx.agents()
    inside = sum(1 for a in agents if _inside(ctx, p, a))
    return inside, (len(agents) if p.require == "all" else 1)


def _at_location_refs(p: AtLocationParams, t: Any, w: Any) -> list[tuple[str, str, str]]:
    out = _who_refs(p, t)
    if p.landmark and p.landmark not in w.landmarks:
        out.append(("landmark", f"unknown landmark '{p.landmark}'", did_you_mean(p.landmark, w.landmarks, "landmark")))
    if p.area:
        if p.area not in w.landmarks:
            out.append(("area", f"unknown area '{p.area}'", did_you_mean(p.area, w.landmarks, "landmark key")))
        else:
            gm = w.loaded.map
            main = gm.component(*gm.nearest_walkable(w.landmarks["hearthmoor"].x, w.landmarks["hearthmoor"].y))
            if _area_component(p.area) == main:
                out.append(("area", f"'{p.area}' is on the mainland, which is one connected area",
                            "use an interior (an underground area or palm_isle), or a landmark with a radius"))
    if p.biome and p.biome not in set(w.loaded.map.biome_keys):
        out.append(("biome", f"unknown biome '{p.biome}'", did_you_mean(p.biome, w.loaded.map.biome_keys, "biome")))
    if p.x is not None and p.y is not None and not w.loaded.map.in_bounds(p.x, p.y):
        out.append(("x", f"({p.x},{p.y}) is off the map", "use coordinates inside the map"))
    return out


def _at_location_label(p: AtLocationParams, t: Any) -> str:
    where = p.area or p.landmark or f"({p.x},{p.y})"
    if p.biome:
        where += f" ({p.biome})"
    who = _who_label(p, t) or ("anyone" if p.require == "any" else "everyone")
    return f"{who} {'in' if p.area else 'at'} {where}"


AT_LOCATION = Check("at_location", AtLocationParams, _at_location, _at_location_label, refs=_at_location_refs,
                    place=at_location_target)


# -- equipped ---------------------------------------------------------------------------------------------------
class EquippedParams(_Who):
    item: str
    count: int = Field(1, ge=1)


def _equipped(ctx: VerifyContext, p: EquippedParams) -> tuple[float, float]:
    named = _who(ctx, p)
    total = 0
    for a in (named if named is not None else ctx.agents()):
        st = ctx.state(a)
        total += sum(st.equipment_counts.get(slot, 1) for slot, key in st.equipment.items() if key == p.item)
    return float(total), float(p.count)


EQUIPPED = Check(
    "equipped", EquippedParams, _equipped,
    lambda p, t: (f"{p.count} {p.item}" if p.count > 1 else p.item) + " equipped"
    + (f" by {_who_label(p, t)}" if _who_label(p, t) else ""),
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _who_refs(p, t), items=lambda p: [p.item])


# -- crafted -------------------------------------------------------------------------------------------------------
class CraftedParams(_Who):
    item: str
    count: int = Field(1, ge=1)
    from_origin: dict[str, Origin] = Field(default_factory=dict)  # input item -> origin its consumed units had
    exact: bool = False  # exactly count crafted (more fails), not at least


def _crafted(ctx: VerifyContext, p: CraftedParams) -> tuple[float, float]:
    named = _who(ctx, p)
    agents = named if named is not None else ctx.agents()
    if not p.from_origin:
        return sum(ctx.state(a).crafted.get(p.item, 0) for a in agents), p.count
    made = 0
    for agent, item, n, used in provenance(ctx).crafts:
        if agent in agents and item == p.item and all(used.get(i) == {o} for i, o in p.from_origin.items()):
            made += n
    return made, p.count


def _crafted_refs(p: CraftedParams, t: Any, w: Any) -> list[tuple[str, str, str]]:
    out = _item_ref("item", p.item, w) + _who_refs(p, t)
    inputs = {i for r in w.recipes_by_output.get(p.item, []) for i in r.inputs}
    for i in p.from_origin:
        if i not in inputs:
            out.append((f"from_origin.{i}", f"no recipe for '{p.item}' uses '{i}'",
                        did_you_mean(i, inputs, "input") if inputs else "remove it"))
    return out


CRAFTED = Check(
    "crafted", CraftedParams, _crafted,
    lambda p, t: f"{_exactly(p)}{p.item} crafted" + (f" by {_who_label(p, t)}" if _who_label(p, t) else "")
    + "".join(f" from {o} {i}" for i, o in p.from_origin.items()),
    refs=_crafted_refs, items=lambda p: [p.item], exact=lambda p: p.exact)


# -- delivered ---------------------------------------------------------------------------------------------------------
class DeliveredParams(_Params):
    item: str
    to: str
    count: int = Field(1, ge=1)
    from_: str | None = Field(None, alias="from")
    origin: Origin | None = None
    exact: bool = False  # exactly count transferred to the receiver (more fails), not at least
    # whether the receiver must still hold them at the end; false for a material it uses up (fish a cook
    # cooks): then what counts is how many it was handed, whatever it did with them after
    kept: bool = True


def _delivered(ctx: VerifyContext, p: DeliveredParams) -> tuple[float, float]:
    to = ctx.agents(p.to)[0]
    sender = ctx.agents(p.from_)[0] if p.from_ else None
    received = sum(t.count for _, eff in ctx.history for t in eff.transfers
                   if t.to_agent == to and t.item == p.item and (sender is None or t.from_agent == sender))
    if (p.exact and received > p.count) or not p.kept:  # over-delivered: handing units back does not undo it
        return received, p.count
    return min(_holding(ctx, to, p.item, p.origin), received), p.count


def _delivered_label(p: DeliveredParams, t: Any) -> str:
    what = f"{_exactly(p)}{p.item}{f' ({p.origin})' if p.origin else ''}"
    return f"{what} {'delivered' if p.kept else 'handed'} to {t.agent(p.to).username}"


DELIVERED = Check(
    "delivered", DeliveredParams, _delivered,
    _delivered_label,
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _agent_ref("to", p.to, t) + _agent_ref("from", p.from_, t),
    items=lambda p: [p.item], exact=lambda p: p.exact)


BUILTIN_CHECKS: tuple[Check, ...] = (ITEM_COUNT, KILLS, ALL_ALIVE, AT_LOCATION, EQUIPPED, CRAFTED, DELIVERED)


@hookimpl
def register_verifiers(register):
    for check in BUILTIN_CHECKS:
        register(check.name, check, description=(check.params.__doc__ or "").strip() or f"built-in check {check.name}")
