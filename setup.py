"""Build hook: record the source version in the built package (``agentworld/_source.json``).

``pyproject.toml`` holds the project's metadata; this file only adds one step to ``build_py`` so that a
non-editable install (``pip install .``, a wheel) still knows which commit it was built from, for the run
manifest (core/runs/provenance.py). Without git (an sdist, a tarball) the file records no commit.
"""

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE_FILE = "_source.json"


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), *args], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class BuildWithSource(build_py):
    def run(self) -> None:
        super().run()
        commit = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
        info = {"commit": commit, "dirty": bool(dirty) if commit else None, "recorded": "build"}
        target = Path(self.build_lib) / "agentworld" / SOURCE_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(info) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithSource})
