"""The ``run`` and ``report`` commands, and the live progress displays of a run.

``agentworld run --task ID --framework oracle`` runs one episode with a live view of the current round,
agent and action, then prints a result table. Several episodes get a progress board instead (done and
running, the round of each running episode, SR so far, tokens and cost so far).
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..console import make_console
from ..hookspecs import hookimpl
from .backend import parse_world, world_options

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

# run flags that are model request options (ModelSpec fields, passed to every team as TeamSpec.options)
MODEL_FLAGS = {"temperature": "temperature", "max_tokens": "max_tokens", "request_timeout": "timeout",
               "tool_choice": "tool_choice", "context_window": "context_window", "context_budget": "context_budget"}
RESUMABLE_MODEL_OPTIONS = ("timeout", "context_window")

EXIT_BUDGET_STOP = 4
EXIT_EPISODE_ERRORS = 3
EXIT_INTERRUPTED = 130


# ---------------------------------------------------------------------- displays
def describe_action(ev: TurnEvent) -> str:
    if ev.tool is None:
        return "(no tool call)"
    args = ", ".join(f"{k}={v!r}" for k, v in (ev.arguments or {}).items())
    if len(args) > 60:
        args = args[:57] + "..."
    return f"{ev.tool}({args})"


def live_display(console: Console, **options: Any) -> Live | None:
    """A started transient rich ``Live`` display on ``console``; None where it would show nothing: on a
    console that is not a terminal (a pipe, a file, a CI log) a transient display prints nothing and leaves
    nothing, but would still render its view at every refresh."""
    if not (console.is_terminal or console.is_jupyter):
        return None
    from rich.live import Live

    live = Live(console=console, transient=True, **options)
    live.start()
    return live


class SingleEpisodeView:
    """Live view of one episode: round, agent and action as they happen, then a result table."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Live | None = None
        self.round = 0
        self.max_rounds = 0
        self.last: deque[TurnEvent] = deque(maxlen=8)
        self.checkpoints = 0
        self.task_id = ""

    def notice(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[yellow]damaged:[/] {escape(text)}", soft_wrap=True)

    def run_started(self, total: int, already_done: int) -> None:
        # rendered by the display's refresh (8 times a second, and when it stops) from the current state, not
        # once per event: an oracle episode has hundreds of events a second
        self.live = live_display(self.console, refresh_per_second=8, get_renderable=self._render)

    def episode_started(self, job: Any) -> None:
        self.task_id = job.task_id
        self.console.print(f"[bold]{job.task_id}[/] · {job.framework}"
                           f"{' · ' + job.model if job.model else ''} · {job.variant} · seed {job.seed}")

    def episode_event(self, job: Any, event: Any) -> None:
        from ..play.records import StartEvent, TickEvent, TurnEvent

        if isinstance(event, StartEvent):
            self.max_rounds = event.max_rounds
        elif isinstance(event, TurnEvent):
            self.round = event.round
            self.last.append(event)
        elif isinstance(event, TickEvent):
            self.checkpoints = event.checkpoints_passed

    def _render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        head = Text.assemble(("Round ", "bold"), (f"{self.round}/{self.max_rounds or '?'}", "bold cyan"),
                             f"   checkpoints passed: {self.checkpoints}")
        table = Table(show_header=True, header_style="dim", box=None, pad_edge=False)
        table.add_column("round", justify="right")
        table.add_column("agent")
        table.add_column("action")
        table.add_column("result", overflow="ellipsis", no_wrap=True, max_width=70)
        for ev in tuple(self.last):  # a copy: the display's thread renders while the episode appends
            style = "green" if ev.ok else ("yellow" if ev.tool else "dim")
            table.add_row(str(ev.round), ev.username or ev.agent, describe_action(ev),
                          Text(ev.result.replace("\n", " "), style=style))
        return Group(head, table)

    def episode_finished(self, job: Any, result: EpisodeResult) -> None:
        pass

    def run_finished(self, summary: Any) -> None:
        if self.live is not None:
            self.live.stop()
        for r in summary.results:
            self.console.print(result_table(r, summary.run_dir))


def result_table(r: EpisodeResult, run_dir: Path | None = None) -> Table:
    from rich.table import Table
    from ..runs.runner import RunDir

    verdict = "[bold green]SUCCESS[/]" if r.success else ("[bold red]ERROR[/]" if r.end_reason == "error"
                                                          else "[bold yellow]FAILED[/]")
    t = Table(title=f"{r.task_id}: {verdict}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("episode", r.episode_id)
    t.add_row("framework / model", f"{r.framework}{' / ' + r.model if r.model else ''}")
    t.add_row("variant · seed", f"{r.variant} · {r.seed}")
    t.add_row("success", "yes" if r.success else "no")
    t.add_row("PSR", f"{r.psr:.0%}")
    for c in r.checkpoints:
        mark = "[green]✓[/]" if c.achieved else "[red]✗[/]"
        t.add_row(f"  {mark} {c.name}", f"{c.value:g}/{c.target:g}")
    if r.message:
        t.add_row("error" if r.end_reason == "error" else "verifier", r.message)
    t.add_row("end", f"{r.end_reason} after {r.rounds}/{r.max_rounds} rounds")
    t.add_row("actions · chats · waits", f"{r.actions} · {r.chats} · {r.waits}")
    t.add_row("tool errors · no calls · refused · infra · harness",
              f"{r.tool_errors} · {r.no_calls} · {r.refused_calls} · {r.infra_errors} · {r.harness_errors}")
    if r.tokens_in or r.tokens_out or r.cost_usd:
        t.add_row("tokens in/out · cost", f"{r.tokens_in}/{r.tokens_out} · ${r.cost_usd:.4f}")
    t.add_row("wall time", f"{r.wall_s:.2f} s")
    if run_dir is not None:
        t.add_row("files", str(RunDir(run_dir).episode_dir(r.episode_id)))
    return t


class ProgressBoard:
    """Live board for many episodes: overall progress and one line per running episode."""

    def __init__(self, console: Console, concurrency: int) -> None:
        self.console = console
        self.concurrency = concurrency
        self.total = 0
        self.done = 0
        self.kept = 0
        self.successes = 0
        self.psr_sum = 0.0
        self.errors = 0
        self.tokens = 0
        self.cost = 0.0
        self.running: dict[str, dict[str, Any]] = {}
        self.live: Live | None = None
        self.t0 = time.monotonic()

    def notice(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[yellow]damaged:[/] {escape(text)}", soft_wrap=True)

    def run_started(self, total: int, already_done: int) -> None:
        self.total = total
        self.kept = already_done
        self.live = live_display(self.console, refresh_per_second=4, renderable=self._render())

    def episode_started(self, job: Any) -> None:
        self.running[job.episode_id] = {"job": job, "round": 0, "max": 0, "last": "", "tokens": 0}
        self._refresh()

    def episode_event(self, job: Any, event: Any) -> None:
        from ..play.records import StartEvent, TurnEvent

        row = self.running.get(job.episode_id)
        if row is None:
            return
        if isinstance(event, StartEvent):
            row["max"] = event.max_rounds
        elif isinstance(event, TurnEvent):
            row["round"] = event.round
            row["last"] = f"{event.username or event.agent}: {describe_action(event)}"
            row["tokens"] += event.tokens_in + event.tokens_out
        self._refresh()

    def episode_finished(self, job: Any, result: EpisodeResult) -> None:
        from ..runs.runner import needs_retry

        self.running.pop(job.episode_id, None)
        self.done += 1
        self.successes += result.success
        self.psr_sum += result.psr
        self.errors += needs_retry(result)
        self.tokens += result.tokens_in + result.tokens_out
        self.cost += result.cost_usd
        self._refresh()

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._render())

    def _render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        live_tokens = sum(r["tokens"] for r in self.running.values())
        sr = f"{self.successes / self.done:.1%}" if self.done else "-"
        psr = f"{self.psr_sum / self.done:.1%}" if self.done else "-"
        head = Text.assemble(
            ("episodes ", "bold"), (f"{self.done}/{self.total}", "bold cyan"), " done",
            f" ({self.kept} from before)" if self.kept else "", f" · {len(self.running)} running",
            " · SR ", (sr, "bold green"), " · PSR ", psr, f" · errors {self.errors}",
            f" · tokens {self.tokens + live_tokens:,} · ${self.cost:.4f}",
            f" · {time.monotonic() - self.t0:.0f}s")
        table = Table(box=None, header_style="dim", pad_edge=False)
        table.add_column("episode", overflow="ellipsis", no_wrap=True, max_width=48)
        table.add_column("round", justify="right")
        table.add_column("last action", overflow="ellipsis", no_wrap=True, max_width=60)
        for eid, row in list(self.running.items())[:20]:
            table.add_row(eid, f"{row['round']}/{row['max'] or '?'}", row["last"])
        return Group(head, table) if self.running else head

    def run_finished(self, summary: Any) -> None:
        if self.live is not None:
            self.live.stop()
        print_run_summary(summary, self.console)


def print_run_summary(summary: Any, console: Console) -> None:
    """The run's result tables; when no episode finished without errors (the report has nothing to show),
    a table of what went wrong in each errored episode instead."""
    from ..runs.report import ReportError, load_runs, print_summary

    if not summary.results:
        return
    try:
        print_summary(load_runs([summary.run_dir]), console)
    except ReportError:
        console.print(errored_episodes_table(summary))


def first_error(run_dir: Path, r: EpisodeResult) -> str:
    """What went wrong in an errored episode: the harness error, else its first turn's infrastructure error."""
    from ..play.records import TurnEvent
    from ..runs.runner import RunDir

    if r.end_reason == "error":
        return r.message
    from ..play.trajectory import read_events

    try:
        events = read_events(RunDir(run_dir).episode_dir(r.episode_id) / "trajectory.jsonl")
    except (OSError, ValueError):
        return r.message
    return next((e.infra_error for e in events if isinstance(e, TurnEvent) and e.infra_error), r.message)


def errored_episodes_table(summary: Any, limit: int = 20) -> Table:
    from rich.markup import escape
    from rich.table import Table
    from ..runs.runner import needs_retry

    errored = [r for r in summary.results if needs_retry(r)]
    t = Table(title=f"{len(errored)} of {len(summary.results)} episode(s) errored: no result to report",
              title_justify="left")
    for column in ("episode", "what failed", "first error"):
        t.add_column(column, overflow="fold")
    for r in errored[:limit]:
        what = "the harness" if r.end_reason == "error" else f"infrastructure errors on {r.infra_errors} turn(s)"
        t.add_row(r.episode_id, what, escape(first_error(summary.run_dir, r)[:300]))
    if len(errored) > limit:
        t.add_row(f"... {len(errored) - limit} more", "", "")
    return t


def error_files(run_dir: Path, results: list[EpisodeResult]) -> list[Path]:
    """The error.txt files the errored episodes left (only harness errors write one)."""
    from ..runs.runner import RunDir, needs_retry

    found = (RunDir(run_dir).episode_dir(r.episode_id) / "error.txt" for r in results if needs_retry(r))
    return [p for p in found if p.is_file()]


# ---------------------------------------------------------------------- `run`
def _parse_rate_limits(values: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in values:
        provider, sep, rate = v.partition("=")
        try:
            out[provider.strip()] = float(rate)
            if not sep or not provider.strip() or float(rate) <= 0:
                raise ValueError
        except ValueError:
            raise click.BadParameter(f"{v!r}: use PROVIDER=TURNS_PER_SECOND, e.g. openai=5",
                                     param_hint="--rate-limit") from None
    return out


def _parse_prices(values: tuple[str, ...]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for v in values:
        model, sep, numbers = v.rpartition("=")
        try:
            p_in, p_out = (float(x) for x in numbers.split(","))
            if not sep or not model:
                raise ValueError
        except ValueError:
            raise click.BadParameter(f"{v!r}: use MODEL=IN,OUT in USD per million tokens, e.g. "
                                     f"openai:gpt-4.1-mini=0.4,1.6", param_hint="--price") from None
        out[model] = [p_in, p_out]
    return out


@click.command("run", context_settings={"show_default": True})
@click.argument("spec_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task", "tasks", multiple=True, help="Task id or task YAML path (repeatable).")
@click.option("--suite", type=click.Choice(["main", "augmented"]), help="Run every task of a suite.")
@click.option("--category", "categories", multiple=True, help="Keep only tasks of this category (repeatable).")
@click.option("--agents", help="Keep only tasks whose team size is in this range, e.g. 10-20.")
@click.option("--framework", "frameworks", multiple=True,
              help="Framework plugin (repeatable for a grid) [default: oracle].")
@click.option("--model", "models", multiple=True,
              help="Model spec provider:model (repeatable); default scripted:oracle for LLM frameworks, "
                   "none for oracle/random.")
@click.option("--base-url", help="Base URL of an OpenAI-compatible endpoint.")
@click.option("--api-key-env", help="NAME of the environment variable holding the API key (never the key).")
@click.option("--temperature", type=click.FloatRange(0, 2), help="Sampling temperature of the model [default: 0].")
@click.option("--max-tokens", type=click.IntRange(1), help="Token limit of each model answer [default: the server's].")
@click.option("--request-timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds one model request may take [default: 60].")
@click.option("--tool-choice", type=click.Choice(["auto", "required", "none"]),
              help="tool_choice sent with each request [default: required for the OpenAI API, auto for "
                   "OpenAI-compatible servers].")
@click.option("--context-window", type=click.IntRange(512),
              help="The model's context length in tokens; the history budget is derived from it "
                   "[default: read from the server's /v1/models where offered].")
@click.option("--context-budget", type=click.IntRange(1000),
              help="Characters of history each agent keeps, overriding --context-window [default: derived, "
                   "else 24000].")
@click.option("--tools", type=click.Choice(["inproc", "mcp"]), default=None,
              help="How agents reach the tools [default: inproc].")
@click.option("--team-factory", help="module:function building your own Team from a TeamSpec.")
@click.option("--trials", type=int, help="Trials per task (trial k uses seed + k) [default: 1].")
@click.option("--seed", type=int, help="Base seed [default: 0].")
@click.option("--variant", "variants", multiple=True,
              help="Protocol variant (repeatable: baselines/ablations) [default: vanilla].")
@click.option("--concurrency", type=int, help="Episodes at once [default: 4].")
@click.option("--rate-limit", "rate_limits", multiple=True, help="PROVIDER=TURNS_PER_SECOND (repeatable).")
@click.option("--max-tokens-total", type=int, help="Stop the run cleanly once this many tokens are used.")
@click.option("--max-cost", type=float, help="Stop the run cleanly once this many USD are spent (needs --price).")
@click.option("--price", "prices", multiple=True,
              help="MODEL=IN,OUT: USD per million input/output tokens, for cost and --max-cost (repeatable).")
@click.option("--cce", "cce_judge", help="Score each episode's CCE with this judge (writes cce.json), e.g. grounded.")
@click.option("--cce-model", help="Model of the CCE judge (an LLM judge, or the grounded judge's chat judge).")
@click.option("--obs-format", help="Observation format given to agents [default: text].")
@click.option("--turn-timeout", type=float, help="Seconds an agent has for one turn.")
@click.option("--max-attempts", type=int,
              help="An episode that errors the same way this many times is failed for good, not retried [default: 3].")
@world_options
@click.option("--executor", type=click.Choice(["local", "dask"]), help="Where episodes run [default: local].")
@click.option("--workers", "dask_workers", type=int, help="Dask: local worker processes [default: 2].")
@click.option("--scheduler", "dask_scheduler", help="Dask: address of an existing scheduler.")
@click.option("--name", help="Run name (the folder is runs/<timestamp>-<name>).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run folder to create [default: runs/<run-id>].")
@click.option("--resume", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Continue the run in this folder (finished episodes are kept).")
@click.option("--no-progress", is_flag=True, help="No live display.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary instead of tables.")
def run_cmd(spec_file: Path | None, tasks: tuple[str, ...], categories: tuple[str, ...],
            frameworks: tuple[str, ...], models: tuple[str, ...], variants: tuple[str, ...],
            rate_limits: tuple[str, ...], prices: tuple[str, ...], out: Path | None, resume: Path | None, no_progress: bool,
            as_json: bool, world: str | None, server_url: str | None, world_option: tuple[str, ...],
            **flags: Any) -> None:
    """Run episodes: one task (live view + result table) or a grid over tasks, frameworks, models,
    variants and trials (live board), from flags or a YAML run spec (SPEC_FILE).

    \b
    Examples:
      agentworld run --task task_205_goldfield_two_forges --framework oracle
      agentworld run --suite main --framework oracle --variant vanilla --variant no_communication
      agentworld run spec.yaml --concurrency 8
      agentworld run --resume runs/20260101-120000-oracle
    """
    from ..runs.run_spec import RunSpecError, build_spec, load_run_spec
    from ..runs.runner import NotApplicableRun, NullObserver, Runner, RunDir, make_executor, new_run_id, unique_run_dir

    console = make_console(stderr=as_json)
    fields: dict[str, Any] = {k: v for k, v in flags.items() if v is not None}
    # Repeatable flags: given ones replace the spec's list; absent ones leave it alone.
    for name, values in (("tasks", tasks), ("categories", categories), ("frameworks", frameworks),
                         ("models", models), ("variants", variants)):
        if values:
            fields[name] = list(values)
    if rate_limits:
        fields["rate_limits"] = _parse_rate_limits(rate_limits)
    if prices:
        fields["prices"] = _parse_prices(prices)
    cce_model = fields.pop("cce_model", None)
    if cce_model:
        fields["cce_options"] = {"model": cce_model}
    model_options = {MODEL_FLAGS[k]: fields.pop(k) for k in list(fields) if k in MODEL_FLAGS}
    if world or server_url or world_option:
        fields["world"], fields["world_options"] = parse_world(world, server_url, world_option)
    try:
        if resume is not None:
            if spec_file or tasks or fields.get("suite"):
                raise RunSpecError("--resume continues a run with its own spec: drop SPEC_FILE/--task/--suite")
            manifest = RunDir(resume).read_manifest()
            allowed = {"concurrency", "max_tokens_total", "max_cost", "prices", "executor", "dask_workers",
                       "dask_scheduler", "rate_limits", "turn_timeout", "max_attempts"}
            ignored = sorted(set(fields) - allowed)
            if ignored:
                raise RunSpecError(f"--resume keeps the run's plan; these flags cannot change it: "
                                   f"{', '.join(ignored)} (only {', '.join(sorted(allowed))} may)")
            changed = sorted(k for k, v in model_options.items() if k not in RESUMABLE_MODEL_OPTIONS)
            if changed:
                raise RunSpecError(f"--resume keeps the run's model settings; only --request-timeout and "
                                   f"--context-window may change (the server's facts), not {', '.join(changed)}")
            kept = manifest["spec"]
            spec = build_spec({**kept, **fields, "options": {**kept.get("options", {}), **model_options}},
                              source=f"{resume}/manifest.json")
            run_dir = resume
        else:
            if model_options:  # flags win over the spec file's options of the same name
                from_file = load_run_spec(spec_file, **fields).options if spec_file else {}
                fields["options"] = {**from_file, **model_options}
            spec = load_run_spec(spec_file, **fields) if spec_file else build_spec(fields)
            if out is not None:
                run_dir = out
            else:
                run_dir = unique_run_dir(Path("runs"), new_run_id(spec))
        executor = make_executor(spec)
        runner = Runner(spec, run_dir, executor=executor, resume=resume is not None)
        # A wrong framework, team factory, model spec or missing API key fails here, before anything runs.
        _check_teams(runner)
    except NotApplicableRun as e:  # a usage error: the variant cannot be played on what was selected
        raise click.UsageError(str(e)) from None
    except (RunSpecError, ValueError, KeyError, ImportError) as e:
        raise click.ClickException(_message(e)) from None
    if runner.not_applicable:
        from ..runs.report import print_not_applicable

        print_not_applicable(runner.not_applicable, console)

    if no_progress or as_json:
        observer: Any = NullObserver()  # no live display
    elif len(runner.jobs) == 1:
        observer = SingleEpisodeView(console)
    else:
        observer = ProgressBoard(console, spec.concurrency)
    _run_and_report(runner, observer, console, run_dir, spec, as_json)


def _run_and_report(runner: Any, observer: Any, console: "Console", run_dir: Path, spec: Any, as_json: bool) -> None:
    """Run the planned episodes with ``observer`` watching, then print the summary and exit with the run's code."""
    from rich.markup import escape

    from ..runs.run_spec import RunSpecError
    from ..runs.runner import NullObserver

    runner.observer = observer
    try:
        import asyncio

        summary = asyncio.run(runner.run())
    except KeyboardInterrupt:
        if getattr(observer, "live", None) is not None:
            observer.live.stop()
        console.print(f"[yellow]interrupted[/]: continue with  agentworld run --resume {run_dir}", soft_wrap=True)
        sys.exit(EXIT_INTERRUPTED)
    except RunSpecError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps({"run_dir": str(summary.run_dir), "planned": summary.planned, "done": summary.done,
                               "ran": summary.ran, "successes": summary.successes, "errors": summary.errors,
                               "failed": summary.failed, "tokens": summary.tokens, "cost_usd": summary.cost_usd,
                               "stop_reason": summary.stop_reason, "damaged": summary.notices}))
    else:
        if isinstance(observer, NullObserver):
            for text in summary.notices:
                console.print(f"[yellow]damaged:[/] {escape(text)}", soft_wrap=True)
        if isinstance(observer, NullObserver):
            print_run_summary(summary, console)
        console.print(f"run folder: [bold]{summary.run_dir}[/]  ({summary.done}/{summary.planned} episodes done"
                      f"{f', {summary.errors} errored (retried by --resume)' if summary.errors else ''})")
        if summary.stop_reason:
            console.print(f"[yellow]stopped:[/] {summary.stop_reason}; continue with  "
                          f"agentworld run --resume {summary.run_dir} --max-tokens-total/--max-cost ...", soft_wrap=True)
    if summary.stop_reason:
        sys.exit(EXIT_BUDGET_STOP)
    if summary.failed and not as_json:
        console.print(f"[red]{summary.failed} episode(s) failed for good[/]: the same error {spec.max_attempts} times "
                      f"in a row, so --resume no longer retries them (see manifest.json 'given_up' and "
                      f"episodes/<id>/error.txt; resume with a higher --max-attempts to try again)")
    if summary.failed and not summary.errors:
        sys.exit(EXIT_EPISODE_ERRORS)
    if summary.errors:
        if not as_json:
            files = error_files(summary.run_dir, summary.results)
            where = (f"tracebacks in {', '.join(str(f) for f in files[:3])}{' ...' if len(files) > 3 else ''}; "
                     if files else "each failed turn's error is its infra_error in trajectory.jsonl; ")
            console.print(f"{where}`agentworld run --resume {summary.run_dir}` retries errored episodes",
                          soft_wrap=True)
        sys.exit(EXIT_EPISODE_ERRORS)


def _check_teams(runner: Any) -> None:
    """Resolve every framework/team factory, check that its packages are installed, parse every model spec of
    the plan (with its options), and check that the API key variable of each model is set: better one clear
    error than a run of failures."""
    from ..runs.runner import parse_model_spec
    from ..runs.jobs import resolve_team_factory

    seen = set()
    for job in runner.jobs:
        key = (job.framework, job.team_factory, job.model)
        if key in seen:
            continue
        seen.add(key)
        factory = resolve_team_factory(job)
        check_installed = getattr(factory, "check_installed", None)  # framework plugins whose packages are extras
        if check_installed is not None:
            check_installed()
        if job.model and not job.team_factory:
            parse_model_spec(job.model, job.options).api_key()


def _message(e: BaseException) -> str:
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])
    return str(e)


# ---------------------------------------------------------------------- `report`
@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report (works offline).")
@click.option("--by", type=click.Choice(["config", "variant"]), default=None,
              help="Rows of the main table: configurations (Table 2) or variants (Tables 3/4) [default: auto].")
@click.option("--judge", "judge_label", default=None,
              help="Read CCE from this judge's results (cce/<LABEL>.json) [default: each episode's cce.json].")
@click.option("--bootstrap-reps", type=click.IntRange(100), default=2000, show_default=True,
              help="Resamples of the task-clustered bootstrap intervals.")
@click.option("--bootstrap-seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--max-viewer-episodes", type=click.IntRange(1), default=40, show_default=True,
              help="HTML: episodes included in the episode viewer (sampled across outcomes, tasks, configurations).")
@click.option("--json", "as_json", is_flag=True, help="Print the aggregated tables as JSON.")
def report_cmd(run_dirs: tuple[Path, ...], html_path: Path | None, by: str | None, judge_label: str | None,
               bootstrap_reps: int, bootstrap_seed: int, max_viewer_episodes: int, as_json: bool) -> None:
    """Tables of one or more runs: SR, PSR, CCE, rounds, chats, actions with 95% intervals over tasks, by
    category, team size and task; variants as rows (the paper's Tables 3/4); paired differences by task;
    end reasons and errors; run-to-run spread over seeds; communication."""
    from ..runs.report import Boot, ReportError, build_report, load_runs, print_report

    try:
        runs = load_runs(list(run_dirs), judge=judge_label)
        if judge_label and not any(r.cce or r.cce_incomplete for r in runs):
            raise ReportError(f"no episode has a stored result of judge {judge_label!r} (cce/{judge_label}.json); "
                              f"stored labels: {', '.join(_stored_labels(runs)) or 'none'}")
        rep = build_report(runs, by=by, boot=Boot(reps=bootstrap_reps, seed=bootstrap_seed), judge=judge_label)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(_finite(rep), indent=2, default=str))
    else:
        print_report(rep, make_console())
    if html_path is not None:
        from ..runs.html_report import write_html_report

        write_html_report(runs, rep, html_path, max_episodes=max_viewer_episodes)
        make_console(stderr=as_json).print(f"HTML report: [bold]{html_path}[/]")


def _stored_labels(runs: list[Any]) -> list[str]:
    from ..cce.score import stored_labels

    return sorted({label for run in runs for r in run.results for label in stored_labels(run.episode_dir(r.episode_id))})


def _finite(value: Any) -> Any:
    """NaN (an interval from a single episode) becomes null: strict JSON has no NaN."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(run_cmd)
    cli.add_command(report_cmd)
