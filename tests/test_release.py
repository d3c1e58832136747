"""The release: one version in one place, `agentworld --version` naming the harness, world and suite versions,
a changelog entry for the version, and a wheel that ships every file of the package."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import agentworld
from agentworld.core.runs.versions import versions
from agentworld.core.world.datapack import load_world_data
from agentworld.tasks import SUITE_VERSION

CHECKOUT = Path(__file__).resolve().parents[1]
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def test_version_command_prints_harness_world_and_suite_versions():
    agentworld_cli = Path(sys.executable).with_name("agentworld")
    out = subprocess.run([str(agentworld_cli), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"agentworld {agentworld.__version__}",
                                       f"world {load_world_data().version}",  # the full loader agrees
                                       f"suite {SUITE_VERSION}"]


def test_the_installed_metadata_carries_the_one_version():
    """pyproject.toml reads the version from agentworld.__version__ (dynamic): the two cannot differ."""
    assert SEMVER.match(agentworld.__version__), agentworld.__version__
    assert metadata.version("agentworld") == agentworld.__version__
    assert versions() == {"harness": agentworld.__version__, "world": load_world_data().version,
                          "suite": SUITE_VERSION}


def test_the_changelog_has_an_entry_for_this_version():
    changelog = CHECKOUT / "CHANGELOG.md"
    if not changelog.is_file():
        pytest.skip("not a checkout (the changelog ships in the sdist, not the wheel)")
    headings = re.findall(r"^## \[?([0-9][^\] ]*)\]?", changelog.read_text(encoding="utf-8"), re.M)
    assert headings and headings[0] == agentworld.__version__, \
        f"CHANGELOG.md's newest entry is {headings[:1]}, the package is {agentworld.__version__}: add its entry"
    assert all(SEMVER.match(h) for h in headings), headings


def _check_wheel_module():
    spec = importlib.util.spec_from_file_location("check_wheel", CHECKOUT / "tools" / "check_wheel.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not (CHECKOUT / ".git").exists() or shutil.which("git") is None,
                    reason="builds the wheel from a git checkout's tracked files")
def test_the_built_wheel_ships_every_package_file(tmp_path):
    """A wheel built offline from the tracked files (as a release is) holds every module, task YAML,
    template and world data file; a new folder missing from pyproject.toml's packages fails here."""
    check_wheel = _check_wheel_module()
    files = check_wheel.source_files(CHECKOUT)
    source = tmp_path / "src"
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, source / name)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "--no-index", "-w", str(tmp_path / "dist"), str(source)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    wheel, = (tmp_path / "dist").glob("agentworld-*.whl")
    assert wheel.name.startswith(f"agentworld-{agentworld.__version__}-")
    assert check_wheel.missing_files(wheel, source) == []
    assert check_wheel.extra_files(wheel, source) == []  # setup.py (the top level's) is not a module of it
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"agentworld/core/world/data/world.yaml", "agentworld/tasks/main/task_205_goldfield_two_forges.yaml",
            "agentworld/core/runs/versions.py"} <= names

    # the check itself: a wheel that lost a data folder (tasks/main left out of the packages) is caught
    broken = tmp_path / "broken.whl"
    with zipfile.ZipFile(wheel) as good, zipfile.ZipFile(broken, "w") as bad:
        for item in good.infolist():
            if not item.filename.startswith("agentworld/tasks/main/"):
                bad.writestr(item, good.read(item))
    missing = check_wheel.missing_files(broken, source)
    assert "agentworld/tasks/main/task_205_goldfield_two_forges.yaml" in missing
    assert all(m.startswith("agentworld/tasks/main/") for m in missing)


@pytest.mark.skipif(shutil.which("git") is None or not (CHECKOUT / ".git").exists(),
                    reason="builds the wheel from a git checkout's tracked files")
def test_a_rebuild_ships_no_file_deleted_from_the_source(tmp_path):
    """A repeated build in one tree (`pip install .` twice in a checkout) reuses its build/ folder: a module
    deleted from the source in between must not ship from the first build's copy, and check_wheel reports
    a wheel that ships a file the source lacks."""
    check_wheel = _check_wheel_module()
    source = tmp_path / "src"
    for name in check_wheel.source_files(CHECKOUT):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, source / name)
    probe = source / "core" / "deleted_later.py"
    probe.write_text("GONE = True\n", encoding="utf-8")

    def build(out: str) -> Path:
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                               "--no-index", "-w", str(tmp_path / out), str(source)],
                              capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        wheel, = (tmp_path / out).glob("agentworld-*.whl")
        return wheel

    first = build("first")
    assert "agentworld/core/deleted_later.py" in zipfile.ZipFile(first).namelist()
    assert (source / "build" / "lib" / "agentworld" / "core" / "deleted_later.py").is_file()  # the stale copy
    probe.unlink()
    second = build("second")
    assert "agentworld/core/deleted_later.py" not in zipfile.ZipFile(second).namelist()
    assert check_wheel.extra_files(second, source) == [] and check_wheel.missing_files(second, source) == []
    # the check itself: the first wheel, checked against the source of today, ships a file it no longer holds
    assert check_wheel.extra_files(first, source) == ["agentworld/core/deleted_later.py"]
    assert check_wheel.main([str(first), "--source", str(source)]) == 1
