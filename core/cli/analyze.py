"""``agentworld analyze``: the communication analysis (``analyze comms RUN_DIR``) and agreement of judges
with human labels (``analyze import-labels FILE RUN_DIR --judge LABEL``). See docs/analysis.md."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import click

from ..hookspecs import hookimpl
from .cce import _cache, _console, _episode_dirs, _options, build_judge


@click.group("analyze", context_settings={"help_option_names": ["-h", "--help"]})
def analyze_group() -> None:
    """Analyses of finished runs: communication (`comms`), judge-vs-human agreement (`import-labels`)."""


@analyze_group.command("comms")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--window", default=3, show_default=True, type=click.IntRange(0),
              help="Rounds after a message in which a recipient's related action counts as acting on it.")
@click.option("--judge", "judge_name", default=None,
              help="Also classify every message into the taxonomy with this judge (e.g. openai, scripted).")
@click.option("--model", default=None, help="Judge model (an LLM judge).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint of the judge.")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the judge's API key.")
@click.option("-o", "--option", "opts", multiple=True, help="Judge option KEY=VALUE (repeatable).")
@click.option("--label", default=None, help="Name of the stored classes comms/<label>.json (default: judge-model).")
@click.option("--taxonomy", "taxonomy_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Your own taxonomy: a YAML/JSON mapping class key -> description (must include 'ok').")
@click.option("--cache-dir", default=None, help="Judge answer cache (default RUN_DIR/.cce_cache).")
@click.option("--no-cache", is_flag=True, help="Ask the judge even when an answer is cached.")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
def comms_cmd(run_dir: Path, window: int, judge_name: str | None, model: str | None, base_url: str | None,
              api_key_env: str | None, opts: tuple[str, ...], label: str | None, taxonomy_file: str | None,
              cache_dir: str | None, no_cache: bool, as_json: bool) -> None:
    """Chats per task, first chat round, share of actions spent chatting (overall and on failed tasks),
    who talks to whom, messages nobody acted on; with --judge, a class per message."""
    from ..cce.comms import aggregate, analyze_episode, class_counts, classify, load_taxonomy, write_labels
    from ..cce.graph import EpisodeError, load_episode
    from ..cce.score import judge_label
    from ..cce.judges import Asker
    from ..runs.report import comms_table

    try:
        taxonomy = load_taxonomy(taxonomy_file)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--taxonomy") from None
    judge = build_judge(judge_name, model, base_url, api_key_env, _options(opts)) if judge_name else None
    cache = _cache(run_dir, cache_dir, no_cache) if judge else None
    label = label or (judge_label(judge.name, getattr(judge, "model", "")) if judge else None)
    console = _console()
    episodes, classes = [], []
    for folder in _episode_dirs(run_dir):
        try:
            ep = load_episode(folder)
        except EpisodeError as exc:
            console.print(f"[red]skipped[/red] {folder}: {exc}")
            continue
        ec = analyze_episode(ep, window=window)
        episodes.append(ec)
        if judge is not None and ec.messages:
            result = classify(ep, ec, Asker(judge, cache), taxonomy)
            write_labels(folder, result, label)
            classes.append(result)
    if not episodes:
        raise click.ClickException(f"{run_dir}: no readable episode")
    agg = aggregate(episodes)
    counts = class_counts(classes) if judge is not None else None
    if as_json:
        click.echo(json.dumps({**agg, "classes": counts, "judge": label, "window": window}, indent=2, default=str))
        return
    console.print(comms_table(f"Communication per task ({len(episodes)} episodes; acted on = a recipient's related "
                              f"action within {window} rounds)", agg["per_task"], "task", "task", "config"))
    console.print(comms_table("Overall", [{"all": "all episodes", **agg["overall"]}], "all", ""))
    from rich.table import Table

    t = Table("task", "from", "to", "messages", title="Who talks to whom (messages delivered; top 8 per task)",
              title_justify="left")
    for task, pairs in agg["talk"].items():
        for p in pairs[:8]:
            t.add_row(task, p["from"], p["to"], str(p["messages"]))
    console.print(t)
    if counts is not None:
        t = Table("class", "messages", "share", "share of errors", title=f"Message classes · judge {label}",
                  title_justify="left")
        for k, v in counts["classes"].items():
            t.add_row(k, str(v["messages"]), _share(v["share"]), _share(v["share_of_errors"]))
        console.print(t)
        if counts["unlabelled"] or counts["incomplete_episodes"]:
            console.print(f"[yellow]{counts['unlabelled']} message(s) unlabelled in {counts['incomplete_episodes']} "
                          f"episode(s): judge calls failed or answers named no class; stored as incomplete "
                          f"(comms/{label}.json, complete: false); run again to retry[/yellow]")


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


# ---------------------------------------------------------------------------------------------------------------
# Human labels

_TRUE = {"1", "true", "yes", "y", "contributing", "c"}
_FALSE = {"0", "false", "no", "n", "not_contributing", "not-contributing", "nc", "non_contributing"}


def read_label_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a labels file: CSV with a header, JSON (a list of objects) or JSON lines.

    Each row: ``episode`` (episode id or folder name), ``item`` (the action or message id, e.g.
    ``r3.agent_1``), ``label`` (for CCE: contributing / not_contributing, or 1/0, yes/no; for messages: a
    class key of the taxonomy) and optionally ``kind`` (``cce`` or ``message``).
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        import csv

        rows = list(csv.DictReader(text.splitlines()))
    else:
        stripped = text.strip()
        try:
            data = json.loads(stripped) if stripped.startswith("[") else [json.loads(x) for x in stripped.splitlines()
                                                                          if x.strip()]
        except ValueError as exc:
            raise click.BadParameter(f"{path}: neither a JSON list nor JSON lines ({exc}); or use a .csv file",
                                     param_hint="FILE") from None
        rows = data
    out = []
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not all(str(row.get(k, "")).strip() for k in ("episode", "item", "label")):
            raise click.BadParameter(f"{path}: row {i} needs the fields episode, item and label (got {row!r})",
                                     param_hint="FILE")
        out.append({k: str(v).strip() for k, v in row.items() if v is not None})
    if not out:
        raise click.BadParameter(f"{path}: no label rows", param_hint="FILE")
    return out


def _kind(row: dict[str, str], default: str | None) -> str:
    kind = (row.get("kind") or default or "").lower()
    if kind in ("cce", "message"):
        return kind
    return "cce" if row["label"].lower() in _TRUE | _FALSE else "message"


def agreement(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    from ..cce.compare import cohen_kappa

    human, judge = [h for h, _ in pairs], [j for _, j in pairs]
    return {"n": len(pairs), "agreement": sum(h == j for h, j in pairs) / len(pairs),
            "kappa": cohen_kappa(human, judge), "confusion": Counter(f"{h} / {j}" for h, j in pairs)}


@analyze_group.command("import-labels")
@click.argument("labels_file", metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--judge", "label", required=True,
              help="The stored judge result to compare with: cce/<LABEL>.json or comms/<LABEL>.json.")
@click.option("--kind", type=click.Choice(["cce", "message"]), default=None,
              help="What the labels are (default: a row's 'kind' field, else guessed from the label).")
@click.option("--json", "as_json", is_flag=True, help="Print the agreement as JSON.")
def import_labels_cmd(labels_file: Path, run_dir: Path, label: str, kind: str | None, as_json: bool) -> None:
    """Agreement between human labels (CCE decisions or message classes) and a judge: raw and Cohen's kappa."""
    from ..cce.comms import read_labels
    from ..cce.graph import CCE_DIR
    from ..cce.score import read_stored

    rows = read_label_rows(labels_file)
    folders = {}
    for f in _episode_dirs(run_dir):
        folders[f.name] = f
        try:
            eid = json.loads((f / "result.json").read_text(encoding="utf-8")).get("episode_id")
            if eid:
                folders[eid] = f
        except (OSError, ValueError):
            pass
    judged: dict[tuple[str, str], dict[str, str]] = {}  # (kind, episode) -> item -> judge's label
    pairs: dict[str, list[tuple[str, str]]] = {"cce": [], "message": []}
    missing: Counter = Counter()
    for row in rows:
        k = _kind(row, kind)
        folder = folders.get(row["episode"])
        if folder is None:
            missing[f"episode {row['episode']} not in {run_dir}"] += 1
            continue
        key = (k, row["episode"])
        if key not in judged:
            judged[key] = {}
            if k == "cce":
                rep = read_stored(folder / CCE_DIR / f"{label}.json")
                if rep is not None:
                    judged[key] = {n.id: "contributing" if n.contributing else "not_contributing" for n in rep.nodes}
            else:
                res = read_labels(folder, label)
                if res is not None:
                    judged[key] = {x.message_id: x.label for x in res.labels}
        if not judged[key]:
            missing[f"no {'cce' if k == 'cce' else 'comms'}/{label}.json in {folder.name}"] += 1
            continue
        if row["item"] not in judged[key]:
            missing[f"{row['item']} not judged in {row['episode']}"] += 1
            continue
        human = row["label"].lower()
        if k == "cce":
            if human not in _TRUE | _FALSE:
                raise click.BadParameter(f"{labels_file}: label {row['label']!r} of {row['item']} is not a CCE "
                                         f"decision; use contributing / not_contributing", param_hint="FILE")
            human = "contributing" if human in _TRUE else "not_contributing"
        pairs[k].append((human, judged[key][row["item"]]))
    results = {k: agreement(v) for k, v in pairs.items() if v}
    if not results:
        raise click.ClickException(f"no label of {labels_file} matched a judged item: "
                                   + "; ".join(f"{m} ({n})" for m, n in missing.most_common(5)))
    if as_json:
        click.echo(json.dumps({"judge": label, "results": results, "unmatched": dict(missing)}, indent=2))
        return
    from rich.table import Table

    console = _console()
    t = Table("labels", "judgments", "agreement", "Cohen's kappa", title=f"Judge {label} vs human labels",
              title_justify="left")
    for k, r in results.items():
        t.add_row("CCE decisions" if k == "cce" else "message classes", str(r["n"]), f"{r['agreement']:.3f}",
                  f"{r['kappa']:.3f}")
    console.print(t)
    for k, r in results.items():
        console.print(f"{k} (human / judge): " + ", ".join(f"{c} {n}" for c, n in r["confusion"].most_common()))
    if missing:
        console.print(f"[yellow]{sum(missing.values())} label(s) not compared:[/yellow] "
                      + "; ".join(f"{m} ({n})" for m, n in missing.most_common(5)))


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(analyze_group)
