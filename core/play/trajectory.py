"""Writing and reading ``trajectory.jsonl``: one event per line, flushed as written.

A killed run leaves a readable prefix: every complete line is a whole event, and :func:`read_events`
ignores a truncated last line (the one being written when the process died).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Union

from pydantic import ValidationError

from .records import EndEvent, StartEvent, TickEvent, TurnEvent, parse_event

AnyEvent = Union[StartEvent, TurnEvent, TickEvent, EndEvent]
TRAJECTORY_FILE = "trajectory.jsonl"


class TrajectoryWriter:
    """Appends events to ``path`` line by line; each line is flushed (and optionally fsynced) at once."""

    def __init__(self, path: str | Path, *, fsync: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # unbuffered bytes: each line goes to the file in one write, as pydantic encodes it (UTF-8 JSON, the
        # text model_dump_json gives), with no text layer to encode it again nor a buffer to flush
        self._fh: IO[bytes] | None = self.path.open("wb", buffering=0)
        self._fsync = fsync
        self.count = 0

    def write(self, event: AnyEvent) -> None:
        if self._fh is None:
            raise ValueError(f"trajectory writer for {self.path} is closed")
        line = event.__pydantic_serializer__.to_json(event) + b"\n"  # every field, defaults included: a whole event
        while line:  # a raw write may take part of it (a full disk raises)
            line = line[self._fh.write(line):]
        if self._fsync:
            os.fsync(self._fh.fileno())
        self.count += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "TrajectoryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_events(path: str | Path) -> list[AnyEvent]:
    """All complete events of a trajectory file (or of ``<dir>/trajectory.jsonl``).

    A truncated or garbled *last* line is ignored (a run killed mid-write); a bad line elsewhere is an error
    naming the line, since that is a damaged file, not an interrupted one.
    """
    p = Path(path)
    if p.is_dir():
        p = p / TRAJECTORY_FILE
    lines = p.read_text(encoding="utf-8").split("\n")
    events: list[AnyEvent] = []
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            events.append(parse_event(line))
        except (ValidationError, json.JSONDecodeError, ValueError) as exc:
            if i == last:
                break  # the line being written when the run stopped
            raise ValueError(f"{p}: line {i + 1} is not a trajectory event: {str(exc).splitlines()[0]}") from None
    return events
