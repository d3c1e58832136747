"""Runner logic with a fake episode (no world needed): plan, results, resume, budgets, errors, rate limits."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentworld.core.play.records import EndEvent, EpisodeResult, StartEvent, TurnEvent
from agentworld.core.runs.run_spec import RunSpecError, build_spec, episode_id, load_run_spec, parse_size_range
from agentworld.core.runs.runner import LocalExecutor, RunDir, Runner, read_results_file
from agentworld.core.runs.versions import versions
from agentworld.core.runs.jobs import EpisodeJob, RateLimiter

pytestmark = pytest.mark.anyio


def make_jobs(n_tasks: int = 4, seeds: tuple[int, ...] = (0, 1), variant: str = "vanilla") -> list[EpisodeJob]:
    return [EpisodeJob(episode_id=episode_id(f"t{i}", "fake", "", variant, s), task_id=f"t{i}", task_path=None,
                       category="cat" + str(i % 2), n_agents=3 + i, framework="fake", model="", variant=variant,
                       seed=s) for i in range(n_tasks) for s in seeds]


class FakeEpisodes:
    """A deterministic episode: a few 'rounds' with awaits, tokens per turn, success from task and seed."""

    def __init__(self, rounds: int = 3, delay: float = 0.0, tokens: int = 0, fail_once: set[str] | None = None):
        self.rounds, self.delay, self.tokens = rounds, delay, tokens
        self.fail_once = set(fail_once or ())
        self.started: list[str] = []

    async def __call__(self, job: EpisodeJob, out_dir: Path, progress, limiter) -> EpisodeResult:
        self.started.append(job.episode_id)
        assert not (out_dir / "trajectory.jsonl").exists(), "an episode must start in a clean folder"
        if job.episode_id in self.fail_once:
            self.fail_once.discard(job.episode_id)
            raise ConnectionError("model service unavailable")
        with open(out_dir / "trajectory.jsonl", "w") as f:
            start = StartEvent(episode_id=job.episode_id, task_id=job.task_id, seed=job.seed, variant=job.variant,
                               framework=job.framework, model=job.model, world_version="x", agents=[],
                               max_rounds=self.rounds, max_action_steps=9, timestamp="")
            f.write(start.model_dump_json() + "\n")
            if progress:
                progress(start)
            reason, played = "round_budget", 0
            for r in range(1, self.rounds + 1):
                await asyncio.sleep(self.delay)
                ev = TurnEvent(step=r - 1, round=r, agent="agent_1", username="a", tool="move", tokens_in=self.tokens)
                f.write(ev.model_dump_json() + "\n")
                played = r
                if progress and progress(ev):  # the run asks the episode to stop, as an Episode honours it
                    reason = "budget_stop"
                    break
            f.write(EndEvent(reason=reason, rounds=played).model_dump_json() + "\n")
        ok = (int(job.task_id[1:]) + job.seed) % 2 == 0
        result = EpisodeResult(episode_id=job.episode_id, task_id=job.task_id, category=job.category,
                             n_agents=job.n_agents, seed=job.seed, variant=job.variant, framework=job.framework,
                             model=job.model, success=ok, psr=1.0 if ok else 0.5, end_reason=reason,
                             rounds=played, max_rounds=self.rounds, actions=played, chats=0, tool_errors=0,
                             no_calls=0, refused_calls=0, infra_errors=0, turns=played,
                             tokens_in=self.tokens * played, wall_s=0.01)
        (out_dir / "result.json").write_text(result.model_dump_json(), encoding="utf-8")  # as an Episode does
        return result


SPEC = build_spec({"tasks": ["t0"], "frameworks": ["fake"], "concurrency": 3})


def strip_timing(results: list[EpisodeResult]) -> list[dict]:
    return sorted((r.model_dump(exclude={"wall_s", "harness_s"}) for r in results), key=lambda d: d["episode_id"])


async def test_run_writes_manifest_results_and_folders(tmp_path: Path):
    jobs = make_jobs()
    runner = Runner(SPEC, tmp_path / "run", jobs=jobs, executor=LocalExecutor(FakeEpisodes()))
    summary = await runner.run()
    assert summary.done == summary.planned == len(jobs) == 8
    results = read_results_file(tmp_path / "run" / "results.jsonl")
    assert [r.episode_id for r in results] == [j.episode_id for j in jobs]  # planned order
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert manifest["counts"] == {"planned": 8, "done": 8, "errors": 0, "failed": 0, "remaining": 0}
    assert manifest["environment"]["python"] and manifest["environment"]["agentworld"]
    assert manifest["environment"]["versions"] == versions()  # harness, world and suite (runs/versions.py)
    assert manifest["spec"]["frameworks"] == ["fake"]
    assert len(manifest["sessions"]) == 1 and manifest["sessions"][0]["finished"]
    for j in jobs:
        assert (tmp_path / "run" / "episodes" / j.episode_id / "trajectory.jsonl").is_file()
    # A second run into the same folder is refused (resume is explicit).
    with pytest.raises(RunSpecError, match="--resume"):
        await Runner(SPEC, tmp_path / "run", jobs=jobs, executor=LocalExecutor(FakeEpisodes())).run()


def _result(eid: str) -> EpisodeResult:
    return EpisodeResult(episode_id=eid, task_id="t0", category="c", n_agents=1, seed=0, variant="vanilla",
                         framework="fake", model="", success=True, psr=1.0, end_reason="round_budget", rounds=1,
                         max_rounds=1, actions=0, chats=0, tool_errors=0, no_calls=0, refused_calls=0,
                         infra_errors=0, turns=1, wall_s=0.0)


def test_rewrite_results_leaves_a_file_that_already_holds_them_and_makes_every_other_durable(tmp_path: Path,
                                                                                             monkeypatch):
    """The rewrite is skipped (no fsync) when the file already holds exactly those lines; otherwise the file is
    replaced, fsynced, by exactly those lines; no file and no results gives an empty file."""
    import agentworld.core.runs.runner as runner_mod

    synced: list[int] = []
    monkeypatch.setattr(runner_mod.os, "fsync", lambda fd: synced.append(fd))
    rd = RunDir(tmp_path)
    rd.rewrite_results([])
    assert rd.results_path.read_bytes() == b"" and not synced
    a, b = _result("a"), _result("b")
    rd.append_result(a)
    rd.append_result(b)
    assert len(synced) == 2
    inode = rd.results_path.stat().st_ino
    rd.rewrite_results([a, b])  # already so: left alone
    assert len(synced) == 2 and rd.results_path.stat().st_ino == inode
    rd.rewrite_results([b, a])  # another order: replaced, durably
    assert len(synced) == 3 and [r.episode_id for r in rd.read_results()] == ["b", "a"]
    with open(rd.results_path, "a", encoding="utf-8") as f:
        f.write('{"episode_id": "torn')  # a killed run's torn last line
    rd.rewrite_results(rd.read_results())
    assert len(synced) == 4 and rd.results_path.read_text(encoding="utf-8").count("\n") == 2
    assert rd.results_path.read_bytes().endswith(b"}\n")


async def test_cancel_at_random_moments_then_resume_matches_uninterrupted(tmp_path: Path):
    jobs = make_jobs(n_tasks=5)
    reference = await Runner(SPEC, tmp_path / "ref", jobs=jobs, executor=LocalExecutor(FakeEpisodes())).run()
    run_dir = tmp_path / "run"
    fake = FakeEpisodes(delay=0.004)
    first = True
    for delay in (0.013, 0.029, 0.021):  # three interruptions at different moments
        runner = Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=not first)
        task = asyncio.ensure_future(runner.run())
        await asyncio.sleep(delay)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        first = False
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
    summary = await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=True).run()
    assert summary.done == len(jobs)
    final = read_results_file(run_dir / "results.jsonl")
    assert len(final) == len({r.episode_id for r in final}) == len(jobs)
    assert strip_timing(final) == strip_timing(reference.results)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert len(manifest["sessions"]) == 4 and manifest["status"] == "finished"
    # Every episode finished exactly once overall; reruns only for interrupted ones.
    assert sum(s["ran"] for s in manifest["sessions"]) == len(jobs)


async def test_resume_drops_torn_line_and_partial_folder(tmp_path: Path):
    jobs = make_jobs(n_tasks=2, seeds=(0,))
    run_dir = tmp_path / "run"
    await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(FakeEpisodes())).run()
    rd = RunDir(run_dir)
    lines = rd.results_path.read_text().splitlines()
    # Simulate a kill: the second result was half written, its folder holds a partial trajectory.
    rd.results_path.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])
    fake = FakeEpisodes()
    summary = await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=True).run()
    assert fake.started == [jobs[1].episode_id]  # only the unfinished one ran, from a clean folder
    assert summary.done == 2 and len(read_results_file(rd.results_path)) == 2


async def test_infra_errors_are_recorded_then_retried_on_resume(tmp_path: Path):
    jobs = make_jobs(n_tasks=3, seeds=(0,))
    fake = FakeEpisodes(fail_once={jobs[1].episode_id})
    run_dir = tmp_path / "run"
    summary = await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake)).run()
    assert summary.errors == 1 and summary.done == 2
    errored = [r for r in read_results_file(run_dir / "results.jsonl") if r.end_reason == "error"]
    assert errored and "ConnectionError" in errored[0].message
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "finished_with_errors"
    summary = await Runner(SPEC, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=True).run()
    assert summary.errors == 0 and summary.done == 3
    final = read_results_file(run_dir / "results.jsonl")
    assert [r.episode_id for r in final] == [j.episode_id for j in jobs]


async def test_token_budget_stops_cleanly_and_resume_continues(tmp_path: Path):
    jobs = make_jobs(n_tasks=4, seeds=(0,))
    spec = build_spec({"tasks": ["t0"], "frameworks": ["fake"], "concurrency": 1, "max_tokens_total": 250})
    fake = FakeEpisodes(tokens=50, delay=0.001)  # 150 tokens per episode
    run_dir = tmp_path / "run"
    summary = await Runner(spec, run_dir, jobs=jobs, executor=LocalExecutor(fake)).run()
    assert summary.stop_reason and "token budget" in summary.stop_reason
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "max_tokens_total 250" in manifest["stop_reason"]
    # The second episode crossed the budget mid-way: it stopped at once and was kept, marked budget_stop
    # (partial, so not counted done: resume plays it again); the rest never started.
    assert summary.done == 1 and len(fake.started) == 2
    stopped = [r for r in read_results_file(run_dir / "results.jsonl") if r.episode_id == jobs[1].episode_id]
    assert [(r.end_reason, r.rounds) for r in stopped] == [("budget_stop", 2)]
    bigger = spec.model_copy(update={"max_tokens_total": 10_000})
    summary = await Runner(bigger, run_dir, jobs=jobs, executor=LocalExecutor(fake), resume=True).run()
    assert summary.done == 4 and summary.stop_reason is None


async def test_cost_budget_from_prices(tmp_path: Path):
    jobs = [EpisodeJob(episode_id=episode_id(f"t{i}", "fake", "openai:x", "vanilla", 0), task_id=f"t{i}",
                       task_path=None, category="c", n_agents=3, framework="fake", model="openai:x",
                       variant="vanilla", seed=0) for i in range(4)]
    with pytest.raises(RunSpecError, match="prices for openai:x"):
        build_spec({"tasks": ["t0"], "frameworks": ["fake"], "models": ["openai:x"], "max_cost": 200})
    spec = build_spec({"tasks": ["t0"], "frameworks": ["fake"], "models": ["openai:x"], "concurrency": 1,
                       "max_cost": 200, "prices": {"openai:x": [1e6, 0]}})  # $1 per input token
    summary = await Runner(spec, tmp_path / "run", jobs=jobs,
                           executor=LocalExecutor(FakeEpisodes(tokens=50, delay=0.001))).run()
    assert summary.stop_reason and "cost budget" in summary.stop_reason
    first, second = read_results_file(tmp_path / "run" / "results.jsonl")
    assert first.cost_usd == 150.0  # 3 turns x 50 input tokens x $1
    assert second.end_reason == "budget_stop" and second.cost_usd == 50.0  # stopped after its first turn


async def test_concurrency_limit_is_respected(tmp_path: Path):
    running, peak = 0, 0

    async def episode(job, out_dir, progress, limiter):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return await FakeEpisodes(rounds=1)(job, out_dir, None, None)

    await Runner(SPEC, tmp_path / "r", jobs=make_jobs(n_tasks=6), executor=LocalExecutor(episode)).run()
    assert peak == 3


async def test_provider_concurrency_limits_one_provider(tmp_path: Path):
    running, peak = 0, 0

    async def episode(job, out_dir, progress, limiter):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return await FakeEpisodes(rounds=1)(job, out_dir, None, None)

    spec = build_spec({"tasks": ["t0"], "frameworks": ["fake"], "concurrency": 3, "provider_concurrency": {"fake": 1}})
    await Runner(spec, tmp_path / "r", jobs=make_jobs(n_tasks=3), executor=LocalExecutor(episode)).run()
    assert peak == 1


async def test_rate_limiter_spaces_calls():
    limiter = RateLimiter(50.0)  # 20 ms apart
    t0 = time.monotonic()
    await asyncio.gather(*(limiter.acquire() for _ in range(6)))
    assert time.monotonic() - t0 >= 0.09


def test_resume_with_a_different_plan_is_refused(tmp_path: Path):
    asyncio.run(Runner(SPEC, tmp_path / "r", jobs=make_jobs(2), executor=LocalExecutor(FakeEpisodes())).run())
    with pytest.raises(RunSpecError, match="plan differs"):
        asyncio.run(Runner(SPEC, tmp_path / "r", jobs=make_jobs(3), executor=LocalExecutor(FakeEpisodes()),
                           resume=True).run())


# ---------------------------------------------------------------------- spec
def test_episode_ids_are_deterministic_and_distinct():
    a = episode_id("task01_staff", "openai", "openai:gpt-4.1-mini", "vanilla", 0)
    assert a == episode_id("task01_staff", "openai", "openai:gpt-4.1-mini", "vanilla", 0)
    others = {episode_id("task01_staff", "openai", "openai:gpt-4.1-mini", "vanilla", 1),
              episode_id("task01_staff", "openai", "openai:gpt-4.1", "vanilla", 0),
              episode_id("task01_staff", "camel", "openai:gpt-4.1-mini", "vanilla", 0),
              episode_id("task01_staff", "openai", "openai:gpt-4.1-mini", "no_roles", 0)}
    assert a not in others and len(others) == 4
    assert "/" not in episode_id("t", "f", "openai-compatible:org/model", "v", 0)


def test_spec_file_errors_name_field_and_fix(tmp_path: Path):
    p = tmp_path / "spec.yaml"
    p.write_text("suite: main\nframework: oracle\nconcurency: 3\n")
    with pytest.raises(RunSpecError) as e:
        load_run_spec(p)
    assert "concurency: unknown field" in str(e.value) and "concurrency" in str(e.value)
    p.write_text("suite: nope\n")
    with pytest.raises(RunSpecError, match="suite"):
        load_run_spec(p)
    p.write_text("tasks: [a]\noptions: {api_key: sk-123}\n")
    with pytest.raises(RunSpecError, match="api_key_env"):
        load_run_spec(p)
    p.write_text("frameworks: [oracle]\n")
    with pytest.raises(RunSpecError, match="no tasks selected"):
        load_run_spec(p)
    p.write_text("tasks: [a]\nbase_url: https://me:hunter2@llm.example/v1\n")
    with pytest.raises(RunSpecError, match="base_url carries credentials"):
        load_run_spec(p)
    p.write_text("tasks: [a]\ncce_judge: openai\ncce_options: {base_url: 'https://llm.example/v1?api_key=hunter2'}\n")
    with pytest.raises(RunSpecError, match="cce_options: base_url carries credentials"):
        load_run_spec(p)
    p.write_text("tasks: [a]\napi_key_env: sk-abcdefghijklmnopqrstuvwxyz\n")
    with pytest.raises(RunSpecError, match="NAME of an environment variable"):
        load_run_spec(p)


def test_spec_grid_and_singular_keys(tmp_path: Path):
    p = tmp_path / "spec.yaml"
    p.write_text("task: t1\nframeworks: [oracle, openai]\nmodels: [openai:a, openai:b]\n"
                 "variants: [vanilla, no_roles]\ntrials: 3\nseed: 10\n")
    spec = load_run_spec(p, concurrency=7)
    assert spec.tasks == ["t1"] and spec.concurrency == 7
    assert spec.seed_list() == [10, 11, 12]
    assert spec.models_for("oracle") == [""] and spec.models_for("openai") == ["openai:a", "openai:b"]
    assert parse_size_range("10-20") == (10, 20) and parse_size_range("5") == (5, 5)
    assert parse_size_range("10-") == (10, None)
    with pytest.raises(ValueError):
        parse_size_range("20-10")
