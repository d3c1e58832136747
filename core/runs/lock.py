"""One process per run folder: an advisory lock on ``<run>/.lock`` that names its holder.

Two ``agentworld run --resume DIR`` at once would both run every remaining episode into the same files
(interleaved trajectories, duplicate results). The runner takes this lock before it reads the folder and
holds it until the run ends; a second process is refused with a message naming the holder's pid.

The lock is ``flock`` on an open file (POSIX): the kernel drops it when the holder exits, however it
exits, so a killed run never leaves a stale lock behind. The file keeps the last holder's pid and start
time for the message; its presence alone means nothing. Where ``fcntl`` is missing (Windows) an exclusive
create of the file is used instead, and a leftover file from a killed run names the pid to check.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


class RunLockedError(RuntimeError):
    """The run folder is held by another process (the message names it and what to do)."""


class RunLock:
    """``with RunLock(run_dir):`` holds the folder's lock or raises :class:`RunLockedError` at once."""

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / LOCK_FILE
        self._fh: IO[str] | None = None

    def acquire(self) -> "RunLock":
        if self._fh is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover - Windows
            return self._acquire_exclusive_create()
        fh = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _describe(_read_holder(self.path))
            fh.close()
            raise RunLockedError(f"{self.path.parent} is in use by another agentworld process ({holder}); wait "
                                 f"for it to finish (or stop it) before running or resuming this folder") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(_me()) + "\n")
        fh.flush()
        self._fh = fh
        return self

    def _acquire_exclusive_create(self) -> "RunLock":  # pragma: no cover - Windows
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _describe(_read_holder(self.path))
            raise RunLockedError(f"{self.path.parent} is in use by another agentworld process ({holder}); if that "
                                 f"process is gone, delete {self.path}") from None
        fh = os.fdopen(fd, "w", encoding="utf-8")
        fh.write(json.dumps(_me()) + "\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        if fcntl is None:  # pragma: no cover - Windows
            self._fh.close()
            self.path.unlink(missing_ok=True)
        else:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
        self._fh = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _me() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                     time.gmtime())}


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8").strip() or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _describe(holder: dict[str, Any]) -> str:
    if not holder.get("pid"):
        return "holder unknown"
    host = f" on {holder['host']}" if holder.get("host") and holder["host"] != socket.gethostname() else ""
    since = f", since {holder['since']}" if holder.get("since") else ""
    return f"pid {holder['pid']}{host}{since}"
