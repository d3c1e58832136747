"""Scoring an episode: run a judge over a CCE method and store the report per judge (``cce/<label>.json``;
``cce.json`` is the latest complete one). An incomplete judging (failed judge calls) is stored as such and
never replaces a complete one.

The method is picked by the judge (:mod:`agentworld.core.cce.paper` by default, or the judge's own
``build_graph``); the graph and report models live in :mod:`agentworld.core.cce.graph`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .graph import CCE_DIR, CCE_FILE, CCEReport, EpisodeData, EpisodeError, build_report, file_safe, load_episode
from .judges import Asker
from .paper import paper_method


def judge_label(judge: str, model: str = "") -> str:
    """File-safe label of a judge configuration ("grounded", "openai-gpt-4.1")."""
    return file_safe(f"{judge}-{model}" if model else judge)


INCOMPLETE_SUFFIX = ".incomplete"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file


def write_report(episode_dir: str | Path, report: CCEReport, label: str | None = None) -> Path:
    """Store one judging of an episode under its judge's label; returns the file written.

    - ``cce/<label>.json`` holds each judge's result, so judges can be compared and chosen
      (``agentworld report --judge LABEL``).
    - ``cce.json`` is the episode's CCE for reports that name no judge: the latest *complete* judging.
    - An incomplete judging (some judge calls failed: ``complete`` false, ``cce`` null, never 0) never
      replaces a complete one: not ``cce.json``, and not a complete ``cce/<label>.json`` of the same label
      (it is kept beside it as ``cce/<label>.incomplete.json`` for inspection).
    """
    folder = Path(episode_dir)
    label = label or judge_label(report.judge, report.model)
    report = report.model_copy(update={"label": label})
    text = report.model_dump_json(indent=1)
    per_judge = folder / CCE_DIR
    per_judge.mkdir(exist_ok=True)
    target = per_judge / f"{label}.json"
    leftover = per_judge / f"{label}{INCOMPLETE_SUFFIX}.json"
    if report.complete:
        _write(target, text)
        _write(folder / CCE_FILE, text)
        leftover.unlink(missing_ok=True)
        return target
    existing = read_stored(target)
    if existing is not None and existing.complete:
        target = leftover
    _write(target, text)
    return target


def read_stored(path: str | Path) -> CCEReport | None:
    """A stored judging (a ``cce.json`` or ``cce/<label>.json``, or an episode folder's ``cce.json``), or
    None when there is none or it cannot be read (reports skip it; ``read_report`` says why)."""
    p = Path(path)
    if p.is_dir():
        p = p / CCE_FILE
    try:
        return CCEReport.model_validate_json(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_report(path: str | Path) -> CCEReport:
    p = Path(path)
    if p.is_dir():
        p = p / CCE_FILE
    if not p.is_file():
        raise EpisodeError(f"{p}: no cce.json; run `agentworld cce {p.parent}` first")
    try:
        return CCEReport.model_validate_json(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise EpisodeError(f"{p}: not a valid cce.json ({str(exc).splitlines()[0]}); re-run `agentworld cce`") from exc


def stored_labels(episode_dir: str | Path) -> list[str]:
    """Labels with a stored judging (``cce/<label>.json``; the ``.incomplete`` leftovers are not labels)."""
    d = Path(episode_dir) / CCE_DIR
    return sorted(p.stem for p in d.glob("*.json") if not p.stem.endswith(INCOMPLETE_SUFFIX)) if d.is_dir() else []


# ---------------------------------------------------------------------------------------------------------------
# Scoring an episode


@dataclass
class ScoreOptions:
    judge_failed: bool = False  # judge failed tasks too (their CCE stays 0; raw_cce is filled)
    extra: dict[str, Any] = field(default_factory=dict)


def score_episode(ep: EpisodeData | str | Path, judge: Any, *, cache: Any = None,
                  options: ScoreOptions | None = None) -> CCEReport:
    """Judge one episode and return its report (not written; see :func:`write_report`).

    ``judge`` is a judge object (see :mod:`agentworld.core.cce.judges`). Its ``method`` attribute picks the
    method: ``"paper"`` (default, the backward sweep) or ``"grounded"``; a judge may also implement
    ``build_graph(episode, asker)`` to bring its own method.
    """
    options = options or ScoreOptions()
    if not isinstance(ep, EpisodeData):
        ep = load_episode(ep)
    name, model = getattr(judge, "name", type(judge).__name__), getattr(judge, "model", "")
    method = getattr(judge, "method", "paper")
    if not ep.success and not options.judge_failed:
        return build_report(ep, None, judge=name, model=model, method=method, calls=[],
                            notes=["task failed: CCE = 0 without judging (use --judge-failed to judge anyway)"])
    asker = Asker(judge, cache)
    skipped: list[int] = []
    if hasattr(judge, "build_graph"):
        graph = judge.build_graph(ep, asker)
    elif method == "paper":
        graph, skipped = paper_method(ep, asker, **options.extra)
    else:
        raise EpisodeError(f"judge {name!r} has method {method!r} but no build_graph(); "
                           f"a judge plugin must use method 'paper' or implement build_graph(episode, asker)")
    return build_report(ep, graph, judge=name, model=model, method=method, calls=asker.calls,
                        skipped_rounds=skipped)
