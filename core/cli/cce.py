"""``agentworld cce``: score episodes (``cce RUN_DIR``), compare judges (``cce compare``), draw a graph (``cce graph``)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import click

from ..hookspecs import hookimpl


class _DefaultGroup(click.Group):
    """``agentworld cce RUN_DIR ...`` means ``agentworld cce score RUN_DIR ...``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["score", *args]
        return super().parse_args(ctx, args)


def _options(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{p!r}: write KEY=VALUE, e.g. -o retries=5", param_hint="-o/--option")
        out[key.strip().replace("-", "_")] = value.strip()
    return out


def build_judge(name: str, model: str | None, base_url: str | None, api_key_env: str | None,
                options: dict[str, Any]) -> Any:
    from .. import plugins
    from ..cce.judges import JudgeConfigError

    try:
        factory = plugins.get("judge", name)
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0]), param_hint="--judge") from exc
    kwargs = dict(options)
    for key, value in (("model", model), ("base_url", base_url), ("api_key_env", api_key_env)):
        if value is not None:
            kwargs[key] = value
    try:
        return factory(**kwargs)
    except JudgeConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    except TypeError as exc:
        raise click.UsageError(f"judge {name!r}: {exc}") from exc


def _cache(run_dir: Path, cache_dir: str | None, no_cache: bool) -> Any:
    from ..cce.judges import JudgeCache, default_cache_dir

    if no_cache:
        return None
    if cache_dir:
        root = Path(cache_dir)
    elif os.environ.get("AGENTWORLD_JUDGE_CACHE"):  # one cache shared by every run (~/.cache/... style)
        root = default_cache_dir()
    else:
        root = run_dir / ".cce_cache"
    return JudgeCache(root)


def _episode_dirs(run_dir: Path) -> list[Path]:
    from ..cce.graph import EpisodeError, find_episode_dirs

    try:
        return find_episode_dirs(run_dir)
    except EpisodeError as exc:
        raise click.UsageError(str(exc)) from exc


def _console() -> Any:
    from ..console import make_console

    return make_console()


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


@click.group("cce", cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cce_group() -> None:
    """Causal Collaboration Effectiveness: `agentworld cce RUN_DIR --judge NAME` scores episodes;
    `cce compare` compares judges; `cce graph` draws one episode's causal graph."""


@cce_group.command("score")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--judge", "judge_name", default="grounded", show_default=True, help="Registered judge (`agentworld plugins`).")
@click.option("--model", default=None, help="Judge model (openai; for grounded: the LLM asked about chat).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("-o", "--option", "opts", multiple=True, help="Judge option KEY=VALUE (repeatable).")
@click.option("--label", default=None, help="Name of the stored result cce/<label>.json (default: judge-model).")
@click.option("--cache-dir", default=None,
              help="Judge answer cache (default RUN_DIR/.cce_cache, or $AGENTWORLD_JUDGE_CACHE when set).")
@click.option("--no-cache", is_flag=True, help="Ask the judge even when an answer is cached.")
@click.option("--judge-failed", is_flag=True, help="Also judge failed tasks (their CCE stays 0; raw_cce is kept).")
@click.option("--rounds-per-call", default=1, show_default=True, type=click.IntRange(1),
              help="Paper method: rounds per sweep call (1 = the paper).")
@click.option("--success-window", default=None, type=click.IntRange(1),
              help="Paper method: show only the last N rounds in the success question.")
@click.option("--target-window", default=None, type=click.IntRange(1),
              help="Paper method: show only contributing actions within N rounds after the judged round.")
def score_cmd(run_dir: Path, judge_name: str, model: str | None, base_url: str | None, api_key_env: str | None,
              opts: tuple[str, ...], label: str | None, cache_dir: str | None, no_cache: bool, judge_failed: bool,
              rounds_per_call: int, success_window: int | None, target_window: int | None) -> None:
    """Score every episode under RUN_DIR; print CCE, PAC spread and judge calls.

    Each judge's result is stored as cce/<label>.json; cce.json is the latest complete one. A judging with
    failed judge calls is stored as incomplete (no CCE, never 0) and replaces no complete result."""
    from rich.table import Table

    from ..cce.graph import EpisodeError
    from ..cce.score import ScoreOptions, judge_label, score_episode, write_report

    judge = build_judge(judge_name, model, base_url, api_key_env, _options(opts))
    cache = _cache(run_dir, cache_dir, no_cache)
    extra = {"rounds_per_call": rounds_per_call, "success_window": success_window, "target_window": target_window}
    label = label or judge_label(judge.name, getattr(judge, "model", ""))
    folders = _episode_dirs(run_dir)
    console = _console()
    replays = getattr(judge, "method", "") == "counterfactual"  # a judge that plays episodes again: its cost
    columns = ("replays", "replay s") if replays else ("calls", "cached", "failed", "tokens")
    table = Table("episode", "task", "ok", "CCE", "raw", "C/T", "PAC min–max", *columns,
                  title=f"CCE · judge {label} (C/T: contributing/all actions)")
    reports = []
    kept: list[Path] = []  # episodes whose complete result of this label an incomplete one did not replace
    for folder in folders:
        try:
            report = score_episode(folder, judge, cache=cache,
                                   options=ScoreOptions(judge_failed=judge_failed, extra=extra))
        except EpisodeError as exc:
            console.print(f"[red]skipped[/red] {folder}: {exc}")
            continue
        written = write_report(folder, report, label)
        reports.append(report)
        if written.name != f"{label}.json":
            kept.append(folder)
        spread = report.pac_spread()
        value = _fmt(report.cce) if report.complete else f"[yellow]incomplete[/yellow] (≥{_fmt(report.partial_cce)})"
        table.add_row(report.episode_id, report.task_id, "yes" if report.task_success else "no", value,
                      _fmt(report.raw_cce), f"{report.n_contributing}/{report.n_actions}",
                      f"{spread[0]:.2f}–{spread[1]:.2f}" if spread else "—", *_cost_cells(report, replays))
    console.print(table)
    if replays:
        cf = [r.counterfactual for r in reports if r.counterfactual]
        if cf:
            console.print(f"counterfactual: {sum(c['replays'] for c in cf)} replays in {sum(c['seconds'] for c in cf):.1f} s "
                          f"over {len(cf)} judged episode(s), at most {max(c['replays'] for c in cf)} in one (cap "
                          f"{cf[0]['max_replays']} per episode; group size {cf[0]['group_size']})")
    complete = [r for r in reports if r.complete]
    if complete:
        wins = [r.cce for r in complete if r.task_success]
        console.print(f"CCE ({len(complete)} complete episodes, failed tasks = 0): "
                      f"{sum(r.cce for r in complete) / len(complete):.3f} · "
                      f"CCE on successes ({len(wins)}): {_fmt(sum(wins) / len(wins) if wins else None)} · "
                      f"judge calls {sum(r.judge_calls for r in reports)} (+{sum(r.cached_calls for r in reports)} cached) · "
                      f"tokens {sum(r.tokens_in + r.tokens_out for r in reports)}")
    incomplete = [r for r in reports if not r.complete]
    if incomplete:
        failed = sum(r.failed_calls for r in incomplete)
        console.print(f"[yellow]{len(incomplete)} episode(s) incomplete: {failed} judge call(s) failed after retries. "
                      f"Stored with complete: false and no CCE (not 0), left out of the mean above and of reports; "
                      f"see 'calls' and 'notes' in cce/{label}.json and run again to retry "
                      f"(answered questions come from the cache).[/yellow]")
        if kept:
            console.print(f"[yellow]{len(kept)} of them already had a complete cce/{label}.json: kept; this "
                          f"attempt is in cce/{label}.incomplete.json[/yellow]")


def _cost_cells(report: Any, replays: bool) -> tuple[str, ...]:
    if replays:
        c = report.counterfactual or {}
        return (str(c.get("replays", 0)), f"{c.get('seconds', 0.0):.2f}")
    return (str(report.judge_calls), str(report.cached_calls), str(report.failed_calls),
            str(report.tokens_in + report.tokens_out))


@cce_group.command("compare")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("more_labels", nargs=-1, metavar="")
@click.option("--judges", "labels", required=True, multiple=True,
              help="Two or more stored judge labels (cce/<label>.json): --judges A B C; a built-in judge "
                   "without options (grounded, scripted) is scored on the fly when missing.")
@click.option("--cache-dir", default=None, help="Judge answer cache for on-the-fly scoring.")
def compare_cmd(run_dir: Path, more_labels: tuple[str, ...], labels: tuple[str, ...], cache_dir: str | None) -> None:
    """Agreement and Cohen's kappa between judges, per-task CCE differences, and rank stability.

    RUN_DIR comes first: agentworld cce compare RUN_DIR --judges A B [C ...]"""
    labels = (*labels, *more_labels)  # click options take one value: the other labels arrive as arguments
    from rich.table import Table

    from .. import plugins
    from ..cce.graph import CCE_DIR, EpisodeError
    from ..cce.score import read_report, score_episode, stored_labels, write_report
    from ..cce.compare import compare_reports

    names = [x for label in labels for x in label.replace(",", " ").split()]
    if len(names) < 2:
        raise click.BadParameter("name at least two judges, e.g. --judges grounded openai-gpt-4.1", param_hint="--judges")
    folders = _episode_dirs(run_dir)
    cache = _cache(run_dir, cache_dir, False)
    reports: dict[str, dict[str, Any]] = {n: {} for n in names}
    judges: dict[str, Any] = {}  # built-in judges scored on the fly, built once each
    groups: dict[str, str] = {}
    incomplete: dict[str, int] = {}
    for folder in folders:
        key = str(folder.relative_to(run_dir)) if folder != run_dir else folder.name
        groups[key] = str(folder.parent.relative_to(run_dir)) if folder != run_dir else "."
        for name in names:
            path = folder / CCE_DIR / f"{name}.json"
            if path.is_file():
                reports[name][key] = read_report(path)
            elif name in plugins.judges():
                if name not in judges:
                    judges[name] = build_judge(name, None, None, None, {})
                try:
                    report = score_episode(folder, judges[name], cache=cache)
                except EpisodeError as exc:
                    raise click.UsageError(str(exc)) from exc
                write_report(folder, report, name)
                reports[name][key] = report
            else:
                have = ", ".join(stored_labels(folder)) or "none"
                raise click.UsageError(f"{folder}: no stored result for judge {name!r} (stored: {have}); "
                                       f"score it first: agentworld cce {run_dir} --judge ... --label {name}")
    for name in names:  # an incomplete judging has no CCE and misses decisions: not compared
        for key in [k for k, r in reports[name].items() if not r.complete]:
            del reports[name][key]
            incomplete[name] = incomplete.get(name, 0) + 1
    try:
        cmp = compare_reports(reports, groups)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    console = _console()
    for name, n in incomplete.items():
        console.print(f"[yellow]judge {name}: {n} incomplete episode(s) (failed judge calls) left out[/yellow]")
    t = Table("judge A", "judge B", "episodes", "actions", "agreement", "Cohen's kappa", "Kendall tau (tasks)",
              title="Action-level agreement (contributing or not)")
    for p in cmp.pairs:
        t.add_row(p.a, p.b, str(p.n_episodes), str(p.n_actions), _fmt(p.agreement), _fmt(p.kappa),
                  _fmt(cmp.task_tau.get((p.a, p.b))))
    console.print(t)
    tasks = sorted({task for j in cmp.judges for task in cmp.task_cce[j]})
    t2 = Table("task", *cmp.judges, "max diff", title="Mean CCE per task")
    for task in tasks:
        vals = [cmp.task_cce[j].get(task) for j in cmp.judges]
        known = [v for v in vals if v is not None]
        t2.add_row(task, *(_fmt(v) for v in vals), _fmt(max(known) - min(known) if known else None))
    console.print(t2)
    console.print(f"Ranking of tasks by CCE the same under every judge: {'yes' if cmp.same_task_ranking else 'no'}")
    if len(next(iter(cmp.group_cce.values()), {})) > 1:
        console.print(f"Ranking of runs by CCE the same under every judge: {'yes' if cmp.same_group_ranking else 'no'}")
    if cmp.agent_tau:
        t3 = Table("judge A", "judge B", "episodes", "Kendall tau (mean)", "no pair reversed",
                   title="Agents ranked by PAC within each episode (episodes with 2+ agents that acted)")
        for (a, b), (tau, same, n) in cmp.agent_tau.items():
            t3.add_row(a, b, str(n), _fmt(tau), f"{same:.0%}")
        console.print(t3)
    for (a, b), tools in cmp.differ.items():
        t4 = Table("tool", f"only {a}", f"only {b}", title=f"Where {a} and {b} differ: actions one marks "
                                                                 "contributing and the other not, by tool")
        for tool, (only_a, only_b) in tools.items():
            t4.add_row(tool, str(only_a), str(only_b))
        console.print(t4)
    for name, c in cmp.replays.items():
        console.print(f"judge {name}: {int(c['replays'])} replays in {c['seconds']:.1f} s over {int(c['episodes'])} "
                      f"episode(s) (at most {int(c['max_replays'])} in one)")


GRAPH_FORMATS = (".svg", ".png")


@cce_group.command("graph")
@click.argument("episode_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="File to write: .svg (with tooltips) or .png, by its name (default EPISODE_DIR/cce_graph.svg).")
@click.option("--label", default=None, help="Draw cce/<label>.json instead of the latest cce.json.")
def graph_cmd(episode_dir: Path, out: Path | None, label: str | None) -> None:
    """Draw an episode's causal graph as SVG or PNG (agents as lanes, rounds left to right)."""
    from ..cce.graph import CCE_DIR, EpisodeError
    from ..cce.score import read_report

    out = out or episode_dir / "cce_graph.svg"
    if out.suffix.lower() not in GRAPH_FORMATS:
        raise click.BadParameter(f"{out.name}: the format comes from the file name; end it in .svg or .png",
                                 param_hint="--out")
    try:
        report = read_report(episode_dir / CCE_DIR / f"{label}.json" if label else episode_dir)
    except EpisodeError as exc:
        raise click.UsageError(str(exc)) from exc
    if out.suffix.lower() == ".png":
        from ..cce.png import render_png

        render_png(report, out)
    else:
        from ..cce.svg import render_svg

        out.write_text(render_svg(report), encoding="utf-8")
    value = f"CCE {report.cce:.3f}" if report.cce is not None else "CCE incomplete"
    click.echo(f"wrote {out} ({len(report.nodes)} actions, {len(report.edges)} edges, {value})")


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(cce_group)
