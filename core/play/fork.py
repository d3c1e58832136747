"""Forking an episode: replay its first rounds exactly, then let another team play on (``agentworld fork``).

A fork at round R of a recorded episode is an ordinary episode (``core/play/episode.py`` owns the loop) whose
team is a :class:`ForkTeam`: for rounds 1 .. R-1 it plays the parent's recorded calls (``RecordedTeam`` of
``core/play/replay.py``: malformed calls, lost turns and refused second calls included), so the world
reaches round R exactly as it was; from round R on, the new team plays. The world is deterministic, so the
prefix is the parent's, event for event.

So that the new agents continue the episode rather than start it afresh, each is handed the turns it would
have had (``core/play/history.py``): during the prefix the fork keeps, per agent, the observation it was
shown (with the chat it received), the call it made and the result it read back; before the new team's
first turn they are handed over with ``Team.prime``. The framework teams put them in front of each agent's
first prompt within its context budget (``plugins/agents/common.py``); the scripted oracle goes on with its
plan from the step after its earlier turns. A team that cannot take them (the default ``Team.prime``) plays
from a fresh start, and ``fork.json`` says so.

The fork's record names its parent: the start event's ``fork`` (``ForkOrigin``: the parent's id, folder,
framework, model and record digest, and the round). Replaying a fork (``agentworld replay --check``)
replays its own record, whose first R-1 rounds are the parent's calls; :func:`check_prefix` compares them
with the parent's record event by event.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..world.effects import ToolResult
from ..world.tools import format_call
from .history import HistoryTurn
from .protocol import Team, TeamSpec, Turn, TurnOutcome
from .records import EpisodeResult, ForkOrigin
from .replay import (EpisodeRecord, Mismatch, RecordedTeam, ReplayError, first_event_mismatch, load_record,
                     record_digest, resolve_task)

FORK_FILE = "fork.json"


class ForkError(ReplayError):
    """A fork that cannot be made (bad round, a parent that cannot be replayed): the message says why."""


def seen_result(result: ToolResult) -> str:
    """A call's result as an agent reads it (what the framework teams show their models)."""
    return result.text if result.ok else f"FAILED ({result.error or 'error'}): {result.text}"


class _RecordingPort:
    """The turn's port, keeping the result of the first call (the turn's action) for the agent's history."""

    __slots__ = ("agent_id", "port", "first")

    def __init__(self, port: Any):
        self.agent_id = port.agent_id
        self.port = port
        self.first: ToolResult | None = None

    async def call(self, tool: str, arguments: Any = None) -> ToolResult:
        result = await self.port.call(tool, arguments)
        if self.first is None:
            self.first = result
        return result


class ForkTeam(Team):
    """Plays the parent's recorded calls before ``at_round`` and ``successor`` from it on; keeps each agent's
    turns of the prefix and primes the successor with them before its first turn."""

    def __init__(self, recorded: RecordedTeam, successor: Team, at_round: int):
        self.recorded = recorded
        self.successor = successor
        self.at_round = at_round
        self.history: dict[str, list[HistoryTurn]] = {}
        self.primed: bool | None = None  # whether the successor took the history (None: it never played)

    @property
    def tool_server(self) -> str | None:  # type: ignore[override]
        """The successor's (``--tools mcp``): the recorded prefix goes through the same gate either way."""
        return getattr(self.successor, "tool_server", None)

    async def start(self, view: Any) -> None:
        await self.recorded.start(view)
        await self.successor.start(view)

    async def act(self, turn: Turn) -> TurnOutcome | None:
        if turn.round < self.at_round:
            return await self._replay(turn)
        if self.primed is None:
            self.primed = bool(self.successor.prime(self.history))
        return await self.successor.act(turn)

    async def _replay(self, turn: Turn) -> TurnOutcome | None:
        port = turn.port
        recording = _RecordingPort(port)
        turn.port = recording
        try:
            return await self.recorded.act(turn)
        finally:
            turn.port = port
            self._remember(turn, recording.first)

    def _remember(self, turn: Turn, result: ToolResult | None) -> None:
        plan = self.recorded.planned(turn.round, turn.agent_id)
        tool = plan.tool if plan is not None else None
        if result is not None:
            seen = seen_result(result)
        else:  # no call reached the gate: the episode tells the agent why; the record has that text
            ev = self.recorded.recorded(turn.round, turn.agent_id)
            seen = ev.result if ev is not None else "No action."
        arguments = plan.arguments if plan is not None else None
        call = format_call(tool, arguments if isinstance(arguments, dict) else {"_raw_arguments": arguments}) \
            if tool else "(no call)"
        self.history.setdefault(turn.agent_id, []).append(
            HistoryTurn(round=turn.round, observation=turn.observation_text, tool=tool, call=call, result=seen))

    async def aclose(self) -> None:
        try:
            await self.successor.aclose()
        finally:
            await self.recorded.aclose()


@dataclass
class ForkOutcome:
    """A fork's result and what it was made of."""

    result: EpisodeResult
    out_dir: Path
    origin: ForkOrigin
    primed: bool | None  # the new team took its agents' history (None: it never played a turn)
    history_turns: dict[str, int] = field(default_factory=dict)  # agent -> earlier turns handed over
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"episode_id": self.result.episode_id, "out_dir": str(self.out_dir),
                "origin": self.origin.model_dump(), "primed": self.primed, "history_turns": self.history_turns,
                "success": self.result.success, "psr": self.result.psr, "end_reason": self.result.end_reason,
                "rounds": self.result.rounds, "seconds": round(self.seconds, 3)}


def last_round(record: EpisodeRecord) -> int:
    """The last round the parent played (its end event's, else its last recorded turn's)."""
    if record.end is not None:
        return record.end.rounds
    return max((r for r, _ in record.turns), default=0)


def fork_episode(parent_dir: str | Path, at_round: int, make_team: Callable[[TeamSpec], Team], *,
                 out_dir: str | Path, framework: str, model: str = "", options: dict[str, Any] | None = None,
                 task_path: str | Path | None = None, episode_id: str | None = None, obs_format: str = "text",
                 turn_timeout: float | None = None, progress: Callable[[Any], Any] | None = None) -> Any:
    """The fork of the episode in ``parent_dir`` at ``at_round``, played from there by the team
    ``make_team(TeamSpec)`` builds (``framework`` and ``model`` name it in the record): an Episode to
    ``await .run()``, with ``.fork_team`` set once built. Raises :class:`ForkError` naming what is wrong."""
    from ..tasks.variants import apply_variant
    from .episode import Episode
    from .view import privileged_grants

    record = load_record(parent_dir)
    last = last_round(record)
    if not 1 <= at_round <= max(last, 1):
        raise ForkError(f"--at-round {at_round}: {record.folder} played rounds 1 to {last}; fork at a round in "
                        f"that range (round R replays rounds 1 to R-1 and hands round R on to the new team)")
    resolved = resolve_task(record, task_path)
    if resolved.mismatch:
        raise ForkError(f"{record.folder}: cannot fork: {resolved.mismatch}")
    backend = record.start.world_backend or "embedded"
    if backend != "embedded":
        raise ForkError(f"{record.folder}: the episode ran on the {backend!r} world backend; a fork replays calls on "
                        "the embedded engine only")
    task = resolved.task
    played = apply_variant(task, record.variant, record.seed)
    plan, grants = privileged_grants(played, framework, model)
    recorded = RecordedTeam(record)
    origin = ForkOrigin(parent_episode_id=record.episode_id, parent_dir=str(record.folder), at_round=at_round,
                        parent_framework=record.start.framework, parent_model=record.start.model,
                        parent_record_sha256=record_digest(record.folder))
    holder: dict[str, ForkTeam] = {}

    def build_team(view: Any) -> Team:
        spec = TeamSpec(view=view, model=model, seed=record.seed, agent_ids=list(view.agent_ids),
                        options=dict(options or {}, variant=record.variant), reference_plan=plan)
        team = holder["team"] = ForkTeam(recorded, make_team(spec), at_round)
        return team

    episode = Episode(task, seed=record.seed, variant=record.variant, out_dir=out_dir, framework=framework,
                      model=model, obs_format=obs_format,
                      turn_timeout=turn_timeout if turn_timeout is not None else record.turn_timeout(),
                      progress=progress, episode_id=episode_id or fork_id(record.episode_id, at_round, framework, model),
                      played_task=played, build_team=build_team, grants=grants, fork=origin)
    stray = episode.gate.stray
    recorded.stray_sink = lambda agent, calls: stray.setdefault(agent, []).extend(calls)  # as in the parent
    episode.fork_team = holder["team"]
    episode.fork_origin = origin
    return episode


def fork_id(parent_id: str, at_round: int, framework: str, model: str) -> str:
    team = framework + (f"-{model}" if model else "")
    return f"{parent_id}.fork-r{at_round}.{''.join(c if c.isalnum() or c in '-_.' else '-' for c in team)}"


async def run_fork(parent_dir: str | Path, at_round: int, make_team: Callable[[TeamSpec], Team], *,
                   out_dir: str | Path, **kwargs: Any) -> ForkOutcome:
    """Make the fork (:func:`fork_episode`), play it into ``out_dir`` and write ``fork.json`` beside its record."""
    t0 = time.perf_counter()
    episode = fork_episode(parent_dir, at_round, make_team, out_dir=out_dir, **kwargs)
    result = await episode.run()
    team: ForkTeam = episode.fork_team
    outcome = ForkOutcome(result=result, out_dir=Path(out_dir), origin=episode.fork_origin, primed=team.primed,
                          history_turns={a: len(t) for a, t in team.history.items()},
                          seconds=time.perf_counter() - t0)
    Path(out_dir, FORK_FILE).write_text(json.dumps(outcome.as_dict(), indent=1) + "\n", encoding="utf-8")
    return outcome


def check_prefix(fork_dir: str | Path, parent_dir: str | Path | None = None) -> Mismatch | None:
    """The first place where a fork's first ``at_round - 1`` rounds differ from its parent's record (turns
    and ticks, every field but timings), or None when they are the same. ``parent_dir`` defaults to the
    folder the fork's record names."""
    fork = load_record(fork_dir)
    origin = fork.start.fork
    if origin is None:
        raise ForkError(f"{fork.folder}: not a fork (its start event names no parent)")
    parent = load_record(parent_dir if parent_dir is not None else origin.parent_dir)

    def prefix(events: list[Any]) -> list[Any]:
        return [e for e in events[1:] if getattr(e, "round", None) is not None and e.round < origin.at_round]

    return first_event_mismatch(prefix(parent.events), prefix(fork.events))


def events_from(events: list[Any], at_round: int) -> list[Any]:
    """Turns and ticks of ``at_round`` and later (what a fork plays itself)."""
    return [e for e in events if getattr(e, "round", None) is not None and e.round >= at_round]


__all__ = ["ForkTeam", "ForkOutcome", "ForkError", "fork_episode", "fork_id", "run_fork", "check_prefix",
           "events_from", "FORK_FILE"]
