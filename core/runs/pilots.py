"""Pilot records: episodes of shipped tasks played by pilot teams of LLM agents, kept in ``pilots/``.

A pilot folder holds what the episode wrote (``result.json``, ``trajectory.jsonl.gz``,
``final_state.json.gz``, ``task.json``) and ``pilot.json`` (:class:`PilotRecord`): the task, variant and
seed, the harness it ran on, the outcome, the failure class (the paper's: system, task or agent error) and a
one-line cause. ``pilots/README.md`` documents the format; ``agentworld tasks record-pilot`` writes one from
an episode folder; ``agentworld tasks calibration`` reads them all (``core/runs/calibration.py``).

A pilot counts for the task version it ran on: :func:`task_digest` of the task it played (its ``task.json``)
against the task file today. A task revised since (its budget, a brief, a check) makes the pilot **stale**:
listed, never counted. The digest is of the task's content, not of its file's bytes: comments, layout and
the ``design:`` label do not change it.

A pilot's *win* says more than its version: it is a solution of the world and objective it played. A task
whose budget alone changed since (:func:`play_digest`, the digest without the budget) is played the same, so
the win still counts as the fastest known solution (:func:`fastest_pilot`); otherwise a budget set from a
pilot's win would make that very win stale and the budget would no longer be 1.25x-1.6x of anything known.
It does not count as a pilot of the task as it is: its team read another budget.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..world.factories import empty_list

PILOT_FILE = "pilot.json"
FailureClass = Literal["system", "task", "agent"]
FAILURE_CLASSES: tuple[str, ...] = ("system", "task", "agent")
# fields of a task that do not change what is played or checked: a label, not the task's content
_NOT_CONTENT = ("design",)
# the budget: a win in N rounds is the same solution under any budget of N rounds or more
_BUDGET = ("rounds", "max_action_steps")


class PilotRecord(BaseModel):
    """``pilot.json``: one pilot episode (see pilots/README.md for every field)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1)  # the task id
    variant: str = "vanilla"  # the protocol variant (vanilla, no_communication, ...)
    seed: int = 0
    harness_commit: str = Field(min_length=1)  # the commit of agentworld the episode ran on
    harness_version: str = Field(min_length=1)
    team: str = ""  # who played: the agents, how each seat was played
    server: str | None = None  # the command that served the episode
    success: bool
    rounds: int = Field(ge=0)  # rounds played (the round the verifier passed, or the budget)
    budget: int = Field(ge=1)  # the task's round budget
    failure_class: FailureClass | None = None  # the paper's classes; null for a success
    cause: str = ""  # one line: why it failed (or how it won)
    player_reports: list[str] = Field(default_factory=empty_list)  # what each player found confusing
    replay_note: str | None = None  # how the episode replays on later commits, when that needs saying
    task_digest: str | None = None  # task_digest() of the task it ran on (older records: from task.json)
    date: str | None = None  # YYYY-MM-DD

    @model_validator(mode="after")
    def _class_matches_outcome(self) -> "PilotRecord":
        if self.success and self.failure_class is not None:
            raise ValueError("failure_class must be null for a success")
        if not self.success and self.failure_class is None:
            raise ValueError("a failed pilot needs failure_class: system, task or agent")
        if not self.success and not self.cause.strip():
            raise ValueError("a failed pilot needs a one-line cause")
        return self


class PilotError(ValueError):
    """A pilot folder or record that cannot be read: names the file, the field and the fix."""


def task_digest(raw: dict[str, Any]) -> str:
    """The content digest of a task (its parsed YAML, or a pilot's task.json): sha256 of its canonical JSON
    without the labels that do not change the task (``design``)."""
    content = {k: v for k, v in raw.items() if k not in _NOT_CONTENT}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


def play_digest(raw: dict[str, Any]) -> str:
    """:func:`task_digest` without the budget: the same for two versions of a task that differ only in it."""
    return task_digest({k: v for k, v in raw.items() if k not in _BUDGET})


def read_pilot(folder: Path) -> PilotRecord:
    """The folder's pilot.json, validated; PilotError names the file and field."""
    path = folder / PILOT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PilotError(f"{path}: missing (every pilot folder has a pilot.json; see pilots/README.md)") from None
    except (OSError, ValueError) as exc:
        raise PilotError(f"{path}: not readable JSON ({exc})") from None
    try:
        return PilotRecord.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "(top level)"
            msg = str(err["msg"]).removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field (pilots/README.md lists the fields)"
            problems.append(f"{field}: {msg}")
        raise PilotError(f"{path}: " + "; ".join(problems)) from None


def _played_task(folder: Path) -> dict[str, Any] | None:
    """The task as the pilot ran it (its task.json; None when missing or unreadable)."""
    try:
        return json.loads((folder / "task.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Pilot:
    """One pilot folder, read: its record and whether it ran on the task as it is today."""

    def __init__(self, folder: Path, record: PilotRecord, played: dict[str, Any] | None,
                 current: tuple[str, str] | None):
        self.folder = folder
        self.record = record
        # the version it ran on (its record's digest, else its task.json's), and that without the budget
        self.digest = record.task_digest or (None if played is None else task_digest(played))
        self.play = None if played is None else play_digest(played)
        # the task today (None: no longer shipped): its digest, and its digest without the budget
        self.current, self._current_play = current if current is not None else (None, None)

    @property
    def stale(self) -> bool:
        """Ran on another version of the task (or one no longer shipped, or an unknown one)."""
        return self.current is None or self.digest != self.current

    @property
    def same_play(self) -> bool:
        """Ran on the task as it is today but for its budget, perhaps (see the module's docstring)."""
        return not self.stale or (self.play is not None and self.play == self._current_play)

    @property
    def used(self) -> float:
        """Share of the budget the episode used."""
        return self.record.rounds / self.record.budget


def default_pilots_dir() -> Path:
    """``pilots/`` of the checkout agentworld runs from (the package's own folder in a source install)."""
    return Path(__file__).resolve().parents[2] / "pilots"


def load_pilots(folder: Path, tasks: dict[str, dict[str, Any]]) -> tuple[list[Pilot], list[str]]:
    """Every pilot under ``folder`` (one per sub-folder with a pilot.json), and the problems of those that
    could not be read. ``tasks``: task id -> the task's content today (``Task.raw``)."""
    pilots: list[Pilot] = []
    problems: list[str] = []
    if not folder.is_dir():
        return pilots, problems
    today = {tid: (task_digest(raw), play_digest(raw)) for tid, raw in tasks.items()}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            record = read_pilot(sub)
        except PilotError as exc:
            problems.append(str(exc))
            continue
        pilots.append(Pilot(sub, record, _played_task(sub), today.get(record.task)))
    return pilots, problems


def fastest_pilot(pilots: list[Pilot], task_id: str) -> Pilot | None:
    """The fastest successful vanilla pilot of the task as it is today, its budget aside (None: none)."""
    won = [p for p in pilots if p.record.task == task_id and p.record.success and p.same_play
           and p.record.variant == "vanilla"]
    return min(won, key=lambda p: (p.record.rounds, p.folder.name), default=None)


def fastest_wins(tasks: list[Any], folder: Path) -> dict[str, Pilot]:
    """Task id -> its fastest successful vanilla pilot on the task as it is today, its budget aside (tasks
    without one are left out); unreadable pilot folders are skipped here (``tasks calibration`` reports them)."""
    pilots, _problems = load_pilots(folder, {t.id: t.raw for t in tasks})
    return {t.id: best for t in tasks if (best := fastest_pilot(pilots, t.id)) is not None}


# ---------------------------------------------------------------------------------------------------
# recording
# ---------------------------------------------------------------------------------------------------
def _read_json(folder: Path, name: str) -> Any:
    for path in (folder / name, folder / f"{name}.gz"):
        if path.is_file():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:
                return json.load(fh)
    raise PilotError(f"{folder}: no {name} (an episode folder written by agentworld run or serve has one)")


def _first_line(folder: Path) -> dict[str, Any]:
    for path in (folder / "trajectory.jsonl", folder / "trajectory.jsonl.gz"):
        if path.is_file():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:
                return json.loads(fh.readline() or "{}")
    raise PilotError(f"{folder}: no trajectory.jsonl (an episode folder written by agentworld run or serve has one)")


def _gzip_copy(src_folder: Path, name: str, dest: Path) -> None:
    plain, packed = src_folder / name, src_folder / f"{name}.gz"
    if packed.is_file():
        shutil.copyfile(packed, dest / f"{name}.gz")
    elif plain.is_file():
        # mtime 0: the same episode gives the same bytes (a pilot record is committed)
        with open(plain, "rb") as src, gzip.GzipFile(dest / f"{name}.gz", "wb", mtime=0) as out:
            shutil.copyfileobj(src, out)


def record_pilot(episode: Path, out_root: Path, *, failure_class: str | None, cause: str, team: str = "",
                 server: str | None = None, reports: list[str] | tuple[str, ...] = (),
                 commit: str | None = None, date: str | None = None) -> Path:
    """Write a pilot folder under ``out_root`` from an episode folder: the trajectory and final state
    (gzipped), result.json, task.json and pilot.json. Returns the new folder."""
    result = _read_json(episode, "result.json")
    task_raw = _read_json(episode, "task.json")
    start = _first_line(episode)
    if start.get("type") != "start":
        raise PilotError(f"{episode}/trajectory.jsonl: its first line is not the episode's start record")
    success = bool(result.get("success"))
    if success and failure_class:
        raise PilotError(f"{episode}: the episode succeeded: a success has no failure class (drop --class)")
    if not success and not failure_class:
        raise PilotError(f"{episode}: the episode failed: classify it with --class system|task|agent "
                         "(the paper's classes: pilots/README.md says which is which)")
    date = date or str(start.get("timestamp", ""))[:10] or None
    record = PilotRecord(
        task=str(result.get("task_id") or start.get("task_id")), variant=str(result.get("variant", "vanilla")),
        seed=int(result.get("seed", 0)), harness_commit=commit or _git_commit(),
        harness_version=str(start.get("harness_version") or _version()), team=team, server=server,
        success=success, rounds=int(result.get("rounds", 0)), budget=int(result.get("max_rounds") or 1),
        failure_class=failure_class or None, cause=" ".join(cause.split()), player_reports=list(reports),
        task_digest=task_digest(task_raw), date=date)
    name = f"{date or 'undated'}_{record.task}_{record.variant}_s{record.seed}"
    dest = out_root / name
    n = 2
    while dest.exists():
        dest = out_root / f"{name}_{n}"
        n += 1
    dest.mkdir(parents=True)
    try:
        _gzip_copy(episode, "trajectory.jsonl", dest)
        _gzip_copy(episode, "final_state.json", dest)
        (dest / "result.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        (dest / "task.json").write_text(json.dumps(task_raw, indent=1, default=str) + "\n", encoding="utf-8")
        (dest / PILOT_FILE).write_text(record.model_dump_json(indent=2, exclude_none=False) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # never leave half a pilot behind
        raise
    return dest


def _git_commit() -> str:
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        out = None
    if out is None or out.returncode != 0 or not out.stdout.strip():
        raise PilotError("could not tell the harness commit (not a git checkout): give it with --commit")
    return out.stdout.strip()


def _version() -> str:
    from ... import __version__

    return __version__
