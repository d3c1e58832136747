"""The on-disk cache of built worlds: ``load_world()`` unpickles in milliseconds what takes a second to generate.

A built world (``LoadedWorld``: data pack, generated map, placements, component labels) is a pure function of
the pack's files and of the code that builds it. The cache key is the world's pinned hashes
(``map.tiles_sha256``, ``layout.placements_sha256``, read from ``map.yaml``) plus a digest of every pack file
and of the world-building modules and library versions, so an edited pack, a changed generator or a new
pydantic never gets a stale world: the key changes and the world is rebuilt (and checked against its pinned
hashes) as if there were no cache. A missing, truncated or unreadable entry is rebuilt the same way.

Entries live in the user cache directory (``$AGENTWORLD_CACHE_DIR``, else ``$XDG_CACHE_HOME/agentworld``,
else ``~/.cache/agentworld``; ``AGENTWORLD_WORLD_CACHE=0`` turns the cache off). Writers are safe against each
other: each writes a private temporary file and renames it into place (atomic on POSIX and Windows), so a
reader sees a whole entry or none, and concurrent builders of the same key just write the same bytes twice.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import re
import sys
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")

# bump when the pickled layout changes in a way the code digest would not catch
# (2: the map's grids as flat bytes and placements in placements.py, so a load needs no numpy)
FORMAT = 2
# the modules whose code decides what a built world contains
_BUILD_MODULES = ("datapack.py", "generate.py", "gamemap.py", "placements.py", "models.py", "stats.py",
                  "regions.py")
# the libraries whose version may change what is built or how it unpickles
_BUILD_LIBRARIES = ("numpy", "pydantic")
_PIN = re.compile(r"^\s*(tiles_sha256|placements_sha256):\s*([0-9a-fA-F]{64}|null)?\s*$", re.MULTILINE)


def cache_dir() -> Path | None:
    """Where built worlds are kept; None when the cache is turned off."""
    if os.environ.get("AGENTWORLD_WORLD_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    root = os.environ.get("AGENTWORLD_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "agentworld" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "agentworld"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentworld"


def pinned_hashes(pack: Path) -> dict[str, str]:
    """The hashes ``map.yaml`` pins (``null`` or absent ones are left out), read without parsing YAML."""
    try:
        text = (pack / "map.yaml").read_text(encoding="utf-8")
    except OSError:
        return {}
    return {k: v for k, v in _PIN.findall(text) if v and v != "null"}


_KEYS: dict[tuple[str, bool], tuple[tuple[tuple[str, int, int], ...], str]] = {}  # world_key's per process


def world_key(pack: Path, check_hash: bool) -> str:
    """The cache key of the world built from ``pack``: pinned hashes, pack files, building code, versions.
    Remembered per process while none of those files changes size or modification time (a run asks for
    it twice: the task cache's key and the world's)."""
    here = Path(__file__).resolve().parent
    files = sorted(pack.glob("*.yaml")) + [here / name for name in _BUILD_MODULES]
    stamp = tuple((str(f), st.st_size, st.st_mtime_ns) for f in files for st in _stat(f))
    kept = _KEYS.get((str(pack), check_hash))
    if kept is not None and kept[0] == stamp:
        return kept[1]
    key = _world_key(pack, check_hash)
    _KEYS[(str(pack), check_hash)] = (stamp, key)
    return key


def _stat(f: Path) -> list[os.stat_result]:
    try:
        return [f.stat()]
    except OSError:
        return []


def _world_key(pack: Path, check_hash: bool) -> str:
    h = hashlib.sha256()
    h.update(f"format {FORMAT}; python {sys.version_info[:2]}; check_hash {check_hash}\n".encode())
    for lib in _BUILD_LIBRARIES:
        h.update(f"{lib} ".encode() + _library_version(lib) + b"\n")
    for name, value in sorted(pinned_hashes(pack).items()):
        h.update(f"{name} {value}\n".encode())
    for f in sorted(pack.glob("*.yaml")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    here = Path(__file__).resolve().parent
    for name in _BUILD_MODULES:
        f = here / name
        if f.exists():
            h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _library_version(name: str) -> bytes:
    """What identifies an installed library's version, without importing it (a warm load never imports
    numpy): its ``version.py``, which numpy and pydantic both write at build time; else its metadata."""
    spec = importlib.util.find_spec(name)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        try:
            return (Path(folder) / "version.py").read_bytes()
        except OSError:
            continue
    from importlib import metadata

    try:
        return metadata.version(name).encode()
    except metadata.PackageNotFoundError:
        return b"not installed"


def entry_path(pack: Path, check_hash: bool, root: Path) -> Path:
    tiles = pinned_hashes(pack).get("tiles_sha256", "unpinned")[:12]
    return root / f"world-{tiles}-{world_key(pack, check_hash)[:24]}.pickle"


def cached_build(pack: Path, check_hash: bool, build: Callable[[], T]) -> T:
    """The world for ``pack`` from the disk cache, or ``build()`` stored there for next time."""
    root = cache_dir()
    path = entry_path(pack, check_hash, root) if root is not None else None
    if path is not None:
        try:
            with path.open("rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            pass
        except Exception:  # noqa: BLE001 - truncated, corrupt or from an incompatible build: rebuild it
            pass
    world = build()
    if path is not None:
        store(path, world)
    return world


def store(path: Path, obj: object, prune: str = "world-*.pickle") -> bool:
    """Write ``obj`` to ``path`` atomically (temporary file, then rename). False if the directory is not
    writable: the cache is an optimisation and never fails a load. Old entries named like ``prune`` go."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - a full disk or a read-only cache must not fail the load
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _prune(path, prune)
    return True


def _prune(keep: Path, pattern: str, max_age_days: float = 30.0) -> None:
    """Drop entries not rewritten for ``max_age_days`` (older packs and code versions). Entries of other
    current keys stay: two checkouts of different versions share the directory without evicting each other."""
    import time

    cutoff = time.time() - max_age_days * 86400
    for old in keep.parent.glob(pattern):
        try:
            if old != keep and old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
