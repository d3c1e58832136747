"""One self-contained HTML report (works offline): tables, SVG charts and an episode viewer.

Everything is inline: CSS, JavaScript, SVG charts, and each viewed episode's map as a base64 PNG cropped
around its agents. The viewer shows the map with each agent's path, a swim-lane timeline (agents x rounds)
of actions and chats with their results, the causal graph when the episode has a ``cce.json``, and the
world state at any round (positions, HP and inventories from the trajectory's AgentStatus records).
The page's script sets ``data-viewer-ready="1"`` on <body> once the viewer rendered (and
``data-js-error`` on any error), which the headless-browser test reads.
"""

from __future__ import annotations

import base64
import html
import io
import json
from itertools import zip_longest
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from urllib.parse import quote

from ..cce.graph import result_preview
from ..cce.graph import CCE_FILE
from ..cce.score import read_stored
from ..play.records import EndEvent, StartEvent, TickEvent, TurnEvent
from .report import (RunData, _nan, _num, _pct, _signed, config_label, pass_k_cell, pass_k_columns,
                     team_size_bin)

TEMPLATE_DIR = Path(__file__).parent / "templates"
AGENT_COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45",
                "#fabed4", "#469990", "#dcbeff", "#9a6324", "#fffac8", "#800000", "#aaffc3", "#808000",
                "#ffd8b1", "#000075", "#a9a9a9", "#000000"]
MAP_PAD = 10  # tiles around the agents' bounding box
MAP_MAX_PX = 600  # longest side of the embedded map image
RESULT_CHARS = 240


# ---------------------------------------------------------------------- map image
_BASE_IMAGE: Any = None


def _world_base_image() -> tuple[Any, Any] | None:
    """(loaded world, one-pixel-per-tile map image) from core/world/render.py, built once per process."""
    global _BASE_IMAGE
    if _BASE_IMAGE is None:
        try:
            from ..world.datapack import load_world
            from ..world.render import base_image

            loaded = load_world()
            _BASE_IMAGE = (loaded, base_image(loaded, show_nodes=True))
        except Exception:  # noqa: BLE001 - no world data or renderer: the viewer draws paths on a blank grid
            _BASE_IMAGE = False
    return _BASE_IMAGE or None


def map_image_b64(points: list[tuple[int, int]]) -> dict[str, Any] | None:
    """The world map cropped around ``points`` as a base64 PNG, with the crop box (tile coordinates) and
    the landmarks inside it."""
    from PIL import Image

    base = _world_base_image() if points else None
    if base is None:
        return None
    loaded, img = base
    width, height = img.size
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, y0 = max(0, min(xs) - MAP_PAD), max(0, min(ys) - MAP_PAD)
    x1, y1 = min(width, max(xs) + MAP_PAD + 1), min(height, max(ys) + MAP_PAD + 1)
    # At least 40 x 30 tiles, so that a team standing together still shows its surroundings.
    if x1 - x0 < 40:
        grow = 40 - (x1 - x0)
        x0, x1 = max(0, x0 - grow // 2), min(width, x1 + grow - grow // 2)
    if y1 - y0 < 30:
        grow = 30 - (y1 - y0)
        y0, y1 = max(0, y0 - grow // 2), min(height, y1 + grow - grow // 2)
    # Whole pixels per tile when the crop is small; a team spread over the whole map is scaled down instead.
    fit = MAP_MAX_PX / max(x1 - x0, y1 - y0)
    scale: float = min(12, int(fit)) if fit >= 1 else fit
    size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
    crop = img.crop((x0, y0, x1, y1)).resize(size, Image.NEAREST if scale >= 1 else Image.BOX)
    buf = io.BytesIO()
    crop.save(buf, format="PNG", optimize=True)
    landmarks = [{"name": lm.name, "x": lm.x, "y": lm.y} for lm in getattr(loaded.data, "landmarks", [])
                 if x0 <= lm.x < x1 and y0 <= lm.y < y1]
    return {"png": base64.b64encode(buf.getvalue()).decode("ascii"), "x0": x0, "y0": y0, "w": x1 - x0,
            "h": y1 - y0, "scale": scale, "landmarks": landmarks}


# ---------------------------------------------------------------------- episode data for the viewer
def _args_text(args: dict[str, Any] | None) -> str:
    if not args:
        return ""
    text = ", ".join(f"{k}={v}" for k, v in args.items())
    return text if len(text) <= 120 else text[:117] + "..."


def _short(text: str, limit: int = RESULT_CHARS) -> str:
    return result_preview(text, limit)


def viewer_episode(run: RunData, result: Any, with_map: bool = True, with_run_label: bool = False
                   ) -> dict[str, Any] | None:
    """What the viewer needs of one episode (None when its trajectory is missing)."""
    from ..play.trajectory import TRAJECTORY_FILE, read_events

    folder = run.episode_dir(result.episode_id)
    traj = folder / TRAJECTORY_FILE
    if not traj.is_file():
        return None
    events = read_events(traj)
    start = next((e for e in events if isinstance(e, StartEvent)), None)
    if start is None:
        return None
    agents = [{"id": a.get("agent_id"), "username": a.get("username") or a.get("agent_id"),
               "x": a.get("x"), "y": a.get("y"), "color": AGENT_COLORS[i % len(AGENT_COLORS)]}
              for i, a in enumerate(start.agents)]
    index = {a["id"]: i for i, a in enumerate(agents)}
    turns, ticks = [], []
    points = [(a["x"], a["y"]) for a in agents if a["x"] is not None and a["y"] is not None]
    for ev in events:
        if isinstance(ev, TurnEvent):
            idx = index.get(ev.agent)
            if idx is None:
                index[ev.agent] = idx = len(agents)
                agents.append({"id": ev.agent, "username": ev.username or ev.agent, "x": None, "y": None,
                               "color": AGENT_COLORS[idx % len(AGENT_COLORS)]})
            st = ev.status
            if st is not None:
                points.append((st.x, st.y))
            chat = ev.effects.chat
            turns.append({
                "r": ev.round, "a": idx, "step": ev.step, "tool": ev.tool, "args": _args_text(ev.arguments),
                "ok": ev.ok, "err": ev.error, "res": _short(ev.result), "chat": chat.message if chat else
                ((ev.arguments or {}).get("message") if ev.tool in ("chat", "send_chat_message") else None),
                "to": [index[r] for r in chat.recipients if r in index] if chat else [],
                "infra": ev.infra_error, "harness": bool(ev.harness_error),
                "think": _short(ev.thinking, 300), "target": ev.effects.target,
                "kills": [k.instance for k in ev.effects.kills],
                "s": None if st is None else [st.x, st.y, st.hp, st.max_hp, st.level, st.alive,
                                              [f"{i.get('key', i.get('name', '?'))}×{i.get('count', 1)}"
                                               for i in st.inventory]]})
        elif isinstance(ev, TickEvent):
            if ev.lines or ev.checkpoints_passed:
                ticks.append({"r": ev.round, "lines": [_short(x, 160) for x in ev.lines[:8]],
                              "cp": ev.checkpoints_passed})
    end = next((e for e in events if isinstance(e, EndEvent)), None)
    emap = map_image_b64(points) if with_map else None
    out: dict[str, Any] = {
        "id": result.episode_id, "run": run.label, "task": result.task_id, "category": result.category,
        "config": config_label(run, result, with_run_label), "size": team_size_bin(result.n_agents),
        "framework": result.framework, "model": result.model, "variant": result.variant, "seed": result.seed,
        "success": result.success, "psr": result.psr, "message": result.message,
        "end": end.reason if end else result.end_reason, "rounds": max(result.rounds, end.rounds if end else 0),
        "max_rounds": start.max_rounds, "agents": agents, "turns": turns, "ticks": ticks,
        "checkpoints": [c.model_dump() for c in result.checkpoints],
        "map": emap, "marks": map_marks(folder, turns, emap), "cce": None,
    }
    report = read_stored(folder / CCE_FILE)
    if report is not None:
        out["cce"] = _cce_graph(report, index)
    return out


MAX_MARKS = 80


def map_marks(folder: Path, turns: list[dict[str, Any]], emap: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Mobs inside the map crop (with the round each was killed) and the targets: the resource nodes and
    mobs the agents' actions aimed at, and the places the task's verifier checks (``at_location``)."""
    base = _world_base_image()
    if base is None or emap is None:
        return []
    loaded = base[0]
    x0, y0, x1, y1 = emap["x0"], emap["y0"], emap["x0"] + emap["w"], emap["y0"] + emap["h"]
    killed: dict[str, int] = {}
    aimed: set[str] = set()
    for t in turns:
        for inst in t["kills"]:
            killed.setdefault(inst, t["r"])
        if t["target"]:
            aimed.add(str(t["target"]))
    names = {m.key: m.name for m in loaded.data.mob_types}
    marks: list[dict[str, Any]] = []
    for m in loaded.mobs:
        if x0 <= m.x < x1 and y0 <= m.y < y1:
            marks.append({"kind": "mob", "x": m.x, "y": m.y, "label": names.get(m.type, m.type), "id": m.id,
                          "dead": killed.get(m.id), "named": m.id in aimed})
    for n in loaded.nodes:
        if n.id in aimed:
            marks.append({"kind": "target", "x": n.x, "y": n.y, "label": n.type, "id": n.id})
    marks += _verifier_places(folder)
    marks.sort(key=lambda mk: (mk["kind"] == "mob" and not mk.get("named"), mk["x"], mk["y"]))
    return marks[:MAX_MARKS]


def _verifier_places(folder: Path) -> list[dict[str, Any]]:
    """``at_location`` checks of the episode's task (task.json): the places the team must reach."""
    try:
        raw = json.loads((folder / "task.json").read_text(encoding="utf-8"))
        checks = (raw.get("verifier") or {}).get("checks") or []
    except (OSError, ValueError, AttributeError):
        return []
    out = []
    for c in checks:
        if isinstance(c, dict) and c.get("check") == "at_location" and isinstance(c.get("x"), int) \
                and isinstance(c.get("y"), int):
            out.append({"kind": "target", "x": c["x"], "y": c["y"], "label": c.get("name") or "goal"})
    return out


def _cce_graph(data: Any, index: dict[str, int]) -> dict[str, Any]:
    nodes = []
    for n in data.nodes:
        if n.agent not in index:
            continue
        nodes.append({"id": n.id, "r": n.round, "a": index[n.agent], "tool": n.tool,
                      "action": _short(n.action, 100), "c": n.contributing, "s": n.success, "chat": n.is_chat})
    ids = {n["id"] for n in nodes}
    edges = [{"s": e.source, "t": e.target, "k": e.kind, "why": _short(e.reason, 120)}
             for e in data.edges if e.source in ids and e.target in ids]
    return {"cce": data.cce, "judge": data.label or data.judge, "method": data.method, "complete": data.complete,
            "failed_calls": data.failed_calls, "n_actions": data.n_actions, "n_contributing": data.n_contributing,
            "pac": data.pac, "nodes": nodes, "edges": edges}


def sample_episodes(runs: list[RunData], limit: int) -> list[tuple[RunData, Any]]:
    """At most ``limit`` episodes spread across outcomes, tasks and configurations.

    Episodes are grouped by (outcome, task, configuration). The groups are visited round-robin, one
    episode per group per pass, failed and successful groups alternating (a failed one first), so a grid
    where most episodes succeed still shows what failed and one where most fail still shows successes.
    """
    several = len(runs) > 1
    groups: dict[tuple, list[tuple[RunData, Any]]] = {}
    for run in runs:
        for r in run.results:
            groups.setdefault((r.success, r.task_id, config_label(run, r, several)), []).append((run, r))
    failed = sorted(k for k in groups if not k[0])
    won = sorted(k for k in groups if k[0])
    order = [k for pair in zip_longest(failed, won) for k in pair if k is not None]
    out: list[tuple[RunData, Any]] = []
    depth = 0
    while len(out) < limit and any(len(groups[k]) > depth for k in order):
        for k in order:
            if len(out) >= limit:
                break
            if len(groups[k]) > depth:
                out.append(groups[k][depth])
        depth += 1
    return out


# ---------------------------------------------------------------------- charts (SVG)
def bar_chart_svg(title: str, categories: list[str], series: list[str],
                  values: dict[tuple[str, str], dict[str, Any]], ymax: float = 1.0, percent: bool = True) -> str:
    """Grouped bars with 95% CI whiskers; ``values[(series, category)] = {"mean", "lo", "hi"}``."""
    if not categories or not series:
        return ""
    width_per_cat = max(84, 18 * len(series) + 16)
    left, top, bottom = 44, 28, 70
    w = max(300, left + width_per_cat * len(categories) + 10)
    h = 240
    plot_h = h - top - bottom
    bar_w = (width_per_cat - 16) / len(series)

    def y(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, ymax)) / ymax)

    out = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 18 * len(series) - 18}"'
           f' role="img" aria-label="{html.escape(title)}">',
           f'<text x="{left}" y="16" class="ct">{html.escape(title)}</text>']
    for k in range(5):
        v = ymax * k / 4
        out.append(f'<line x1="{left}" x2="{w - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>')
        label = f"{100 * v:.0f}%" if percent else f"{v:.2f}"
        out.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" class="ax" text-anchor="end">{label}</text>')
    for ci, cat in enumerate(categories):
        x0 = left + ci * width_per_cat + 8
        for si, s in enumerate(series):
            m = values.get((s, cat))
            if not m or m["mean"] != m["mean"]:
                continue
            color = AGENT_COLORS[si % len(AGENT_COLORS)]
            bx = x0 + si * bar_w
            tip = f"{s} · {cat}: {_pct(m) if percent else _num(m, 3)}"
            out.append(f'<rect x="{bx:.1f}" y="{y(m["mean"]):.1f}" width="{bar_w - 2:.1f}" '
                       f'height="{max(0.5, y(0) - y(m["mean"])):.1f}" fill="{color}">'
                       f'<title>{html.escape(tip)}</title></rect>')
            if m["lo"] == m["lo"]:
                cx = bx + (bar_w - 2) / 2
                out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(m["lo"]):.1f}" y2="{y(m["hi"]):.1f}" class="ci"/>')
                for v in (m["lo"], m["hi"]):
                    out.append(f'<line x1="{cx - 3:.1f}" x2="{cx + 3:.1f}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="ci"/>')
        out.append(f'<text x="{x0 + (width_per_cat - 16) / 2:.1f}" y="{h - bottom + 14}" class="ax" '
                   f'text-anchor="middle">{html.escape(cat if len(cat) <= 14 else cat[:13] + "…")}</text>')
    for si, s in enumerate(series):
        lx = left
        ly = h - bottom + 34 + 18 * si
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{AGENT_COLORS[si % len(AGENT_COLORS)]}"/>'
                   f'<text x="{lx + 14}" y="{ly}" class="ax">{html.escape(s[:40])}</text>')
    out.append("</svg>")
    return "".join(out)


def charts(rep: dict[str, Any]) -> list[str]:
    out = []
    for section, key, label in (("by_category", "category", "category"), ("by_team_size", "team_size", "team size")):
        rows = rep[section]
        cats = list(dict.fromkeys(r[key] for r in rows))
        series = list(dict.fromkeys(r["group"] for r in rows))
        for metric, name, ymax, pct in (("sr", "SR", 1.0, True), ("psr", "PSR", 1.0, True), ("cce", "CCE", None, False)):
            if metric == "cce" and not rep["has_cce"]:
                continue
            values = {(r["group"], r[key]): r[metric] for r in rows}
            top = ymax or max([v["hi"] if v["hi"] == v["hi"] else v["mean"] for v in values.values()
                               if v["mean"] == v["mean"]] + [0.1])
            out.append(bar_chart_svg(f"{name} by {label} (95% CI)", cats, series, values, ymax=min(1.0, top * 1.1)
                                     if not pct else 1.0, percent=pct))
    if rep["variants"]:
        values = {("SR", r["variant"]): r["sr"] for r in rep["variants"]}
        values.update({("PSR", r["variant"]): r["psr"] for r in rep["variants"]})
        out.append(bar_chart_svg("SR and PSR by variant (95% CI)", [r["variant"] for r in rep["variants"]],
                                 ["SR", "PSR"], values))
    return [c for c in out if c]


# ---------------------------------------------------------------------- the page
def _fmt_metric(m: dict[str, Any], kind: str) -> str:
    if kind == "pct":
        return _pct(m)
    if kind == "cce":
        return _num(m, 3) if m.get("n") else "-"
    return _num(m)


def filter_query(row: dict[str, Any], keys: list[str]) -> str:
    """The viewer filter (``config=...&category=...``) a table row links to."""
    names = {"group": "config", "category": "category", "team_size": "size", "task": "task"}
    return "&".join(f"{names[k]}={quote(str(row[k]), safe='')}" for k in keys if k in row and k in names)


def _fixed(x: Any, digits: int = 1) -> str:
    return "-" if _nan(x) else f"{x:.{digits}f}"


def _share(x: Any) -> str:
    return "-" if _nan(x) else f"{100 * x:.1f}%"


def _pp(x: Any) -> str:
    return "-" if _nan(x) else f"{100 * x:.1f}"


def write_html_report(runs: list[RunData], rep: dict[str, Any], path: str | Path, *,
                      max_episodes: int = 40, title: str | None = None) -> Path:
    from ..cce.comms import DEFAULT_WINDOW

    several = len(runs) > 1
    episodes = []
    for run, r in sample_episodes(runs, max_episodes):
        ep = viewer_episode(run, r, with_run_label=several)
        if ep is not None:
            episodes.append(ep)
    catalog = [{"id": r.episode_id, "task": r.task_id, "config": config_label(run, r, several),
                "success": r.success, "category": r.category or "(none)", "size": team_size_bin(r.n_agents)}
               for run in runs for r in run.results]
    env = Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)), autoescape=select_autoescape(["html", "j2"]))
    env.filters["metric"] = _fmt_metric
    env.filters["signed"] = _signed
    env.filters["fixed"] = _fixed
    env.filters["share"] = _share
    env.filters["pp"] = _pp
    env.globals["filter_query"] = filter_query
    env.globals["pass_k_columns"] = pass_k_columns
    env.globals["pass_k_cell"] = pass_k_cell
    template = env.get_template("report.html.j2")
    data_json = json.dumps({"episodes": episodes, "catalog": catalog}, separators=(",", ":"), default=str)
    data_json = data_json.replace("</", "<\\/")  # cannot close the <script> element early
    page = template.render(
        title=title or "AgentWorld report: " + ", ".join(r.label for r in runs), rep=rep,
        charts=charts(rep), data_json=data_json, n_episodes=len(episodes),
        total_episodes=sum(len(r.results) for r in runs), comms_window=DEFAULT_WINDOW)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
