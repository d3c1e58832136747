"""Runs of many episodes: planning, concurrent execution, results, resume and budgets.

Layout of a run folder (``runs/<run-id>/``)::

    manifest.json        versions, git commit, the run spec (no secrets), the plan, sessions, stop reason
    results.jsonl        one EpisodeResult per line, appended as episodes finish
    run.log              the warnings of every session (model retries, endpoint fallbacks, judge failures)
    episodes/<id>/       trajectory.jsonl, result.json, final_state.json (written by the Episode), cce.json

An episode counts as done only when its line is in ``results.jsonl`` (the runner appends it after the
episode returned; the line is flushed and fsynced). ``--resume`` keeps those, reruns every other planned
episode from the start (its partial folder is deleted first), and retries infrastructure-errored ones.
Episode ids are deterministic (run_spec.episode_id), so nothing is ever run or recorded twice.

Only one process works on a run folder at a time (``.lock``, see lock.py). Resume checks every kept
episode's files (integrity.py) and reruns a damaged one, naming the file. An episode that errors the
same way ``max_attempts`` times (default 3) is marked failed for good (``manifest.json`` ``given_up``)
and is no longer retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import json
import logging
import os
import platform
import re
import shutil
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Protocol

from ..play.records import EpisodeResult, TurnEvent
from .integrity import episode_problem
from .lock import RunLock, RunLockedError
from .run_spec import RunSpec, RunSpecError, episode_id, parse_size_range
from .jobs import EpisodeJob, ProgressFn, RateLimiter, error_result, remember_task, run_episode_job

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
EPISODES = "episodes"

KEY_PACKAGES = ("pydantic", "pluggy", "rich", "click", "jinja2", "networkx", "mcp", "openai", "autogen-agentchat",
                "camel-ai", "langgraph", "dask", "distributed")


def utcnow() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def parse_model_spec(model: str, options: dict[str, Any]) -> Any:
    """``model``'s ModelSpec with the job options that are ModelSpec fields (base_url, api_key_env, ...)."""
    from ..play.models import ModelSpec

    return ModelSpec.parse(model, **{k: v for k, v in options.items()
                                     if k in ModelSpec.model_fields and k not in ("provider", "model")})


def model_settings(model: str, options: dict[str, Any]) -> dict[str, Any] | None:
    """A model's full settings for the manifest (ModelSpec.redacted(): key variable name, never the key)."""
    if not model:
        return None
    try:
        return parse_model_spec(model, options).redacted()
    except Exception as e:  # noqa: BLE001 - recorded, the framework reports the real error when it runs
        return {"unparsed": model, "error": str(e)[:200]}


def select_tasks(spec: RunSpec) -> list[Any]:
    """The spec's tasks: ids/paths and suite, deduplicated in order, filtered by category and team size."""
    from ..tasks import task as task_mod

    chosen: list[Any] = []
    check = spec.world == "embedded"  # a server world's items and map are not ours: the server checks them
    for ref in spec.tasks:
        chosen.append(task_mod.find_task(ref, validate=check))  # an id of a shipped task, or a task YAML path
    if spec.suite:
        chosen.extend(task_mod.load_suite(spec.suite, validate=check))
    seen: set[str] = set()
    unique = [t for t in chosen if not (t.id in seen or seen.add(t.id))]
    for t in unique:
        remember_task(t)
    if spec.categories:
        cats = {c.lower() for c in spec.categories}
        unique = [t for t in unique if (t.category or "").lower() in cats]
    if spec.agents:
        lo, hi = parse_size_range(spec.agents)
        unique = [t for t in unique if len(t.agents) >= lo and (hi is None or len(t.agents) <= hi)]
    if not unique:
        raise RunSpecError(f"the selection matches no task (tasks={spec.tasks}, suite={spec.suite}, "
                           f"categories={spec.categories}, agents={spec.agents}); `agentworld tasks list` shows them")
    return unique


class NotApplicableRun(RunSpecError):
    """Every cell the selection plans is a variant that does not apply (a usage error: nothing to run)."""


def plan_jobs(spec: RunSpec, tasks: Iterable[Any]) -> list[EpisodeJob]:
    """The grid, in a stable order: framework, model, variant, task, seed (cells that are n/a left out)."""
    return plan_grid(spec, tasks)[0]


def not_applicable_cells(spec: RunSpec, tasks: Iterable[Any]) -> list[dict[str, Any]]:
    """(variant, task, seed) cells of the grid whose variant does not apply, each with the reason."""
    from ..tasks.variants import not_applicable

    out = []
    for variant in spec.variants:
        for t in tasks:
            for seed in spec.seed_list():
                reason = not_applicable(t, variant, seed)
                if reason:
                    out.append({"task_id": t.id, "category": getattr(t, "category", None),
                                "n_agents": len(t.agents), "variant": variant, "seed": seed, "reason": reason})
    return out


def plan_grid(spec: RunSpec, tasks: Iterable[Any]) -> tuple[list[EpisodeJob], list[dict[str, Any]]]:
    """(episodes to run, n/a cells): the grid without the cells whose variant does not apply."""
    tasks = list(tasks)
    _check_variants(spec.variants)
    na = not_applicable_cells(spec, tasks)
    skip = {(c["variant"], c["task_id"], c["seed"]) for c in na}
    _check_variants(spec.variants)
    options = {"tools": spec.tools, **spec.options}
    if spec.base_url:
        options["base_url"] = spec.base_url
    if spec.api_key_env:
        options["api_key_env"] = spec.api_key_env
    jobs: list[EpisodeJob] = []
    for framework in spec.frameworks:
        for model in spec.models_for(framework):
            for variant in spec.variants:
                for t in tasks:
                    for seed in spec.seed_list():
                        if (variant, t.id, seed) in skip:
                            continue
                        path = getattr(t, "path", None)
                        jobs.append(EpisodeJob(
                            episode_id=episode_id(t.id, framework, model, variant, seed), task_id=t.id,
                            task_path=str(path) if path else None, category=getattr(t, "category", None),
                            n_agents=len(t.agents), framework=framework, model=model, variant=variant,
                            seed=seed, team_factory=spec.team_factory, options=dict(options),
                            obs_format=spec.obs_format, turn_timeout=spec.turn_timeout, world=spec.world,
                            world_options=dict(spec.world_options)))
    return jobs, na


def not_applicable_message(cells: list[dict[str, Any]]) -> str:
    """One line per (variant, task): why it is n/a (seeds that share the reason are one line)."""
    seen = dict.fromkeys(f"--variant {c['variant']} does not apply to {c['task_id']}: {c['reason']}" for c in cells)
    head = "nothing to run: " if len(seen) == 1 else f"nothing to run: no planned episode applies ({len(seen)} cells)\n  "
    return head + "\n  ".join(seen) + "\n(choose another variant or task; reports show such cells as n/a)"


def _check_variants(names: list[str]) -> None:
    from ..tasks.variants import get_variant

    for name in names:
        try:
            get_variant(name)
        except ValueError as e:
            raise RunSpecError(f"--variant / variants: {e}") from None


def make_cce_scorer(spec: RunSpec) -> Callable[[Path], None] | None:
    """A function writing cce.json into an episode folder with the spec's judge (None without a judge)."""
    if not spec.cce_judge:
        return None
    from .. import plugins
    from ..cce.score import score_episode, write_report
    from ..cce.judges import JudgeCache

    try:
        judge = plugins.get("judge", spec.cce_judge)(**spec.cce_options)
    except KeyError as e:
        raise RunSpecError(f"cce_judge: {e.args[0] if e.args else e}") from None
    except (TypeError, ValueError) as e:
        raise RunSpecError(f"cce_judge {spec.cce_judge!r} / cce_options: {e}") from None

    def score(folder: Path) -> None:
        cache = JudgeCache(folder.parent.parent / ".cce_cache")
        write_report(folder, score_episode(folder, judge, cache=cache))

    return score


def needs_retry(result: EpisodeResult) -> bool:
    # a budget-stopped episode is kept (written, marked budget_stop) but partial: a resumed run plays it again
    return result.end_reason in ("error", "budget_stop") or result.infra_errors > 0


def given_up(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Episodes marked failed for good: episode id -> {"error", "attempts"}."""
    value = manifest.get("given_up") or {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------- the run folder
class RunDir:
    """Reads and writes one run folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    def episode_dir(self, eid: str) -> Path:
        return self.path / EPISODES / eid

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict[str, Any]:
        try:
            manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RunSpecError(f"{self.path}: no {MANIFEST}; is this a run folder (runs/<run-id>)?") from None
        except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
            raise RunSpecError(damaged_manifest(self.manifest_path, exc)) from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("episodes", []), list):
            raise RunSpecError(damaged_manifest(self.manifest_path, ValueError("not a run manifest")))
        return manifest

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        tmp = self.manifest_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        os.replace(tmp, self.manifest_path)

    def read_results(self, problems: list[str] | None = None) -> list[EpisodeResult]:
        """Every complete line of results.jsonl (a torn last line from a killed run is skipped; any other bad
        line is described in ``problems``)."""
        return read_results_file(self.results_path, problems)

    def rewrite_results(self, results: list[EpisodeResult]) -> None:
        """results.jsonl holds exactly ``results``, in order, durably. A file that already holds exactly these
        bytes was written durably (appends and rewrites are fsynced) and is left alone: a fresh run and a
        run whose appends came in planned order skip the rewrite and its fsync (~10 ms each)."""
        data = "".join(r.model_dump_json() + "\n" for r in results).encode("utf-8")
        try:
            if self.results_path.read_bytes() == data:
                return
        except FileNotFoundError:
            if not data:
                self.results_path.touch()  # an empty file: nothing to make durable
                return
        tmp = self.results_path.with_suffix(".jsonl.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.results_path)

    def append_result(self, result: EpisodeResult) -> None:
        with open(self.results_path, "a", encoding="utf-8") as f:
            f.write(result.model_dump_json() + "\n")
            f.flush()
            os.fsync(f.fileno())


def read_results_file(path: Path, problems: list[str] | None = None) -> list[EpisodeResult]:
    """The results recorded in ``path``. A torn last line (a killed process) is skipped silently; a bad line
    anywhere else is a damaged file: skipped too (its episode counts as not done), and described in
    ``problems`` when given."""
    out: list[EpisodeResult] = []
    if not path.is_file():
        return out
    lines = path.read_bytes().decode("utf-8", "replace").split("\n")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(EpisodeResult.model_validate_json(line))
        except ValueError:
            if i != last and problems is not None:
                problems.append(f"{path}: line {i + 1} is not a whole result (damaged); its episode counts as "
                                f"not done")
    return out


def damaged_manifest(path: Path, exc: BaseException) -> str:
    detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
    return (f"{path} is damaged ({detail}): the run's plan and spec cannot be read. Restore it from a backup, "
            f"or start a new run with the same spec (--out NEW_FOLDER)")


def error_signature(message: str) -> str:
    """What an errored attempt failed with, without the parts that change between attempts (addresses,
    numbers), so that the same failure twice compares equal."""
    return re.sub(r"0x[0-9a-fA-F]+|\d+", "#", message)[:300]


def trailing_same(attempts: list[dict[str, Any]]) -> int:
    """How many of the last attempts failed with the same error as the very last one."""
    if not attempts:
        return 0
    last = error_signature(str(attempts[-1].get("error", "")))
    n = 0
    for a in reversed(attempts):
        if error_signature(str(a.get("error", ""))) != last:
            break
        n += 1
    return n


def environment_info() -> dict[str, Any]:
    """Versions for the manifest: ``versions`` the harness, embedded world and task suite versions
    (runs/versions.py); ``source`` says which commit the code came from however it was installed
    (runs/provenance.py), ``git`` repeats its commit and dirtiness (None when unknown)."""
    from importlib import metadata

    from ... import __version__
    from .provenance import source_version
    from .versions import versions as release_versions

    versions = {}
    for name in KEY_PACKAGES:
        try:
            versions[name] = installed_version(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            pass
    source = source_version()
    git = {"commit": source["commit"], "dirty": source["dirty"]} if source["commit"] else None
    return {"agentworld": __version__, "versions": release_versions(), "python": platform.python_version(),
            "platform": platform_name(), "packages": versions, "git": git, "source": source}


def platform_name() -> str:
    """``platform.platform()``'s string without its cost on Linux: there it spawns ``uname -p`` (10-15 ms of
    every run's start in a process this size) for a processor field Linux leaves blank and the string drops."""
    if not sys.platform.startswith("linux"):
        return platform.platform()
    u = os.uname()
    libc, version = platform.libc_ver()
    parts = (u.sysname, u.release, u.machine, "with", libc + version)
    return "-".join(p.strip().replace(" ", "_") for p in parts if p.strip()).replace("unknown", "")


def installed_version(dist: Any) -> str:
    """A distribution's version from the ``Version:`` line at the top of its metadata file: the same value as
    ``dist.version``, without parsing the whole file as an e-mail message (about 1 ms per package at every
    run's start)."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.partition("\n\n")[0].splitlines():  # not the body's lines (pydantic's: 1,900)
        if line.startswith("Version:"):
            return line[len("Version:"):].strip()
        if not line:  # the end of the headers
            break
    return dist.version


def new_run_id(spec: RunSpec) -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    label = spec.name or "-".join(spec.frameworks[:2])
    return f"{stamp}-{label}"


def unique_run_dir(root: Path, run_id: str) -> Path:
    path = root / run_id
    k = 2
    while path.exists():
        path = root / f"{run_id}-{k}"
        k += 1
    return path


# ---------------------------------------------------------------------- progress
class RunObserver(Protocol):
    def run_started(self, total: int, already_done: int) -> None: ...
    def episode_started(self, job: EpisodeJob) -> None: ...
    def episode_event(self, job: EpisodeJob, event: Any) -> None: ...
    def episode_finished(self, job: EpisodeJob, result: EpisodeResult) -> None: ...
    def run_finished(self, summary: "RunSummary") -> None: ...


class NullObserver:
    def run_started(self, total: int, already_done: int) -> None: ...
    def episode_started(self, job: EpisodeJob) -> None: ...
    def episode_event(self, job: EpisodeJob, event: Any) -> None: ...
    def episode_finished(self, job: EpisodeJob, result: EpisodeResult) -> None: ...
    def run_finished(self, summary: "RunSummary") -> None: ...


@dataclass
class RunSummary:
    """What a session of a run did: episodes planned, done and run, results, tokens, cost, why it stopped."""

    run_dir: Path
    planned: int
    done: int  # results in results.jsonl after this session (all sessions)
    ran: int  # episodes run in this session
    successes: int
    errors: int
    tokens: int
    cost_usd: float
    stop_reason: str | None
    results: list[EpisodeResult]
    failed: int = 0  # episodes marked failed for good (the same error max_attempts times): not retried
    notices: list[str] = field(default_factory=list)  # damaged files found and what was done about them


# ---------------------------------------------------------------------- executors
EpisodeFn = Callable[[EpisodeJob, Path, ProgressFn | None, "RateLimiter | None"], Awaitable[EpisodeResult]]


class LocalExecutor:
    """Runs episodes in this process's event loop (model calls are the bottleneck, so asyncio suffices)."""

    name = "local"
    stops_cooperatively = True  # the episode itself ends when its progress callback answers a stop

    def __init__(self, episode_fn: EpisodeFn = run_episode_job) -> None:
        self.episode_fn = episode_fn

    async def __aenter__(self) -> "LocalExecutor":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def run(self, job: EpisodeJob, out_dir: Path, progress: ProgressFn | None,
                  limiter: RateLimiter | None) -> EpisodeResult:
        return await self.episode_fn(job, out_dir, progress, limiter)


# ---------------------------------------------------------------------- the runner
RUN_LOG = "run.log"


@contextlib.contextmanager
def run_log(run_dir: Path) -> Any:
    """Keep the warnings of this process (``agentworld.*`` loggers: model retries, endpoint fallbacks, judge
    failures) in ``run_dir/run.log`` while the run lasts, appended across sessions."""
    handler = logging.FileHandler(run_dir / RUN_LOG, encoding="utf-8")
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("agentworld")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        handler.close()


class Runner:
    """Plans (or reloads) a run, runs what is not done yet, and keeps manifest and results consistent."""

    def __init__(self, spec: RunSpec, run_dir: str | Path, *, jobs: list[EpisodeJob] | None = None,
                 executor: Any = None, observer: RunObserver | None = None, resume: bool = False,
                 not_applicable: list[dict[str, Any]] | None = None) -> None:
        self.spec = spec
        self.dir = RunDir(run_dir)
        if jobs is None:
            jobs, not_applicable = plan_grid(spec, select_tasks(spec))
        self.jobs = jobs
        self.not_applicable = list(not_applicable or [])  # cells left out: the variant does not apply
        if not self.jobs and self.not_applicable:
            raise NotApplicableRun(not_applicable_message(self.not_applicable))
        self.executor = executor or LocalExecutor()
        self.observer = observer or NullObserver()
        self.resume = resume
        self._stop_reason: str | None = None
        self._live_tokens: dict[str, int] = {}
        self._live_cost: dict[str, float] = {}
        self._tokens_done = 0
        self._cost_done = 0.0
        self._running: dict[str, asyncio.Task] = {}
        self._results: list[EpisodeResult] = []  # this session's and the kept ones, as recorded
        self._ran = 0  # episodes this session ran and recorded
        self._cancelled: list[str] = []  # episodes a budget stop cancelled (resume reruns them)
        self._limiters = {p: RateLimiter(r) for p, r in spec.rate_limits.items() if r > 0}
        self._provider_sems = {p: asyncio.Semaphore(n) for p, n in spec.provider_concurrency.items()}
        self._cce = make_cce_scorer(spec)
        self._manifest: dict[str, Any] = {}
        self.notices: list[str] = []  # damaged files found while preparing (each names the file)
        dup = sorted(i for i, n in Counter(j.episode_id for j in self.jobs).items() if n > 1)
        if dup:
            raise RunSpecError(f"the run plans the same episode twice ({dup[:3]}): remove duplicate seeds/variants")

    # -- manifest -------------------------------------------------------------
    def _initial_manifest(self) -> dict[str, Any]:
        return {
            "run_id": self.dir.path.name,
            "created": utcnow(),
            "environment": environment_info(),
            "spec": self.spec.public_dict(),
            "executor": getattr(self.executor, "name", type(self.executor).__name__),
            "models": {m: model_settings(m, self.jobs[0].options if self.jobs else {})
                       for m in dict.fromkeys(j.model for j in self.jobs) if m},
            "episodes": [{"episode_id": j.episode_id, "task_id": j.task_id, "category": j.category,
                          "n_agents": j.n_agents, "framework": j.framework, "model": j.model,
                          "variant": j.variant, "seed": j.seed} for j in self.jobs],
            "not_applicable": self.not_applicable,
            "sessions": [],
            "status": "running",
            "stop_reason": None,
        }

    def _prepare(self) -> tuple[dict[str, Any], list[EpisodeResult], list[EpisodeJob]]:
        """Create or reload the run folder; return (manifest, kept results, jobs still to run)."""
        self.dir.path.mkdir(parents=True, exist_ok=True)
        if self.resume:
            manifest = self.dir.read_manifest()
            planned = {e["episode_id"] for e in manifest.get("episodes", [])}
            mine = {j.episode_id for j in self.jobs}
            if planned != mine:
                raise RunSpecError(f"{self.dir.path}: the plan differs from the run's manifest "
                                   f"({len(planned ^ mine)} episodes differ); resume with the run's own spec")
        else:
            if self.dir.exists():
                raise RunSpecError(f"{self.dir.path} already holds a run; use --resume {self.dir.path} "
                                   f"to continue it or choose another --out")
            if self.dir.results_path.exists() or (self.dir.path / EPISODES).exists():
                raise RunSpecError(f"{self.dir.path} holds results but no manifest.json (not a run this "
                                   f"version started); choose an empty or new --out folder")
            manifest = self._initial_manifest()
        order = {j.episode_id: i for i, j in enumerate(self.jobs)}
        manifest["given_up"] = self._given_up(manifest)
        kept: dict[str, EpisodeResult] = {}
        for r in self.dir.read_results(self.notices):
            if r.episode_id in order and (not needs_retry(r) or r.episode_id in manifest["given_up"]):
                kept[r.episode_id] = r  # last line wins; duplicates cannot survive the rewrite below
        for eid, r in list(kept.items()):
            if needs_retry(r):
                continue  # failed for good: its folder holds whatever the failure left
            problem = episode_problem(self.dir.episode_dir(eid), r)
            if problem:
                del kept[eid]
                self.notices.append(f"{problem}; rerunning episode {eid}")
        results = sorted(kept.values(), key=lambda r: order[r.episode_id])
        self.dir.rewrite_results(results)
        todo = [j for j in self.jobs if j.episode_id not in kept]
        for j in todo:  # unfinished or errored: rerun from the start in a clean folder
            d = self.dir.episode_dir(j.episode_id)
            if d.exists():
                shutil.rmtree(d)
        manifest["sessions"].append({"started": utcnow(), "finished": None, "ran": 0, "kept": len(results),
                                     "executor": getattr(self.executor, "name", "local"),
                                     "concurrency": self.spec.concurrency, "argv": _safe_argv(),
                                     "damaged": list(self.notices)})
        manifest["status"] = "running"
        manifest["stop_reason"] = None
        self.dir.write_manifest(manifest)
        return manifest, results, todo

    # -- attempts that keep failing -----------------------------------------------
    def _given_up(self, manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Episodes whose last ``max_attempts`` attempts all errored the same way (recomputed each session, so
        a higher --max-attempts on resume retries them again)."""
        out: dict[str, dict[str, Any]] = {}
        for eid, attempts in (manifest.get("attempts") or {}).items():
            same = trailing_same(attempts)
            if attempts and same >= self.spec.max_attempts:
                out[eid] = {"error": attempts[-1].get("error", ""), "attempts": same}
        return out

    def _record_failure(self, result: EpisodeResult) -> None:
        manifest = self._manifest
        attempts = manifest.setdefault("attempts", {}).setdefault(result.episode_id, [])
        attempts.append({"at": utcnow(), "error": result.message[:300]})
        manifest["given_up"] = self._given_up(manifest)
        self.dir.write_manifest(manifest)  # now: a killed run must not forget the attempt

    # -- budgets ---------------------------------------------------------------
    def _tokens_now(self) -> int:
        return self._tokens_done + sum(self._live_tokens.values())

    def _cost_now(self) -> float:
        return self._cost_done + sum(self._live_cost.values())

    def _priced(self, job: EpisodeJob, result: EpisodeResult) -> EpisodeResult:
        """Fill cost_usd from the spec's prices when the framework did not report a cost."""
        price = self.spec.price_of(job.model)
        if price is None or result.cost_usd:
            return result
        return result.model_copy(update={"cost_usd": result.tokens_in * price[0] + result.tokens_out * price[1]})

    def _check_budget(self) -> None:
        if self._stop_reason:
            return
        spec = self.spec
        if spec.max_tokens_total is not None and self._tokens_now() >= spec.max_tokens_total:
            self._stop(f"token budget reached: {self._tokens_now()} >= max_tokens_total {spec.max_tokens_total}")
        elif spec.max_cost is not None and self._cost_now() >= spec.max_cost:
            self._stop(f"cost budget reached: ${self._cost_now():.4f} >= max_cost ${spec.max_cost}")

    def _stop(self, reason: str) -> None:
        """Stop cleanly: nothing new starts. Running episodes stop at their next turn (their progress callback
        answers ``budget_stop``) and are recorded, partial, with that end reason, whatever the framework;
        an executor that cannot pass the answer on (a remote one) has its episodes cancelled instead."""
        self._stop_reason = reason
        if not getattr(self.executor, "stops_cooperatively", False):
            for t in self._running.values():
                t.cancel()

    # -- main loop ---------------------------------------------------------------
    async def run(self) -> RunSummary:
        """Run what is not done yet, holding the run folder's lock (a second process is refused)."""
        lock = RunLock(self.dir.path)
        try:
            lock.acquire()
        except RunLockedError as e:
            raise RunSpecError(str(e)) from None
        try:
            with run_log(self.dir.path):
                return await self._run()
        finally:
            lock.release()

    async def _run(self) -> RunSummary:
        manifest, results, todo = self._prepare()
        self._manifest = manifest
        notice = getattr(self.observer, "notice", None)
        for text in self.notices:
            if notice is not None:
                notice(text)
        self._results, self._ran, self._cancelled = results, 0, []
        self._tokens_done = sum(r.tokens_in + r.tokens_out for r in results)
        self._cost_done = sum(r.cost_usd for r in results)
        self.observer.run_started(len(self.jobs), len(results))
        jobs_by_id = {j.episode_id: j for j in self.jobs}
        for r in results:
            self.observer.episode_finished(jobs_by_id[r.episode_id], r)
        self._check_budget()
        sem = asyncio.Semaphore(self.spec.concurrency)
        status = "finished"
        try:
            async with self.executor:
                address = getattr(self.executor, "address", None)
                if address:  # where the episodes run (a Dask scheduler), for the record
                    manifest["sessions"][-1]["executor_address"] = address
                await asyncio.gather(*(self._run_one(j, sem) for j in todo))
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        except BaseException:
            status = "failed"
            raise
        finally:
            ordered = self._finish_session(manifest, "stopped" if self._stop_reason else status)
        summary = RunSummary(
            run_dir=self.dir.path, planned=len(self.jobs), done=manifest["counts"]["done"], ran=self._ran,
            successes=sum(r.success for r in ordered), errors=manifest["counts"]["errors"],
            tokens=sum(r.tokens_in + r.tokens_out for r in ordered), cost_usd=sum(r.cost_usd for r in ordered),
            stop_reason=self._stop_reason, results=ordered, failed=manifest["counts"]["failed"],
            notices=list(self.notices))
        self.observer.run_finished(summary)
        return summary

    async def _run_one(self, job: EpisodeJob, sem: asyncio.Semaphore) -> None:
        """Run one planned episode (within the run's and its provider's concurrency) and record it."""
        psem = self._provider_sems.get(job.provider)
        async with sem, (psem if psem is not None else contextlib.nullcontext()):
            if self._stop_reason:
                return
            out = self.dir.episode_dir(job.episode_id)
            out.mkdir(parents=True, exist_ok=True)
            self.observer.episode_started(job)
            task = asyncio.ensure_future(self.executor.run(job, out, self._progress_fn(job),
                                                           self._limiters.get(job.provider)))
            self._running[job.episode_id] = task
            t0 = time.perf_counter()
            try:
                result = await task
            except asyncio.CancelledError:
                if self._stop_reason is None:
                    raise  # the whole run is being cancelled
                self._cancelled.append(job.episode_id)
                return
            except RunSpecError:
                raise
            except Exception as e:  # noqa: BLE001 - one broken episode must not sink the run
                result = error_result(job, e, time.perf_counter() - t0)
                (out / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
            finally:
                self._running.pop(job.episode_id, None)
                self._live_tokens.pop(job.episode_id, None)
                self._live_cost.pop(job.episode_id, None)
            await self._record(job, out, result)

    def _progress_fn(self, job: EpisodeJob) -> ProgressFn:
        """Per-event callback of one episode: live token and cost counts for the budgets, then the observer."""
        price = self.spec.price_of(job.model)

        def progress(event: Any) -> str | None:
            if isinstance(event, TurnEvent):
                self._live_tokens[job.episode_id] = (self._live_tokens.get(job.episode_id, 0)
                                                     + event.tokens_in + event.tokens_out)
                if price is not None:
                    self._live_cost[job.episode_id] = (self._live_cost.get(job.episode_id, 0.0)
                                                       + event.tokens_in * price[0] + event.tokens_out * price[1])
            self.observer.episode_event(job, event)
            self._check_budget()
            return "budget_stop" if self._stop_reason else None  # the episode ends before its next turn

        return progress

    async def _record(self, job: EpisodeJob, out: Path, result: EpisodeResult) -> None:
        """Price, score (with the run's judge) and append one finished episode's result."""
        priced = self._priced(job, result)
        if priced is not result and (out / "result.json").is_file():
            (out / "result.json").write_text(priced.model_dump_json(indent=2) + "\n", encoding="utf-8")
        result = priced
        if result.end_reason == "error":
            self._record_failure(result)
        if self._cce is not None and not needs_retry(result):
            # Scored before the result is recorded: a recorded episode always has its cce.json.
            try:
                await asyncio.to_thread(self._cce, out)
            except Exception:  # noqa: BLE001 - a judge failure leaves the episode itself valid
                (out / "cce_error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        self.dir.append_result(result)
        self._results.append(result)
        self._ran += 1
        self._tokens_done += result.tokens_in + result.tokens_out
        self._cost_done += result.cost_usd
        self.observer.episode_finished(job, result)
        self._check_budget()

    def _finish_session(self, manifest: dict[str, Any], status: str) -> list[EpisodeResult]:
        """Close this session in the manifest and order results.jsonl as planned; returns the results."""
        session = manifest["sessions"][-1]
        session.update(finished=utcnow(), ran=self._ran, cancelled=self._cancelled)
        manifest["stop_reason"] = self._stop_reason
        # Everything recorded is final for this session; order the file as planned.
        order = {j.episode_id: i for i, j in enumerate(self.jobs)}
        final = {r.episode_id: r for r in self.dir.read_results()}
        ordered = sorted(final.values(), key=lambda r: order.get(r.episode_id, len(order)))
        self.dir.rewrite_results(ordered)
        done = sum(1 for r in ordered if not needs_retry(r))
        gave_up = given_up(manifest)
        failed = sum(1 for r in ordered if needs_retry(r) and r.episode_id in gave_up)
        manifest["counts"] = {"planned": len(self.jobs), "done": done,
                              "errors": sum(1 for r in ordered if needs_retry(r)) - failed,
                              "failed": failed, "remaining": len(self.jobs) - done - failed}
        if status == "finished" and (manifest["counts"]["remaining"] or failed):
            status = "finished_with_errors"
        manifest["status"] = status
        self.dir.write_manifest(manifest)
        return ordered


def _safe_argv() -> list[str]:
    """The command line, for the record; values of --api-key style flags are masked (defence in depth)."""
    out, mask_next = [], False
    for a in sys.argv[1:]:
        if mask_next:
            out.append("***")
            mask_next = False
            continue
        low = a.lower()
        if low.startswith("--") and any(s in low for s in ("api-key=", "token=", "secret=", "password=")) \
                and "env" not in low:
            out.append(a.split("=", 1)[0] + "=***")
        elif low in ("--api-key", "--token", "--secret", "--password"):
            out.append(a)
            mask_next = True
        else:
            out.append(a)
    return out


def make_executor(spec: RunSpec) -> Any:
    if spec.executor == "dask":
        from .distributed import DaskExecutor

        return DaskExecutor(n_workers=spec.dask_workers, scheduler=spec.dask_scheduler)
    return LocalExecutor()


def run_sync(runner: Runner) -> RunSummary:
    return asyncio.run(runner.run())


__all__ = ["EpisodeJob", "Runner", "RunDir", "RunSummary", "LocalExecutor", "RateLimiter", "plan_jobs",
           "select_tasks", "run_episode_job", "read_results_file", "needs_retry", "given_up", "environment_info"]
