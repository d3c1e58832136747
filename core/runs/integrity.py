"""Is a recorded episode whole? Checks of an episode folder against its line in ``results.jsonl``.

A recorded episode must have a ``result.json`` that parses, and a ``trajectory.jsonl`` that starts with a
``start`` event, holds only whole event lines, ends with an ``end`` event, and has as many ``turn`` events
as the result counts (and the result's rounds). A file cut mid-way (a full disk, a copy that stopped), a
folder another process wrote into, or an edited file fails one of these; resume reruns such an episode
and report flags it, naming the file.

The check reads every line but parses only the last one: structure (each line a JSON object of a known
event type) is checked with string operations, so checking a run of thousands of episodes costs about
as much as reading their files.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..play.records import EndEvent, EpisodeResult, parse_event

RESULT_FILE = "result.json"
TRAJECTORY_FILE = "trajectory.jsonl"
_EVENT_PREFIXES = tuple(f'{{"type":"{t}"' for t in ("start", "turn", "tick", "end"))


def episode_problem(folder: Path, result: EpisodeResult) -> str | None:
    """None if the episode's files are whole and agree with ``result``; otherwise what is wrong, naming
    the file."""
    problem = _result_problem(folder / RESULT_FILE, result)
    return problem or _trajectory_problem(folder / TRAJECTORY_FILE, result)


def _result_problem(path: Path, result: EpisodeResult) -> str | None:
    try:
        on_disk = EpisodeResult.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return f"{path}: missing"
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc})"
    except ValueError as exc:
        first = str(exc).splitlines()[1 if isinstance(exc, ValidationError) else 0][:120]
        return f"{path}: not a whole result ({first.strip()})"
    if (on_disk.rounds, on_disk.end_reason) != (result.rounds, result.end_reason):
        return (f"{path}: says {on_disk.rounds} rounds ({on_disk.end_reason}) but results.jsonl says "
                f"{result.rounds} ({result.end_reason})")
    return None


def _trajectory_problem(path: Path, result: EpisodeResult) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return f"{path}: missing"
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc})"
    if not data.endswith(b"\n"):
        return f"{path}: cut off in the middle of a line (the last line is incomplete)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{path}: not UTF-8 at byte {exc.start}"
    lines = text.split("\n")[:-1]
    turns = 0
    for i, line in enumerate(lines, 1):
        if not (line.startswith(_EVENT_PREFIXES) and line.endswith("}")):
            return f"{path}: line {i} is not a whole trajectory event"
        turns += line.startswith('{"type":"turn"')
    if not lines or not lines[0].startswith('{"type":"start"'):
        return f"{path}: does not start with a start event"
    try:
        end = parse_event(lines[-1])
    except (ValidationError, json.JSONDecodeError, ValueError):
        return f"{path}: line {len(lines)} is not a valid event"
    if not isinstance(end, EndEvent):
        return f"{path}: ends without an end event after line {len(lines)} (the episode was cut short)"
    if result.turns is not None and turns != result.turns:
        return f"{path}: has {turns} turn events but the result counts {result.turns}"
    if end.rounds != result.rounds:
        return f"{path}: ends at round {end.rounds} but the result says {result.rounds}"
    return None


# ---------------------------------------------------------------------- replay stamps
REPLAY_STAMP = "replay.json"  # written by `agentworld replay --check` into the episode folder
REPLAY_VERIFIED, REPLAY_FAILED, REPLAY_NOT_CHECKED = "verified", "failed", "not checked"


def write_replay_stamp(folder: Path, report: Any) -> str | None:
    """Record a replay check in the episode folder: when, with which harness, its verdict, the first
    difference, and the digest of the record files it checked (an edit afterwards makes the stamp stale).
    Returns a note when the folder cannot be written (a read-only copy: the verdict is printed all the same)."""
    from ..play.replay import record_digest

    first = report.first
    stamp = {"checked_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "ok": report.ok,
             "harness_version": report.harness_version, "record_sha256": record_digest(folder),
             "turns": report.turns, "observations_checked": report.observations_checked,
             "first_difference": first.text() if first is not None else None}
    try:
        (folder / REPLAY_STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        return f"the verdict was not stamped ({folder / REPLAY_STAMP}: {exc.strerror or exc})"
    return None


def replay_status(folder: Path) -> tuple[str, str | None]:
    """(status, detail) of an episode's replay check: ``verified`` (a passing check of exactly these files),
    ``failed`` (with the first difference), or ``not checked`` (no stamp, or the files changed since)."""
    from ..play.replay import record_digest

    try:
        stamp = json.loads((folder / REPLAY_STAMP).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return REPLAY_NOT_CHECKED, None
    except (OSError, ValueError):
        return REPLAY_NOT_CHECKED, f"{folder / REPLAY_STAMP} is unreadable"
    if not isinstance(stamp, dict) or stamp.get("record_sha256") != record_digest(folder):
        return REPLAY_NOT_CHECKED, "the record changed after its replay check"
    if stamp.get("ok") is True:
        return REPLAY_VERIFIED, None
    return REPLAY_FAILED, stamp.get("first_difference") or "the replay differs from the record"


def replay_summary(folders: list[Path]) -> str:
    """One line for a command that hands episodes on (export): how many were replay-verified, and which not."""
    statuses = {f.name: replay_status(f) for f in folders}
    failed = [f"{name} ({why})" for name, (status, why) in statuses.items() if status == REPLAY_FAILED]
    unchecked = sum(status == REPLAY_NOT_CHECKED for status, _ in statuses.values())
    verified = len(statuses) - len(failed) - unchecked
    line = f"replay: {verified} verified, {unchecked} not checked, {len(failed)} failed"
    if failed:
        line += ": " + "; ".join(failed)
    if unchecked:
        line += " (`agentworld replay RUN_DIR --check` checks them)"
    return line
