"""The on-disk cache of validated tasks: a run of an unchanged task file neither parses YAML nor validates.

Loading a task (``task.load_task``) reads the YAML, checks its structure and then checks it against the world
(items, tiles, verifier checks, the reference solution): about a tenth of a short run's start-up, the same
every time for the same file. A task that passed is kept as a pickle next to the built worlds
(``buildcache.cache_dir()``, in ``tasks/code-<version of the code>/``; the eight most recent versions are
kept), under a key of everything its validation read:

- the file's bytes and the path it was loaded by (the task records that path; its id may come from it);
- the default world's cache key (its pinned hashes, every pack file, the world-building code, libraries);
- agentworld's own code (size and modification time of every module of the package: the validation, the
  verifier checks, the tools) and the versions of pydantic and PyYAML;
- the plugins that may add verifier checks: every entry-point plugin's module (size and modification
  time). With a plugin registered by hand (tests, notebooks) nothing is read from or written to the cache.

Only tasks that passed are kept, so a bad task file is refused exactly as without the cache (every problem,
naming the file and field). An entry is written to a private temporary file and renamed into place, so
concurrent runs see a whole entry or none; an unreadable entry is ignored and rewritten. ``AGENTWORLD_TASK_CACHE=0``
turns this cache off (``AGENTWORLD_WORLD_CACHE=0`` turns off both).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from ..world import buildcache

# bump when what is pickled changes in a way the code digest would not catch
FORMAT = 1
MAX_KEYED_BYTES = 256 * 1024  # larger files are not cached (the shipped tasks are under 20 KB)
_PACKAGE = Path(__file__).resolve().parents[2]  # the installed package `agentworld`
_CODE_DIRS = ("core", "plugins", "mcp_server")
_code_digest: str | None = None


def cache_root() -> Path | None:
    if os.environ.get("AGENTWORLD_TASK_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    root = buildcache.cache_dir()
    return root / "tasks" if root is not None else None


def _stat_line(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path} missing\n"
    return f"{path} {st.st_size} {st.st_mtime_ns}\n"


def code_digest() -> str:
    """agentworld's modules (size, mtime) and the pydantic and PyYAML versions; once per process."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        h.update(f"format {FORMAT}; python {sys.version}\n".encode())
        h.update(b"pydantic " + buildcache._library_version("pydantic") + b"\n")
        spec = importlib.util.find_spec("yaml")
        h.update(_stat_line(Path(spec.origin)).encode() if spec is not None and spec.origin else b"no yaml\n")
        h.update(_stat_line(_PACKAGE / "__init__.py").encode())
        for top in _CODE_DIRS:
            _digest_modules(str(_PACKAGE / top), h)
        _code_digest = h.hexdigest()
    return _code_digest


def _digest_modules(folder: str, h: "hashlib._Hash") -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        h.update(f"{folder} missing\n".encode())
        return
    for e in entries:
        if e.name.endswith(".py") and e.is_file():
            st = e.stat()
            h.update(f"{e.path} {st.st_size} {st.st_mtime_ns}\n".encode())
        elif e.is_dir() and e.name != "__pycache__":
            _digest_modules(e.path, h)


def _plugins_digest() -> str | None:
    """The third-party plugins' modules; None when a plugin object was registered by hand."""
    from .. import plugins

    pm = plugins.get_plugin_manager()
    lines = []
    for plugin in pm.get_plugins():
        name = pm.get_name(plugin) or repr(plugin)
        source = plugins._sources.get(name, "manual")
        if source == "builtin":
            continue
        module_file = getattr(plugin, "__file__", None)
        if source == "manual" or module_file is None:
            return None
        lines.append(f"{name} {source} {_plugin_code_digest(plugin, module_file)}\n")
    return "".join(sorted(lines))


def _plugin_code_digest(plugin: Any, module_file: str) -> str:
    """Every module of the plugin's top-level package (size and modification time), not only the registering
    module: docs/plugins.md has plugins keep that module small and their checks in submodules loaded lazily,
    so a check edited there must make its tasks validate again. A plugin that is a lone module is that file."""
    h = hashlib.sha256()
    top = sys.modules.get(getattr(plugin, "__name__", "").partition(".")[0])
    folders = list(getattr(top, "__path__", None) or [])
    if folders:
        for folder in sorted(folders):
            _digest_modules(folder, h)
    else:
        h.update(_stat_line(Path(module_file)).encode())
    return h.hexdigest()


def read_small(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a file of at most MAX_KEYED_BYTES (checked before reading), else None."""
    try:
        with path.open("rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_KEYED_BYTES:
                return None
            data = f.read(MAX_KEYED_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_KEYED_BYTES else None


def entry_for(file: str, data: bytes) -> Path | None:
    """Where the validated task loaded as ``file`` with these bytes is kept; None: do not cache it."""
    root = cache_root()
    if root is None or len(data) > MAX_KEYED_BYTES:
        return None
    plugin_part = _plugins_digest()
    if plugin_part is None:
        return None
    from ..world.datapack import DATA_DIR

    h = hashlib.sha256()
    h.update(f"file {file}\n".encode())
    h.update(hashlib.sha256(data).hexdigest().encode() + b"\n")
    h.update(f"world {buildcache.world_key(DATA_DIR, True)}\n".encode())
    h.update(f"code {code_digest()}\n".encode())
    h.update(plugin_part.encode())
    return root / f"code-{code_digest()[:16]}" / f"task-{h.hexdigest()[:32]}.pickle"


def load(entry: Path) -> Any | None:
    """The task kept at ``entry``, or None (missing, truncated, or from an incompatible build)."""
    try:
        with entry.open("rb") as f:
            return pickle.load(f)
    except Exception:  # noqa: BLE001 - a missing or damaged entry is a miss; it is rewritten
        return None


def store(entry: Path, task: Any) -> None:
    """Keep ``task`` at ``entry`` (atomically; an unwritable cache keeps nothing). A new version of the code
    (a developer's every edit) starts a new folder; only the KEEP_VERSIONS most recently written are kept."""
    new_version = not entry.parent.exists()
    buildcache.store(entry, task, prune="task-*.pickle")
    if new_version:
        _prune_versions(entry.parent.parent)


KEEP_VERSIONS = 8  # checkouts of different versions sharing one cache keep theirs


def _prune_versions(root: Path) -> None:
    import shutil

    try:
        folders = sorted(root.glob("code-*"), key=lambda d: d.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in folders[KEEP_VERSIONS:]:
        shutil.rmtree(old, ignore_errors=True)  # a run still writing there just fails to keep its entry
    for flat in root.glob("task-*.pickle"):  # the first layout, one folder for every version
        try:
            flat.unlink()
        except OSError:
            pass
