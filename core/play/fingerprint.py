"""What an episode's record carries so that anyone can replay and check it (``agentworld replay --check``).

The start event names the harness version, where the task came from and the sha256 of its file, the world's
pins (data version, map version, the map's pinned tile and placement hashes and a digest of the data pack's
files), the world backend and the turn timeout (the text of a lost turn names it). Every turn event carries
the sha256 of the observation the agent was handed (its JSON, whatever format the agent read it in), so a
replay shows that each agent saw exactly what it saw then.

Digests of files are remembered per process while the file keeps its size and modification time: a run of
many episodes of one task hashes its file once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ..world.record import to_json

_FILE_DIGESTS: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, sha256)


def file_sha256(path: str | Path, *, cached: bool = True) -> str | None:
    """The sha256 of a file's bytes (None when it cannot be read). ``cached``: remembered while the file keeps
    its size and modification time (recording; a check of a file someone may have edited passes False)."""
    p = str(path)
    try:
        st = os.stat(p)
    except OSError:
        return None
    kept = _FILE_DIGESTS.get(p) if cached else None
    if kept is not None and kept[:2] == (st.st_size, st.st_mtime_ns):
        return kept[2]
    try:
        digest = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    except OSError:
        return None
    _FILE_DIGESTS[p] = (st.st_size, st.st_mtime_ns, digest)
    return digest


def shipped_ref(path: str | Path) -> str | None:
    """``<suite>/<file name>`` when ``path`` is a task file shipped with agentworld (found again on any
    installation), else None."""
    from ..tasks import task as task_mod

    p = Path(path).resolve()
    for suite in task_mod.SUITES:
        if p.parent == task_mod._suite_dir(suite).resolve():
            return f"{suite}/{p.name}"
    return None


def task_facts(task: Any) -> dict[str, Any]:
    """``task_file`` (a shipped task's ``suite/file``, else the path it was loaded from) and ``task_sha256``
    (its bytes' digest); both None for a task that did not come from a file."""
    path = getattr(task, "path", None)
    if not path or not Path(path).is_file():
        return {"task_file": None, "task_sha256": None}
    return {"task_file": shipped_ref(path) or str(Path(path).resolve()), "task_sha256": file_sha256(path)}


def pack_sha256(pack: Path) -> str:
    """A digest of a data pack's files (names and bytes, in name order)."""
    h = hashlib.sha256()
    for f in sorted(pack.glob("*.yaml")):
        digest = file_sha256(f) or "unreadable"
        h.update(f"{f.name} {digest}\n".encode())
    return h.hexdigest()


def world_pins(world: Any) -> dict[str, Any] | None:
    """The embedded world's identity: data and map versions, the map's pinned hashes and the pack's digest
    (None for another backend: a game server's world cannot be pinned from here)."""
    data = getattr(world, "data", None)
    if data is None or getattr(data, "map", None) is None:
        return None
    from ..world.datapack import DATA_DIR, load_world

    pins: dict[str, Any] = {"version": data.version, "map_version": data.map.version,
                            "tiles_sha256": data.map.tiles_sha256,
                            "placements_sha256": (data.map.layout or {}).get("placements_sha256")}
    if getattr(world, "loaded", None) is load_world():  # the built-in pack (a test's own world has no files)
        pins["data_sha256"] = pack_sha256(DATA_DIR)
    return pins


def harness_version() -> str:
    from ... import __version__

    return __version__


def observation_sha256(obs: Any) -> str:
    """The digest of an observation as data (every field, in the model's order): the text and JSON an agent
    reads are both rendered from exactly this."""
    return hashlib.sha256(to_json(obs)).hexdigest()
