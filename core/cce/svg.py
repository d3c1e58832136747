"""Draw a causal action graph (``cce.json``) as a standalone SVG: agents as lanes, rounds left to right.

Success actions are gold, other contributing actions green, the rest grey; failed calls have a red
outline, chat messages are diamonds. Edges are curves coloured by kind; edges between contributing actions
are drawn strong, the others faint. Every node carries a tooltip (<title>) with its action and reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .graph import CCEReport

TOOL_CODES = {"move_character": "mv", "send_chat_message": "ch", "chat": "ch", "enter_portal": "po",
              "stop_action": "st", "equip_item": "eq", "harvest_resource": "hv", "pickup_resource": "pk",
              "attack_entity": "at", "sleep": "sl", "craft_item": "cr", "complete": "ok", "transfer_items": "tr"}
EDGE_COLOURS = {"items": "#1f77b4", "tool": "#9467bd", "equip": "#8c564b", "move": "#7f7f7f",
                "receiver_move": "#17becf", "chat_rule": "#e377c2", "chat_judge": "#e377c2",
                "judge": "#2ca02c", "inferred": "#98df8a"}
SUCCESS, CONTRIB, OTHER = "#f2b705", "#4caf50", "#e6e6e6"

LANE_H, MIN_COL_W, MAX_COL_W, LEFT, TOP, R = 54, 30, 90, 130, 78, 11


@dataclass
class Layout:
    """Where everything goes (shared by the SVG and the PNG): agents as lanes, rounds as columns."""

    agents: list[str]
    names: dict[str, str]
    first: int
    last: int
    col_w: float
    width: float
    height: float
    pos: dict[str, tuple[float, float]]
    tick_step: int

    def x_of(self, round_: int) -> float:
        return LEFT + (round_ - self.first) * self.col_w + self.col_w / 2


def layout(report: CCEReport) -> Layout:
    agents = list(report.pac) or sorted({n.agent for n in report.nodes})
    for n in report.nodes:
        if n.agent not in agents:
            agents.append(n.agent)
    names = {n.agent: n.username or n.agent for n in report.nodes}
    rounds = sorted({n.round for n in report.nodes}) or [0]
    first, last = rounds[0], rounds[-1]
    col_w = max(MIN_COL_W, min(MAX_COL_W, 860 / (last - first + 1)))  # short episodes get room for edges
    width = max(LEFT + (last - first + 1) * col_w + 40, 1000)  # room for the legend
    height = TOP + len(agents) * LANE_H + 70
    pos = {n.id: (LEFT + (n.round - first) * col_w + col_w / 2, TOP + agents.index(n.agent) * LANE_H + LANE_H / 2)
           for n in report.nodes}
    return Layout(agents, names, first, last, col_w, width, height, pos, 1 if len(rounds) <= 30 else 5)


def title_lines(report: CCEReport) -> tuple[str, str]:
    pac = report.pac_spread()
    value = (f"CCE {report.cce:.3f}" if report.cce is not None
             else f"CCE incomplete ({report.failed_calls} failed judge calls)")
    title = (f"{report.task_id} · judge {report.judge}{' (' + report.model + ')' if report.model else ''} · "
             f"{value}{'' if report.task_success else ' (task failed)'}")
    subtitle = (f"{report.episode_id} · {report.n_contributing}/{report.n_actions} actions contribute"
                + (f" · PAC {pac[0]:.2f}–{pac[1]:.2f}" if pac else "")
                + (f" · {report.judge_calls} judge calls" if report.judge_calls else ""))
    return title, subtitle


def edge_curve(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], ...]:
    """The cubic Bézier (start, two controls, end) of an edge from node centre ``a`` to node centre ``b``."""
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:  # same round, another lane: a gentle curve between the facing edges of the two nodes
        dy = 1 if y2 > y1 else -1
        return ((x1 + 3, y1 + dy * R), (x1 + 14, y1 + dy * (R + 12)), (x2 + 14, y2 - dy * (R + 12)),
                (x2 + 3, y2 - dy * (R + 1)))
    if y1 == y2:  # same lane: an arc above the lane, from the top of one node to the top of the other
        lift = min(LANE_H / 2 - 4, 10 + (x2 - x1) / 8)
        return ((x1 + 4, y1 - R + 1), (x1 + 4, y1 - R - lift), (x2 - 4, y2 - R - lift), (x2 - 4, y2 - R - 1))
    # another lane: an S-curve from the right side of the source into the side of the target
    dy = 1 if y2 > y1 else -1
    bend = max(12.0, 0.5 * (x2 - x1))
    ex, ey = x2 - R * 0.72, y2 - dy * R * 0.72
    return ((x1 + R, y1), (x1 + R + bend, y1), (ex - bend, ey - dy * bend / 2), (ex, ey))


def render_svg(report: CCEReport) -> str:
    lay = layout(report)
    agents, names, first, last, COL_W = lay.agents, lay.names, lay.first, lay.last, lay.col_w
    width, height, pos = lay.width, lay.height, lay.pos
    rounds = list(range(first, last + 1))
    contributing = report.contributing_ids()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif">',
           '<defs>' + "".join(
               f'<marker id="arr-{k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
               f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
               for k, c in EDGE_COLOURS.items()) + '</defs>',
           '<rect width="100%" height="100%" fill="white"/>']
    title, subtitle = title_lines(report)
    out.append(f'<text x="12" y="22" font-size="15" font-weight="bold">{escape(title)}</text>')
    out.append(f'<text x="12" y="40" font-size="11" fill="#444">{escape(subtitle)}</text>')
    # lanes and round ticks
    for i, agent in enumerate(agents):
        y = TOP + i * LANE_H
        fill = "#f7f9fc" if i % 2 == 0 else "#ffffff"
        out.append(f'<rect x="0" y="{y}" width="{width:.0f}" height="{LANE_H}" fill="{fill}"/>')
        label = names.get(agent, agent)
        share = report.pac.get(agent)
        out.append(f'<text x="10" y="{y + LANE_H / 2 - 2:.0f}" font-size="13" font-weight="bold">{escape(label)}</text>')
        sub = agent + (f" · PAC {share:.2f}" if share is not None else "")
        out.append(f'<text x="10" y="{y + LANE_H / 2 + 13:.0f}" font-size="10" fill="#555">{escape(sub)}</text>')
    step = lay.tick_step
    for r in range(first, last + 1):
        x = LEFT + (r - first) * COL_W + COL_W / 2
        if (r - first) % step == 0 or r == last:
            out.append(f'<text x="{x:.0f}" y="{TOP - 10}" font-size="10" text-anchor="middle" fill="#444">r{r}</text>')
        out.append(f'<line x1="{x:.0f}" y1="{TOP}" x2="{x:.0f}" y2="{TOP + len(agents) * LANE_H}" '
                   f'stroke="#eeeeee" stroke-width="1"/>')
    # edges under nodes: faint ones first
    edges = sorted(report.edges, key=lambda e: (e.source in contributing and e.target in contributing))
    for e in edges:
        if e.source not in pos or e.target not in pos:
            continue
        p0, c1, c2, p3 = edge_curve(pos[e.source], pos[e.target])
        strong = e.source in contributing and e.target in contributing
        colour = EDGE_COLOURS.get(e.kind, "#333333")
        d = (f"M{p0[0]:.1f},{p0[1]:.1f} C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {p3[0]:.1f},{p3[1]:.1f}")
        out.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{1.8 if strong else 0.9}" '
                   f'stroke-opacity="{0.9 if strong else 0.3}" marker-end="url(#arr-{e.kind})">'
                   f'<title>{escape(f"{e.source} → {e.target} ({e.kind}) {e.reason}")}</title></path>')
    # nodes
    for n in report.nodes:
        x, y = pos[n.id]
        fill = SUCCESS if n.success else CONTRIB if n.contributing else OTHER
        stroke = "#c62828" if not n.ok else "#333333" if n.contributing else "#9e9e9e"
        tip = escape(f"{n.id}: {n.action} -> {'ok' if n.ok else 'failed'} {n.result}"
                     + (f" | {n.reason}" if n.reason else ""))
        if n.is_chat:
            shape = (f'<polygon points="{x},{y - R - 1} {x + R + 1},{y} {x},{y + R + 1} {x - R - 1},{y}" '
                     f'fill="{fill}" stroke="{stroke}" stroke-width="1.4"/>')
        else:
            shape = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{R}" fill="{fill}" stroke="{stroke}" stroke-width="1.4"/>'
        code = TOOL_CODES.get(n.tool, n.tool[:2])
        out.append(f'<g><title>{tip}</title>{shape}<text x="{x:.1f}" y="{y + 3.5:.1f}" font-size="9.5" '
                   f'text-anchor="middle" fill="#111">{escape(code)}</text></g>')
    # legend
    ly = TOP + len(agents) * LANE_H + 24
    items = [(SUCCESS, "success action"), (CONTRIB, "contributing"), (OTHER, "not contributing")]
    x = 12
    for colour, label in items:
        out.append(f'<circle cx="{x + 7}" cy="{ly}" r="7" fill="{colour}" stroke="#333"/>'
                   f'<text x="{x + 19}" y="{ly + 4}" font-size="11">{label}</text>')
        x += 30 + 7 * len(label)
    out.append(f'<circle cx="{x + 7}" cy="{ly}" r="7" fill="white" stroke="#c62828" stroke-width="1.4"/>'
               f'<text x="{x + 19}" y="{ly + 4}" font-size="11">failed call</text>')
    x += 100
    kinds = sorted({e.kind for e in report.edges})
    for k in kinds:
        colour = EDGE_COLOURS.get(k, "#333")
        out.append(f'<line x1="{x}" y1="{ly}" x2="{x + 20}" y2="{ly}" stroke="{colour}" stroke-width="2"/>'
                   f'<text x="{x + 24}" y="{ly + 4}" font-size="11">{k}</text>')
        x += 34 + 7 * len(k)
    codes = " ".join(f"{v}={k.split('_')[0] if k != 'stop_action' else 'stop'}"
                     for k, v in sorted(TOOL_CODES.items(), key=lambda kv: kv[1]) if k != "send_chat_message")
    out.append(f'<text x="12" y="{ly + 26}" font-size="10" fill="#555">{escape(codes)} · diamond = chat message</text>')
    out.append("</svg>")
    return "\n".join(out)
