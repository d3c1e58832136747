"""``agentworld tasks calibration`` (the suite against its pilot runs) and ``agentworld tasks record-pilot``
(a pilot folder from an episode folder). Attached to the ``tasks`` group by core/cli/prove.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f} %"


def _met(m: bool | None) -> str:
    return "[dim]not measured[/dim]" if m is None else ("[green]met[/green]" if m else "[red]not met[/red]")


@click.command("calibration")
@click.option("--pilots", "pilots_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The pilot records (default: pilots/ of the checkout).")
@click.option("--no-fastest", is_flag=True,
              help="Skip the fastest known solutions (the compressed plans; cached after their first run).")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Worker processes for the compressed plans.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def calibration_cmd(pilots_dir: Path | None, no_fastest: bool, jobs: int | None, as_json: bool) -> None:
    """The calibration table: per task the fastest known solution, the budget and its ratio, the pilots on the
    task's current version (successes, rounds used, failure classes, no-communication pilots); per category
    and overall the pilot SR, the budget the successes used, the tasks every pilot lost, and the issue's
    targets, each met or not. Pilots of an older version of a task are shown as stale and not counted."""
    from ..runs.calibration import calibration
    from ..runs.pilots import default_pilots_dir
    from ..runs.prove import default_jobs

    folder = pilots_dir or default_pilots_dir()
    if pilots_dir is not None and not folder.is_dir():
        raise click.BadParameter(f"{folder} is not a folder", param_hint="--pilots")
    report = calibration(folder, jobs=jobs or default_jobs(), with_fastest=not no_fastest)
    if as_json:
        click.echo(json.dumps(report, indent=2, default=str))
        return
    _print(report)


def _print(report: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ..console import make_console

    con = make_console()
    t = Table(title=f"calibration: {len(report['tasks'])} tasks, pilots from {report['pilots_dir']}")
    for h in ("task", "category", "agents", "fastest", "budget", "ratio", "pilots", "won", "rounds used",
              "% budget", "failure classes", "no-comm pilots", "stale"):
        t.add_column(h, justify="right" if h in ("agents", "fastest", "budget", "ratio", "pilots", "won",
                                                  "stale") else "left")
    for r in report["tasks"]:
        if r["suite"] != "main" and not r["pilot_runs"]:
            continue
        ratio = "-" if r["ratio"] is None else (f"{r['ratio']:.2f}" if r["budget_ok"] else f"[yellow]{r['ratio']:.2f}[/yellow]")
        nc = ", ".join("won" if p["success"] else "lost" for p in r["no_communication"]) or "-"
        t.add_row(escape(r["task"]) + ("" if r["suite"] == "main" else f" ({r['suite']})"), r["category"] or "-",
                  str(r["agents"]), "-" if r["fastest"] is None else str(r["fastest"]), str(r["budget"]), ratio,
                  str(r["pilots"]), str(r["successes"]), ", ".join(map(str, r["rounds_used"])) or "-",
                  ", ".join(f"{100 * u:.0f}" for u in r["budget_used"]) or "-",
                  ", ".join(f"{k} {v}" for k, v in r["failure_classes"].items()) or "-", nc,
                  str(r["stale_pilots"]) if r["stale_pilots"] else "")
    con.print(t)
    g = Table(title="pilots by category (main suite, current task versions, vanilla)")
    for h in ("category", "tasks", "piloted", "pilots", "SR", "median % budget (wins)", "every pilot lost",
              "system / task / agent"):
        g.add_column(h)
    groups = list(report["by_category"].items()) + [("overall", report["overall"])]
    if report["augmented"]["pilots"]:
        groups.append(("augmented suite", report["augmented"]))
    for name, s in groups:
        fc = s["failure_classes"]
        g.add_row(name, str(s["tasks"]), str(s["piloted_tasks"]), str(s["pilots"]), _pct(s["sr"]),
                  _pct(s["median_budget_used"]), _pct(s["all_failed_share"]),
                  f"{fc['system']} / {fc['task']} / {fc['agent']}")
    con.print(g)
    _print_paired(con, report["augmented_paired"])
    tt = Table(title="targets (issue 28)")
    tt.add_column("target")
    tt.add_column("value")
    tt.add_column("")
    for tg in report["targets"]:
        v = tg["value"]
        if isinstance(v, float):
            v = _pct(v)
        elif isinstance(v, list):
            v = ", ".join(v) or "none"
        elif isinstance(v, tuple):
            v = " vs ".join(_pct(x) for x in v)
        tt.add_row(tg["target"], escape(str(v)), _met(tg["met"]))
    con.print(tt)
    if report["stale_pilots"]:
        con.print(f"{report['stale_pilots']} stale pilot(s): run on an older version of their task, not counted")
    if report["pilots_of_retired_tasks"]:
        con.print(f"pilots of tasks no longer shipped, not counted: {', '.join(report['pilots_of_retired_tasks'])}")
    if not Path(report["pilots_dir"]).is_dir():
        con.print(f"[yellow]no pilot records: {escape(report['pilots_dir'])} is not a folder[/yellow] (a source "
                  "checkout has pilots/; give another with --pilots)")
    for p in report["problems"]:
        con.print(f"[red]unreadable pilot[/red] {escape(p)}", soft_wrap=True)
    if not report["with_fastest"]:
        con.print("(fastest known solutions skipped: --no-fastest)")


def _print_paired(con, paired: dict) -> None:
    """Each piloted variant beside its own main task: the sharper test of "harder" than the suite-wide SRs."""
    from rich.markup import escape
    from rich.table import Table

    if not paired["pairs"]:
        return
    t = Table(title="augmented variants beside their own main tasks (vanilla pilots, current versions)")
    for h in ("variant", "SR (main → variant)", "median rounds", "budget", "median % budget"):
        t.add_column(h)
    for p in paired["pairs"]:
        t.add_row(escape(p["variant"]), f"{_pct(p['main_sr'])} → {_pct(p['variant_sr'])}",
                  f"{p['main_rounds']:g} → {p['variant_rounds']:g}", f"{p['main_budget']} → {p['variant_budget']}",
                  f"{_pct(p['main_used'])} → {_pct(p['variant_used'])}")
    con.print(t)
    con.print(f"{len(paired['pairs'])} pair(s): SR {_pct(paired['main_sr'])} on the main tasks, "
              f"{_pct(paired['variant_sr'])} on their variants; the variants' pilots took a median of "
              f"{paired['median_rounds_added']:+g} rounds and {100 * paired['median_used_added']:+.0f} points of "
              "the budget over their main tasks'")


@click.command("record-pilot")
@click.argument("episode", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--class", "failure_class", type=click.Choice(["system", "task", "agent"]), default=None,
              help="The failure class of a failed pilot (the paper's: a harness/world fault, an unfair or wrong "
                   "task, or the agents' own mistake). Required for a failure, refused for a success.")
@click.option("--cause", default="", help="One line: why it failed (or how it won).")
@click.option("--report", "reports", multiple=True, metavar="TEXT",
              help="What a player reported as confusing (repeatable; 'role: text').")
@click.option("--team", default="", help="Who played (e.g. '3 independent LLM agents over agentworld seat').")
@click.option("--server", default=None, help="The command that served the episode.")
@click.option("--commit", default=None, help="The harness commit it ran on (default: this checkout's HEAD).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where pilot folders live (default: pilots/ of the checkout).")
def record_pilot_cmd(episode: Path, failure_class: str | None, cause: str, reports: tuple[str, ...], team: str,
                     server: str | None, commit: str | None, out_dir: Path | None) -> None:
    """Record the episode in EPISODE (a folder written by agentworld run or serve) as a pilot: its trajectory
    and final state (gzipped), result, task snapshot and pilot.json, in a new folder under pilots/."""
    from ..runs.pilots import PilotError, default_pilots_dir, record_pilot

    if not cause.strip() and failure_class:
        raise click.BadParameter("a failed pilot needs a one-line cause", param_hint="--cause")
    try:
        dest = record_pilot(episode, out_dir or default_pilots_dir(), failure_class=failure_class, cause=cause,
                            team=team, server=server, reports=reports, commit=commit)
    except PilotError as exc:
        raise click.ClickException(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{episode}: {exc}") from None
    record = json.loads((dest / "pilot.json").read_text(encoding="utf-8"))
    outcome = "won" if record["success"] else f"lost ({record['failure_class']} error)"
    click.echo(f"recorded {dest}: {record['task']} {record['variant']} seed {record['seed']}, {outcome} in "
               f"{record['rounds']}/{record['budget']} rounds")
    if sys.stdout.isatty():
        click.echo("add it to the table in pilots/README.md and commit the folder")
