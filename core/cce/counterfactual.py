"""The counterfactual CCE method: an action contributes when the episode, played again without it, loses a
checkpoint. Contribution measured by the world, not judged.

The world is deterministic, so an episode's record replays exactly (``core/play/replay.py``); replacing some
of its recorded turns with a sleep (``RecordedTeam.substitute``) and replaying shows what those turns were
for: every checkpoint the original achieved and the replay does not is lost without them. Everyone else
repeats their recorded calls (a *fixed replay*: no model is asked, so the method is exact, cheap and
reproducible; what it cannot see is how the others would have reacted, see below).

Units and how many replays they cost (``docs/cce.md``, "The counterfactual method"):

1. the original, replayed once (what the others are compared with): 1;
2. **agents**: each agent sleeps the whole episode: one replay per agent with actions. An agent whose
   absence loses nothing contributed nothing, and none of its actions is tested further;
3. **an agent sleeps from round r on**: for each agent that matters, a binary search over the rounds of its
   actions for the last round r from which sleeping still loses a checkpoint: ceil(log2 m) replays for m
   actions. Its actions after that round are not needed (without all of them nothing is lost);
4. **action groups**: the agent's consecutive non-chat actions up to that round (a recorded sleep is left out:
   sleeping instead of sleeping changes nothing), in groups of at most ``group_size`` (default 4): one replay
   per group. A group whose removal loses nothing does not contribute;
5. **actions**: in a group that does, each action alone, then once the group without the actions that lose
   something alone: at most ``group_size + 1`` more replays a group. When what is left still loses, its
   actions are jointly necessary (each redundant given the others, e.g. two legs of a walk either of which
   would have done): all are marked, with that reason;
6. **messages**: each delivered chat message is not delivered (its call replaced by a sleep): one replay per
   message (``messages=false`` skips them).

``max_replays`` (default 300) caps the total; units left untested keep the verdict of the coarser unit that
contains them (a group's verdict for its actions), and the report says how many. The cost (replays and
seconds) is printed by ``agentworld cce`` and stored in ``cce/counterfactual.json``.

The graph: for each checkpoint lost without some action, its *success action* is the last action (in turn
order) whose removal loses it; every other action whose removal loses it gets an edge to that one (kind
``counterfactual``), so that C = S plus ancestors is exactly the set of actions the world says were needed.

What a fixed replay cannot measure: whether a teammate would have acted differently without a message. The
recipients repeat their recorded calls, so a message is credited only if the world itself depends on its
delivery (in this world, never). This is the main place where the method and the judged ones (the paper's,
the grounded judge's chat rule) differ; ``docs/cce.md`` discusses it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .graph import CausalGraph, EpisodeData, EpisodeError, action_id
from ..play.records import TurnEvent
from ..world.tools import CHAT_TOOLS

SLEEP = ("sleep", {"seconds": 1})  # what an agent does instead of a removed turn
Key = tuple[int, str]  # (round, agent): one turn


@dataclass
class Test:
    """One counterfactual replay: which turns slept, and which checkpoints were lost."""

    unit: str  # "original", "agent", "suffix", "group", "action", "joint", "message"
    label: str  # e.g. "agent_2 from round 5", "r3.agent_1..r5.agent_1"
    turns: list[Key]
    lost: list[str]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "label": self.label, "turns": [action_id(r, a) for r, a in self.turns],
                "lost": self.lost, "seconds": round(self.seconds, 4)}


@dataclass
class Budget:
    cap: int
    used: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # unit -> tests not run for the cap

    def take(self, unit: str) -> bool:
        if self.used >= self.cap:
            self.skipped[unit] = self.skipped.get(unit, 0) + 1
            return False
        self.used += 1
        return True


class Replayer:
    """Replays one episode's record with some turns replaced by sleeps; returns the checkpoints it achieves."""

    def __init__(self, ep: EpisodeData):
        from ..play.replay import ReplayError, load_record, resolve_task
        from ..tasks.variants import apply_variant

        try:
            self.record = load_record(ep.path)
            resolved = resolve_task(self.record)
        except ReplayError as exc:
            raise EpisodeError(f"{ep.path}: the counterfactual judge replays the episode, and cannot: {exc}") from None
        if resolved.mismatch:
            raise EpisodeError(f"{ep.path}: the counterfactual judge cannot replay it: {resolved.mismatch}")
        backend = self.record.start.world_backend or "embedded"
        if backend != "embedded":
            raise EpisodeError(f"{ep.path}: played on the {backend!r} world backend; counterfactual replays run on "
                               "the embedded engine only")
        self.task = resolved.task
        played = apply_variant(self.task, self.record.variant, self.record.seed)
        # never longer than the original: a counterfactual is asked "by the end the original had"
        last = self.record.end.rounds if self.record.end is not None else max((r for r, _ in self.record.turns), default=1)
        self.played = played.model_copy(update={"rounds": max(1, min(played.rounds, last))})
        self.names: list[str] = []

    async def achieved(self, sleeping: Iterable[Key] = ()) -> list[str]:
        """The names of the checkpoints achieved at the end of the replay with ``sleeping`` turns slept."""
        from ..play.episode import Episode
        from ..play.replay import RecordedTeam

        team = RecordedTeam(self.record)
        for rnd, agent in sleeping:
            team.substitute(rnd, agent, *SLEEP)
        start = self.record.start
        episode = Episode(self.task, team, seed=start.seed, variant=start.variant, played_task=self.played,
                          episode_id=start.episode_id, framework=start.framework, model=start.model,
                          grants=start.grants)
        result = await episode.run()
        self.names = [c.name for c in result.checkpoints]
        return [f"{i}:{c.name}" for i, c in enumerate(result.checkpoints) if c.achieved]


class Search:
    """The bounded search of the module docstring over one episode."""

    def __init__(self, ep: EpisodeData, *, group_size: int = 4, max_replays: int = 300, messages: bool = True,
                 replayer: Any = None):
        self.ep = ep
        self.group_size = max(1, group_size)
        self.budget = Budget(max_replays)
        self.messages = messages
        self.replayer = replayer if replayer is not None else Replayer(ep)  # tests hand in a world of their own
        self.tests: list[Test] = []
        self.baseline: set[str] = set()
        self.needed: dict[Key, tuple[set[str], str]] = {}  # turn -> (checkpoints lost without it, reason)
        self.untested: list[Key] = []  # turns the replay cap left without a test of their own
        self.notes: list[str] = []

    async def _lost(self, unit: str, label: str, turns: Sequence[Key]) -> set[str] | None:
        """Checkpoints of the original lost when ``turns`` sleep; None when the replay cap is reached."""
        if not self.budget.take(unit):
            return None
        t0 = time.perf_counter()
        achieved = set(await self.replayer.achieved(turns))
        lost = self.baseline - achieved
        self.tests.append(Test(unit, label, list(turns), sorted(lost), time.perf_counter() - t0))
        return lost

    async def run(self) -> None:
        t0 = time.perf_counter()
        self.baseline = set(await self.replayer.achieved())
        self.budget.used += 1
        self.tests.append(Test("original", "the record as played", [], [], time.perf_counter() - t0))
        recorded = {c.name for c in (self.ep.result.checkpoints if self.ep.result else []) if c.achieved}
        if self.ep.result is not None and {b.split(":", 1)[1] for b in self.baseline} != recorded:
            self.notes.append("the replay does not achieve the checkpoints result.json records: the record does not "
                              "match this engine (run `agentworld replay --check`); judged against the replay")
        if not self.baseline:
            self.notes.append("no checkpoint achieved: nothing can be lost, no action contributes")
            return
        by_agent: dict[str, list[TurnEvent]] = {}
        for t in self.ep.turns:
            by_agent.setdefault(t.agent, []).append(t)
        for agent, turns in by_agent.items():
            await self._agent(agent, turns)
        if self.messages:
            for t in self.ep.turns:
                if t.tool in CHAT_TOOLS and t.ok:
                    key = (t.round, t.agent)
                    lost = await self._lost("message", f"message {action_id(*key)} not delivered", [key])
                    if lost:
                        self.needed[key] = (lost, "without this message (not delivered), lost: ")

    async def _agent(self, agent: str, turns: list[TurnEvent]) -> None:
        if all(t.tool == SLEEP[0] for t in turns):
            return  # it only slept: nothing to take away
        every = [(t.round, t.agent) for t in turns]
        lost = await self._lost("agent", f"{agent} sleeps the whole episode", every)
        if lost is not None and not lost:
            return  # the team does as well without this agent: none of its actions contributed
        # sleeping from a round where it slept anyway is sleeping from its next other turn: not a candidate
        rounds = sorted({t.round for t in turns if t.tool != SLEEP[0]})
        last = await self._last_needed_round(agent, turns, rounds) if lost else rounds[-1]
        for group in self._groups(agent, turns, last):
            await self._group(group)

    async def _last_needed_round(self, agent: str, turns: list[TurnEvent], rounds: list[int]) -> int:
        """The last round r of the agent's actions from which sleeping on still loses a checkpoint (binary
        search; sleeping from the first round does, by the caller's test)."""
        lo, hi = 0, len(rounds) - 1  # rounds[lo] loses; find the largest index that does
        while lo < hi:
            mid = (lo + hi + 1) // 2
            r = rounds[mid]
            lost = await self._lost("suffix", f"{agent} sleeps from round {r} on",
                                    [(t.round, t.agent) for t in turns if t.round >= r])
            if lost is None:
                return rounds[hi]  # out of replays: keep every round (a coarser, safe answer)
            if lost:
                lo = mid
            else:
                hi = mid - 1
        return rounds[lo]

    def _groups(self, agent: str, turns: list[TurnEvent], last: int) -> list[list[Key]]:
        """The agent's consecutive non-chat actions up to round ``last`` (a chat breaks a run), in groups of at
        most ``group_size``. A recorded sleep is left out: sleeping instead of sleeping changes nothing."""
        runs: list[list[Key]] = [[]]
        for t in turns:
            if t.round > last:
                break
            if t.tool in CHAT_TOOLS:
                runs.append([])
            elif t.tool != SLEEP[0]:
                runs[-1].append((t.round, t.agent))
        return [run[i:i + self.group_size] for run in runs for i in range(0, len(run), self.group_size)]

    async def _group(self, group: list[Key]) -> None:
        """One group: replayed without it; when that loses something, each action alone (a single action's
        group is that test already), then, once, the group without the actions that lose something alone:
        when that still loses, those actions are jointly necessary (each redundant given the others, e.g. two
        legs of a walk either of which would have done), and all of them are marked, with that reason."""
        label = _span(group)
        lost = await self._lost("group", label, group)
        if lost is None:  # out of replays: an untested group counts as contributing (said in the notes)
            self.untested.extend(group)
            for key in group:
                self.needed.setdefault(key, (set(self.baseline), "not tested (replay cap reached); counted as "
                                                                 "contributing, could lose: "))
            return
        if not lost:
            return
        if len(group) == 1:
            self.needed[group[0]] = (lost, "without it, lost: ")
            return
        rest = []
        for key in group:
            found = await self._lost("action", action_id(*key), [key])
            if found:
                self.needed[key] = (found, "without it, lost: ")
            elif found is None:
                self.untested.append(key)
                self.needed[key] = (lost, f"not tested alone (replay cap reached), its group {label} loses; counted "
                                          f"as contributing, its group loses: ")
            else:
                rest.append(key)
        if not rest:
            return
        together = lost if len(rest) == len(group) else await self._lost("joint", _span(rest), rest)
        if together:
            names = ", ".join(action_id(*k) for k in rest)
            for key in rest:
                self.needed[key] = (together, f"jointly necessary with {names} (none alone loses anything); "
                                              f"without them, lost: ")
        elif together is None:
            self.untested.extend(rest)

    # -- output -------------------------------------------------------------------------------------------

    def checkpoint_name(self, key: str) -> str:
        return key.split(":", 1)[1]

    def graph(self) -> CausalGraph:
        graph = CausalGraph.from_episode(self.ep)
        graph.notes.extend(self.notes)
        steps = {(n.round, n.agent): n.step for n in graph.nodes.values()}
        needed = {k: v for k, v in self.needed.items() if k in steps}
        # per lost checkpoint: its success action is the last action whose removal loses it
        last_for: dict[str, Key] = {}
        for key, (lost, _) in needed.items():
            for c in lost:
                if c not in last_for or steps[key] > steps[last_for[c]]:
                    last_for[c] = key
        for key, (lost, reason) in needed.items():
            nid = action_id(*key)
            names = ", ".join(sorted(self.checkpoint_name(c) for c in lost))
            graph.mark_reasons[nid] = reason + names
            for c in sorted(lost):
                target = last_for[c]
                if target == key:
                    graph.mark_success(nid, f"the last action without which '{self.checkpoint_name(c)}' is lost")
                else:
                    graph.add_edge(nid, action_id(*target), "counterfactual",
                                   f"without {nid}, '{self.checkpoint_name(c)}' is lost")
        return graph

    def bound(self) -> int:
        """The most replays this episode could have cost (:func:`replay_bound`)."""
        per_agent: dict[str, int] = {}
        for t in self.ep.turns:
            per_agent.setdefault(t.agent, 0)
            if t.tool not in CHAT_TOOLS and t.tool != SLEEP[0]:
                per_agent[t.agent] += 1
        messages = sum(1 for t in self.ep.turns if t.tool in CHAT_TOOLS and t.ok) if self.messages else 0
        return replay_bound(list(per_agent.values()), messages, self.group_size)

    def summary(self, seconds: float) -> dict[str, Any]:
        by_unit: dict[str, int] = {}
        for t in self.tests:
            by_unit[t.unit] = by_unit.get(t.unit, 0) + 1
        return {"replays": len(self.tests), "seconds": round(seconds, 3), "by_unit": by_unit,
                "bound": self.bound(), "max_replays": self.budget.cap, "capped": dict(self.budget.skipped),
                "group_size": self.group_size,
                "untested": [action_id(*k) for k in self.untested],
                "messages_tested": self.messages, "baseline": sorted(self.checkpoint_name(c) for c in self.baseline),
                "tests": [t.as_dict() for t in self.tests]}


def _span(keys: Sequence[Key]) -> str:
    return action_id(*keys[0]) + (f"..{action_id(*keys[-1])}" if len(keys) > 1 else "")


def replay_bound(actions_per_agent: Sequence[int], messages: int, group_size: int) -> int:
    """The most replays the search can make on one episode before the cap: the original, per agent one
    replay without it, ceil(log2 m) for the round it stops mattering and, for its m actions (sleeps left out),
    per group one replay, one per action and one for what is left of it; one per message (docs/cce.md)."""
    total = 1 + messages
    for m in actions_per_agent:
        if m:
            total += 1 + (math.ceil(math.log2(m)) if m > 1 else 0) + 2 * math.ceil(m / group_size) + m
    return total


def run_sync(coro: Any) -> Any:
    """Run a coroutine to its end from synchronous code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class CounterfactualJudge:
    """A CCE judge whose graph comes from replays without actions (no LLM, no questions asked)."""

    method = "counterfactual"

    def __init__(self, *, group_size: int = 4, max_replays: int = 300, messages: bool = True,
                 name: str = "counterfactual"):
        if group_size < 1:
            raise ValueError("group_size must be at least 1")
        if max_replays < 1:
            raise ValueError("max_replays must be at least 1")
        self.name = name
        self.model = ""
        self.group_size = group_size
        self.max_replays = max_replays
        self.messages = messages
        self.last: dict[str, Any] | None = None  # the last episode's replay summary

    def answer(self, messages, schema, question):  # noqa: ARG002 - the judge asks nothing
        raise RuntimeError("the counterfactual judge answers no questions: it replays the episode")

    def build_graph(self, ep: EpisodeData, asker: Any) -> CausalGraph:  # noqa: ARG002
        t0 = time.perf_counter()
        search = Search(ep, group_size=self.group_size, max_replays=self.max_replays, messages=self.messages)
        run_sync(search.run())
        graph = search.graph()
        self.last = search.summary(time.perf_counter() - t0)
        graph.extra = {"counterfactual": self.last}
        s = self.last
        graph.notes.append(f"counterfactual: {s['replays']} replays in {s['seconds']:.2f} s ("
                           + ", ".join(f"{k} {v}" for k, v in s["by_unit"].items())
                           + f"; at most {s['bound']} for this episode, cap {s['max_replays']})")
        if s["capped"]:
            graph.notes.append("counterfactual: replay cap reached; tests not run: "
                               + ", ".join(f"{k} {v}" for k, v in s["capped"].items())
                               + f"; {len(search.untested)} action(s) without a test of their own counted as "
                                 "contributing (raise -o max_replays)")
        return graph
