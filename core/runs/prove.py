"""Proofs that a task is fit to ship: solvable, not trivial, collaborative, and verified honestly.

``prove_task(task)`` plays and inspects one task and returns a :class:`TaskProof` with one
:class:`Finding` per property:

- **solvable**: the oracle team (the task's ``reference_solution``) passes the verifier within the round
  budget; every reference call succeeds (no tool error: only legal calls) and no agent's plan is longer
  than ``max_action_steps`` (chat excluded, as the episode counts it).
- **idle fails**: a team that sleeps every turn fails.
- **random fails**: the random team fails (seeds from ``random_seeds``). A task meant to be that easy is
  listed with ``allow_random`` and reported as "passes randomly" instead of failing the proof.
- **collaborative**: no single agent can meet every check of the verifier on its own (see
  :func:`solo_blockers`: a static walk over recipes, nodes and drops per agent, plus a short sandbox
  fight for kill checks). What it cannot prove is written in ``docs/tasks.md``.
- **honest verifier**: every checkpoint is achieved in the oracle run, and each one can fail: it is not
  achieved at the end of the idle run, or it is a guard (``all_alive``: an agent can die; an
  ``at_location`` that holds at spawn: an agent can walk away).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..play.protocol import Team, Turn, TurnOutcome
from ..tasks.task import Task, WorldIndex, world_index
from ..world.tools import CHAT_TOOLS

GUARD_CHECKS = ("all_alive",)


@dataclass
class Finding:
    name: str  # solvable | idle fails | random fails | collaborative | honest verifier
    ok: bool
    detail: str = ""
    warning: bool = False  # passed, but worth a look (e.g. a task allowed to pass randomly did)


@dataclass
class TaskProof:
    task_id: str
    category: str | None
    agents: int
    budget: int
    max_action_steps: int
    ref_rounds: int | None = None  # rounds the oracle needed (None: it did not pass)
    plan_steps: int = 0  # longest per-agent reference plan, non-chat steps
    findings: list[Finding] = field(default_factory=list)
    oracle_s: float = 0.0
    total_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def slack(self) -> int | None:
        return None if self.ref_rounds is None else self.budget - self.ref_rounds

    def finding(self, name: str) -> Finding | None:
        return next((f for f in self.findings if f.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task_id, "category": self.category, "agents": self.agents, "budget": self.budget,
                "max_action_steps": self.max_action_steps, "ref_rounds": self.ref_rounds, "slack": self.slack,
                "plan_steps": self.plan_steps, "ok": self.ok, "oracle_s": round(self.oracle_s, 3),
                "total_s": round(self.total_s, 3),
                "findings": [{"name": f.name, "ok": f.ok, "detail": f.detail, "warning": f.warning}
                             for f in self.findings]}


# ---------------------------------------------------------------------------------------------------
# playing
# ---------------------------------------------------------------------------------------------------
@dataclass
class CallRecord:
    agent_id: str
    round: int
    tool: str
    args: dict[str, Any]
    ok: bool
    error: str | None
    text: str


class RecordingTeam(Team):
    """Plays a scripted policy and keeps every call's result (to name the first illegal reference call)."""

    def __init__(self, policy: Any):
        self.policy = policy
        self.calls: list[CallRecord] = []

    async def act(self, turn: Turn) -> TurnOutcome:
        decision = self.policy.decide(turn)
        if decision is None:
            return TurnOutcome(thinking="no action")
        tool, args = decision
        result = await turn.port.call(tool, args)
        self.calls.append(CallRecord(turn.agent_id, turn.round, tool, dict(args), result.ok, result.error, result.text))
        return TurnOutcome(thinking=tool)


class WithoutAgent:
    """The oracle plan with one agent sleeping through it (for the necessity check)."""

    name = "oracle-without"

    def __init__(self, task: Task, absent: str):
        from ..play.policies import OraclePolicy

        self.oracle = OraclePolicy(task)
        self.absent = absent

    def decide(self, turn: Turn) -> Any:
        if turn.agent_id == self.absent:
            return "sleep", {"seconds": 1}
        return self.oracle.decide(turn)


def play_policy(task: Task, policy: Any, seed: int = 0) -> tuple[Any, RecordingTeam]:
    from ..play.episode import Episode

    team = RecordingTeam(policy)
    return asyncio.run(Episode(task, team, seed=seed).run()), team


def redundant_agents(task: Task, seed: int = 0) -> list[str]:
    """Agents without whom the reference plan still passes (each replaced by a sleeper, one at a time)."""
    return [a for a in task.agent_ids if play_policy(task, WithoutAgent(task, a), seed)[0].success]


def play(task: Task, policy_name: str, seed: int = 0) -> tuple[Any, RecordingTeam]:
    """One episode of a scripted team (no files written). Returns (EpisodeResult, team)."""
    from ..play.policies import make_policy

    return play_policy(task, make_policy(policy_name, task, seed), seed)


# ---------------------------------------------------------------------------------------------------
# collaboration: what could one agent do alone?
# ---------------------------------------------------------------------------------------------------
class SoloAnalysis:
    """Per-agent reachability over the requirement graph, with sandbox fights for kills and drops.

    An agent "can obtain" an item when it holds it, or can gather it (node skill level and a usable tool it
    holds or can make), or can make it (recipe level, tool, and every input obtainable the same way), or
    can kill a mob that drops it (a sandbox fight with its own starting kit wins). Stations are assumed
    reachable (every mainland station is), quantities, inventory space and travel time are ignored: the
    analysis over-estimates what one agent can do, which is the safe side for a collaboration proof.
    """

    def __init__(self, task: Task, w: WorldIndex | None = None, seeds: Iterable[int] = (0, 1, 2)):
        self.task = task
        self.w = w or world_index()
        self.seeds = tuple(seeds)
        self._kill_cache: dict[tuple[str, str, int], bool] = {}

    # -- items ----------------------------------------------------------------------------------------
    def obtainable(self, agent_id: str, item: str, seen: frozenset[str] = frozenset()) -> bool:
        a = self.task.agent(agent_id)
        held = {s.item for s in a.inventory + a.equipment}
        if item in held:
            return True
        if item in seen:
            return False
        seen = seen | {item}
        w = self.w
        level = lambda skill: a.skills.get(skill, 1)  # noqa: E731
        for node in w.yielded_by.get(item, []):
            if level(node.skill) >= node.level and (not node.tool or self._has_tool(agent_id, node.tool, held, seen)):
                return True
        for mob in w.dropped_by.get(item, []):
            if self.can_kill(agent_id, mob.key, 1):
                return True
        for r in w.recipes_by_output.get(item, []):
            if level(r.skill) < r.level:
                continue
            if r.tool and not self._has_tool(agent_id, r.tool, held, seen):
                continue
            if all(self.obtainable(agent_id, i, seen) for i in r.inputs):
                return True
        return False

    def _has_tool(self, agent_id: str, tool: str, held: set[str], seen: frozenset[str]) -> bool:
        for key, item in self.w.items.items():
            if item.tool_type == tool and (key in held or (key not in seen and self.obtainable(agent_id, key, seen))):
                return True
        return False

    # -- fights -----------------------------------------------------------------------------------------
    def can_kill(self, agent_id: str, mob_type: str, count: int) -> bool:
        """Whether the agent alone, with its starting kit (best pieces equipped) and food, kills ``count``
        mobs of this type within the round budget without dying, in any of the sandbox seeds."""
        key = (agent_id, mob_type, count)
        if key not in self._kill_cache:
            self._kill_cache[key] = any(self._sandbox_fight(agent_id, mob_type, count, s) for s in self.seeds)
        return self._kill_cache[key]

    def _sandbox_fight(self, agent_id: str, mob_type: str, count: int, seed: int) -> bool:
        from ..world.datapack import load_world
        from ..world.engine import EmbeddedWorld

        loaded = load_world()
        a = self.task.agent(agent_id)
        mobs = sorted((m for m in loaded.mobs if m.type == mob_type),
                      key=lambda m: (abs(m.x - a.x) + abs(m.y - a.y), m.id))
        if not mobs:
            return False
        first = mobs[0]
        spawn = next(iter(loaded.map.adjacent_walkable(first.x, first.y)), None) or \
            loaded.map.nearest_walkable(first.x, first.y, max_radius=10)
        if spawn is None:
            return False
        world = EmbeddedWorld(loaded, seed=seed, rules=dict(self.task.world_rules))
        spec = a.player_spec()
        spec.x, spec.y = spawn
        world.add_player(spec)
        for s in a.inventory:  # put on whatever the agent carries that can be worn (best kit first)
            item = self.w.items.get(s.item)
            if item is not None and item.slot is not None and not item.heal:
                world.equip_item(agent_id, item_key=s.item)
        targets = [m.id for m in mobs[:8]]
        for rnd in range(1, self.task.rounds + 1):
            st = world.player_state(agent_id)
            if not st.alive:
                return False
            if st.kills.get(mob_type, 0) >= count:
                return True
            for mob_id in targets:
                res = world.attack_entity(agent_id, mob_id)
                if res.ok or res.error not in ("invalid", "out_of_range", "blocked"):
                    break
            world.end_round(rnd)
        st = world.player_state(agent_id)
        return st.alive and st.kills.get(mob_type, 0) >= count

    # -- checks ---------------------------------------------------------------------------------------
    def check_solo(self, agent_id: str, spec: Any) -> str | None:
        """None if this agent alone could meet the check; otherwise why not."""
        from ..tasks.verify import Check, lookup

        check = lookup(spec.check)
        if not isinstance(check, Check):
            return None  # a custom check: nothing known, assume one agent could
        p = check.params.model_validate(spec.params)
        t = self.task
        me = t.agent(agent_id)
        named_agent = getattr(p, "agent", None)
        pinned = t.resolve_agent(named_agent) if named_agent else None
        if spec.check == "all_alive":
            return None
        if spec.check == "at_location":
            named = [t.resolve_agent(r) for r in (p.agents or ([p.agent] if p.agent else t.agent_ids))]
            if p.require == "any" and agent_id in named:
                return None
            others = [n for n in named if n != agent_id]
            if p.require == "all" and not others and agent_id in named:
                return None
            where = p.landmark or (p.x, p.y)
            if p.require == "any":
                return f"needs one of {len(others)} other agent(s) at {where}"
            return f"needs {len(others)} other agent(s) at {where}"
        if pinned and pinned != agent_id:
            return f"names {t.agent(pinned).username}"
        if spec.check in ("item_count", "equipped", "crafted"):
            if spec.check == "crafted":
                if not any(self._can_make(agent_id, r) for r in self.w.recipes_by_output.get(p.item, [])):
                    return f"cannot craft {p.item}"
                return None
            if not self.obtainable(agent_id, p.item):
                return f"cannot obtain {p.item}"
            if spec.check == "equipped":
                item = self.w.items[p.item]
                for skill, lv in item.requirements.items():
                    if me.skills.get(skill, 1) < lv:
                        return f"cannot wear {p.item} ({skill} {lv})"
            return None
        if spec.check == "delivered":
            to = t.resolve_agent(p.to)
            if to == agent_id:
                return f"cannot deliver {p.item} to itself"
            sender = t.resolve_agent(p.from_) if p.from_ else None
            if sender and sender != agent_id:
                return f"names sender {t.agent(sender).username}"
            return None if self.obtainable(agent_id, p.item) else f"cannot obtain {p.item}"
        if spec.check == "kills":
            return None if self.can_kill(agent_id, p.mob, p.count) else f"cannot kill {p.count} {p.mob} alone"
        return None

    def _can_make(self, agent_id: str, recipe: Any) -> bool:
        me = self.task.agent(agent_id)
        held = {s.item for s in me.inventory + me.equipment}
        if me.skills.get(recipe.skill, 1) < recipe.level:
            return False
        seen = frozenset({next(iter(recipe.outputs))})  # the item being made cannot be an input of itself
        if recipe.tool and not self._has_tool(agent_id, recipe.tool, held, seen):
            return False
        return all(self.obtainable(agent_id, i, seen) for i in recipe.inputs)


def work_solo(task: Task, w: WorldIndex | None = None, *, analysis: SoloAnalysis | None = None) -> list[str]:
    """Agents that could do all of the objective's *work* alone: obtain every item the checks ask for and
    win every fight, if the checks did not name who must hold, craft or receive it. Presence checks
    (``at_location``) and ``all_alive`` are left out. A task where someone can is collaborative only
    because its verifier pins roles or asks for several places at once (reported as a warning).
    ``analysis`` reuses another call's :class:`SoloAnalysis` (its sandbox fights are cached)."""
    from ..tasks.verify import Check, lookup

    analysis = analysis or SoloAnalysis(task, w)
    assert task.verifier is not None
    work = [spec for spec in task.verifier.checks if spec.check not in ("at_location", "all_alive")]
    if not work:
        return []  # presence only (exploration): being in several places at once is the collaboration
    out = []
    for a in task.agent_ids:
        able = True
        for spec in work:
            check = lookup(spec.check)
            if not isinstance(check, Check):
                continue
            p = check.params.model_validate(spec.params)
            if spec.check == "kills":
                able = analysis.can_kill(a, p.mob, p.count)
            elif spec.check == "crafted":
                able = any(analysis._can_make(a, r) for r in analysis.w.recipes_by_output.get(p.item, []))
            elif check.items:
                able = all(analysis.obtainable(a, item) for item in check.items(p))
            if not able:
                break
        if able:
            out.append(a)
    return out


def solo_blockers(task: Task, w: WorldIndex | None = None, *,
                  analysis: SoloAnalysis | None = None) -> dict[str, str | None]:
    """For each agent: why it cannot meet the whole verifier alone (None: it could)."""
    analysis = analysis or SoloAnalysis(task, w)
    out: dict[str, str | None] = {}
    assert task.verifier is not None
    places = _presence_targets(task)
    for a in task.agent_ids:
        why = None
        for spec in task.verifier.checks:
            reason = analysis.check_solo(a, spec)
            if reason:
                why = f"{spec.name or spec.check}: {reason}"
                break
        if why is None:
            # checks are met together: one agent cannot stand at two places that far apart at once
            mine = [pt for pt in places if a in pt[3]]
            for i, p1 in enumerate(mine):
                for p2 in mine[i + 1:]:
                    if abs(p1[0] - p2[0]) + abs(p1[1] - p2[1]) > p1[2] + p2[2]:
                        why = f"cannot stand at ({p1[0]},{p1[1]}) and ({p2[0]},{p2[1]}) at once"
                        break
                if why:
                    break
        out[a] = why
    return out


def _presence_targets(task: Task) -> list[tuple[int, int, int, set[str]]]:
    """(x, y, radius, agents that may fill it) for every at_location check that one agent can fill."""
    from ..tasks.verify import Check, lookup

    check = lookup("at_location")
    out = []
    assert task.verifier is not None
    for spec in task.verifier.checks:
        if spec.check != "at_location" or not isinstance(check, Check) or check.place is None:
            continue
        p = check.params.model_validate(spec.params)
        named = [task.resolve_agent(r) for r in (p.agents or ([p.agent] if p.agent else task.agent_ids))]
        if p.require != "any" and len(named) > 1:
            continue  # needs several agents anyway (blocked per check)
        out.append((*check.place(p), {n for n in named if n}))
    return out


# ---------------------------------------------------------------------------------------------------
# the proof
# ---------------------------------------------------------------------------------------------------
def _plan_steps(task: Task) -> int:
    if not task.reference_solution:
        return 0
    return max((sum(1 for s in steps if s.tool not in CHAT_TOOLS) for steps in task.reference_solution.values()),
               default=0)


def prove_task(task: Task, *, random_seeds: Iterable[int] = (0,), allow_random: bool = False,
               necessity: bool = False, oracle_seeds: int = 1) -> TaskProof:
    """Every proof of one task, each a :class:`Finding`: solvable, idle fails, random fails, collaborative,
    honest verifier."""
    t_start = time.perf_counter()
    proof = TaskProof(task.id, task.category, len(task.agents), task.rounds, task.max_action_steps,
                      plan_steps=_plan_steps(task))
    if not task.verifiable:
        proof.findings.append(Finding("solvable", False, "the task has no verifier: nothing to prove"))
        return proof
    if not task.reference_solution:
        proof.findings.append(Finding("solvable", False, "the task has no reference_solution"))
        return proof
    oracle = _prove_solvable(task, proof, oracle_seeds)
    idle = _prove_not_trivial(task, proof, random_seeds, allow_random)
    _prove_collaborative(task, proof, oracle, necessity)
    _prove_honest_verifier(task, proof, oracle, idle)
    proof.total_s = time.perf_counter() - t_start
    return proof


def _prove_solvable(task: Task, proof: TaskProof, oracle_seeds: int) -> Any:
    """The reference plan passes the verifier within the budget with legal calls only; returns its result."""
    t0 = time.perf_counter()
    oracle, team = play(task, "oracle", seed=0)
    proof.oracle_s = time.perf_counter() - t0
    bad_calls = [c for c in team.calls if not c.ok and c.tool != "complete"]
    problems = []
    if not oracle.success:
        problems.append(f"oracle fails: {oracle.message} (ended: {oracle.end_reason} after {oracle.rounds} rounds)")
    if bad_calls:
        c = bad_calls[0]
        problems.append(f"{len(bad_calls)} illegal reference call(s); first: {c.agent_id} round {c.round} "
                        f"{c.tool}({c.args}) -> {c.error}: {c.text}")
    if proof.plan_steps > task.max_action_steps:
        problems.append(f"a reference plan has {proof.plan_steps} action steps > max_action_steps {task.max_action_steps}")
    if oracle.success:
        proof.ref_rounds = oracle.rounds
    detail = f"oracle passes in {oracle.rounds}/{task.rounds} rounds, {len(team.calls)} legal calls"
    warn = False
    if oracle_seeds > 1 and not problems:
        # seed 0 is the proof; other seeds show how much the plan depends on luck (fights, yields)
        wins = 1 + sum(play(task, "oracle", seed=s)[0].success for s in range(1, oracle_seeds))
        detail += f"; passes with {wins}/{oracle_seeds} seeds"
        warn = wins < oracle_seeds
    proof.findings.append(Finding("solvable", not problems, "; ".join(problems) or detail, warning=warn))
    return oracle


def _prove_not_trivial(task: Task, proof: TaskProof, random_seeds: Iterable[int], allow_random: bool) -> Any:
    """An idle team and a random team (per seed) fail; returns the idle team's result."""
    idle, _ = play(task, "idle", seed=0)
    proof.findings.append(Finding("idle fails", not idle.success,
                                  f"idle team: {idle.message}" if idle.success else f"PSR {idle.psr:.2f}"))
    passed = []
    for seed in random_seeds:
        res, _ = play(task, "random", seed=seed)
        if res.success:
            passed.append(seed)
    seeds = list(random_seeds)
    allow_random = allow_random or bool(task.raw.get("trivial_ok"))  # honoured once the task schema has the field
    if passed and allow_random:
        proof.findings.append(Finding("random fails", True, f"passes randomly with seed(s) {passed} (allowed: easy task)",
                                      warning=True))
    else:
        proof.findings.append(Finding("random fails", not passed,
                                      f"random team passes with seed(s) {passed}" if passed else f"{len(seeds)} seed(s)"))
    return idle


def _prove_collaborative(task: Task, proof: TaskProof, oracle: Any, necessity: bool) -> None:
    """No agent alone could meet every check (and, with ``necessity``, the plan needs every agent)."""
    analysis = SoloAnalysis(task)  # shared: both questions run the same (cached) sandbox fights
    blockers = solo_blockers(task, analysis=analysis)
    solo = [a for a, why in blockers.items() if why is None]
    workers = work_solo(task, analysis=analysis)
    if solo:
        detail = f"{', '.join(task.agent(a).username for a in solo)} could meet every check alone"
    else:
        detail = f"no agent alone (e.g. {task.agents[0].username}: {blockers[task.agents[0].agent_id]})"
        if workers:
            detail += (f"; but {', '.join(task.agent(a).username for a in workers)} could do all the work, so "
                       "collaboration rests on the roles and places the verifier names")
    warn = bool(workers) and not solo
    if necessity and oracle.success:
        spare = redundant_agents(task)
        if spare:
            detail += f"; the reference plan still passes without {', '.join(task.agent(a).username for a in spare)}"
            warn = True
        else:
            detail += "; every agent is needed by the reference plan"
    proof.findings.append(Finding("collaborative", not solo, detail, warning=warn))


def _prove_honest_verifier(task: Task, proof: TaskProof, oracle: Any, idle: Any) -> None:
    """The oracle reaches every checkpoint and none but guards holds for an idle team."""
    unreached = [cp.name for cp in oracle.checkpoints if not cp.achieved]
    cannot_fail = []
    guards = []
    for spec, cp in zip(task.verifier.checks if task.verifier else [], idle.checkpoints):
        if not cp.achieved:
            continue
        if spec.check in GUARD_CHECKS or spec.check == "at_location":
            guards.append(cp.name)
        else:
            cannot_fail.append(cp.name)
    extra = [cp.name for cp in idle.checkpoints[len(task.verifier.checks):] if cp.achieved]
    cannot_fail += extra
    problems = []
    if unreached:
        problems.append(f"not reached by the oracle: {', '.join(unreached)}")
    if cannot_fail:
        problems.append(f"already met by an idle team: {', '.join(cannot_fail)}")
    if guards and len(guards) == len(idle.checkpoints):
        problems.append("every checkpoint holds for an idle team")
    detail = "; ".join(problems) or (f"{len(oracle.checkpoints)} checkpoints" +
                                     (f" ({len(guards)} guard: {', '.join(guards)})" if guards else ""))
    proof.findings.append(Finding("honest verifier", not problems, detail))


def prove_tasks(tasks: Iterable[Task], *, random_seeds: Iterable[int] = (0,), allow_random: Iterable[str] = (),
                necessity: bool = False, oracle_seeds: int = 1, progress: Any = None) -> list[TaskProof]:
    allowed = set(allow_random)
    out = []
    for task in tasks:
        out.append(prove_task(task, random_seeds=tuple(random_seeds), allow_random=task.id in allowed,
                              necessity=necessity, oracle_seeds=oracle_seeds))
        if progress is not None:
            progress(out[-1])
    return out
