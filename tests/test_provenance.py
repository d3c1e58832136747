"""The manifest records the source version however agentworld was installed (core/runs/provenance.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agentworld.core.runs import provenance
from agentworld.core.runs.runner import environment_info

INSTALLED = provenance.PACKAGE_ROOT  # the package as imported (a checkout, or site-packages after `pip install .`)
REPO = Path(__file__).resolve().parents[1]  # the source tree the tests live in


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_a_built_wheel_carries_the_commit_it_was_built_from(tmp_path: Path):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to record")
    from importlib.metadata import version

    if int(version("setuptools").split(".")[0]) < 77:  # pyproject.toml's build-system requirement
        pytest.skip("building agentworld needs setuptools>=77 (pip install -U setuptools)")
    src = tmp_path / "src"
    subprocess.run(["git", "clone", "-q", str(REPO), str(src)], check=True, timeout=120)
    head = _git("rev-parse", "HEAD", cwd=src)
    # what `pip install .` does: build a wheel from the source folder (offline, no isolation)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", str(src), "-w", str(tmp_path / "dist")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "dist").glob("agentworld-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        info = json.loads(zf.read("agentworld/_source.json"))
    assert info == {"commit": head, "dirty": False, "recorded": "build"}


def test_an_installed_package_reads_its_build_record(tmp_path: Path, monkeypatch):
    (tmp_path / provenance.SOURCE_FILE).write_text(json.dumps({"commit": "abc123", "dirty": False}))
    monkeypatch.setattr(provenance, "direct_url", lambda: {"url": "file:///src/agentworld", "dir_info": {}})
    assert provenance.source_version(tmp_path) == {"commit": "abc123", "dirty": False, "from": "build",
                                                   "url": "file:///src/agentworld"}


def test_a_vcs_install_and_an_unknown_source(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(provenance, "direct_url", lambda: {"url": "https://example.org/agentworld.git",
                                                            "vcs_info": {"vcs": "git", "commit_id": "f00d"}})
    out = provenance.source_version(tmp_path)
    assert out["commit"] == "f00d" and out["from"] == "pip vcs install"
    monkeypatch.setattr(provenance, "direct_url", lambda: None)
    assert provenance.source_version(tmp_path) == {"commit": None, "dirty": None, "from": "unknown"}


def test_the_manifest_environment_names_the_source():
    env = environment_info()
    assert set(env["source"]) >= {"commit", "dirty", "from"}
    if (INSTALLED / ".git").exists() and shutil.which("git"):  # running from a checkout (editable install)
        assert env["source"]["from"] == "git checkout"
        assert env["git"]["commit"] == _git("rev-parse", "HEAD", cwd=INSTALLED)
    elif (INSTALLED / provenance.SOURCE_FILE).is_file():  # a non-editable install: the build's record
        assert env["source"]["from"] == "build" and env["git"]["commit"] == env["source"]["commit"]


def test_manifest_versions_read_from_metadata_headers_equal_importlib_metadata():
    """environment_info reads each version from the top of the metadata file: the same as importlib's."""
    from importlib import metadata

    from agentworld.core.runs.runner import KEY_PACKAGES, environment_info, installed_version

    got = environment_info()["packages"]
    assert got and "pydantic" in got
    for name, version in got.items():
        assert version == metadata.version(name)
    for dist in list(metadata.distributions())[:50]:
        assert installed_version(dist) == dist.version
    assert set(got) <= set(KEY_PACKAGES)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="elsewhere platform_name is platform.platform()")
def test_platform_name_is_platform_platform_without_its_subprocess(monkeypatch: pytest.MonkeyPatch):
    """The manifest's platform string equals platform.platform()'s (here, where Linux leaves the processor
    blank), and is made without spawning ``uname -p``."""
    import platform
    import subprocess

    from agentworld.core.runs.runner import platform_name

    expected = platform.platform()
    if platform.uname().processor not in ("", platform.machine()):
        pytest.skip("this Linux reports a processor, which platform_name leaves out")

    def no_spawn(*args, **kwargs):
        raise AssertionError(f"platform_name spawned {args}")

    monkeypatch.setattr(subprocess, "Popen", no_spawn)
    monkeypatch.setattr(subprocess, "check_output", no_spawn)
    assert platform_name() == expected


def test_installed_version_reads_the_version_header_not_the_body(tmp_path):
    """The version is the ``Version:`` header; a ``Version:`` line in the description below the first empty
    line is not read, and a file without the header falls back to importlib's own answer."""
    from importlib import metadata

    from agentworld.core.runs.runner import installed_version

    info = tmp_path / "demo_pkg-1.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.5\n\nVersion: 9\n")
    assert installed_version(metadata.PathDistribution(info)) == "1.5" == metadata.PathDistribution(info).version
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\n\nVersion: 9\n")
    assert installed_version(metadata.PathDistribution(info)) is None is metadata.PathDistribution(info).version
