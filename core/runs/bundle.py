"""One archive of a run that anyone can re-score offline: ``agentworld bundle RUN_DIR --out FILE`` and
``agentworld verify-bundle FILE`` (docs/runs.md, "Bundles").

A bundle is a gzipped tar holding:

- ``run/manifest.json`` and ``run/results.jsonl``: the run as the submitter's harness recorded it;
- ``run/episodes/<id>/``: every recorded episode's ``trajectory.jsonl``, ``result.json``, ``final_state.json``,
  ``task.json`` and stored CCE judgings (``cce.json``, ``cce/``);
- ``tasks/<sha256>.yaml``: the task files the episodes ran, named by their digest (each episode's record
  names the digest of the file it played);
- ``bundle.json``: the format, the harness that made it, which task file each episode played, the sha256 of
  every other file in the archive, and the report the submitter saw (``agentworld report``'s data).

``verify-bundle`` refuses an archive with a file that is missing, unlisted, not a plain file, outside the
archive's folders or whose checksum differs; then replays every episode from the bundled task file and its
seed (``core/play/replay.py``: every turn, observation digest, tick, result and final state compared),
recomputes each result and the grounded CCE (engine effects and a fixed rule for chat: no LLM), rebuilds the
report from the replayed run and compares it with the report in ``bundle.json``. It prints that report when
everything agrees, else exactly what does not. The checksums only show that the archive is whole: whoever
edits a record can recompute them; the replay is what shows the record is what the engine gives.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from ..play.replay import ReplayError, check_episode, first_difference, load_record, resolve_task

FORMAT = 1
INDEX = "bundle.json"
RUN = "run"
TASKS = "tasks"
EPISODE_FILES = ("trajectory.jsonl", "result.json", "final_state.json", "task.json", "cce.json")
MAX_BYTES = 4 << 30  # what verify-bundle unpacks at most (a bundle is records and task files: text)
GROUNDED_LABEL = "grounded-rules"  # the grounded judge without an LLM: the CCE a bundle can recompute
# what a replay cannot recompute (the machine's time, the submitter's prices): taken from the record
UNREPLAYABLE_RESULT_FIELDS = ("wall_s", "harness_s", "cost_usd")
# the report's facts about the run folder itself (its path, stamps), not about the episodes
RUN_FACTS_COMPARED = ("episodes", "errored", "failed", "damaged", "planned", "status")


class BundleError(ValueError):
    """A run that cannot be bundled, or a file that is not a bundle; the message names the file and the fix."""


# ---------------------------------------------------------------------------------------------------
# Making a bundle
# ---------------------------------------------------------------------------------------------------
@dataclass
class BundleSummary:
    path: Path
    episodes: int
    tasks: int
    bytes: int
    sha256: str  # of the archive: publish it beside the submission
    notes: list[str] = field(default_factory=list)


def make_bundle(run_dir: str | Path, out: str | Path) -> BundleSummary:
    """Pack ``run_dir`` into ``out`` (a .tar.gz). Refuses a run with a damaged episode or an episode whose task
    file is not the one it played (the message names it)."""
    from .report import build_report, load_runs
    from .runner import MANIFEST, RESULTS

    run = Path(run_dir)
    if not (run / MANIFEST).is_file() or not (run / RESULTS).is_file():
        raise BundleError(f"{run}: not a run folder (it needs {MANIFEST} and {RESULTS}); pass runs/<run-id>")
    try:
        [data] = load_runs([run])
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    if data.problems:
        raise BundleError(f"{run}: damaged episodes cannot be bundled: {data.problems[0]}")
    results = data.results + data.errored_results
    files: dict[str, bytes] = {f"{RUN}/{MANIFEST}": (run / MANIFEST).read_bytes(),
                               f"{RUN}/{RESULTS}": (run / RESULTS).read_bytes()}
    episode_tasks: dict[str, str] = {}
    notes: list[str] = []
    for r in results:
        folder = run / "episodes" / r.episode_id
        if not (folder / "trajectory.jsonl").is_file():
            continue  # an errored episode with no trajectory: results.jsonl carries its line
        for name in EPISODE_FILES:
            if (folder / name).is_file():
                files[f"{RUN}/episodes/{r.episode_id}/{name}"] = (folder / name).read_bytes()
        if (folder / "cce").is_dir():
            for f in sorted((folder / "cce").glob("*.json")):
                files[f"{RUN}/episodes/{r.episode_id}/cce/{f.name}"] = f.read_bytes()
        episode_tasks[r.episode_id] = _bundle_task(folder, files, notes)
    report = build_report([data])
    index = {"format": FORMAT, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "harness_version": _harness_version(), "run_id": data.manifest.get("run_id", run.name),
             "episode_tasks": episode_tasks, "report": finite(report),
             "files": {name: hashlib.sha256(body).hexdigest() for name, body in sorted(files.items())}}
    files[INDEX] = json.dumps(index, indent=1, sort_keys=True).encode("utf-8")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in [INDEX, *sorted(n for n in files if n != INDEX)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[name]))
    out.write_bytes(buf.getvalue())
    return BundleSummary(path=out, episodes=len(episode_tasks), tasks=len(set(episode_tasks.values())),
                         bytes=len(buf.getvalue()), sha256=hashlib.sha256(buf.getvalue()).hexdigest(), notes=notes)


def _bundle_task(folder: Path, files: dict[str, bytes], notes: list[str]) -> str:
    """Add the task file the episode played (by its digest) and return its name in the bundle."""
    record = load_record(folder)
    try:
        resolved = resolve_task(record)
    except ReplayError as exc:
        raise BundleError(f"{folder}: {exc}") from None
    if resolved.mismatch:
        raise BundleError(f"{folder.name}: {resolved.mismatch}; restore the task file the episode played "
                          "(or bundle a run made with this one)")
    if resolved.sha256 is None:  # read from the episode's task.json: no file to bundle
        raise BundleError(f"{folder.name}: the task file it played ({record.start.task_file or record.task_id}) "
                          "is not here; a bundle carries the task files: restore it and bundle again")
    if record.start.task_sha256 is None:
        notes.append(f"{folder.name}: recorded before task hashes; bundled the task file found for it "
                     f"({Path(resolved.source).name}), which cannot be shown to be the one played")
    name = f"{TASKS}/{resolved.sha256}.yaml"
    files[name] = Path(resolved.source).read_bytes()
    return name


def _harness_version() -> str:
    from ..play.fingerprint import harness_version

    return harness_version()


def finite(value: Any) -> Any:
    """JSON data with NaN (an interval of a single task) as null: strict JSON has no NaN, and NaN != NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------------
# Verifying a bundle
# ---------------------------------------------------------------------------------------------------
@dataclass
class Verdict:
    """What ``verify-bundle`` found: ``ok`` only when the archive is whole, every episode replays as recorded,
    and the recomputed results, grounded CCE and report equal the bundled ones."""

    bundle: str
    ok: bool = False
    refused: str | None = None  # the archive itself was refused (checksums, layout): nothing was replayed
    episodes: int = 0
    replayed_ok: int = 0
    findings: list[str] = field(default_factory=list)  # exactly what does not match, each naming its episode
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None  # the report the submitter saw (bundle.json)
    recomputed: dict[str, Any] | None = None  # the report of the replayed run
    grounded_cce: dict[str, float] = field(default_factory=dict)  # episode id -> recomputed grounded CCE
    harness_version: str | None = None


async def verify_bundle(path: str | Path, *, keep: str | Path | None = None) -> Verdict:
    """Unpack, check and re-score a bundle (see the module docstring). ``keep`` keeps the unpacked and the
    replayed run there; by default both live in a temporary folder, removed at the end."""
    verdict = Verdict(bundle=str(path))
    if keep is not None:
        root = Path(keep)
        root.mkdir(parents=True, exist_ok=True)
        return await _verify_in(Path(path), root, verdict)
    with tempfile.TemporaryDirectory(prefix="agentworld-bundle-") as tmp:
        return await _verify_in(Path(path), Path(tmp), verdict)


async def _verify_in(path: Path, root: Path, verdict: Verdict) -> Verdict:
    unpacked = root / "bundle"
    try:
        index = _unpack(path, unpacked)
    except BundleError as exc:
        verdict.refused = str(exc)
        return verdict
    verdict.harness_version = index.get("harness_version")
    verdict.report = index.get("report")
    run = unpacked / RUN
    replayed = root / "replayed"
    await _replay_all(index, run, replayed, verdict)
    _rescore(run, replayed, verdict)
    verdict.ok = not verdict.findings and verdict.replayed_ok == verdict.episodes
    return verdict


def _unpack(path: Path, dest: Path) -> dict[str, Any]:
    """Extract the archive's plain files under ``dest`` and check them against ``bundle.json``'s list."""
    if not path.is_file():
        raise BundleError(f"{path}: no such file")
    try:
        tar = tarfile.open(path, mode="r:gz")
    except (tarfile.TarError, OSError) as exc:
        raise BundleError(f"{path}: not a bundle (a .tar.gz made by `agentworld bundle`): {exc}") from None
    bodies: dict[str, bytes] = {}
    total = 0
    with tar:
        try:
            for member in tar:
                name = member.name
                parts = PurePosixPath(name).parts
                if not member.isfile():
                    raise BundleError(f"{path}: {name} is not a plain file (links and devices are refused)")
                if name.startswith("/") or ".." in parts or not parts or parts[0] not in (RUN, TASKS, INDEX):
                    raise BundleError(f"{path}: {name} lies outside the bundle's folders (run/, tasks/)")
                if name in bodies:
                    raise BundleError(f"{path}: {name} appears twice")
                total += member.size
                if total > MAX_BYTES:
                    raise BundleError(f"{path}: unpacks to more than {MAX_BYTES >> 30} GiB; not a bundle of records")
                f = tar.extractfile(member)
                bodies[name] = f.read() if f is not None else b""
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise BundleError(f"{path}: the archive is damaged ({exc})") from None
    if INDEX not in bodies:
        raise BundleError(f"{path}: no {INDEX} (not a bundle made by `agentworld bundle`)")
    raw_index = bodies.pop(INDEX)
    try:
        index = json.loads(raw_index)
    except ValueError as exc:
        raise BundleError(f"{path}: {INDEX} is not JSON ({exc})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("files"), dict):
        raise BundleError(f"{path}: {INDEX} is not a bundle index of format {FORMAT}")
    listed: dict[str, str] = index["files"]
    for name in sorted(set(bodies) | set(listed)):
        if name not in listed:
            raise BundleError(f"{path}: {name} is in the archive but not in {INDEX}'s checksums (an added file)")
        if name not in bodies:
            raise BundleError(f"{path}: {name} is listed in {INDEX} but missing from the archive")
        got = hashlib.sha256(bodies[name]).hexdigest()
        if got != listed[name]:
            raise BundleError(f"{path}: {name}: sha256 {got}, but {INDEX} lists {listed[name]} (the file was changed)")
    for name, body in [(INDEX, raw_index), *bodies.items()]:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    return index


async def _replay_all(index: dict[str, Any], run: Path, replayed: Path, verdict: Verdict) -> None:
    from .runner import RESULTS, needs_retry, read_results_file

    problems: list[str] = []
    recorded = read_results_file(run / RESULTS, problems)
    verdict.findings += [f"results.jsonl: {p}" for p in problems]
    tasks: dict[str, str] = index.get("episode_tasks") or {}
    lines: list[str] = []
    for r in recorded:
        folder = run / "episodes" / r.episode_id
        if needs_retry(r):  # an infrastructure error: left out of reports alike, nothing to replay
            lines.append(r.model_dump_json())
            continue
        verdict.episodes += 1
        task_file = tasks.get(r.episode_id)
        if task_file is None or not (run.parent / task_file).is_file():
            verdict.findings.append(f"{r.episode_id}: the bundle names no task file for it")
            continue
        try:
            report = await check_episode(folder, task_path=run.parent / task_file,
                                         out_dir=replayed / "episodes" / r.episode_id)
        except ReplayError as exc:
            verdict.findings.append(f"{r.episode_id}: cannot be replayed: {exc}")
            continue
        verdict.notes += [f"{r.episode_id}: {n}" for n in report.notes if "task.json" not in n]
        if not report.ok:
            verdict.findings += [f"{r.episode_id}: {m.text()}" for m in report.mismatches]
            continue
        assert report.result is not None
        fresh = report.result.model_copy(update={k: getattr(r, k) for k in UNREPLAYABLE_RESULT_FIELDS})
        diff = first_difference(finite(r.model_dump(mode="json")), finite(fresh.model_dump(mode="json")))
        if diff is not None:
            verdict.findings.append(f"{r.episode_id}: results.jsonl: {diff[0]}: recorded {diff[1]!r}, "
                                    f"replayed {diff[2]!r}")
            continue
        verdict.replayed_ok += 1
        lines.append(fresh.model_dump_json())
    replayed.mkdir(parents=True, exist_ok=True)
    shutil.copy(run / "manifest.json", replayed / "manifest.json")
    (replayed / RESULTS).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _rescore(run: Path, replayed: Path, verdict: Verdict) -> None:
    """The grounded CCE of every replayed episode (compared with a stored grounded judging), the other stored
    judgings carried over (an LLM's verdicts cannot be recomputed offline), then the report of the replayed
    run against the report in the bundle."""
    from ..cce.grounded import GroundedJudge
    from ..cce.score import read_stored, score_episode, write_report
    from .report import ReportError, build_report, load_runs

    judge = GroundedJudge()
    episodes = replayed / "episodes"
    for folder in sorted(episodes.iterdir()) if episodes.is_dir() else []:
        recorded = run / "episodes" / folder.name
        fresh = score_episode(folder, judge)
        verdict.grounded_cce[folder.name] = fresh.cce if fresh.cce is not None else 0.0
        stored = read_stored(recorded / "cce" / f"{GROUNDED_LABEL}.json")
        if stored is not None and stored.complete and stored.cce is not None and fresh.cce is not None \
                and not math.isclose(stored.cce, fresh.cce, abs_tol=1e-9):
            verdict.findings.append(f"{folder.name}: grounded CCE recorded {stored.cce:.4f}, recomputed {fresh.cce:.4f}")
        for f in sorted((recorded / "cce").glob("*.json")) if (recorded / "cce").is_dir() else []:
            if f.stem != GROUNDED_LABEL:
                (folder / "cce").mkdir(exist_ok=True)
                shutil.copy(f, folder / "cce" / f.name)
        main = read_stored(recorded / "cce.json")
        if main is not None and main.label != GROUNDED_LABEL:
            shutil.copy(recorded / "cce.json", folder / "cce.json")  # the submitter's choice, not recomputable
            write_report(folder, fresh, GROUNDED_LABEL)
            shutil.copy(recorded / "cce.json", folder / "cce.json")
            verdict.notes.append(f"{folder.name}: its CCE comes from judge {main.label!r}, which cannot be "
                                 "recomputed offline; the grounded CCE is recomputed beside it")
        elif main is not None:
            write_report(folder, fresh, GROUNDED_LABEL)
        else:  # not judged by the submitter: the recomputed grounded CCE stays out of the compared report
            write_report(folder, fresh, GROUNDED_LABEL)
            (folder / "cce.json").unlink(missing_ok=True)
    try:
        [data] = load_runs([replayed])
        verdict.recomputed = finite(build_report([data]))
    except (ReportError, ValueError) as exc:
        verdict.findings.append(f"the replayed run cannot be reported: {exc}")
        return
    if verdict.report is None:
        verdict.findings.append(f"{INDEX} holds no report to compare with")
        return
    if verdict.findings:  # what does not replay or re-score is named already; the tables differ because of it
        verdict.notes.append("the report was not compared: it cannot agree while the findings below stand")
        return
    for diff in report_differences(verdict.report, verdict.recomputed):
        verdict.findings.append(f"report: {diff}")


def report_differences(bundled: dict[str, Any], recomputed: dict[str, Any], limit: int = 20) -> list[str]:
    """Where two reports' data differ (the run's own path, label and replay stamps aside), as texts."""
    out: list[str] = []

    def strip(rep: dict[str, Any]) -> dict[str, Any]:
        d = {k: v for k, v in rep.items() if k != "runs"}
        d["runs"] = [{k: r.get(k) for k in RUN_FACTS_COMPARED} for r in rep.get("runs", [])]
        return finite(d)

    a, b = strip(bundled), strip(recomputed)
    while len(out) < limit:
        diff = first_difference(a, b)
        if diff is None:
            break
        path, va, vb = diff
        out.append(f"{path}: bundled {json.dumps(va, default=str)[:120]}, recomputed {json.dumps(vb, default=str)[:120]}")
        try:
            _settle(a, b, path)
        except (KeyError, IndexError, TypeError, ValueError):  # a path this walk cannot follow: stop at what we have
            break
    return out


def _settle(a: Any, b: Any, path: str) -> None:
    """Make ``a`` equal ``b`` at ``path`` so the next search finds the next difference."""
    import re

    keys: list[Any] = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path.replace(" (length)", "")):
        keys.append(int(part[1:-1]) if part.startswith("[") else part)
    if " (length)" in path:
        target_a, target_b = a, b
        for k in keys[:-1]:
            target_a, target_b = target_a[k], target_b[k]
        target_a[keys[-1]] = target_b[keys[-1]]
        return
    target_a, target_b = a, b
    for k in keys[:-1]:
        target_a, target_b = target_a[k], target_b[k]
    if isinstance(target_a, dict):
        if keys[-1] in target_b:
            target_a[keys[-1]] = target_b[keys[-1]]
        else:
            target_a.pop(keys[-1], None)
    else:
        target_a[keys[-1]] = target_b[keys[-1]]
