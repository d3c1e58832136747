"""Proofs that a task is fit to ship: solvable, not trivial, collaborative, knowable, and verified honestly.

``prove_task(task)`` plays and inspects one task and returns a :class:`TaskProof` with one
:class:`Finding` per property (what each one cannot prove is written in ``docs/tasks.md``):

- **solvable**: the oracle team (the task's ``reference_solution``) passes the verifier within the round
  budget; every reference call succeeds (no tool error: only legal calls) and no agent's plan is longer
  than ``max_action_steps`` (chat and sleep excluded, as the episode counts it).
- **idle fails**: a team that sleeps every turn fails and scores PSR 0 (guards are not progress).
- **random fails**: the random team fails on every one of ``random_seeds`` (at least one seed; the CLI
  takes at least 5). A task meant to be that easy is listed with ``allow_random``.
- **collaborative**: no single agent can meet every check on its own (:func:`solo_blockers`), and the
  collaboration does not rest only on whom the verifier names (:func:`work_solo`): either no agent could do
  all the work, or the task needs communication (proven by the knowledge check), or it asks for presence
  in several places at once.
- **every agent needed** (``necessity``, on by default): replayed once per agent with that agent asleep,
  the plan fails, or it becomes unknowable (a teammate acted on what only the sleeper could tell).
- **knowable**: every argument of every reference step was known to its agent before the step, from its
  brief, its own observations or chat it received (:mod:`.knowledge`); ``needs_communication: true``
  holds exactly when the same check fails once the plan's chat is removed.
- **honest verifier**: every checkpoint is achieved in the oracle run, and each one can fail: it is not
  achieved at the end of the idle run, or it is a guard (a constraint that can fail the task, never
  progress).
- **warned of deadly beasts**: no walk of the plan is stopped by an aggressive mob whose two strikes can kill
  the walker from full HP (``DEADLY`` or more of the time) unless the walker has read that beast's name first.
- **calibrated budget**: the round budget is 1.25x to 1.6x the fastest known solution (the reference plan
  compressed, :mod:`.fastest`, or a faster successful pilot of the same task version, :mod:`.pilots`) and
  25 to 55 rounds (issue 28). Outside that it is a warning, or a failure with ``strict_budget``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable

from .knowledge import Gap, fact_handoffs, knowledge_gaps
from .replays import (CallRecord, PlanBroken, RecordingTeam, WithoutAgent, mob_ids, play,  # noqa: F401 - re-exported
                      play_policy, stale_facts)
from ..tasks.task import Task, WorldIndex, world_index
from ..tasks.plans import action_steps

FINDINGS = ("solvable", "idle fails", "random fails", "knowable", "collaborative", "every agent needed",
            "honest verifier", "warned of deadly beasts", "calibrated budget")  # in the order prove_task appends them
DEADLY = 0.05  # a walk whose stop can kill its walker from full HP this often must be warned of (see below)
BUDGET_RATIO = (1.25, 1.6)  # budget / fastest known solution (issue 28, item 1)
BUDGET_ROUNDS = (25, 55)
DEFAULT_RANDOM_SEEDS = 5


@dataclass
class Finding:
    name: str  # one of FINDINGS
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
    needs_communication: bool = False  # as the task file declares it
    item_handoffs: int = 0  # transfers between agents in the oracle run
    fact_handoffs: int = 0  # step arguments an agent knew only from a teammate's chat
    findings: list[Finding] = field(default_factory=list)
    oracle_s: float = 0.0
    total_s: float = 0.0
    fastest_rounds: int | None = None  # the fastest known solution's rounds (compressed plan or pilot)
    fastest_source: str = ""  # "compressed plan", "reference plan" or "pilot <folder>"
    compressed_rounds: int | None = None  # the compressed reference plan's rounds (None: none passed)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def slack(self) -> int | None:
        return None if self.ref_rounds is None else self.budget - self.ref_rounds

    @property
    def handoffs(self) -> int:
        return self.item_handoffs + self.fact_handoffs

    @property
    def budget_ratio(self) -> float | None:
        return None if not self.ref_rounds else self.budget / self.ref_rounds

    @property
    def fastest_ratio(self) -> float | None:
        """The budget over the fastest known solution's rounds (the calibration's ratio)."""
        return None if not self.fastest_rounds else self.budget / self.fastest_rounds

    def finding(self, name: str) -> Finding | None:
        return next((f for f in self.findings if f.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        ratio = self.budget_ratio
        return {"task": self.task_id, "category": self.category, "agents": self.agents, "budget": self.budget,
                "max_action_steps": self.max_action_steps, "ref_rounds": self.ref_rounds, "slack": self.slack,
                "budget_ratio": None if ratio is None else round(ratio, 2), "plan_steps": self.plan_steps,
                "needs_communication": self.needs_communication, "handoffs": self.handoffs,
                "item_handoffs": self.item_handoffs, "fact_handoffs": self.fact_handoffs,
                "fastest_rounds": self.fastest_rounds, "fastest_source": self.fastest_source,
                "compressed_rounds": self.compressed_rounds,
                "fastest_ratio": None if self.fastest_ratio is None else round(self.fastest_ratio, 2), "ok": self.ok,
                "oracle_s": round(self.oracle_s, 3), "total_s": round(self.total_s, 3),
                "findings": [{"name": f.name, "ok": f.ok, "detail": f.detail, "warning": f.warning}
                             for f in self.findings]}


# ---------------------------------------------------------------------------------------------------
# playing (the recording team and the scripted plays live in replays.py)
# ---------------------------------------------------------------------------------------------------
def plan_needs(task: Task, agent_id: str, seed: int = 0, until: int | None = None) -> bool:
    """Whether the reference plan breaks with ``agent_id`` asleep: a teammate's step is refused or uses what
    it can no longer know (the sleeper's chat is missing), or the verifier does not pass. The replay stops
    at the first broken step, or after round ``until`` (where the oracle finished: nothing changes later)."""
    from ..play.episode import Episode, make_world

    world = make_world(task, seed)
    team = RecordingTeam(WithoutAgent(task, agent_id, seed), stop_at_break=True, skip=agent_id, until=until,
                         world=world)
    try:
        result = asyncio.run(Episode(task, team, seed=seed, world=world).run())
    except PlanBroken:
        return True
    return not result.success


def redundant_agents(task: Task, seed: int = 0, until: int | None = None) -> list[str]:
    """Agents the reference plan does not need (see :func:`plan_needs`)."""
    return [a for a in task.agent_ids if not plan_needs(task, a, seed, until)]


# ---------------------------------------------------------------------------------------------------
# collaboration: what could one agent do alone?
# ---------------------------------------------------------------------------------------------------
class SoloAnalysis:
    """Per-agent reachability over the requirement graph, with sandbox fights for kills and drops.

    An agent "can obtain" an item when it holds it, or can gather it (node skill level and a usable tool it
    holds or can make), or can make it (recipe level, tool, and every input obtainable the same way), or
    can kill a mob that drops it (a sandbox fight with its own starting kit wins). Levels are the agent's
    starting levels raised by what it could gain within its action budget (:meth:`level`). Stations are
    assumed reachable (every mainland station is), quantities, inventory space and travel time are
    ignored: the analysis over-estimates what one agent can do, the safe side for a collaboration proof.
    """

    def __init__(self, task: Task, w: WorldIndex | None = None, seeds: Iterable[int] = (0, 1, 2)):
        self.task = task
        self.w = w or world_index()
        self.seeds = tuple(seeds)
        self._kill_cache: dict[tuple[str, str, int], bool] = {}
        self._levels: dict[tuple[str, str], int] = {}

    # -- levels ---------------------------------------------------------------------------------------
    def level(self, agent_id: str, skill: str) -> int:
        """The highest level the agent could reach in ``skill`` within its action budget: every turn earns
        the best XP one call of that skill gives at the current level (a full harvest of the best node it
        may work, or a batch of two crafts of the best recipe it may make, its inputs gathered on other
        turns). Tools, inputs and walking are not charged: an over-estimate. Combat skills keep their
        starting level here; the sandbox fights play out their own XP."""
        key = (agent_id, skill)
        if key not in self._levels:
            self._levels[key] = self._grown_level(agent_id, skill)
        return self._levels[key]

    def _grown_level(self, agent_id: str, skill: str) -> int:
        start = self.task.agent(agent_id).skills.get(skill, 1)
        table = self.w.loaded.xp_table
        nodes = [n for n in self.w.node_types.values() if n.skill == skill]
        recipes = [r for r in self.w.recipes if r.skill == skill]
        if not nodes and not recipes:
            return start
        xp, level = table.xp_for(start), start
        for _ in range(min(self.task.max_action_steps, self.task.rounds)):
            rate = max([n.xp * n.harvests for n in nodes if n.level <= level] +
                       [2 * r.xp for r in recipes if r.level <= level] + [0])
            if rate == 0:
                break
            xp += rate
            level = table.level_for(xp)
        return level

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
        for node in w.yielded_by.get(item, []):
            if self.level(agent_id, node.skill) >= node.level and \
                    (not node.tool or self._has_tool(agent_id, node.tool, held, seen)):
                return True
        for mob in w.dropped_by.get(item, []):
            if self.can_kill(agent_id, mob.key, 1):
                return True
        for r in w.recipes_by_output.get(item, []):
            if self.level(agent_id, r.skill) < r.level:
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
        from ..tasks.mobs import world_options as task_world_options
        from ..world.engine import EmbeddedWorld

        loaded = load_world()
        a = self.task.agent(agent_id)
        # a guarded mob (a joint action of k >= 2 players) cannot be hurt by one agent: fight another of its type
        guarded = {j.mob for j in (self.task.mechanics.joint_actions if self.task.mechanics else [])
                   if j.kind == "guarded_mob"}
        mobs = sorted((m for m in loaded.mobs if m.type == mob_type and m.id not in guarded),
                      key=lambda m: (abs(m.x - a.x) + abs(m.y - a.y), m.id))
        if not mobs:
            return False
        first = mobs[0]
        spawn = next(iter(loaded.map.adjacent_walkable(first.x, first.y)), None) or \
            loaded.map.nearest_walkable(first.x, first.y, max_radius=10)
        if spawn is None:
            return False
        world = EmbeddedWorld(loaded, seed=seed, rules=dict(self.task.world_rules), **task_world_options(self.task))
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
        named = _named_agents(t, p)
        if spec.check == "all_alive":
            return None
        if spec.check == "at_location":
            everyone = named or t.agent_ids
            if p.require == "any" and agent_id in everyone:
                return None
            others = [n for n in everyone if n != agent_id]
            if p.require == "all" and not others and agent_id in everyone:
                return None
            where = p.landmark or p.area or (p.x, p.y)
            if p.require == "any":
                return f"needs one of {len(others)} other agent(s) at {where}"
            return f"needs {len(others)} other agent(s) at {where}"
        if named and agent_id not in named:
            return f"names {', '.join(t.agent(n).username for n in named)}"
        if spec.check == "crafted":
            if not any(self._can_make(agent_id, r) for r in self.w.recipes_by_output.get(p.item, [])):
                return f"cannot craft {p.item}"
            return None
        if spec.check in ("item_count", "equipped"):
            if not self.obtainable(agent_id, p.item):
                return f"cannot obtain {p.item}"
            if spec.check == "equipped":
                for skill, lv in self.w.items[p.item].requirements.items():
                    if self.level(agent_id, skill) < lv:
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
        if self.level(agent_id, recipe.skill) < recipe.level:
            return False
        seen = frozenset({next(iter(recipe.outputs))})  # the item being made cannot be an input of itself
        if recipe.tool and not self._has_tool(agent_id, recipe.tool, held, seen):
            return False
        return all(self.obtainable(agent_id, i, seen) for i in recipe.inputs)


def _named_agents(task: Task, p: Any) -> list[str]:
    """Agent ids a check's parameters pin it to (``agent``, ``agents``, ``role``); empty: anyone."""
    refs = list(getattr(p, "agents", None) or []) + ([p.agent] if getattr(p, "agent", None) else [])
    ids = [task.resolve_agent(r) for r in refs]
    role = getattr(p, "role", None)
    if role:
        ids += [a.agent_id for a in task.agents if a.role == role]
    return [i for i in dict.fromkeys(ids) if i]


def work_solo(task: Task, w: WorldIndex | None = None, *, analysis: SoloAnalysis | None = None) -> list[str]:
    """Agents that could do all of the objective's *work* alone: obtain every item the checks ask for and
    win every fight, if the checks did not name who must hold, craft or receive it. Presence checks
    (``at_location``) and guards are left out. A task where someone can is collaborative only because its
    verifier pins roles (refused, unless the task needs communication).
    ``analysis`` reuses another call's :class:`SoloAnalysis` (its sandbox fights are cached)."""
    from ..tasks.verify import Check, is_guard, lookup

    analysis = analysis or SoloAnalysis(task, w)
    assert task.verifier is not None
    work = [spec for spec in task.verifier.checks if spec.check != "at_location" and not is_guard(spec)]
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
        named = _named_agents(task, p) or task.agent_ids
        if p.require != "any" and len(named) > 1:
            continue  # needs several agents anyway (blocked per check)
        target = check.place(p)
        if target is not None:
            out.append((*target, set(named)))
    return out


# ---------------------------------------------------------------------------------------------------
# the proof
# ---------------------------------------------------------------------------------------------------
def _plan_steps(task: Task) -> int:
    if not task.reference_solution:
        return 0
    return max((action_steps(steps) for steps in task.reference_solution.values()), default=0)


def _gap_text(gaps: list[Gap], n: int = 2) -> str:
    more = f" (+{len(gaps) - n} more)" if len(gaps) > n else ""
    return "; ".join(str(g) for g in gaps[:n]) + more


def prove_task(task: Task, *, random_seeds: Iterable[int] = range(DEFAULT_RANDOM_SEEDS), allow_random: bool = False,
               necessity: bool = True, oracle_seeds: int = 1, strict_budget: bool = False,
               pilot: tuple[int, str] | None = None) -> TaskProof:
    """Every proof of one task, each a :class:`Finding` (see the module docstring). ``pilot``: (rounds,
    folder) of the task's fastest successful pilot on this version, if any; ``strict_budget``: a budget
    outside the calibration range fails the proof rather than warning."""
    seeds = list(random_seeds)
    if not seeds:
        raise ValueError("prove_task needs at least one random seed (a proof that a random team fails needs a "
                         f"random team); the default is {DEFAULT_RANDOM_SEEDS}")
    t_start = time.perf_counter()
    proof = TaskProof(task.id, task.category, len(task.agents), task.rounds, task.max_action_steps,
                      plan_steps=_plan_steps(task), needs_communication=task.needs_communication)
    if not task.verifiable:
        proof.findings.append(Finding("solvable", False, "the task has no verifier: nothing to prove"))
        return proof
    if not task.reference_solution:
        proof.findings.append(Finding("solvable", False, "the task has no reference_solution"))
        return proof
    oracle, team = _prove_solvable(task, proof, oracle_seeds)
    idle = _prove_not_trivial(task, proof, seeds, allow_random)
    talks = _prove_knowable(task, proof, team)
    _prove_collaborative(task, proof, talks)
    if necessity:
        _prove_every_agent_needed(task, proof, oracle)
    _prove_honest_verifier(task, proof, oracle, idle)
    _prove_warned_of_deadly_beasts(task, proof, team)
    _prove_calibrated_budget(task, proof, team, pilot, strict_budget)
    proof.total_s = time.perf_counter() - t_start
    return proof


def _prove_solvable(task: Task, proof: TaskProof, oracle_seeds: int) -> tuple[Any, RecordingTeam]:
    """The reference plan passes the verifier within the budget with legal calls only; returns its result
    and the recording (what each turn showed its agent, for the knowledge check)."""
    t0 = time.perf_counter()
    oracle, team = play(task, "oracle", seed=0, record_seen=True)
    proof.oracle_s = time.perf_counter() - t0
    problems = []
    if not oracle.success:
        problems.append(f"oracle fails: {oracle.message} (ended: {oracle.end_reason} after {oracle.rounds} rounds)")
    if illegal := team.illegal_calls("the reference plan"):
        problems.append(illegal)
    if proof.plan_steps > task.max_action_steps:
        problems.append(f"a reference plan has {proof.plan_steps} action steps > max_action_steps {task.max_action_steps}")
    if oracle.success:
        proof.ref_rounds = oracle.rounds
    proof.item_handoffs = sum(1 for c in team.calls if c.tool == "transfer_items" and c.ok)
    detail = f"oracle passes in {oracle.rounds}/{task.rounds} rounds, {len(team.calls)} legal calls"
    warn = False
    if oracle_seeds > 1 and not problems:
        # seed 0 is the proof; other seeds show how much the plan depends on luck (fights, yields)
        wins = 1 + sum(play(task, "oracle", seed=s)[0].success for s in range(1, oracle_seeds))
        detail += f"; passes with {wins}/{oracle_seeds} seeds"
        warn = wins < oracle_seeds
    proof.findings.append(Finding("solvable", not problems, "; ".join(problems) or detail, warning=warn))
    return oracle, team


def _prove_not_trivial(task: Task, proof: TaskProof, seeds: list[int], allow_random: bool) -> Any:
    """An idle team fails with PSR 0 and a random team fails on every seed; returns the idle team's result."""
    idle, _ = play(task, "idle", seed=0)
    if idle.success:
        proof.findings.append(Finding("idle fails", False, f"idle team passes: {idle.message}"))
    elif idle.psr > 0:
        gained = [cp.name for cp in idle.checkpoints if cp.achieved and not cp.guard]
        proof.findings.append(Finding("idle fails", False, (
            f"idle team scores PSR {idle.psr:.2f} ({', '.join(gained)} already met): a check that holds at the "
            "start is a guard (guard: true) or asks for a change")))
    else:
        proof.findings.append(Finding("idle fails", True, "PSR 0.00"))
    passed = [seed for seed in seeds if play(task, "random", seed=seed)[0].success]
    allow_random = allow_random or bool(task.raw.get("trivial_ok"))
    if passed and allow_random:
        proof.findings.append(Finding("random fails", True, f"passes randomly with seed(s) {passed} (allowed: easy task)",
                                      warning=True))
    else:
        proof.findings.append(Finding("random fails", not passed,
                                      f"random team passes with seed(s) {passed}" if passed else f"{len(seeds)} seed(s)"))
    return idle


def _prove_knowable(task: Task, proof: TaskProof, team: RecordingTeam) -> bool:
    """Every step argument known to its agent; ``needs_communication`` exactly when chat is needed for that.
    Returns whether the task is proven to need communication."""
    stale = stale_facts(task, team.world_events)  # facts the task's events made false
    gaps = knowledge_gaps(team.seen, stale=stale)
    silent = knowledge_gaps(team.seen, without_chat=True, stale=stale)
    proof.fact_handoffs = fact_handoffs(gaps, silent)
    problems = []
    if gaps:
        problems.append(f"the plan uses what its agent cannot know: {_gap_text(gaps)}")
    if task.needs_communication and not silent:
        problems.append("needs_communication is set, but the plan with its chat removed is still knowable: put the "
                        "facts one agent must tell another only in that agent's brief")
    if not task.needs_communication and silent and not gaps:
        problems.append(f"without chat the plan is unknowable ({_gap_text(silent, 1)}): mark the task "
                        "needs_communication: true")
    if problems:
        detail = "; ".join(problems)
    elif task.needs_communication:
        detail = f"knowable; without chat it is not: {_gap_text(silent, 1)}"
    else:
        detail = "every argument known to its agent"
    proof.findings.append(Finding("knowable", not problems, detail))
    return task.needs_communication and not problems


def _prove_collaborative(task: Task, proof: TaskProof, talks: bool) -> None:
    """No agent alone could meet every check, and the work itself needs the team unless talking does."""
    analysis = SoloAnalysis(task)  # shared: both questions run the same (cached) sandbox fights
    blockers = solo_blockers(task, analysis=analysis)
    solo = [a for a, why in blockers.items() if why is None]
    workers = work_solo(task, analysis=analysis)
    if solo:
        proof.findings.append(Finding("collaborative", False,
                                      f"{', '.join(task.agent(a).username for a in solo)} could meet every check alone"))
        return
    if workers and not talks:
        proof.findings.append(Finding("collaborative", False, (
            f"{', '.join(task.agent(a).username for a in workers)} could do all the work alone: the collaboration "
            "rests only on whom the verifier names (split skills, tools or knowledge so that the work needs the team)")))
        return
    first = task.agents[0]
    detail = f"no agent alone (e.g. {first.username}: {blockers[first.agent_id]})"
    if workers:
        detail += (f"; {', '.join(task.agent(a).username for a in workers)} could do the work, but not "
                   "without what teammates tell it")
    proof.findings.append(Finding("collaborative", True, detail))


def _prove_every_agent_needed(task: Task, proof: TaskProof, oracle: Any) -> None:
    """With any one agent asleep, the reference plan breaks (see :func:`plan_needs`)."""
    if not oracle.success:
        proof.findings.append(Finding("every agent needed", False, "not checked: the oracle fails"))
        return
    spare = redundant_agents(task, until=oracle.rounds)
    names = ", ".join(task.agent(a).username for a in spare)
    proof.findings.append(Finding("every agent needed", not spare,
                                  f"the plan still passes (and is knowable) without {names}" if spare
                                  else f"each of {len(task.agents)} agents is needed by the plan"))


def _prove_honest_verifier(task: Task, proof: TaskProof, oracle: Any, idle: Any) -> None:
    """The oracle reaches every checkpoint; none but guards holds for an idle team; something is progress."""
    unreached = [cp.name for cp in oracle.checkpoints if not cp.achieved]
    cannot_fail = [cp.name for cp in idle.checkpoints if cp.achieved and not cp.guard]
    guards = [cp.name for cp in idle.checkpoints if cp.guard]
    problems = []
    if unreached:
        problems.append(f"not reached by the oracle: {', '.join(unreached)}")
    if cannot_fail:
        problems.append(f"already met by an idle team: {', '.join(cannot_fail)}")
    if guards and len(guards) == len(idle.checkpoints):
        problems.append("every checkpoint is a guard: nothing measures progress")
    detail = "; ".join(problems) or (f"{len(oracle.checkpoints) - len(guards)} progress checkpoints" +
                                     (f", {len(guards)} guard(s): {', '.join(guards)}" if guards else ""))
    proof.findings.append(Finding("honest verifier", not problems, detail))


def _named(text: str, name: str) -> bool:
    """Whether ``text`` names a mob kind (its name, or the last word's plural: "wolves", "rock golems")."""
    low, name = text.lower(), name.lower()
    *head, last = name.split()
    plurals = {last + "s", last + "es"}
    if last.endswith("f"):
        plurals.add(last[:-1] + "ves")
    if last.endswith("y"):
        plurals.add(last[:-1] + "ies")
    return name in low or any(" ".join([*head, p]) in low for p in plurals)


def _prove_warned_of_deadly_beasts(task: Task, proof: TaskProof, team: RecordingTeam) -> None:
    """A walk the shortest way that an aggressive mob stops takes two strikes before its walker can act (the
    engaging one and the end-of-round one). Where those can kill the walker from full HP (DEADLY or more, as
    the task equips it), something it has read before that walk (its brief, its view, chat) names the beast:
    otherwise a team loses a player to a coin it could not see. A pilot's prospector was struck dead so on the
    way from Ironhold (2026-12-03); the oracle, on another seed, walked past."""
    from ..world import stats

    world = team.world
    mobs, items = getattr(world, "mobs", None), getattr(world, "items", None)
    if mobs is None or items is None:
        proof.findings.append(Finding("warned of deadly beasts", True, "not measured: the world does not say",
                                      warning=True))
        return
    read: dict[str, list[str]] = {}
    by_turn = {(s.agent_id, s.round): s for s in team.seen}
    problems, seen = [], set()
    for c in team.calls:
        s = by_turn.get((c.agent_id, c.round))
        if s is not None and (c.agent_id, c.round) not in seen:
            seen.add((c.agent_id, c.round))
            mine = read.setdefault(c.agent_id, [s.system_prompt])  # the brief once; then each turn's view and chat
            mine.extend([s.observation_text, *s.chat])
        mob = mobs.get(c.engaged_by) if c.engaged_by else None
        if mob is None:
            continue
        agent = task.agent(c.agent_id)
        defence = agent.skills.get("defense", 1) + sum(items[e.item].stats.defense for e in agent.equipment
                                                       if e.item in items)
        hp = stats.max_hp(agent.skills.get("health", 1))
        chance = stats.kill_chance(mob.type.attack, stats.hit_chance(mob.type.accuracy, defence), hp)
        if chance >= DEADLY and not _named(" ".join(read.get(c.agent_id, [])), mob.type.name):
            problems.append(f"{agent.username} walks into {c.engaged_by}'s range in round {c.round}, where its two "
                            f"strikes kill a {hp}-HP walker {chance:.0%} of the time, and nothing it has read "
                            f"names a {mob.type.name.lower()} (say where it stands in a brief or the plan's chat)")
    proof.findings.append(Finding("warned of deadly beasts", not problems, "; ".join(problems) or
                                  "no walk of the plan meets a beast that could kill its walker unwarned"))


def _prove_calibrated_budget(task: Task, proof: TaskProof, team: RecordingTeam, pilot: tuple[int, str] | None,
                             strict: bool) -> None:
    """The budget against the fastest known solution: 1.25x..1.6x of it and 25..55 rounds."""
    from .fastest import fastest_known

    if proof.ref_rounds is None:
        proof.findings.append(Finding("calibrated budget", not strict, "not measured: the oracle fails",
                                      warning=not strict))
        return
    found = fastest_known(task, reference_rounds=proof.ref_rounds, world_events=team.world_events)
    proof.compressed_rounds = found.rounds
    best = found.best if found.best is not None else proof.ref_rounds
    source = "compressed plan" if found.rounds is not None and found.rounds == best else "reference plan"
    if pilot is not None and pilot[0] < best:
        best, source = pilot[0], f"pilot {pilot[1]}"
    proof.fastest_rounds, proof.fastest_source = best, source
    ratio = task.rounds / best
    lo, hi = BUDGET_RATIO
    problems = []
    if not lo <= ratio <= hi:
        problems.append(f"budget {task.rounds} is {ratio:.2f}x the fastest known solution ({best} rounds, "
                        f"{source}); {lo}x..{hi}x is {round(lo * best)}..{int(hi * best)} rounds")
    if not BUDGET_ROUNDS[0] <= task.rounds <= BUDGET_ROUNDS[1]:
        problems.append(f"budget {task.rounds} is outside {BUDGET_ROUNDS[0]}..{BUDGET_ROUNDS[1]} rounds")
    detail = "; ".join(problems) or (f"budget {task.rounds} is {ratio:.2f}x the fastest known solution ({best} "
                                     f"rounds, {source})")
    if found.rounds is not None and found.rounds < proof.ref_rounds:
        detail += f"; the reference plan's {proof.ref_rounds} rounds compress to {found.rounds} ({found.how})"
    proof.findings.append(Finding("calibrated budget", not (problems and strict), detail,
                                  warning=bool(problems) and not strict))


def _prove_one(args: tuple[Task, dict[str, Any]]) -> TaskProof:
    task, kwargs = args
    return prove_task(task, **kwargs)


def prove_tasks(tasks: Iterable[Task], *, random_seeds: Iterable[int] = range(DEFAULT_RANDOM_SEEDS),
                allow_random: Iterable[str] = (), necessity: bool = True, oracle_seeds: int = 1,
                progress: Any = None, jobs: int = 1, strict_budget: bool = False,
                pilots: dict[str, tuple[int, str]] | None = None) -> list[TaskProof]:
    """Prove each task (in ``jobs`` worker processes when more than one), in the order given. ``pilots``:
    task id -> (rounds, folder) of its fastest successful pilot on the task's current version."""
    allowed = set(allow_random)
    seeds = tuple(random_seeds)
    pilots = pilots or {}
    work = [(t, {"random_seeds": seeds, "allow_random": t.id in allowed, "necessity": necessity,
                 "oracle_seeds": oracle_seeds, "strict_budget": strict_budget, "pilot": pilots.get(t.id)})
            for t in tasks]
    if jobs <= 1 or len(work) <= 1:
        out = []
        for item in work:
            out.append(_prove_one(item))
            if progress is not None:
                progress(out[-1])
        return out
    with ProcessPoolExecutor(max_workers=min(jobs, len(work))) as pool:
        out = []
        for proof in pool.map(_prove_one, work):
            out.append(proof)
            if progress is not None:
                progress(proof)
        return out


def default_jobs() -> int:
    """Worker processes for ``prove --all``: the cores this process may use, at most 4."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(4, n))


# ---------------------------------------------------------------------------------------------------
# the suite's shape
# ---------------------------------------------------------------------------------------------------
def suite_summary(proofs: list[TaskProof]) -> dict[str, Any]:
    """The figures the summary table shows: counts by category and team size, reference rounds, budget
    ratios, hand-offs and communication tasks."""
    def spread(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        return {"min": min(values), "median": statistics.median(values), "mean": round(statistics.fmean(values), 2),
                "max": max(values)}

    by_cat: dict[str, int] = {}
    by_size: dict[int, int] = {}
    for p in proofs:
        by_cat[p.category or "-"] = by_cat.get(p.category or "-", 0) + 1
        by_size[p.agents] = by_size.get(p.agents, 0) + 1
    return {
        "tasks": len(proofs), "proven": sum(p.ok for p in proofs),
        "by_category": dict(sorted(by_cat.items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_team_size": dict(sorted(by_size.items())),
        "budget": spread([p.budget for p in proofs]),
        "ref_rounds": spread([p.ref_rounds for p in proofs if p.ref_rounds is not None]),
        "budget_ratio": spread([round(p.budget_ratio, 2) for p in proofs if p.budget_ratio is not None]),
        "fastest_rounds": spread([p.fastest_rounds for p in proofs if p.fastest_rounds is not None]),
        "fastest_ratio": spread([round(p.fastest_ratio, 2) for p in proofs if p.fastest_ratio is not None]),
        "budget_outside": sum(1 for p in proofs if (f := p.finding("calibrated budget")) is not None
                              and (f.warning or not f.ok)),
        "handoffs": spread([p.handoffs for p in proofs]),
        "needs_communication": sum(p.needs_communication for p in proofs),
    }
