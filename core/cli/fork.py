"""``agentworld fork EPISODE_DIR --at-round R``: replay an episode's first R-1 rounds, continue with another team.

The team is chosen with the same flags as ``agentworld run`` (framework, model, endpoint and request options,
``--tools``, ``--team-factory``), checked the same way before anything runs; the episode's task, seed and
variant are the parent's. See ``core/play/fork.py`` and docs/runs.md ("Forking an episode").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..hookspecs import hookimpl
from .runs import MODEL_FLAGS, run_cmd

# the flags of `run` that choose and configure the team: the same options, reused
TEAM_FLAGS = ("frameworks", "models", "base_url", "api_key_env", "temperature", "max_tokens", "request_timeout",
              "tool_choice", "context_window", "context_budget", "tools", "team_factory", "turn_timeout",
              "obs_format")


def _team_job(record: Any, flags: dict[str, Any]) -> Any:
    """The parent's task, seed and variant played by the team the flags name: the run planner's job for it
    (so the flags are validated, defaulted and turned into team options exactly as `run` does)."""
    from ..runs.run_spec import build_spec
    from ..runs.runner import plan_grid
    from ..tasks.task import Task

    fields = {k: v for k, v in flags.items() if v is not None and k not in MODEL_FLAGS}
    if len(fields.get("frameworks") or ()) > 1 or len(fields.get("models") or ()) > 1:
        raise click.UsageError("a fork is played by one team: give --framework and --model once each")
    options = {MODEL_FLAGS[k]: v for k, v in flags.items() if k in MODEL_FLAGS and v is not None}
    for key in ("frameworks", "models"):
        if key in fields:
            fields[key] = list(fields[key])
        else:
            fields.pop(key, None)
    spec = build_spec({**fields, "options": options, "variants": [record.variant], "seed": record.seed,
                       "tasks": [record.task_id]})
    task = record.task
    jobs, na = plan_grid(spec, [task] if isinstance(task, Task) else [])
    if na:
        raise click.UsageError(na[0]["reason"])
    return jobs[0]


def _check_team(job: Any) -> Any:
    """The job's team factory, its packages installed and its model's API key variable set (as `run` checks)."""
    from ..runs.jobs import resolve_team_factory
    from ..runs.runner import parse_model_spec

    factory = resolve_team_factory(job)
    check_installed = getattr(factory, "check_installed", None)
    if check_installed is not None:
        check_installed()
    if job.model and not job.team_factory:
        parse_model_spec(job.model, job.options).api_key()
    return factory


@click.command("fork", context_settings={"show_default": True})
@click.argument("episode_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--at-round", "at_round", type=click.IntRange(1), required=True,
              help="The first round the new team plays (rounds before it replay the parent's calls).")
@click.option("--task", "task_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The parent's task file, when its record names none this installation has.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the fork's record [default: forks/<fork id>].")
@click.option("--json", "as_json", is_flag=True, help="Print the fork's outcome as JSON.")
def fork_cmd(episode_dir: Path, at_round: int, task_path: Path | None, out: Path | None, as_json: bool,
             **flags: Any) -> None:
    """Continue an episode from round R with another team: rounds 1 to R-1 replay the parent's recorded calls
    exactly, then the team given (same flags as `agentworld run`) plays on, each agent primed with the turns it
    would have had (its observations, the chat it received, its calls and their results, within its context
    budget). The fork's record names its parent and round.

    \b
    Examples:
      agentworld fork runs/A/episodes/EP --at-round 5 --framework oracle
      agentworld fork runs/A/episodes/EP --at-round 12 --framework openai --model openai:gpt-4.1
    """
    import asyncio

    from ..console import make_console
    from ..play.fork import ForkError, check_prefix, fork_id, run_fork
    from ..play.replay import ReplayError, load_record, resolve_task
    from ..runs.run_spec import RunSpecError
    from .runs import result_table

    console = make_console(stderr=as_json)
    try:
        record = load_record(episode_dir)
        record.task = resolve_task(record, task_path).task
        job = _team_job(record, flags)
        factory = _check_team(job)
    except (ReplayError, RunSpecError, ValueError, KeyError, ImportError) as e:
        raise click.ClickException(str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)) from None
    out = out or Path("forks") / fork_id(record.episode_id, at_round, job.framework, job.model)
    if (out / "trajectory.jsonl").exists():
        raise click.ClickException(f"{out} already holds an episode; give another --out")
    try:
        outcome = asyncio.run(run_fork(episode_dir, at_round, factory, out_dir=out, framework=job.framework,
                                       model=job.model, options=job.options, task_path=task_path,
                                       obs_format=job.obs_format, turn_timeout=job.turn_timeout))
    except ForkError as e:
        raise click.ClickException(str(e)) from None
    mismatch = check_prefix(out, episode_dir)
    if as_json:
        click.echo(json.dumps({**outcome.as_dict(), "prefix_matches_parent": mismatch is None,
                               "prefix_mismatch": mismatch.as_dict() if mismatch else None}, default=str))
        return
    console.print(result_table(outcome.result))
    primed = {True: "yes", False: "no (the team keeps no history: its agents started afresh)",
              None: "- (the new team never played)"}[outcome.primed]
    turns = ", ".join(f"{a} {n}" for a, n in outcome.history_turns.items()) or "none"
    console.print(f"fork of {record.episode_id} ({record.start.framework}{' / ' + record.start.model if record.start.model else ''}) "
                  f"at round {at_round}: rounds 1-{at_round - 1} replayed · agents primed with their history: "
                  f"{primed} (earlier turns: {turns})", soft_wrap=True)
    console.print("prefix identical to the parent's record: " + ("yes" if mismatch is None else
                                                                  f"[red]no[/]: {mismatch.text()}"), soft_wrap=True)
    console.print(f"fork record: [bold]{out}[/] ({outcome.seconds:.2f} s)")


for _param in run_cmd.params:  # the team flags of `run`, the same option objects
    if _param.name in TEAM_FLAGS:
        fork_cmd.params.append(_param)


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(fork_cmd)
