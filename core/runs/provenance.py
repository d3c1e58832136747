"""Which source a run was made with, for the manifest: the git commit, however agentworld was installed.

- A git checkout (an editable install, or running from the repository): ``git rev-parse HEAD`` there.
- A non-editable install (``pip install .``, a wheel): the commit recorded at build time in
  ``agentworld/_source.json`` (setup.py's build step).
- Installed from a VCS URL (``pip install git+https://...@<rev>``): the commit pip recorded in the
  distribution's ``direct_url.json``; the URL of a local directory install is kept too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

SOURCE_FILE = "_source.json"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the `agentworld` package (the repository's top level)


def git_info(repo: Path = PACKAGE_ROOT) -> dict[str, Any] | None:
    """Commit and dirtiness of the git checkout at ``repo`` (None when it is not one)."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=3)
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=3)
        return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.TimeoutExpired):
        return None


def _is_checkout(repo: Path) -> bool:
    """The package folder is the top of a git checkout (not a site-packages folder inside someone's repo)."""
    return (repo / ".git").exists()


def build_info(package_root: Path = PACKAGE_ROOT) -> dict[str, Any] | None:
    f = package_root / SOURCE_FILE
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def direct_url() -> dict[str, Any] | None:
    """pip's record of where the installed distribution came from (PEP 610), if any."""
    from importlib import metadata

    try:
        text = metadata.distribution("agentworld").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def source_version(package_root: Path = PACKAGE_ROOT) -> dict[str, Any]:
    """``{"commit", "dirty", "from", "url"}``; ``from`` says where the commit was found (or ``unknown``)."""
    url = direct_url() or {}
    where = {"url": url.get("url")} if url.get("url") else {}
    if _is_checkout(package_root):
        info = git_info(package_root)
        if info:
            return {**info, "from": "git checkout", **where}
    built = build_info(package_root)
    if built and built.get("commit"):
        return {"commit": built["commit"], "dirty": built.get("dirty"), "from": "build", **where}
    vcs = url.get("vcs_info") or {}
    if vcs.get("commit_id"):
        return {"commit": vcs["commit_id"], "dirty": None, "from": "pip vcs install", **where}
    return {"commit": None, "dirty": None, "from": "unknown", **where}
