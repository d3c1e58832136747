"""The built-in verifier checks, one checkpoint each, registered through ``register_verifiers``.

Every check reads engine state (``PlayerState``) or the effects history, never text:

- ``item_count``  at least ``count`` of ``item``: held by ``agent``, or by any one agent (``scope: any``,
  the default without ``agent``), or by the team together (``scope: team``). Equipped pieces count.
- ``kills``       at least ``count`` kills of mob type ``mob`` (by ``agent``, or by the team).
- ``all_alive``   every agent is alive.
- ``at_location`` agents within ``radius`` (Manhattan) of (``x``, ``y``) or of a ``landmark``: ``agent``,
  ``agents`` or everyone; ``require: all`` (default) or ``any``.
- ``equipped``    ``item`` is equipped (by ``agent``, or by anyone).
- ``crafted``     at least ``count`` of ``item`` were crafted (by ``agent``, or by the team).
- ``delivered``   ``item`` ends with agent ``to`` (at least ``count``) and came to it by transfer
  (from ``from`` when given): the agent holds it and received at least that many.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentworld.core.hookspecs import hookimpl
from agentworld.core.tasks.task import did_you_mean
from agentworld.core.tasks.verify import Check, VerifyContext


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# -- shared reference checks ----------------------------------------------------------------------------
def _agent_ref(field: str, ref: str | None, task: Any) -> list[tuple[str, str, str]]:
    if ref is None or task.resolve_agent(ref):
        return []
    names = task.agent_ids + [a.username for a in task.agents]
    return [(field, f"no agent '{ref}' in this task", did_you_mean(ref, names, "agent id or username"))]


def _item_ref(field: str, item: str, w: Any) -> list[tuple[str, str, str]]:
    if item in w.items:
        return []
    return [(field, f"unknown item '{item}'", did_you_mean(item, w.items, "item key"))]


def _held(ctx: VerifyContext, agent_id: str, item: str) -> int:
    st = ctx.state(agent_id)
    return st.count(item) + sum(1 for key in st.equipment.values() if key == item)


# -- item_count -------------------------------------------------------------------------------------------
class ItemCountParams(_Params):
    item: str
    count: int = Field(1, ge=1)
    agent: str | None = None
    scope: Literal["any", "team"] = "any"


def _item_count(ctx: VerifyContext, p: ItemCountParams) -> tuple[float, float]:
    if p.agent:
        return _held(ctx, ctx.agents(p.agent)[0], p.item), p.count
    counts = [_held(ctx, a, p.item) for a in ctx.agents()]
    return (sum(counts) if p.scope == "team" else max(counts, default=0)), p.count


def _item_count_label(p: ItemCountParams, task: Any) -> str:
    if p.agent:
        return f"{p.item} with {task.agent(p.agent).username}"
    return f"{p.item} ({'team total' if p.scope == 'team' else 'one agent'})"


ITEM_COUNT = Check(
    "item_count", ItemCountParams, _item_count, _item_count_label,
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _agent_ref("agent", p.agent, t),
    items=lambda p: [p.item])


# -- kills ---------------------------------------------------------------------------------------------------
class KillsParams(_Params):
    mob: str
    count: int = Field(1, ge=1)
    agent: str | None = None


def _kills(ctx: VerifyContext, p: KillsParams) -> tuple[float, float]:
    return sum(ctx.state(a).kills.get(p.mob, 0) for a in ctx.agents(p.agent)), p.count


def _mob_ref(p: KillsParams, t: Any, w: Any) -> list[tuple[str, str, str]]:
    out = _agent_ref("agent", p.agent, t)
    if p.mob not in w.mob_types:
        out.append(("mob", f"unknown mob type '{p.mob}'", did_you_mean(p.mob, w.mob_types, "mob type")))
    return out


KILLS = Check("kills", KillsParams, _kills,
              lambda p, t: f"{p.mob} killed" + (f" by {t.agent(p.agent).username}" if p.agent else ""), refs=_mob_ref)


# -- all_alive -------------------------------------------------------------------------------------------------
class NoParams(_Params):
    pass


def _all_alive(ctx: VerifyContext, p: NoParams) -> tuple[float, float]:
    agents = ctx.agents()
    return sum(1 for a in agents if ctx.state(a).alive), len(agents)


ALL_ALIVE = Check("all_alive", NoParams, _all_alive, lambda p, t: "all alive", style="yesno")


# -- at_location ---------------------------------------------------------------------------------------------
class AtLocationParams(_Params):
    x: int | None = None
    y: int | None = None
    landmark: str | None = None
    radius: int | None = Field(None, ge=0)
    agent: str | None = None
    agents: list[str] | None = None
    require: Literal["all", "any"] = "all"

    @model_validator(mode="after")
    def _where(self) -> "AtLocationParams":
        if self.landmark is None and (self.x is None or self.y is None):
            raise ValueError("give a landmark key, or both x and y")
        return self


def at_location_target(p: AtLocationParams) -> tuple[int, int, int]:
    """(x, y, radius) of an at_location check: the landmark's place and radius, or x, y and radius 3."""
    if p.landmark:
        from agentworld.core.tasks.task import world_index

        lm = world_index().landmarks[p.landmark]
        return lm.x, lm.y, p.radius if p.radius is not None else lm.radius
    assert p.x is not None and p.y is not None
    return p.x, p.y, p.radius if p.radius is not None else 3


def _at_location(ctx: VerifyContext, p: AtLocationParams) -> tuple[float, float]:
    x, y, r = at_location_target(p)
    agents = ctx.agents(p.agent, p.agents)
    inside = sum(1 for a in agents if abs(ctx.state(a).x - x) + abs(ctx.state(a).y - y) <= r)
    return inside, (len(agents) if p.require == "all" else 1)


def _at_location_refs(p: AtLocationParams, t: Any, w: Any) -> list[tuple[str, str, str]]:
    out = _agent_ref("agent", p.agent, t)
    for i, a in enumerate(p.agents or []):
        out += _agent_ref(f"agents[{i}]", a, t)
    if p.landmark and p.landmark not in w.landmarks:
        out.append(("landmark", f"unknown landmark '{p.landmark}'", did_you_mean(p.landmark, w.landmarks, "landmark")))
    if p.x is not None and p.y is not None and not w.loaded.map.in_bounds(p.x, p.y):
        out.append(("x", f"({p.x},{p.y}) is off the map", "use coordinates inside the map"))
    return out


def _at_location_label(p: AtLocationParams, t: Any) -> str:
    where = p.landmark or f"({p.x},{p.y})"
    who = t.agent(p.agent).username if p.agent else ("anyone" if p.require == "any" else "everyone")
    return f"{who} at {where}"


AT_LOCATION = Check("at_location", AtLocationParams, _at_location, _at_location_label, refs=_at_location_refs,
                    place=at_location_target)


# -- equipped ---------------------------------------------------------------------------------------------------
class EquippedParams(_Params):
    item: str
    agent: str | None = None


def _equipped(ctx: VerifyContext, p: EquippedParams) -> tuple[float, float]:
    hit = any(p.item in ctx.state(a).equipment.values() for a in ctx.agents(p.agent))
    return float(hit), 1.0


EQUIPPED = Check(
    "equipped", EquippedParams, _equipped,
    lambda p, t: f"{p.item} equipped" + (f" by {t.agent(p.agent).username}" if p.agent else ""),
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _agent_ref("agent", p.agent, t),
    style="yesno", items=lambda p: [p.item])


# -- crafted -------------------------------------------------------------------------------------------------------
class CraftedParams(_Params):
    item: str
    count: int = Field(1, ge=1)
    agent: str | None = None


def _crafted(ctx: VerifyContext, p: CraftedParams) -> tuple[float, float]:
    return sum(ctx.state(a).crafted.get(p.item, 0) for a in ctx.agents(p.agent)), p.count


CRAFTED = Check(
    "crafted", CraftedParams, _crafted,
    lambda p, t: f"{p.item} crafted" + (f" by {t.agent(p.agent).username}" if p.agent else ""),
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _agent_ref("agent", p.agent, t),
    items=lambda p: [p.item])


# -- delivered ---------------------------------------------------------------------------------------------------------
class DeliveredParams(_Params):
    item: str
    to: str
    count: int = Field(1, ge=1)
    from_: str | None = Field(None, alias="from")


def _delivered(ctx: VerifyContext, p: DeliveredParams) -> tuple[float, float]:
    to = ctx.agents(p.to)[0]
    sender = ctx.agents(p.from_)[0] if p.from_ else None
    received = sum(t.count for _, eff in ctx.history for t in eff.transfers
                   if t.to_agent == to and t.item == p.item and (sender is None or t.from_agent == sender))
    return min(_held(ctx, to, p.item), received), p.count


DELIVERED = Check(
    "delivered", DeliveredParams, _delivered,
    lambda p, t: f"{p.item} delivered to {t.agent(p.to).username}",
    refs=lambda p, t, w: _item_ref("item", p.item, w) + _agent_ref("to", p.to, t) + _agent_ref("from", p.from_, t),
    items=lambda p: [p.item])


BUILTIN_CHECKS: tuple[Check, ...] = (ITEM_COUNT, KILLS, ALL_ALIVE, AT_LOCATION, EQUIPPED, CRAFTED, DELIVERED)


@hookimpl
def register_verifiers(register):
    for check in BUILTIN_CHECKS:
        register(check.name, check, description=(check.params.__doc__ or "").strip() or f"built-in check {check.name}")
