"""One episode of a run: the picklable job, building its team and episode, and pacing model calls.

Kept apart from :mod:`agentworld.core.runs.runner` because executors in other processes (Dask workers,
:mod:`agentworld.core.runs.distributed`) run jobs without the runner.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..play.records import EpisodeResult
from .run_spec import RunSpecError


# ---------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class EpisodeJob:
    """Everything needed to run one episode, picklable (it travels to Dask workers)."""

    episode_id: str
    task_id: str
    task_path: str | None  # the task's YAML file when known (workers load it directly)
    category: str | None
    n_agents: int
    framework: str
    model: str
    variant: str
    seed: int
    team_factory: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    obs_format: str = "text"
    turn_timeout: float | None = None
    world: str = "embedded"  # the world backend and its options (server_url, ...)
    world_options: dict[str, Any] = field(default_factory=dict)

    @property
    def provider(self) -> str:
        return provider_of(self.model, self.framework)


def provider_of(model: str, framework: str) -> str:
    """The model provider (for rate limits): ModelSpec's when it parses, else the prefix before ':'."""
    if not model:
        return framework
    try:
        from ..play.models import ModelSpec

        return str(ModelSpec.parse(model).provider)
    except Exception:  # noqa: BLE001 - unknown spec syntax: fall back to the prefix
        return model.split(":", 1)[0] if ":" in model else model


# ---------------------------------------------------------------------- one episode
def resolve_team_factory(job: EpisodeJob) -> Callable[[Any], Any]:
    from ..play.teams import TeamFactoryError, resolve_team_factory as resolve

    try:
        return resolve(job.framework, job.team_factory)
    except TeamFactoryError as e:
        raise RunSpecError(str(e)) from None
    except KeyError as e:
        raise RunSpecError(str(e.args[0]) if e.args else str(e)) from None


# Tasks already loaded in this process, by (path, mtime): parsing and validating a task file costs more
# than a short oracle episode. Each episode gets its own deep copy.
_TASK_CACHE: dict[tuple[str, float], Any] = {}


def remember_task(task: Any) -> None:
    path = getattr(task, "path", None)
    if path and Path(path).is_file():
        _TASK_CACHE[(str(Path(path).resolve()), Path(path).stat().st_mtime)] = task


def load_job_task(job: EpisodeJob) -> Any:
    from ..tasks import task as task_mod

    if job.task_path and Path(job.task_path).is_file():
        p = Path(job.task_path)
        key = (str(p.resolve()), p.stat().st_mtime)
        if key not in _TASK_CACHE:
            _TASK_CACHE[key] = task_mod.load_task(p, validate=job.world == "embedded")
        return _TASK_CACHE[key].model_copy(deep=True)
    return task_mod.find_task(job.task_id, validate=job.world == "embedded")


ProgressFn = Callable[[Any], Any]  # per event; a returned text (e.g. "budget_stop") asks the episode to stop


class _RateLimitedTeam:
    """Wraps a Team so each turn (one model call, usually) first takes a slot of its provider's rate limit."""

    def __init__(self, team: Any, limiter: "RateLimiter") -> None:
        self._team = team
        self._limiter = limiter

    async def start(self, view: Any) -> None:
        await self._team.start(view)

    async def act(self, turn: Any) -> Any:
        await self._limiter.acquire()
        return await self._team.act(turn)

    async def aclose(self) -> None:
        await self._team.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._team, name)


class RateLimiter:
    """At most ``rate`` acquisitions per second, spaced evenly (asyncio; one per provider per process)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            now = time.monotonic()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)


async def run_episode_job(job: EpisodeJob, out_dir: Path, progress: ProgressFn | None = None,
                          limiter: RateLimiter | None = None) -> EpisodeResult:
    """Build the team and the episode for one job and run it; writes into ``out_dir``."""
    from ..play.episode import Episode
    from ..play.protocol import TeamSpec
    from ..play.view import privileged_grants
    from ..tasks.variants import apply_variant

    task = load_job_task(job)
    factory = resolve_team_factory(job)
    # The team must see the task the episode plays (the variant may change it: single_agent leaves one
    # agent), so it is transformed once here and handed to the Episode as played_task. The team is built
    # from the episode's read-only view; only the oracle baseline is also handed the reference plan.
    played = apply_variant(task, job.variant, job.seed)
    plan, grants = privileged_grants(played, job.framework, job.model)

    def build_team(view: Any) -> Any:
        spec = TeamSpec(view=view, model=job.model, seed=job.seed, agent_ids=list(view.agent_ids),
                        options=dict(job.options, variant=job.variant), reference_plan=plan)
        team = factory(spec)
        return _RateLimitedTeam(team, limiter) if limiter is not None else team

    episode = Episode(task, seed=job.seed, variant=job.variant, out_dir=out_dir, framework=job.framework,
                      model=job.model, obs_format=job.obs_format, turn_timeout=job.turn_timeout,
                      progress=progress, episode_id=job.episode_id, played_task=played, world_backend=job.world,
                      world_options=job.world_options, build_team=build_team, grants=grants)
    result = await episode.run()
    if result.episode_id != job.episode_id:
        # The runner's id is the one resume matches on; keep the episode's own files consistent with it.
        result = result.model_copy(update={"episode_id": job.episode_id})
    return result


def error_result(job: EpisodeJob, exc: BaseException, wall_s: float) -> EpisodeResult:
    """An episode that crashed in the harness or the model service: recorded, and retried on resume."""
    return EpisodeResult(
        episode_id=job.episode_id, task_id=job.task_id, category=job.category, n_agents=job.n_agents,
        seed=job.seed, variant=job.variant, framework=job.framework, model=job.model,
        success=False, psr=0.0, message=f"{type(exc).__name__}: {exc}"[:500], end_reason="error", rounds=0,
        max_rounds=0, actions=0, chats=0, tool_errors=0, no_calls=0, refused_calls=0, infra_errors=1,
        wall_s=wall_s)
