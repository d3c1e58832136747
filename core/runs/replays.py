"""Scripted teams played through the real episode loop and recorded: what each call returned, what each turn
showed its agent (for the knowledge check), and the task's world events. Used by the proofs (prove.py), the
fastest known solution (fastest.py), the augmented suite's proofs and the benchmarks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from .knowledge import Minds, Stale, TurnSeen
from .knowledge import _ID as _MOB_ID  # (any instance id: mob_ids keeps the mobs)
from ..play.protocol import Team, Turn, TurnOutcome
from ..tasks.task import Task


@dataclass
class CallRecord:
    agent_id: str
    round: int
    tool: str
    args: dict[str, Any]
    ok: bool
    error: str | None
    text: str
    engaged_by: str | None = None  # the aggressive mob whose range this call's walk entered and which stopped it


class PlanBroken(BaseException):
    """Raised through the episode loop to stop a replay at the first step that breaks the plan.

    A BaseException on purpose: the episode records an ``Exception`` from a team as a team error and plays
    on, and this replay has nothing left to show once its plan is broken."""


class RecordingTeam(Team):
    """Plays a scripted policy and keeps every call's result and what each turn showed its agent.

    With ``stop_at_break`` (the necessity replays) it tracks every agent's knowledge as it goes and
    raises :class:`PlanBroken` at the first step an agent could not know or that the world refuses."""

    def __init__(self, policy: Any, *, record_seen: bool = False, stop_at_break: bool = False,
                 skip: str | None = None, until: int | None = None, world: Any = None):
        self.policy = policy
        self.world = world  # the episode's world, read for where mobs stand (a fact is known while it is true)
        self._heard: dict[str, set[str]] = {}  # agent -> the mob ids it has read of (brief, observations, chat)
        self.world_events: list[dict[str, Any]] = []  # the task's events and joint actions, from the tick lines
        self.calls: list[CallRecord] = []
        self.seen: list[TurnSeen] = []
        self.record_seen = record_seen or stop_at_break
        self.minds = Minds() if stop_at_break else None
        self.skip = skip  # the sleeping agent of a necessity replay: its own turns are not checked
        self.until = until  # the last round of the plan: a replay still unsolved after it is broken

    async def act(self, turn: Turn) -> TurnOutcome:
        if self.until is not None and turn.round > self.until:
            raise PlanBroken(f"not solved by round {self.until}, where the plan ends")
        decision = self.policy.decide(turn)
        if self.record_seen:
            seen = self.turn_seen(turn, decision)
            self.seen.append(seen)
            if self.minds is not None and turn.agent_id != self.skip and self.minds.turn(seen):
                raise PlanBroken(f"{turn.agent_id} round {turn.round}: an argument it cannot know")
        if decision is None:
            return TurnOutcome(thinking="no action")
        tool, args = decision
        result = await turn.port.call(tool, args)
        move = result.effects.move if result.effects is not None else None
        self.calls.append(CallRecord(turn.agent_id, turn.round, tool, dict(args), result.ok, result.error, result.text,
                                     move.engaged_by if move is not None else None))
        if self.minds is not None and not result.ok and tool != "complete" and turn.agent_id != self.skip:
            raise PlanBroken(f"{turn.agent_id} round {turn.round}: {tool} refused ({result.error})")
        return TurnOutcome(thinking=tool)

    def turn_seen(self, turn: Turn, decision: Any) -> TurnSeen:
        """What the turn shows its agent, and the call ``decision`` (tool, args) it makes (None: no call)."""
        obs = turn.observation
        return TurnSeen(
            agent_id=turn.agent_id, round=turn.round, system_prompt=turn.system_prompt,
            observation_text=obs.model_copy(update={"chat": []}).render_text(),
            chat=[f"{m.sender}: {m.text}" for m in obs.chat],
            held={i.key: i.count for i in obs.inventory},
            tool=decision[0] if decision else None, args=dict(decision[1]) if decision else {},
            moved=self._mob_places(turn))

    def _mob_places(self, turn: Turn) -> dict[str, tuple[int, int]] | None:
        """Where each mob the agent has read of stands now (None: a world that does not say)."""
        position = getattr(self.world, "mob_position", None)
        if position is None:
            return None
        heard = self._heard.get(turn.agent_id)
        if heard is None:
            heard = self._heard[turn.agent_id] = set(mob_ids(turn.system_prompt, self.world))
        obs = turn.observation
        heard.update(e.id for e in obs.nearby if e.kind == "mob")
        for m in obs.chat:
            heard.update(mob_ids(m.text, self.world))
        return {mid: xy for mid in sorted(heard) if (xy := position(mid)) is not None}

    def illegal_calls(self, what: str) -> str | None:
        """The plan's refused calls (``complete`` aside: the plan may try it early), as one problem line
        naming the first, or None when every call was legal."""
        bad = [c for c in self.calls if not c.ok and c.tool != "complete"]
        if not bad:
            return None
        c = bad[0]
        return (f"{len(bad)} illegal call(s) in {what}; first: {c.agent_id} round {c.round} "
                f"{c.tool}({c.args}) -> {c.error}: {c.text}")


class WithoutAgent:
    """The oracle plan with one agent sleeping through it (for the necessity check)."""

    name = "oracle-without"

    def __init__(self, task: Task, absent: str, seed: int = 0):
        from ..play.policies import OraclePolicy

        self.oracle = OraclePolicy(task, seed)
        self.absent = absent

    def decide(self, turn: Turn) -> Any:
        if turn.agent_id == self.absent:
            return "sleep", {"seconds": 1}
        return self.oracle.decide(turn)


def play_policy(task: Task, policy: Any, seed: int = 0, *, record_seen: bool = False) -> tuple[Any, RecordingTeam]:
    from ..play.episode import Episode, make_world
    from ..play.records import TickEvent

    world = make_world(task, seed)
    team = RecordingTeam(policy, record_seen=record_seen, world=world)
    episode = Episode(task, team, seed=seed, world=world)
    result = asyncio.run(episode.run())
    team.world_events = [e for ev in episode.events if isinstance(ev, TickEvent) for e in ev.events]
    return result, team


def mob_ids(text: str, world: Any) -> list[str]:
    """The ids in ``text`` that name a mob of ``world`` (placed, or spawned by a task's event)."""
    mobs = getattr(world, "mobs", None)
    return [i for i in _MOB_ID.findall(text) if mobs is not None and mobs.get(i) is not None]


def stale_facts(task: Task, world_events: list[dict[str, Any]]) -> list[Stale]:
    """What the task's objective changes made false: each changed check's old values (a count, a place), from
    the round the change holds (core/world/events.py ``change_objective``)."""
    from ..tasks.verify import check_index

    out: list[Stale] = []
    current: dict[int, dict[str, Any]] = {}
    for rec in world_events:
        if rec.get("kind") != "change_objective":
            continue
        i = check_index(task, rec["check"])
        if i is None:
            continue
        old = current.get(i) or dict(task.verifier.checks[i].params)  # type: ignore[union-attr]
        new = {**old, **rec["set"]}
        numbers = {v for k, v in old.items() if isinstance(v, int) and not isinstance(v, bool) and new.get(k) != v
                   and k not in ("x", "y")}
        moved = ("x" in rec["set"] or "y" in rec["set"]) and "x" in old and "y" in old
        places = {(old["x"], old["y"])} if moved else set()
        out.append(Stale(rec["round"], frozenset(numbers), frozenset(places)))
        current[i] = new
    return out


def play(task: Task, policy_name: str, seed: int = 0, *, record_seen: bool = False) -> tuple[Any, RecordingTeam]:
    """One episode of a scripted team (no files written). Returns (EpisodeResult, team)."""
    from ..play.policies import make_policy

    return play_policy(task, make_policy(policy_name, seed, task), seed, record_seen=record_seen)
