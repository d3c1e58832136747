"""The fastest known solution of a task: its reference plan, compressed (issue 28, item 1).

A reference plan waits: a ``sleep`` for a teammate's hand-over or message, often longer than the wait needs,
and a family's plan is laid out from macro steps, not from what the world allows. The budget of a task
should follow what a good team needs, so ``tasks prove`` reports the rounds of the plan played **eagerly**:

- every agent plays its own reference steps in order, sleeps dropped, each step as early as
  - the agent's own previous step allows (one call per turn, in the plan's order),
  - its inputs allow: a call the world refuses (the items are not there yet, the teammate is out of reach,
    the node has not regrown) is retried at the agent's next turn, which is a wasted turn like a sleep,
  - its facts allow: a step whose arguments its agent cannot know yet (``knowledge.Minds``, the knowledge
    proof's own reader: brief, observations, chat received) waits;
- the episode ends when the verifier passes, so steps the verifier does not need are dropped at the end;
- a walk right before a harvest, attack or pick-up is tried without (those calls walk next to a target
  within reach themselves), and kept when that is not faster.

The eager schedule is then replayed as a plain plan (one call or sleep per turn, the refused attempts as
sleeps) through the real episode loop: it counts only if that replay passes the verifier with legal calls
only and is knowable. Moving an agent earlier can also break a plan (a porter walks into the beasts before
the guard has cleared them); when the all-eager schedule fails, each agent in turn keeps its reference timing
(not before the round its step had in the reference plan) while the others go eagerly, and the fastest of
those that pass counts. When nothing passes, the reference plan's own rounds are the fastest known.

Everything is deterministic (seed 0, as the proofs) and cached per task content and code version
(``fastest/`` in the build cache), so ``tasks prove --all`` pays for it once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..play.protocol import Team, Turn, TurnOutcome
from ..tasks.task import Task

FORMAT = 3  # bump when the algorithm changes what it finds
# A heavy load's or a guarded mob's answer when the call only held it for the round (the engine's texts,
# core/world/events.py): the step is done only if enough teammates join later in that round
REGISTERED = ("Lift registered", "Attack registered")
PER_AGENT_TRIES = 8  # teams up to this size also try each agent at its reference timing (one episode each)
Step = tuple[str, dict[str, Any]]


@dataclass
class Fastest:
    """The fastest known solution found by compression (see the module docstring)."""

    task_id: str
    reference_rounds: int | None  # rounds the reference plan needs (None: it does not pass)
    rounds: int | None  # rounds of the compressed plan (None: no compression passed; the reference counts)
    how: str = ""  # "all eager", "eager, agent_2 at its reference timing", or why none passed
    episodes: int = 0  # episodes played to find it
    plan: dict[str, list[Step]] = field(default_factory=dict)  # the compressed plan (one call per turn)

    @property
    def best(self) -> int | None:
        """The fastest rounds known from the plans: the compressed plan's, else the reference plan's."""
        known = [r for r in (self.rounds, self.reference_rounds) if r is not None]
        return min(known) if known else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EagerTeam(Team):
    """Plays each agent's reference steps (sleeps dropped) as early as its inputs and facts allow.

    ``not_before[agent][i]``: the first round step i may be tried (an agent kept at its reference timing).
    Records, per agent, the round of every call that went through (``schedule``); the other turns waited or
    were refused, and become sleeps in the plain plan."""

    def __init__(self, steps: dict[str, list[Step]], stale: list[Any], world: Any,
                 not_before: dict[str, list[int]] | None = None, hold: bool = False,
                 handed: dict[tuple[str, int], list[tuple[str, int]]] | None = None):
        from .knowledge import Minds

        self.hold = hold  # a walk waits until the agent holds what the steps after the walk need
        self.handed = handed or {}  # (agent, step i) -> the teammates' (agent, step k) hand-overs it waits for
        self.queue = {a: list(s) for a, s in steps.items()}
        self.not_before = not_before or {}
        self.done: dict[str, int] = {a: 0 for a in steps}
        self.schedule: dict[str, dict[int, Step]] = {a: {} for a in steps}  # agent -> round -> the call made
        self.minds = Minds(stale=stale)
        self.world = world
        self._recorder: Any = None
        # (target, round) -> the agents whose joint step only held it so far (see REGISTERED)
        self.holding: dict[tuple[str, int], list[str]] = {}

    def _seen(self, turn: Turn, tool: str, args: dict[str, Any]) -> Any:
        from .replays import RecordingTeam

        if self._recorder is None:
            self._recorder = RecordingTeam(None, world=self.world)
        return self._recorder.turn_seen(turn, (tool, args))

    async def act(self, turn: Turn) -> TurnOutcome:
        agent = turn.agent_id
        self._retry_unjoined_hold(agent, turn.round)
        self._skip_walks_already_made(agent, turn)
        queue = self.queue.get(agent)
        if not queue:  # its part done, it stays (a teammate may still hand it something): it waits
            await turn.port.call("sleep", {"seconds": 1})
            return TurnOutcome(thinking="done")
        i = self.done[agent]
        tool, args = queue[0]
        waits = self.not_before.get(agent)
        gaps = self.minds.turn(self._seen(turn, tool, args))  # read this turn first, then: is the step known?
        early = waits is not None and i < len(waits) and turn.round < waits[i]
        early = early or any(self.done[g] <= k for g, k in self.handed.get((agent, i), ()))
        if early or gaps or (self.hold and tool == "move_character" and not self._holds_what_is_next(turn, queue)):
            await turn.port.call("sleep", {"seconds": 1})
            return TurnOutcome(thinking="waits")
        result = await turn.port.call(tool, dict(args))
        if result.ok:
            queue.pop(0)
            self.done[agent] = i + 1
            self.schedule[agent][turn.round] = (tool, dict(args))
            self._note_joint(agent, turn.round, tool, args, result.text)
        return TurnOutcome(thinking=tool)

    def _note_joint(self, agent: str, rnd: int, tool: str, args: dict[str, Any], text: str) -> None:
        """Keep a lone hold of a heavy load or a guarded mob pending; a teammate's call on the same target later
        in the round that completes it (any answer but a hold) settles every hold of that round."""
        target = args.get("targetInstance")
        if tool not in ("pickup_resource", "attack_entity") or not isinstance(target, str):
            return
        if text.startswith(REGISTERED):
            self.holding.setdefault((target, rnd), []).append(agent)
        else:
            self.holding.pop((target, rnd), None)

    def _retry_unjoined_hold(self, agent: str, rnd: int) -> None:
        """A hold nobody joined in its round lifted or struck nothing: the step goes back to the front of the
        agent's queue (tried again this turn) and its call becomes a wait in the plain plan. Counting it done
        sent a porter home empty-handed, and no eager schedule of a heavy load passed (task_314)."""
        for (target, held_in), agents in list(self.holding.items()):
            if held_in >= rnd or agent not in agents:
                continue
            agents.remove(agent)
            if not agents:
                del self.holding[(target, held_in)]
            step = self.schedule[agent].pop(held_in)
            self.queue[agent].insert(0, step)
            self.done[agent] -= 1

    def _skip_walks_already_made(self, agent: str, turn: Turn) -> None:
        """Drop the walks to where the agent already stands, without spending its turn: a reference plan
        repeats a long walk (a family's ``extra`` rounds for the mobs that stop it), and a walk that arrived
        early made the rest "You are already at" turns."""
        queue = self.queue.get(agent) or []
        here = (turn.observation.x, turn.observation.y)
        while queue and queue[0][0] == "move_character" and (queue[0][1].get("x"), queue[0][1].get("y")) == here:
            queue.pop(0)
            self.done[agent] += 1

    @staticmethod
    def _holds_what_is_next(turn: Turn, queue: list[Step]) -> bool:
        """Whether the agent holds the items of the steps after its walk (up to its next walk): hand-overs'
        stacks, what it equips, crafts' inputs (a courier does not set out before the cook has handed it the
        whole order)."""
        need: dict[str, int] = {}
        walked = False
        for t, a in queue:
            if t == "move_character":
                if walked:
                    break
                continue
            walked = True
            for item, n in _needs(t, a).items():
                need[item] = need.get(item, 0) + n
        held = {i.key: i.count for i in turn.observation.inventory}
        return all(held.get(item, 0) >= n for item, n in need.items())


def _needs(tool: str, args: dict[str, Any]) -> dict[str, int]:
    """The items a call uses up or hands over (as far as its arguments say)."""
    item = args.get("itemKey")
    if not isinstance(item, str):
        return {}
    count = args.get("count", 1)
    count = count if isinstance(count, int) and count > 0 else 1
    if tool == "transfer_items":
        return {item: count}
    if tool == "equip_item":
        return {item: 1}
    if tool == "craft_item":
        from ..tasks.task import world_index

        recipes = world_index().recipes_by_output.get(item, [])
        if recipes:
            return {k: v * count for k, v in recipes[0].inputs.items()}
    return {}


def _steps(task: Task, seed: int) -> tuple[dict[str, list[Step]], dict[str, list[int]]]:
    """Each agent's reference calls without the sleeps (hidden things filled in for ``seed``), and the
    round each of them has in the reference plan."""
    from ..play.policies import OraclePolicy

    oracle = OraclePolicy(task, seed)
    steps: dict[str, list[Step]] = {}
    rounds: dict[str, list[int]] = {}
    for agent in task.agent_ids:
        steps[agent], rounds[agent] = [], []
        for r, (tool, args) in enumerate(oracle.steps.get(agent, []), start=1):
            if tool != "sleep":
                steps[agent].append((tool, dict(args)))
                rounds[agent].append(r)
    return steps, rounds


def _hand_overs(task: Task, steps: dict[str, list[Step]], rounds: dict[str, list[int]]
                ) -> dict[tuple[str, int], list[tuple[str, int]]]:
    """(receiver, step j) -> [(giver, step k)]: in the reference plan the giver's transfer (step k) came before
    the receiver's step j, the first the receiver took after it (it waited for the hand-over there)."""
    out: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for giver, calls in steps.items():
        for k, (tool, args) in enumerate(calls):
            receiver = task.resolve_agent(str(args.get("targetPlayer"))) if tool == "transfer_items" else None
            if receiver is None or receiver == giver:
                continue
            later = [j for j, r in enumerate(rounds[receiver]) if r > rounds[giver][k]]
            if later:
                out.setdefault((receiver, later[0]), []).append((giver, k))
    return out


def _play_eager(task: Task, steps: dict[str, list[Step]], stale: list[Any], seed: int,
                not_before: dict[str, list[int]] | None, hold: bool,
                handed: dict[tuple[str, int], list[tuple[str, int]]] | None) -> tuple[Any, EagerTeam]:
    from ..play.episode import Episode, make_world

    world = make_world(task, seed)
    team = EagerTeam(steps, stale, world, not_before, hold, handed)
    result = asyncio.run(Episode(task, team, seed=seed, world=world).run())
    return result, team


def _as_plan(team: EagerTeam, rounds: int) -> dict[str, list[Step]]:
    """The eager schedule as a plain plan: per agent one call or sleep per round, to the last round (an agent
    whose plan ran out would call complete and leave, and a teammate may still hand it something)."""
    return {agent: [calls.get(r, ("sleep", {"seconds": 1})) for r in range(1, rounds + 1)]
            for agent, calls in team.schedule.items()}


def replay_plan(task: Task, plan: dict[str, list[Step]], seed: int = 0) -> tuple[Any, Any]:
    """Play ``plan`` (already resolved for ``seed``) as the oracle team; returns (result, RecordingTeam)."""
    from types import MappingProxyType

    from ..play.policies import OraclePolicy
    from ..play.view import ReferencePlan
    from .replays import play_policy

    ref = ReferencePlan(task_id=task.id, steps=MappingProxyType(
        {a: tuple((t, MappingProxyType(dict(args))) for t, args in s) for a, s in plan.items()}))
    return play_policy(task, OraclePolicy(ref, seed), seed, record_seen=True)


def _passes(task: Task, plan: dict[str, list[Step]], stale: list[Any], seed: int) -> int | None:
    """The rounds of ``plan`` when its replay passes with legal calls only and is knowable, else None."""
    from .knowledge import knowledge_gaps

    result, team = replay_plan(task, plan, seed)
    if not result.success or team.illegal_calls("the compressed plan") or knowledge_gaps(team.seen, stale=stale):
        return None
    return result.rounds


SELF_WALKING = ("harvest_resource", "attack_entity", "pickup_resource")  # they walk into reach themselves


def _without_walks_into_reach(steps: dict[str, list[Step]], rounds: dict[str, list[int]]
                              ) -> tuple[dict[str, list[Step]], dict[str, list[int]]] | None:
    """The steps without each walk that directly precedes a harvest, attack or pick-up (which walks next to
    its target itself when it is within reach), with their reference rounds; None when there is none."""
    out_steps: dict[str, list[Step]] = {}
    out_rounds: dict[str, list[int]] = {}
    dropped = False
    for agent, calls in steps.items():
        keep = [i for i, (tool, _) in enumerate(calls)
                if not (tool == "move_character" and i + 1 < len(calls) and calls[i + 1][0] in SELF_WALKING)]
        dropped = dropped or len(keep) < len(calls)
        out_steps[agent] = [calls[i] for i in keep]
        out_rounds[agent] = [rounds[agent][i] for i in keep]
    return (out_steps, out_rounds) if dropped else None


def _first_passing(task: Task, steps: dict[str, list[Step]], ref_rounds: dict[str, list[int]], stale: list[Any],
                   seed: int, episodes: int) -> tuple[tuple[int, str, dict[str, list[Step]]] | None, int]:
    """The first schedule, from the most eager to the most patient, whose plain replay passes: (rounds, how,
    plan) or None, and the episodes played so far."""
    handed = _hand_overs(task, steps, ref_rounds)
    tries: list[tuple[str, dict[str, list[int]] | None, bool, Any]] = [
        ("all eager", None, False, None),
        ("eager, receivers wait for their hand-overs", None, False, handed),
        ("eager, receivers wait for their hand-overs, walks for what they carry", None, True, handed)]
    if len(task.agents) <= PER_AGENT_TRIES:
        tries += [(f"eager, {a} at its reference timing", {a: ref_rounds[a]}, True, handed)
                  for a in task.agent_ids if steps[a]]
    for how, not_before, hold, waits_for in tries:
        if not_before is None and waits_for is not None and not waits_for and not hold:
            continue  # no hand-overs to wait for: the same as all eager
        result, team = _play_eager(task, steps, stale, seed, not_before, hold, waits_for)
        episodes += 1
        if not result.success:
            continue
        plan = _as_plan(team, result.rounds)
        rounds = _passes(task, plan, stale, seed)
        episodes += 1
        if rounds is not None:
            return (rounds, how, plan), episodes  # each try waits more than the one before: the fastest
    return None, episodes


def compress(task: Task, *, seed: int = 0, reference_rounds: int | None = None,
             world_events: list[dict[str, Any]] | None = None) -> Fastest:
    """The reference plan compressed (module docstring). ``reference_rounds`` and ``world_events`` come from
    the reference oracle run when the caller has it (the proof); otherwise it is played here."""
    from .replays import play, stale_facts

    episodes = 0
    if reference_rounds is None or world_events is None:
        result, team = play(task, "oracle", seed=seed, record_seen=True)
        episodes += 1
        reference_rounds = result.rounds if result.success else None
        world_events = team.world_events
    out = Fastest(task.id, reference_rounds, None)
    if not task.reference_solution or reference_rounds is None:
        out.how = "no reference plan that passes: nothing to compress"
        out.episodes = episodes
        return out
    stale = stale_facts(task, world_events)
    steps, ref_rounds = _steps(task, seed)
    best, episodes = _first_passing(task, steps, ref_rounds, stale, seed, episodes)
    fewer = _without_walks_into_reach(steps, ref_rounds)
    if fewer is not None:  # the same, without the walks that a harvest's or attack's own walk makes
        shorter, episodes = _first_passing(task, *fewer, stale, seed, episodes)
        if shorter is not None and (best is None or shorter[0] < best[0]):
            best = (shorter[0], shorter[1] + "; walks into reach left to the harvest or attack", shorter[2])
    out.episodes = episodes
    if best is None:
        out.how = "no eager schedule passed (replayed, legal and knowable): the reference plan is the fastest known"
    elif best[0] >= reference_rounds:
        out.how = f"{best[1]}: no faster than the reference plan"
        out.rounds = best[0]
    else:
        out.rounds, out.how, out.plan = best
    return out


# ---------------------------------------------------------------------------------------------------
# the cache
# ---------------------------------------------------------------------------------------------------
def _cache_file(task: Task, seed: int) -> Path | None:
    from ..tasks.taskcache import code_digest
    from ..world.buildcache import cache_dir

    root = cache_dir()
    if root is None:
        return None
    h = hashlib.sha256()
    h.update(json.dumps(task.raw, sort_keys=True, default=str).encode())
    h.update(f"|{code_digest()}|{seed}|{FORMAT}".encode())
    return root / "fastest" / f"{task.id}-{h.hexdigest()[:24]}.json"


def fastest_known(task: Task, *, seed: int = 0, reference_rounds: int | None = None,
                  world_events: list[dict[str, Any]] | None = None, use_cache: bool = True) -> Fastest:
    """:func:`compress`, cached per task content, code version and seed."""
    path = _cache_file(task, seed) if use_cache else None
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data["plan"] = {a: [(t, dict(args)) for t, args in s] for a, s in data.get("plan", {}).items()}
            return Fastest(**data)
        except (OSError, ValueError, TypeError):
            pass  # a damaged entry is computed again
    found = compress(task, seed=seed, reference_rounds=reference_rounds, world_events=world_events)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(found.to_dict(), default=str), encoding="utf-8")
            tmp.replace(path)
        except OSError:
            pass  # a read-only cache: computed each time
    return found
