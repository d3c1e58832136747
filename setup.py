"""Build hook: record the source version in the built package (``agentworld/_source.json``).

``pyproject.toml`` holds the project's metadata; this file only adds three steps to ``build_py``: it leaves
itself out of the package (the repository's top level is the package ``agentworld``), it records
which commit a non-editable install (``pip install .``, a wheel) was built from, for the run manifest
(core/runs/provenance.py; without git, an sdist or a tarball, the file records no commit), and it empties the
package's folder in ``build/`` first, so that a file deleted from the source does not ship from a stale copy.
"""

import json
import shutil
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
    def find_package_modules(self, package, package_dir):
        # the package `agentworld` is the repository's top level: its setup.py is this script, not a module
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "agentworld" and m[1] == "setup")]

    def run(self) -> None:
        # build_py copies the sources into build_lib but never removes what it copied before: after a file is
        # deleted from the source, a repeated `pip install .` in a checkout would still ship it from build/.
        # So the package's folder there starts empty (never the source tree itself).
        stale = Path(self.build_lib).resolve() / "agentworld"
        here = Path(__file__).resolve().parent
        if stale.is_dir() and stale != here and stale not in here.parents:
            shutil.rmtree(stale)
        super().run()
        commit = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
        info = {"commit": commit, "dirty": bool(dirty) if commit else None, "recorded": "build"}
        target = Path(self.build_lib) / "agentworld" / SOURCE_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(info) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithSource})
