"""Fuzzing whole episodes through the turn gate, with the world's invariants checked after every call and
every tick. Shared by the property test (tests/test_fuzz_episodes.py, hypothesis draws the calls) and the
long campaigns of benchmarks/fuzz.py (a seeded ``random`` draws them).

A :class:`FuzzTeam` plays :class:`TurnPlan` s: per turn, zero or more calls (the first is the turn's action,
the others are refused as second calls), with arguments that are partly well formed (ids, item keys and
teammates taken from the agent's own observation through :class:`Ref`) and partly junk; and now and then a
call through the port of another agent, out of turn (an external seat calling whenever it likes), which is
also how a departed agent tries to act. :class:`Invariants` checks, around each call and each tick:

- no exception escapes the gate (the engine's answer to anything is a ToolResult);
- no item count is zero or negative, HP stays within [0, max], every living agent stands on a walkable tile;
- each agent's holdings (inventory plus equipment, ammunition counted) change exactly as the recorded
  effects say (gained minus lost), and every gain names a source that can produce items;
- a call that is refused (out of turn, second call, departed agent) changes nothing.

:func:`replay` plays the calls a FuzzTeam made again in a fresh episode: the trajectories must be equal
(minus timestamps and timings).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..world.effects import Effects, ToolResult
from .protocol import Team, Turn, TurnOutcome
from .records import TickEvent

SOURCES = ("harvest:", "loot:", "pickup:", "craft:", "transfer:")  # where items can come from
_TIMING_FIELDS = ("timestamp", "model_latency_s", "harness_s")


@dataclass(frozen=True)
class Ref:
    """An argument taken from the acting agent's observation when the call is made: ``kind`` is one of
    nearby (an entity id; ``nearby:mob`` one of a kind), inv_key, inv_index, teammate (a username), x/y (own
    position plus ``k``), recipe."""

    kind: str
    k: int


@dataclass
class Call:
    tool: str
    args: Any  # a dict whose values may be Refs, or anything else (junk: a list, a string, None...)


@dataclass
class TurnPlan:
    calls: list[Call] = field(default_factory=list)
    stray: Call | None = None  # also made through another agent's port, out of turn
    stray_agent: int = 0  # which other agent's port (index into the ports seen so far)


def resolve(value: Any, turn: Turn, recipes: list[str]) -> Any:
    """``value`` with its Refs replaced from ``turn``'s observation (lists and dicts walked)."""
    if isinstance(value, Ref):
        obs = turn.observation
        k = value.k
        if value.kind.startswith("nearby"):  # "nearby" (any entity) or "nearby:resource", "nearby:mob", ...
            kind = value.kind.partition(":")[2]
            seen = [e for e in obs.nearby if not kind or e.kind == kind] or obs.nearby
            return seen[k % len(seen)].id if seen else f"nothing#{k}"
        if value.kind == "inv_key":
            return obs.inventory[k % len(obs.inventory)].key if obs.inventory else "logs"
        if value.kind == "inv_index":
            return obs.inventory[k % len(obs.inventory)].index if obs.inventory else k
        if value.kind == "teammate":
            players = [e.id for e in obs.nearby if e.kind == "player"]
            return players[k % len(players)] if players else obs.username
        if value.kind == "x":
            return obs.x + k
        if value.kind == "y":
            return obs.y + k
        if value.kind == "recipe":
            return recipes[k % len(recipes)] if recipes else "stick"
        return k
    if isinstance(value, dict):
        return {key: resolve(v, turn, recipes) for key, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, turn, recipes) for v in value]
    return value


class Invariants:
    """Checks an episode's world around every call and tick; ``violations`` lists what broke, with where."""

    def __init__(self, episode: Any):
        self.episode = episode
        self.violations: list[str] = []
        self.calls = 0
        self.refused = 0
        self.succeeded = 0  # calls the world carried out (ok)
        self.item_moves = 0  # item deltas checked (gains and losses, calls and ticks)
        self.ticks = 0
        self._last: dict[str, Counter] | None = None

    # -- state ---------------------------------------------------------------------------------
    def holdings(self) -> dict[str, Counter]:
        world = self.episode.world
        out: dict[str, Counter] = {}
        raw = getattr(world, "players", None)  # the embedded engine: equipment with its counts (ammunition)
        for agent in self.episode.agent_ids:
            st = world.player_state(agent)
            c: Counter = Counter()
            for s in st.inventory:
                c[s.item] += s.count
            if isinstance(raw, dict) and agent in raw:
                for key, count in raw[agent].equipment.values():
                    c[key] += count
            else:
                for key in st.equipment.values():
                    c[key] += 1
            out[agent] = c
        return out

    def check_state(self, where: str) -> None:
        world = self.episode.world
        gmap = getattr(world, "map", None)
        for agent in self.episode.agent_ids:
            st = world.player_state(agent)
            for s in st.inventory:
                if s.count <= 0:
                    self._violate(where, f"{agent} holds {s.count} {s.item}")
            if not 0 <= st.hp <= st.max_hp:
                self._violate(where, f"{agent} has {st.hp}/{st.max_hp} HP")
            if st.alive and gmap is not None and not gmap.walkable(st.x, st.y):
                self._violate(where, f"{agent} stands on an unwalkable tile ({st.x},{st.y})")
            limit = getattr(getattr(world, "rules", None), "carry_limit", 0)
            if limit and sum(s.count for s in st.inventory) > limit:
                self._violate(where, f"{agent} carries {sum(s.count for s in st.inventory)} items, over the limit {limit}")
        self.check_mechanics(world, gmap, where)

    def check_mechanics(self, world: Any, gmap: Any, where: str) -> None:
        """Moving mobs stay on walkable tiles of their leash or route; finite nodes never give more than their total."""
        mobs, nodes = getattr(world, "mobs", None), getattr(world, "nodes", None)
        for m in list(getattr(mobs, "live", {}).values()):
            motion = getattr(m, "motion", None)
            if motion is None or m.respawn_at is not None:
                continue
            if not gmap.walkable(m.x, m.y):
                self._violate(where, f"{m.id} stands on an unwalkable tile ({m.x},{m.y})")
            if motion.loop and (m.x, m.y) not in motion.loop:
                self._violate(where, f"{m.id} at ({m.x},{m.y}) is off its patrol route")
            if not motion.loop and abs(m.x - motion.home[0]) + abs(m.y - motion.home[1]) > motion.leash:
                self._violate(where, f"{m.id} at ({m.x},{m.y}) is off its leash of {motion.leash}")
        for n in list(getattr(nodes, "live", {}).values()):
            if getattr(n, "total", None) is not None and n.total < 0:
                self._violate(where, f"finite node {n.id} has {n.total} items left")

    def check_delta(self, before: dict[str, Counter], after: dict[str, Counter], effects: Effects,
                    where: str) -> None:
        recorded: dict[str, Counter] = {a: Counter() for a in after}
        self.item_moves += len(effects.gained) + len(effects.lost)
        for d in effects.gained:
            recorded.setdefault(d.agent, Counter())[d.item] += d.count
            if not d.source.startswith(SOURCES):
                self._violate(where, f"{d.agent} gained {d.count} {d.item} from an unknown source {d.source!r}")
        for d in effects.lost:
            recorded.setdefault(d.agent, Counter())[d.item] -= d.count
        for agent in after:
            real = Counter(after[agent])
            real.subtract(before.get(agent, Counter()))
            real = Counter({k: v for k, v in real.items() if v})
            said = Counter({k: v for k, v in recorded.get(agent, Counter()).items() if v})
            if real != said:
                self._violate(where, f"{agent}'s items changed by {dict(real)} but the effects say {dict(said)}")

    def _violate(self, where: str, what: str) -> None:
        self.violations.append(f"{where}: {what}")

    # -- hooks -----------------------------------------------------------------------------------
    async def call(self, port: Any, agent: str, tool: str, args: Any, where: str) -> ToolResult | None:
        """Make one call through ``port`` and check everything around it."""
        ep = self.episode
        before = self._last if self._last is not None else self.holdings()
        acting = agent == getattr(ep.gate, "current", None) and agent in ep.active and not ep.gate.acted
        try:
            result = await port.call(tool, args)
        except Exception as exc:  # noqa: BLE001 - the finding itself
            self._violate(where, f"{tool} raised {type(exc).__name__}: {str(exc)[:200]}")
            self._last = self.holdings()
            return None
        self.calls += 1
        self.succeeded += result.ok
        after = self.holdings()
        if not acting:
            self.refused += 1
            if result.error != "refused":
                self._violate(where, f"a call out of turn by {agent} was not refused ({result.error})")
            if after != before or not result.effects.is_empty():
                self._violate(where, f"a refused call by {agent} changed the world")
        self.check_delta(before, after, result.effects, where)
        self.check_state(where)
        self._last = after
        return result

    def on_event(self, event: Any) -> None:
        """The episode's progress callback: checks each tick."""
        if isinstance(event, TickEvent):
            self.ticks += 1
            before = self._last if self._last is not None else self.holdings()
            after = self.holdings()
            self.check_delta(before, after, event.effects, f"tick {event.round}")
            self.check_state(f"tick {event.round}")
            self._last = after


class FuzzTeam(Team):
    """Plays ``plans`` (one per turn, in order; an empty plan once they run out) and records every call it
    made, resolved, for :func:`replay`."""

    def __init__(self, plans: Iterator[TurnPlan] | list[TurnPlan], recipes: list[str] | None = None):
        self.plans = iter(plans)
        self.recipes = list(recipes or [])
        self.invariants: Invariants | None = None
        self.ports: dict[str, Any] = {}
        self.made: list[tuple[int, str, str | None, str, Any]] = []  # (round, acting agent, caller, tool, args)

    async def start(self, view: Any) -> None:
        if self.invariants is None:  # the team sees only its view: the harness wires the invariants in
            raise RuntimeError("a FuzzTeam checks invariants on the episode: run it through fuzzing.play()")

    async def act(self, turn: Turn) -> TurnOutcome:
        assert self.invariants is not None
        self.ports[turn.agent_id] = turn.port
        plan = next(self.plans, TurnPlan())
        where = f"round {turn.round} {turn.agent_id}"
        for call in plan.calls:
            args = resolve(call.args, turn, self.recipes)
            self.made.append((turn.round, turn.agent_id, None, call.tool, _copy(args)))
            await self.invariants.call(turn.port, turn.agent_id, call.tool, args, where)
        others = sorted(a for a in self.ports if a != turn.agent_id)
        if plan.stray is not None and others:
            caller = others[plan.stray_agent % len(others)]
            args = resolve(plan.stray.args, turn, self.recipes)
            self.made.append((turn.round, turn.agent_id, caller, plan.stray.tool, _copy(args)))
            await self.invariants.call(self.ports[caller], caller, plan.stray.tool, args, f"{where} (stray {caller})")
        return TurnOutcome()


class ReplayTeam(Team):
    """Makes exactly the calls a FuzzTeam made, in the same order, from the same agents."""

    def __init__(self, made: list[tuple[int, str, str | None, str, Any]]):
        self.by_turn: dict[tuple[int, str], list[tuple[str | None, str, Any]]] = {}
        for rnd, agent, caller, tool, args in made:
            self.by_turn.setdefault((rnd, agent), []).append((caller, tool, args))
        self.ports: dict[str, Any] = {}

    async def act(self, turn: Turn) -> TurnOutcome:
        self.ports[turn.agent_id] = turn.port
        for caller, tool, args in self.by_turn.get((turn.round, turn.agent_id), []):
            port = turn.port if caller is None else self.ports[caller]
            await port.call(tool, _copy(args))
        return TurnOutcome()


def comparable(events: list[Any]) -> list[dict[str, Any]]:
    """Events as data without the fields that differ between two plays of the same episode (timings)."""
    out = []
    for e in events:
        d = e.model_dump(mode="json")
        for k in _TIMING_FIELDS:
            d.pop(k, None)
        out.append(d)
    return out


async def play(make_episode: Callable[[Team], Any], team: Team) -> tuple[Any, Any]:
    """Run ``make_episode(team)``'s episode with its invariants wired in; (episode, result)."""
    episode = make_episode(team)
    if isinstance(team, FuzzTeam):
        team.invariants = Invariants(episode)
        previous = episode.progress

        def progress(event: Any) -> None:
            team.invariants.on_event(event)
            if previous is not None:
                previous(event)

        episode.progress = progress
    result = await episode.run()
    return episode, result


async def fuzz_episode(make_episode: Callable[[Team], Any], plans: list[TurnPlan], recipes: list[str],
                       check_replay: bool = True) -> "FuzzReport":
    """One fuzzed episode (and its replay): what was called and what broke."""
    team = FuzzTeam(plans, recipes)
    report = FuzzReport()
    try:
        episode, result = await play(make_episode, team)
    except Exception as exc:  # noqa: BLE001 - an exception escaping the episode is a finding
        report.exceptions.append(f"episode raised {type(exc).__name__}: {str(exc)[:300]}")
        return report
    inv = team.invariants
    assert inv is not None
    report.calls, report.refused, report.ticks = inv.calls, inv.refused, inv.ticks
    report.succeeded, report.item_moves = inv.succeeded, inv.item_moves
    report.violations += inv.violations
    if result.end_reason == "error" or result.infra_errors:
        report.exceptions.append(f"episode ended {result.end_reason} with {result.infra_errors} infra errors")
    if check_replay:
        try:
            again, _ = await play(make_episode, ReplayTeam(team.made))
        except Exception as exc:  # noqa: BLE001
            report.exceptions.append(f"replay raised {type(exc).__name__}: {str(exc)[:300]}")
            return report
        report.replayed = True
        a, b = comparable(episode.events), comparable(again.events)
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            report.violations.append(f"replay differs from event {first} on")
    return report


@dataclass
class FuzzReport:
    calls: int = 0
    refused: int = 0
    succeeded: int = 0
    item_moves: int = 0
    ticks: int = 0
    replayed: bool = False
    violations: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)


def _copy(value: Any) -> Any:
    """A deep copy of JSON-like arguments (a team must not see the gate's later mutations, nor we theirs)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return value
