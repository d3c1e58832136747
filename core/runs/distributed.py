"""Scale-out: run episodes on Dask distributed workers (other processes or machines).

Optional (``pip install "dask[distributed]"``). The runner stays in charge of planning, results.jsonl,
the manifest and resume; only the episodes move. Each worker process runs one episode at a time
(``threads_per_worker=1``) and writes the episode's files straight into the run folder, so on several
machines the run folder must be on a shared filesystem (NFS, a mounted bucket) at the same path.

- ``DaskExecutor(n_workers=N)`` starts a LocalCluster bound to 127.0.0.1 (no dashboard): N processes.
- ``DaskExecutor(scheduler="tcp://host:8786")`` joins an existing cluster
  (``dask scheduler`` + ``dask worker tcp://host:8786 --nthreads 1`` on each machine).

Differences from the local executor: live progress shows episodes running and done but not their rounds
(events stay on the worker); per-provider rate limits apply per worker process.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from ..play.records import EpisodeResult


def run_job_in_worker(job: Any, out_dir: str, rate: float | None = None) -> str:
    """Executed on a worker: run one episode in a fresh event loop; the result travels back as JSON.

    ``rate`` (turns per second of the job's provider, None: unlimited) paces this worker's turns: the
    runner's limiter lives in another process, so the worker builds its own inside its event loop.
    """
    from .jobs import RateLimiter, run_episode_job

    async def run() -> Any:
        limiter = RateLimiter(rate) if rate else None
        return await run_episode_job(job, Path(out_dir), limiter=limiter)

    return asyncio.run(run()).model_dump_json()


class DaskExecutor:
    name = "dask"

    def __init__(self, n_workers: int = 2, scheduler: str | None = None) -> None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ImportError("the dask executor needs Dask distributed: pip install 'dask[distributed]' "
                              "(or run with --executor local)") from None
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.cluster: Any = None
        self.client: Any = None

    def _start(self) -> None:
        from distributed import Client, LocalCluster

        if self.scheduler:
            self.client = Client(self.scheduler)
        else:
            # Loopback only: scheduler and workers listen on 127.0.0.1; no dashboard (no HTTP server).
            self.cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                        host="127.0.0.1", dashboard_address=None, protocol="tcp")
            self.client = Client(self.cluster)

    def _stop(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    async def __aenter__(self) -> "DaskExecutor":
        await asyncio.to_thread(self._start)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self._stop)

    @property
    def address(self) -> str | None:
        return self.client.scheduler.address if self.client is not None else None

    async def run(self, job: Any, out_dir: Path, progress: Any, limiter: Any) -> EpisodeResult:
        if self.client is None:
            raise RuntimeError("DaskExecutor used outside `async with`")
        rate = 1.0 / limiter.interval if limiter is not None else None
        # A unique key: a retried episode must not be answered from the scheduler's memory of an old one.
        future = self.client.submit(run_job_in_worker, job, str(out_dir), rate, pure=False,
                                    key=f"episode-{job.episode_id}-{uuid.uuid4().hex[:8]}")
        try:
            text = await asyncio.to_thread(future.result)
        except asyncio.CancelledError:
            future.cancel()
            raise
        return EpisodeResult.model_validate_json(text)
