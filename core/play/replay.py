"""Replaying an episode from its record: the recorded calls re-executed on the engine, and the check that the
record is what the engine gives (``agentworld replay EPISODE_DIR --check``; docs/runs.md).

The world is deterministic: the same task, seed and calls give the same trajectory. A replay is therefore an
ordinary episode (the loop of ``core/play/episode.py`` owns turn order, as always) whose team makes, for each
(round, agent) turn, exactly the call that was recorded: a valid call, a malformed one (bad JSON, an unknown
tool, a call the world refused), a second call in the turn (refused again by the gate), or no call at all (a
no-call turn, a lost turn of an agent that timed out, a turn the model service lost). No model is needed.

The API (the fork and the counterfactual judge build on it)::

    record = load_record(episode_dir)        # EpisodeRecord: start event (task, seed, variant, versions,
                                             # pins), the recorded turns, ticks, end, result, final state
    team = RecordedTeam(record)              # plays every recorded turn as recorded
    team.recorded(round, agent)              # -> the recorded TurnEvent, or None
    team.planned(round, agent)               # -> the PlannedTurn act() will play (recorded or substituted)
    team.substitute(round, agent, "sleep", {})   # play this call instead (tool None: no call at all)
    team.unrecorded                          # turns the episode asked for that the record does not have
    task = resolve_task(record).task         # the task the record names (its file's sha256 checked)
    episode = replay_episode(record, task, team=team, out_dir=...)   # an Episode set up as recorded
    result = await episode.run()
    report = await check_episode(episode_dir)                          # ReplayReport: ok, mismatches, notes

``replay_episode`` builds the episode with the recorded seed, variant, episode id, framework, model, grants,
turn timeout and world backend; ``hooks=True`` (the default) also reproduces what no team can: the out-of-turn
calls the gate refused (restored into the gate's list of strays, where they change nothing, as recorded) and
a run's budget stop at the recorded point. A team that wraps RecordedTeam (a fork replays the prefix up to a
round, then hands over) passes ``hooks=False`` or its own progress function.

The check compares, event by event, the replayed trajectory with the recorded one (every field but
timestamps and timings; an engine traceback by presence), the observation digest of every turn, every tick
(effects, checkpoints passed), the end, ``result.json`` and ``final_state.json``; and the record's identity:
the task file's sha256 and the world's pins. A mismatch names the first turn that differs (round, agent,
tool) and how (the field, recorded vs replayed). A record made before these fields existed (v0.2, the
pilots) is replayed all the same; what it does not carry is listed in the report's notes, never guessed.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..tasks.task import Task, TaskError
from .fingerprint import file_sha256, harness_version, world_pins
from .fuzzing import _copy  # a deep copy of JSON-like arguments: the gate must not share the record's objects
from .protocol import Team, Turn, TurnOutcome
from .records import EndEvent, EpisodeResult, RawCall, RefusedCall, StartEvent, TickEvent, TurnEvent
from .trajectory import TRAJECTORY_FILE, read_events

RESULT_FILE = "result.json"
FINAL_STATE_FILE = "final_state.json"
TASK_JSON = "task.json"
TIMING_FIELDS = ("timestamp", "model_latency_s", "harness_s")  # what two plays of one episode may differ in
RESULT_TIMING_FIELDS = ("wall_s", "harness_s", "cost_usd")  # cost: the runner prices results.jsonl, not the file
_SECOND_CALL = "you already acted this turn"  # the gate's reason for a second call in the caller's own turn
_TIMEOUT_TEXT = re.compile(r"did not act within ([0-9.]+)s")
_HARNESS_TEXT = re.compile(r"the harness failed \(([A-Za-z_][A-Za-z0-9_]*): (.*)\); this turn is not held", re.S)


class ReplayError(ValueError):
    """A record that cannot be replayed at all (no trajectory, another world backend, no task): the message
    names the file or field and what to do."""


# ---------------------------------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------------------------------
@dataclass
class EpisodeRecord:
    """Everything an episode folder recorded, read back (``load_record``)."""

    folder: Path
    start: StartEvent
    events: list[Any]  # every event, in order (start, turns and ticks, end)
    turns: dict[tuple[int, str], TurnEvent]  # (round, agent) -> the turn's event (the first, if a file repeats one)
    end: EndEvent | None
    result: EpisodeResult | None  # result.json (None: missing or unreadable; see notes)
    final_state: dict[str, Any] | None  # final_state.json
    task_json: dict[str, Any] | None  # task.json: the task as written (agents' passwords masked)
    notes: list[str] = field(default_factory=list)  # what the record lacks or repeats

    @property
    def episode_id(self) -> str:
        return self.start.episode_id

    @property
    def seed(self) -> int:
        return self.start.seed

    @property
    def variant(self) -> str:
        return self.start.variant

    @property
    def task_id(self) -> str:
        return self.start.task_id

    def turn(self, round: int, agent: str) -> TurnEvent | None:
        return self.turns.get((round, agent))

    def turn_timeout(self) -> float | None:
        """The turn timeout the episode ran with: recorded in the start event, or read back from the text of a
        lost turn in a record made before it was (None when neither says)."""
        if self.start.turn_timeout is not None:
            return self.start.turn_timeout
        for ev in self.turns.values():
            if ev.error == "timeout":
                m = _TIMEOUT_TEXT.search(ev.result)
                if m:
                    return float(m.group(1))
        return None


def load_record(episode_dir: str | Path) -> EpisodeRecord:
    """Read an episode folder (``trajectory.jsonl``, and ``result.json``, ``final_state.json``, ``task.json``
    when there). Raises :class:`ReplayError` naming the file when there is nothing to replay."""
    folder = Path(episode_dir)
    path = folder / TRAJECTORY_FILE
    if not folder.is_dir():
        raise ReplayError(f"{folder}: no such episode folder (give the folder holding trajectory.jsonl)")
    if not path.is_file():
        raise ReplayError(f"{path}: missing; an episode folder holds trajectory.jsonl, result.json and "
                          "final_state.json")
    try:
        events = read_events(path)
    except (ValueError, OSError) as exc:
        raise ReplayError(str(exc)) from None
    if not events or not isinstance(events[0], StartEvent):
        raise ReplayError(f"{path}: does not start with a start event (not a whole trajectory)")
    start = events[0]
    notes: list[str] = []
    turns: dict[tuple[int, str], TurnEvent] = {}
    for ev in events:
        if isinstance(ev, TurnEvent):
            if (ev.round, ev.agent) in turns:
                notes.append(f"{path.name}: round {ev.round} has two turns of {ev.agent} (the first is replayed)")
            else:
                turns[(ev.round, ev.agent)] = ev
    end = events[-1] if isinstance(events[-1], EndEvent) else None
    if end is None:
        notes.append(f"{path.name}: no end event (the episode was cut short): its end cannot be checked")
    result, final_state, task_json = None, None, None
    try:
        result = EpisodeResult.model_validate_json((folder / RESULT_FILE).read_bytes())
    except FileNotFoundError:
        notes.append(f"{RESULT_FILE}: missing (the result is not checked)")
    except (OSError, ValueError) as exc:
        notes.append(f"{RESULT_FILE}: unreadable ({str(exc).splitlines()[0][:120]}): not checked")
    final_state = _json_file(folder / FINAL_STATE_FILE, notes, "the final state is not checked")
    task_json = _json_file(folder / TASK_JSON, notes, None)
    missing = [name for name in ("harness_version", "task_sha256", "world_pins", "turn_timeout")
               if name not in start.model_fields_set]
    if missing:
        notes.append(f"the start event does not record {', '.join(missing)} (recorded before v0.3)")
    if turns and all(ev.observation_sha256 is None for ev in turns.values()):
        notes.append("the turns carry no observation digests (recorded before v0.3): observations are not compared")
    return EpisodeRecord(folder=folder, start=start, events=events, turns=turns, end=end, result=result,
                         final_state=final_state, task_json=task_json, notes=notes)


def _json_file(path: Path, notes: list[str], unchecked: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if unchecked:
            notes.append(f"{path.name}: missing ({unchecked})")
        return None
    except (OSError, ValueError) as exc:
        notes.append(f"{path.name}: unreadable ({str(exc)[:120]})" + (f" ({unchecked})" if unchecked else ""))
        return None
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------------------------------------------
# The team that plays the record
# ---------------------------------------------------------------------------------------------------
@dataclass
class PlannedTurn:
    """What :class:`RecordedTeam` does in one turn: the call (``tool`` None: no call), the second calls the gate
    will refuse, how a call-less turn was lost (``failure``), the out-of-turn calls reported with it, and what
    the model said and spent (kept so the replayed event equals the recorded one)."""

    tool: str | None
    arguments: Any = None
    second_calls: list[tuple[str, Any]] = field(default_factory=list)
    failure: str | None = None  # "timeout" | "harness" (the team's own exception) | None
    failure_type: str = "Exception"  # the exception class a harness failure named
    failure_text: str = ""
    strays: list[RefusedCall] = field(default_factory=list)  # out-of-turn calls the gate refused, as recorded
    thinking: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    model_latency_s: float = 0.0
    infra_error: str | None = None
    context_trimmed: int = 0
    raw_calls: list[RawCall] = field(default_factory=list)
    attempts: list[Any] = field(default_factory=list)

    @classmethod
    def from_event(cls, ev: TurnEvent) -> "PlannedTurn":
        second = [r for r in ev.refused if r.reason.startswith(_SECOND_CALL)]
        strays = [r for r in ev.refused if not r.reason.startswith(_SECOND_CALL)]
        failure, ftype, ftext = None, "Exception", ""
        if ev.tool is None and ev.error == "timeout":
            failure = "timeout"
        elif ev.tool is None and ev.error == "harness_error":
            failure = "harness"
            m = _HARNESS_TEXT.search(ev.result)
            if m:
                ftype, ftext = m.group(1), m.group(2)
        return cls(tool=ev.tool, arguments=ev.arguments, second_calls=[(r.tool, r.arguments) for r in second],
                   failure=failure, failure_type=ftype, failure_text=ftext, strays=strays, thinking=ev.thinking,
                   tokens_in=ev.tokens_in, tokens_out=ev.tokens_out, model_latency_s=ev.model_latency_s,
                   infra_error=ev.infra_error, context_trimmed=ev.context_trimmed, raw_calls=list(ev.raw_calls),
                   attempts=list(ev.attempts))


class RecordedTeam(Team):
    """Plays every (round, agent) turn exactly as the record has it; a turn the record does not have is played
    without a call and listed in ``unrecorded``. ``substitute`` replaces a turn's call (a counterfactual)."""

    def __init__(self, record: EpisodeRecord):
        self.record = record
        self._plans: dict[tuple[int, str], PlannedTurn] = {k: PlannedTurn.from_event(ev)
                                                           for k, ev in record.turns.items()}
        self.unrecorded: list[tuple[int, str]] = []
        self.played: list[tuple[int, str]] = []
        self.stray_sink: Callable[[str, list[RefusedCall]], None] | None = None  # set by replay_episode's hooks

    def recorded(self, round: int, agent: str) -> TurnEvent | None:
        """The recorded turn of ``agent`` in ``round`` (None: it did not act then)."""
        return self.record.turn(round, agent)

    def planned(self, round: int, agent: str) -> PlannedTurn | None:
        """What :meth:`act` will play for that turn (the recorded call, or its substitute)."""
        return self._plans.get((round, agent))

    def substitute(self, round: int, agent: str, tool: str | None, arguments: Any = None) -> None:
        """Play ``tool(arguments)`` in that turn instead of what was recorded (``tool`` None: no call). The
        model's part (text, tokens) is dropped: the substitute is not what the model said."""
        self._plans[(round, agent)] = PlannedTurn(tool=tool, arguments={} if arguments is None else arguments)

    async def act(self, turn: Turn) -> TurnOutcome | None:
        key = (turn.round, turn.agent_id)
        self.played.append(key)
        plan = self._plans.get(key)
        if plan is None:
            self.unrecorded.append(key)
            return None
        turn.trace.raw_calls.extend(plan.raw_calls)
        turn.trace.attempts.extend(plan.attempts)
        if plan.strays and self.stray_sink is not None:
            self.stray_sink(turn.agent_id, list(plan.strays))
        if plan.failure == "timeout":
            raise TimeoutError("replayed: the agent did not act in time")
        if plan.failure == "harness":
            raise type(plan.failure_type, (Exception,), {})(plan.failure_text)
        if plan.tool is not None:
            await turn.port.call(plan.tool, _copy(plan.arguments))
            for tool, arguments in plan.second_calls:
                await turn.port.call(tool, _copy(arguments))
        return TurnOutcome(thinking=plan.thinking, tokens_in=plan.tokens_in, tokens_out=plan.tokens_out,
                           model_latency_s=plan.model_latency_s, infra_error=plan.infra_error,
                           context_trimmed=plan.context_trimmed)


# ---------------------------------------------------------------------------------------------------
# The task and the episode
# ---------------------------------------------------------------------------------------------------
@dataclass
class ResolvedTask:
    task: Task
    source: str  # what it was read from
    sha256: str | None  # the file's digest (None: read from task.json or not from a file)
    mismatch: str | None = None  # the file is not the one the record names
    notes: list[str] = field(default_factory=list)


def resolve_task(record: EpisodeRecord, task_path: str | Path | None = None) -> ResolvedTask:
    """The task the record names: ``task_path`` when given; else the recorded task file (a shipped task is
    found on this installation by ``<suite>/<file>``); else the episode's ``task.json``; else the shipped task
    with the recorded id. A file's sha256 is compared with the recorded one."""
    from ..tasks import task as task_mod

    start = record.start
    notes: list[str] = []
    candidates: list[Path] = []
    if task_path is not None:
        candidates.append(Path(task_path))
    elif start.task_file:
        suite, _, name = start.task_file.partition("/")
        if suite in task_mod.SUITES and name and "/" not in name:
            candidates.append(task_mod._suite_dir(suite) / name)
        else:
            candidates.append(Path(start.task_file))
    for path in candidates:
        if path.is_file():
            return _from_file(record, path, notes)
        if task_path is not None:
            raise ReplayError(f"--task {path}: no such file")
        notes.append(f"the recorded task file {start.task_file} is not here")
    if record.task_json is not None:
        try:
            task = task_mod.parse_task(record.task_json, str(record.folder / TASK_JSON), default_id=start.task_id)
        except TaskError as exc:
            raise ReplayError(f"{record.folder / TASK_JSON}: not a task ({exc})") from None
        notes.append("replayed from the episode's task.json" + (" (the task file's sha256 cannot be checked "
                                                                "without the file)" if start.task_sha256 else ""))
        return ResolvedTask(task=task, source=str(record.folder / TASK_JSON), sha256=None, notes=notes)
    shipped = task_mod._shipped_file(start.task_id)
    if shipped is None:
        raise ReplayError(f"{record.folder}: the record names task {start.task_id!r}, which is neither a shipped "
                          "task nor in the folder (task.json); give its file with --task FILE")
    notes.append(f"the record names no task file: replayed against the shipped {start.task_id} "
                 f"({shipped.parent.name}/{shipped.name})")
    return _from_file(record, shipped, notes)


def _from_file(record: EpisodeRecord, path: Path, notes: list[str]) -> ResolvedTask:
    from ..tasks.task import load_task

    try:
        task = load_task(path, validate=False)
    except TaskError as exc:
        raise ReplayError(str(exc)) from None
    digest = file_sha256(path, cached=False)  # an edit within the file system's time resolution must show
    recorded = record.start.task_sha256
    mismatch = None
    if recorded is None:
        notes.append(f"the record carries no task file sha256: {path.name} cannot be shown to be the file played")
    elif digest != recorded:
        mismatch = f"{path}: sha256 {digest}, but the episode played a file with sha256 {recorded}"
    if task.id != record.start.task_id:
        mismatch = mismatch or f"{path}: holds task {task.id!r}, but the episode played {record.start.task_id!r}"
    return ResolvedTask(task=task, source=str(path), sha256=digest, mismatch=mismatch, notes=notes)


def replay_episode(record: EpisodeRecord, task: Task, *, team: Team | None = None, out_dir: str | Path | None = None,
                   hooks: bool = True, progress: Callable[[Any], Any] | None = None) -> Any:
    """An :class:`~agentworld.core.play.episode.Episode` set up as the recorded one (seed, variant, id,
    framework, model, grants, turn timeout), played by ``team`` (default: a :class:`RecordedTeam` of the
    record). ``hooks`` restores the recorded out-of-turn calls and a recorded budget stop (see the module's
    docstring). Run it with ``await episode.run()``."""
    from .episode import Episode

    backend = record.start.world_backend or "embedded"
    if backend != "embedded":
        raise ReplayError(f"{record.folder}: the episode ran on the {backend!r} world backend; replay re-executes "
                          "calls on the embedded engine only (a game server's world is not reset between runs)")
    team = team if team is not None else RecordedTeam(record)
    episode = Episode(task, team, seed=record.seed, variant=record.variant, out_dir=out_dir,
                      framework=record.start.framework, model=record.start.model, turn_timeout=record.turn_timeout(),
                      episode_id=record.episode_id, grants=record.start.grants, progress=progress,
                      fork=record.start.fork)  # a fork's replay names the same parent
    if hooks:
        _wire_hooks(record, episode, team)
    return episode


def _wire_hooks(record: EpisodeRecord, episode: Any, team: Team) -> None:
    if isinstance(team, RecordedTeam):
        stray = episode.gate.stray
        team.stray_sink = lambda agent, calls: stray.setdefault(agent, []).extend(calls)
    end = record.end
    last = len(record.events) - 2  # the event after which the recorded episode ended (end is the last)
    end_strays = {a: list(c) for a, c in end.refused.items()} if end is not None else {}
    stops = end is not None and end.reason in ("budget_stop", "aborted", "error")
    previous = episode.progress
    seen = [0]

    def progress(event: Any) -> Any:
        seen[0] += 1
        answer = previous(event) if previous is not None else None
        if seen[0] - 1 == last:
            for agent, calls in end_strays.items():
                episode.gate.stray.setdefault(agent, []).extend(calls)
            if stops:
                return "budget_stop"
        return answer

    episode.progress = progress


# ---------------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------------
@dataclass
class Mismatch:
    """One way the replay differs from the record."""

    where: str  # "round 3, agent_2 (craft_item)", "tick of round 3", "result.json", "task file", ...
    field: str  # the differing field's path ("effects.gained[0].count"), or what differs
    recorded: Any = None
    replayed: Any = None
    round: int | None = None
    agent: str | None = None
    tool: str | None = None

    def text(self) -> str:
        if self.recorded is None and self.replayed is None:
            return f"{self.where}: {self.field}"
        return f"{self.where}: {self.field}: recorded {_short(self.recorded)}, replayed {_short(self.replayed)}"

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "field": self.field, "recorded": self.recorded, "replayed": self.replayed,
                "round": self.round, "agent": self.agent, "tool": self.tool, "text": self.text()}


@dataclass
class ReplayReport:
    episode_id: str
    folder: str
    ok: bool
    mismatches: list[Mismatch]  # identity first (task file, world), then the first differing event, then files
    notes: list[str]
    task_source: str
    turns: int  # turns replayed
    observations_checked: int
    ticks: int
    harness_version: str
    recorded_harness_version: str | None
    seconds: float
    result: EpisodeResult | None = None  # the replay's result (what verify-bundle re-scores)
    replayed_dir: str | None = None  # where the replayed episode was written (kept with --out)

    @property
    def first(self) -> Mismatch | None:
        return self.mismatches[0] if self.mismatches else None

    def as_dict(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "folder": self.folder, "ok": self.ok,
                "mismatches": [m.as_dict() for m in self.mismatches], "notes": self.notes,
                "task_source": self.task_source, "turns": self.turns, "observations_checked": self.observations_checked,
                "ticks": self.ticks, "harness_version": self.harness_version,
                "recorded_harness_version": self.recorded_harness_version, "seconds": round(self.seconds, 3)}


async def check_episode(episode_dir: str | Path, *, task_path: str | Path | None = None,
                        out_dir: str | Path | None = None) -> ReplayReport:
    """Replay the episode in ``episode_dir`` and compare everything with its record (``agentworld replay
    --check``). ``out_dir`` keeps the replayed episode's files (default: a temporary folder, removed)."""
    t0 = time.perf_counter()
    record = load_record(episode_dir)
    resolved = resolve_task(record, task_path)
    mismatches: list[Mismatch] = []
    if resolved.mismatch:
        mismatches.append(Mismatch("task file", resolved.mismatch))
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        return await _check_into(record, resolved, mismatches, Path(out_dir), t0)
    with tempfile.TemporaryDirectory(prefix="agentworld-replay-") as tmp:
        report = await _check_into(record, resolved, mismatches, Path(tmp), t0)
        report.replayed_dir = None
        return report


async def _check_into(record: EpisodeRecord, resolved: ResolvedTask, mismatches: list[Mismatch], out: Path,
                      t0: float) -> ReplayReport:
    team = RecordedTeam(record)
    episode = replay_episode(record, resolved.task, team=team, out_dir=out)
    pins = world_pins(episode.world)
    mismatches += _world_mismatches(record.start.world_pins, pins)
    try:
        result = await episode.run()
    except Exception as exc:  # noqa: BLE001 - a replay that crashes is a finding, not a traceback
        mismatches.append(Mismatch("replay", f"the replayed episode raised {type(exc).__name__}: {exc}"))
        result = None
    replayed = read_events(out / TRAJECTORY_FILE) if (out / TRAJECTORY_FILE).is_file() else []
    notes = list(record.notes) + resolved.notes
    cut = record.end.reason if record.end is not None and record.end.reason in ("aborted", "error") else None
    if cut is not None and result is not None:  # stopped at the recorded point; how it stopped is not replayable
        notes.append(f"the recorded episode ended with {cut!r}: replayed up to where it stopped")
        if replayed and isinstance(replayed[-1], EndEvent):
            replayed[-1] = replayed[-1].model_copy(update={"reason": cut})
        result = result.model_copy(update={"end_reason": cut})
    mismatches += [m for m in first_event_mismatches(record.events, replayed) if m is not None]
    if result is not None:
        if record.result is not None:
            m = _file_mismatch(RESULT_FILE, _result_view(record.result), _result_view(result))
            if m is not None:
                mismatches.append(m)
        if record.final_state is not None:
            fresh = json.loads((out / FINAL_STATE_FILE).read_text(encoding="utf-8"))
            m = _file_mismatch(FINAL_STATE_FILE, record.final_state, fresh)
            if m is not None:
                mismatches.append(m)
    turns = sum(isinstance(e, TurnEvent) for e in replayed)
    digests = sum(1 for e in record.events if isinstance(e, TurnEvent) and e.observation_sha256 is not None)
    return ReplayReport(
        episode_id=record.episode_id, folder=str(record.folder), ok=not mismatches, mismatches=mismatches,
        notes=notes, task_source=resolved.source, turns=turns, observations_checked=min(digests, turns),
        ticks=sum(isinstance(e, TickEvent) for e in replayed), harness_version=harness_version(),
        recorded_harness_version=record.start.harness_version, seconds=time.perf_counter() - t0, result=result,
        replayed_dir=str(out))


def _world_mismatches(recorded: dict[str, Any] | None, here: dict[str, Any] | None) -> list[Mismatch]:
    if not recorded or not here:
        return []
    return [Mismatch("world", f"world_pins.{k}", recorded[k], here.get(k)) for k in recorded
            if recorded[k] is not None and here.get(k) is not None and recorded[k] != here.get(k)]


def _result_view(result: EpisodeResult) -> dict[str, Any]:
    d = result.model_dump(mode="json")
    for k in RESULT_TIMING_FIELDS:
        d.pop(k, None)
    return d


def comparable(event: Any) -> dict[str, Any]:
    """An event as data without what two plays of the same episode may differ in: timestamps and timings; an
    engine traceback only by its presence; the start event's provenance (harness version, pins and task
    file are checked as the record's identity, apart)."""
    d = event.model_dump(mode="json")
    for k in TIMING_FIELDS:
        d.pop(k, None)
    if d.get("type") == "turn":
        d["harness_error"] = bool(d.get("harness_error"))
    elif d.get("type") == "start":
        for k in ("harness_version", "task_file", "task_sha256", "world_pins", "world_backend", "turn_timeout"):
            d.pop(k, None)
    return d


def first_event_mismatches(recorded: list[Any], replayed: list[Any]) -> tuple[Mismatch | None, Mismatch | None]:
    """(how the start events differ, the first later event that differs): each None when there is none. The
    start is apart: a task that changed where agents stand still has its first differing turn named."""
    start = None
    if recorded and replayed:
        diff = first_difference(comparable(recorded[0]), comparable(replayed[0]))
        if diff is not None:
            start = Mismatch("start", diff[0], diff[1], diff[2])
    return start, first_event_mismatch(recorded[1:], replayed[1:])


def first_event_mismatch(recorded: list[Any], replayed: list[Any]) -> Mismatch | None:
    """The first event where the replay differs from the record, described by its turn (round, agent, tool)
    and its first differing field."""
    for i in range(max(len(recorded), len(replayed))):
        a = recorded[i] if i < len(recorded) else None
        b = replayed[i] if i < len(replayed) else None
        if a is None:
            return Mismatch(_where(b), f"the replay goes on ({_what(b)}) where the record ends", **_turn_of(b))
        if b is None:
            return Mismatch(_where(a), f"the record goes on ({_what(a)}) where the replay ended", **_turn_of(a))
        if type(a) is not type(b) or (isinstance(a, TurnEvent) and (a.round, a.agent) != (b.round, b.agent)):
            if isinstance(b, TurnEvent) and not any(_same_turn(e, b) for e in recorded):
                return Mismatch(_where(b), f"the record has no turn of {b.agent} in round {b.round} (it goes on with "
                                           f"{_what(a)}); the replay plays one here", **_turn_of(b))
            return Mismatch(_where(a), f"the record has {_what(a)} here, the replay {_what(b)}", **_turn_of(a))
        da, db = comparable(a), comparable(b)
        if isinstance(a, TurnEvent) and a.observation_sha256 is None:
            db["observation_sha256"] = None  # a record without digests: observations are not compared
        diff = first_difference(da, db)
        if diff is not None:
            path, va, vb = diff
            return Mismatch(_where(a), path, va, vb, **_turn_of(a))
    return None


def _same_turn(a: Any, b: TurnEvent) -> bool:
    return isinstance(a, TurnEvent) and (a.round, a.agent) == (b.round, b.agent)


def _where(ev: Any) -> str:
    if isinstance(ev, TurnEvent):
        return f"round {ev.round}, {ev.agent} ({ev.tool or 'no call'})"
    if isinstance(ev, TickEvent):
        return f"tick of round {ev.round}"
    if isinstance(ev, EndEvent):
        return "end"
    return "start"


def _what(ev: Any) -> str:
    if isinstance(ev, TurnEvent):
        return f"a turn of {ev.agent} in round {ev.round}: {ev.tool or 'no call'}"
    if isinstance(ev, TickEvent):
        return f"the tick of round {ev.round}"
    if isinstance(ev, EndEvent):
        return f"the end ({ev.reason}, round {ev.rounds})"
    return "the start"


def _turn_of(ev: Any) -> dict[str, Any]:
    if isinstance(ev, TurnEvent):
        return {"round": ev.round, "agent": ev.agent, "tool": ev.tool}
    if isinstance(ev, (TickEvent, EndEvent)):
        return {"round": getattr(ev, "round", None) or getattr(ev, "rounds", None)}
    return {}


def _file_mismatch(name: str, recorded: Any, replayed: Any) -> Mismatch | None:
    diff = first_difference(recorded, replayed)
    if diff is None:
        return None
    path, a, b = diff
    return Mismatch(name, path, a, b)


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """(dotted path, a's value, b's value) of the first place two JSON values differ; None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return (f"{path}.{k}" if path else str(k), a.get(k, "(absent)"), b.get(k, "(absent)"))
            d = first_difference(a[k], b[k], f"{path}.{k}" if path else str(k))
            if d is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d is not None:
                return d
        if len(a) != len(b):
            return (f"{path} (length)", len(a), len(b))
        return None
    if a != b or type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return (path or "(value)", a, b)
    return None


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def record_digest(episode_dir: str | Path) -> str:
    """The sha256 of an episode's record files (trajectory, result, final state, task.json, in that order):
    a replay stamp names it, so an edit after the check shows."""
    import hashlib

    h = hashlib.sha256()
    for name in (TRAJECTORY_FILE, RESULT_FILE, FINAL_STATE_FILE, TASK_JSON):
        digest = file_sha256(Path(episode_dir) / name, cached=False)
        h.update(f"{name} {digest or '-'}\n".encode())
    return h.hexdigest()


__all__ = ["EpisodeRecord", "PlannedTurn", "RecordedTeam", "ReplayError", "ReplayReport", "Mismatch", "ResolvedTask",
           "load_record", "resolve_task", "replay_episode", "check_episode", "first_event_mismatch", "first_event_mismatches",
           "first_difference", "comparable", "record_digest"]
