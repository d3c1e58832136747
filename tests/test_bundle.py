"""`agentworld bundle` / `verify-bundle`: a run packed in one folder is re-scored from another with the run
folder and its task file gone; a tampered bundle is refused, naming what does not match."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.tasks.task import find_task

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path
MARKET = str(Path(__file__).parent / "data" / "market_day.yaml")  # retired task_03_market, a fixture

_load_commands()


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """An oracle run of a task from the user's own file and a shipped one, judged by the grounded CCE, bundled in
    one folder and moved to another; the run folder and the task file are deleted."""
    made = tmp_path_factory.mktemp("submitter")
    own = made / "my_staff_task.yaml"
    shutil.copy(find_task(STAFF).path, own)
    r = invoke("run", "--task", str(own), "--task", MARKET, "--framework", "oracle", "--cce", "grounded",
               "--out", str(made / "run"), "--no-progress")
    assert r.exit_code == 0, r.output
    r = invoke("bundle", str(made / "run"), "--out", str(made / "sub.tar.gz"))
    assert r.exit_code == 0, r.output
    assert "2 episodes, 2 task files" in r.output
    elsewhere = tmp_path_factory.mktemp("reviewer") / "sub.tar.gz"
    shutil.move(made / "sub.tar.gz", elsewhere)
    shutil.rmtree(made)
    return elsewhere


def test_a_bundle_is_rescored_elsewhere_with_the_report_the_submitter_saw(bundle, tmp_path):
    r = invoke("verify-bundle", str(bundle), "--keep", str(tmp_path / "kept"))
    assert r.exit_code == 0, r.output
    assert "verified: 2 episodes replayed exactly as recorded" in r.output
    assert "oracle · vanilla" in r.output and "SR per task" in r.output  # report.py's tables
    assert (tmp_path / "kept" / "replayed" / "results.jsonl").is_file()
    index = json.loads((tmp_path / "kept" / "bundle" / "bundle.json").read_text())
    assert index["report"]["overall"][0]["sr"]["mean"] == 1.0 and index["report"]["has_cce"]


def _rewrite(src: Path, dst: Path, edit, *, checksums: bool) -> Path:
    """A copy of the bundle with ``edit(files)`` applied; with ``checksums`` bundle.json is updated to match
    (a tamperer who knows the format)."""
    with tarfile.open(src) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar}
    before = dict(files)
    edit(files)
    if checksums:
        index = json.loads(files["bundle.json"])
        for name, body in files.items():
            if name != "bundle.json" and before.get(name) != body:
                index["files"][name] = hashlib.sha256(body).hexdigest()
        files["bundle.json"] = json.dumps(index).encode()
    with tarfile.open(dst, "w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return dst


def _name(files, suffix: str) -> str:
    return sorted(n for n in files if n.endswith(suffix))[0]


def _edit_turn(files):
    name = _name(files, "trajectory.jsonl")
    lines = files[name].decode().splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith('{"type":"turn"'))
    d = json.loads(lines[i])
    d["result"] += " (and a bonus)"
    lines[i] = json.dumps(d, separators=(",", ":"))
    files[name] = ("\n".join(lines) + "\n").encode()


def _edit_results_line(files):
    rows = [json.loads(x) for x in files["run/results.jsonl"].decode().splitlines()]
    rows[1]["psr"] = 0.25
    files["run/results.jsonl"] = ("\n".join(json.dumps(x) for x in rows) + "\n").encode()


def _edit_report(files):
    index = json.loads(files["bundle.json"])
    index["report"]["overall"][0]["rounds"]["mean"] += 1
    files["bundle.json"] = json.dumps(index).encode()


def _edit_cce(files):
    name = _name(files, "cce/grounded-rules.json")
    data = json.loads(files[name])
    data["cce"] = 0.97
    files[name] = json.dumps(data).encode()


def _edit_task(files):
    name = _name(files, ".yaml")
    files[name] = files[name].replace(b"rounds:", b"rounds: 30 #", 1)


@pytest.mark.parametrize("edit, checksums, said", [
    (_edit_turn, False, "trajectory.jsonl: sha256"),
    (_edit_turn, True, "): result: recorded"),
    (_edit_results_line, True, "results.jsonl: psr: recorded 0.25, replayed"),
    (_edit_report, True, "report: overall[0].rounds.mean: bundled"),
    (_edit_cce, True, "grounded CCE recorded 0.9700, recomputed"),
    (_edit_task, True, "task file:"),
    (lambda files: files.update({"run/extra.txt": b"hi"}), False, "run/extra.txt is in the archive but not in"),
    (lambda files: files.update({"../escape.txt": b"hi"}), False, "lies outside the bundle's folders"),
    (lambda files: files.pop(_name(files, "final_state.json")), False, "missing from the archive"),
])
def test_a_tampered_bundle_is_refused_naming_what_differs(bundle, tmp_path, edit, checksums, said):
    bad = _rewrite(bundle, tmp_path / "bad.tar.gz", edit, checksums=checksums)
    r = invoke("verify-bundle", str(bad))
    assert r.exit_code == 1, r.output
    assert "refused" in r.output and said in r.output.replace("\n", ""), r.output
    assert "verified:" not in r.output


def test_what_is_not_a_bundle_or_cannot_be_bundled_is_named(tmp_path):
    (tmp_path / "x.tar.gz").write_bytes(b"not an archive")
    r = invoke("verify-bundle", str(tmp_path / "x.tar.gz"))
    assert r.exit_code == 1 and "not a bundle" in r.output
    r = invoke("bundle", str(tmp_path), "--out", str(tmp_path / "b.tar.gz"))
    assert r.exit_code == 1 and "not a run folder" in r.output
