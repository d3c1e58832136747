"""``agentworld replay`` (re-execute an episode's recorded calls and check its record), ``agentworld bundle``
and ``agentworld verify-bundle`` (one archive of a run that anyone can re-score offline). docs/runs.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..console import make_console
from ..hookspecs import hookimpl

EXIT_MISMATCH = 1  # a replay differs from its record, or a bundle is refused
EXIT_UNREPLAYABLE = 2  # nothing to replay: no trajectory, another world backend, no task


def _episode_dirs(path: Path) -> tuple[list[Path], bool]:
    """The episode folders under ``path``: the folder itself (it holds trajectory.jsonl), or a run folder's
    episodes in the order of its results.jsonl (then those of the plan that have a trajectory)."""
    if (path / "trajectory.jsonl").is_file():
        return [path], False
    from ..runs.runner import MANIFEST, RESULTS, read_results_file

    if not (path / MANIFEST).is_file() and not (path / RESULTS).is_file():
        raise click.ClickException(f"{path}: neither an episode folder (no trajectory.jsonl) nor a run folder "
                                   f"(no {MANIFEST} or {RESULTS})")
    ids = [r.episode_id for r in read_results_file(path / RESULTS, [])]
    found = [path / "episodes" / i for i in dict.fromkeys(ids) if (path / "episodes" / i / "trajectory.jsonl").is_file()]
    if not found:
        raise click.ClickException(f"{path}: no recorded episode with a trajectory under episodes/")
    return found, True


@click.command("replay")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--check", is_flag=True,
              help="Compare every turn, observation digest, tick, the result and the final state with the record; "
                   "exit 1 on the first difference, and stamp the episode (replay.json) for report and export.")
@click.option("--task", "task_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The task file to replay against [default: the one the record names, else task.json, else the "
                   "shipped task of that id].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the replayed episode's files here (one episode only).")
@click.option("--no-stamp", is_flag=True, help="With --check: do not write the verdict into the episode folder "
              "(a folder you may not write to, someone else's run).")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
def replay_cmd(path: Path, check: bool, task_path: Path | None, out_dir: Path | None, no_stamp: bool,
               as_json: bool) -> None:
    """Re-execute the recorded calls of an episode (or of every episode of a run folder) on the engine, from the
    task and seed in its record; no model is needed. With --check, every recorded result, effect, observation
    digest, checkpoint and the final state must match, and the first turn that differs is named."""
    import asyncio

    from ..play.replay import ReplayError, check_episode
    from ..runs.integrity import write_replay_stamp

    folders, is_run = _episode_dirs(path)
    if out_dir is not None and len(folders) > 1:
        raise click.BadParameter("--out keeps one replayed episode; give an episode folder", param_hint="--out")
    console = make_console(stderr=as_json)
    reports, failed, unreplayable = [], 0, []
    for folder in folders:
        try:
            report = asyncio.run(check_episode(folder, task_path=task_path, out_dir=out_dir))
        except ReplayError as exc:
            unreplayable.append(f"{folder.name}: {exc}")
            continue
        reports.append(report)
        failed += not report.ok
        if check and not no_stamp:
            where = write_replay_stamp(folder, report)
            if where is not None:
                report.notes.append(where)
    if as_json:
        click.echo(json.dumps({"reports": [r.as_dict() for r in reports], "unreplayable": unreplayable}, indent=2,
                              default=str))
    else:
        _print_reports(reports, console, check, is_run)
        for line in unreplayable:
            console.print(f"[red]cannot replay[/] {line}")
    if unreplayable and not reports:
        sys.exit(EXIT_UNREPLAYABLE)
    if check and (failed or unreplayable):
        sys.exit(EXIT_MISMATCH)


def _print_reports(reports: list[Any], console: Any, check: bool, is_run: bool) -> None:
    from rich.table import Table

    if is_run or len(reports) > 1:
        table = Table("episode", "turns", "obs. digests", "replay", "first difference")
        for r in reports:
            table.add_row(r.episode_id, str(r.turns), str(r.observations_checked),
                          "[green]matches[/]" if r.ok else "[red]differs[/]", r.first.text() if r.first else "")
        console.print(table)
        matched = sum(r.ok for r in reports)
        console.print(f"{matched}/{len(reports)} episodes replay exactly as recorded")
        return
    for r in reports:
        res = r.result
        outcome = (f"{'success' if res.success else 'not solved'}, PSR {res.psr:.2f}, {res.rounds} rounds, "
                   f"{res.end_reason}") if res is not None else "no result"
        console.print(f"[bold]{r.episode_id}[/]: replayed {r.turns} turns and {r.ticks} ticks in {r.seconds:.2f}s "
                      f"({outcome}); task from {r.task_source}")
        if r.recorded_harness_version and r.recorded_harness_version != r.harness_version:
            console.print(f"  recorded with agentworld {r.recorded_harness_version}, replayed with {r.harness_version}")
        for note in r.notes:
            console.print(f"  note: {note}")
        if r.ok:
            seen = (f"{r.observations_checked} observation digests" if r.observations_checked
                    else "observations not recorded")
            console.print(f"  [green]matches the record[/]: every turn ({seen}), tick, the result and the final state")
        else:
            console.print(f"  [red]differs from the record[/] ({len(r.mismatches)} finding(s)):")
            for m in r.mismatches:
                console.print(f"    {m.text()}")
        if r.replayed_dir:
            console.print(f"  replayed episode: {r.replayed_dir}")
        if not check and not r.ok:
            console.print("  (run with --check to make a difference an error and stamp the episode)")


@click.command("bundle")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The archive to write (a .tar.gz).")
def bundle_cmd(run_dir: Path, out_file: Path) -> None:
    """Pack a run (manifest, results, every episode's record, the task files they ran, the report, checksums)
    into one archive that anyone can re-score offline with `agentworld verify-bundle`."""
    from ..runs.bundle import BundleError, make_bundle

    try:
        summary = make_bundle(run_dir, out_file)
    except BundleError as exc:
        raise click.ClickException(str(exc)) from None
    console = make_console()
    for note in summary.notes:
        console.print(f"note: {note}")
    console.print(f"bundle: [bold]{summary.path}[/] ({summary.episodes} episodes, {summary.tasks} task files, "
                  f"{summary.bytes / 1e6:.1f} MB)")
    console.print(f"sha256 {summary.sha256}  (publish it with the submission)")


@click.command("verify-bundle")
@click.argument("bundle_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the unpacked bundle and the replayed run in this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def verify_bundle_cmd(bundle_file: Path, keep: Path | None, as_json: bool) -> None:
    """Re-score a bundle offline: check its checksums, replay every episode, recompute SR, PSR and the grounded
    CCE (no LLM), and print the report the submitter saw, or exactly what does not match. Exit 1 when refused."""
    import asyncio

    from ..runs.bundle import verify_bundle

    verdict = asyncio.run(verify_bundle(bundle_file, keep=keep))
    if as_json:
        click.echo(json.dumps({k: v for k, v in vars(verdict).items() if k not in ("report", "recomputed")}, indent=2,
                              default=str))
    else:
        _print_verdict(verdict, make_console())
    if not verdict.ok:
        sys.exit(EXIT_MISMATCH)


def _print_verdict(verdict: Any, console: Any) -> None:
    from rich.markup import escape

    from ..runs.report import print_report

    if verdict.refused:
        console.print(f"[red]refused[/]: {escape(verdict.refused)}", soft_wrap=True)
        return
    for note in verdict.notes:
        console.print(f"note: {escape(note)}", soft_wrap=True)
    if verdict.findings:
        console.print(f"[red]refused[/]: {verdict.replayed_ok}/{verdict.episodes} episodes replay as recorded; "
                      "what does not match:")
        for line in verdict.findings:
            console.print(f"  {escape(line)}", soft_wrap=True)
        return
    if verdict.report is not None:
        print_report(verdict.report, console)
    cce = verdict.grounded_cce
    mean = sum(cce.values()) / len(cce) if cce else float("nan")
    console.print(f"[green]verified[/]: {verdict.episodes} episodes replayed exactly as recorded "
                  f"(made with agentworld {verdict.harness_version}); SR, PSR and the report recomputed and equal; "
                  f"grounded CCE (engine effects, no LLM) recomputed: mean {mean:.3f} over {len(cce)} episodes")


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(replay_cmd)
    cli.add_command(bundle_cmd)
    cli.add_command(verify_bundle_cmd)
