"""Draw a causal action graph as a PNG (Pillow), with the layout and colours of the SVG (core/cce/svg.py).

The SVG is the interactive picture (tooltips); the PNG is for papers and slides: the same lanes, nodes,
edges and legend, without tooltips. Curves are cubic Béziers sampled into polylines.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageColor, ImageDraw, ImageFont

from .graph import CCEReport
from .svg import CONTRIB, EDGE_COLOURS, LANE_H, OTHER, SUCCESS, TOOL_CODES, R, TOP, edge_curve, layout, title_lines

SCALE = 2  # pixels per SVG unit: sharp when printed


def _font(size: float) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=round(size * SCALE))
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def _bezier(p0, p1, p2, p3, n: int = 18) -> list[tuple[float, float]]:
    out = []
    for i in range(n + 1):
        t = i / n
        a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
        out.append((SCALE * (a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0]),
                    SCALE * (a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1])))
    return out


def _rgba(colour: str, alpha: float = 1.0) -> tuple[int, int, int, int]:
    r, g, b = ImageColor.getrgb(colour)[:3]
    return (r, g, b, round(255 * alpha))


def render_png(report: CCEReport, path: str | Path) -> Path:
    lay = layout(report)
    img = Image.new("RGBA", (round(lay.width * SCALE), round(lay.height * SCALE)), "white")
    draw = ImageDraw.Draw(img, "RGBA")
    s = SCALE
    title, subtitle = title_lines(report)
    draw.text((12 * s, 8 * s), title, font=_font(15), fill="black")
    draw.text((12 * s, 29 * s), subtitle, font=_font(11), fill="#444444")
    for i, agent in enumerate(lay.agents):
        y = TOP + i * LANE_H
        draw.rectangle([0, y * s, lay.width * s, (y + LANE_H) * s], fill="#f7f9fc" if i % 2 == 0 else "#ffffff")
        draw.text((10 * s, (y + LANE_H / 2 - 14) * s), lay.names.get(agent, agent), font=_font(13), fill="black")
        share = report.pac.get(agent)
        sub = agent + (f" · PAC {share:.2f}" if share is not None else "")
        draw.text((10 * s, (y + LANE_H / 2 + 3) * s), sub, font=_font(10), fill="#555555")
    for r in range(lay.first, lay.last + 1):
        x = lay.x_of(r)
        draw.line([x * s, TOP * s, x * s, (TOP + len(lay.agents) * LANE_H) * s], fill="#eeeeee", width=1)
        if (r - lay.first) % lay.tick_step == 0 or r == lay.last:
            draw.text((x * s, (TOP - 12) * s), f"r{r}", font=_font(10), fill="#444444", anchor="mm")
    contributing = report.contributing_ids()
    for e in sorted(report.edges, key=lambda e: (e.source in contributing and e.target in contributing)):
        if e.source not in lay.pos or e.target not in lay.pos:
            continue
        strong = e.source in contributing and e.target in contributing
        pts = _bezier(*edge_curve(lay.pos[e.source], lay.pos[e.target]))
        colour = _rgba(EDGE_COLOURS.get(e.kind, "#333333"), 0.9 if strong else 0.3)
        draw.line(pts, fill=colour, width=max(1, round((1.8 if strong else 0.9) * s)))
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        dx, dy = x1 - x0, y1 - y0
        norm = max(1e-6, (dx * dx + dy * dy) ** 0.5)
        ux, uy, head = dx / norm, dy / norm, 5 * s
        draw.polygon([(x1, y1), (x1 - head * ux - head * 0.5 * uy, y1 - head * uy + head * 0.5 * ux),
                      (x1 - head * ux + head * 0.5 * uy, y1 - head * uy - head * 0.5 * ux)], fill=colour)
    for n in report.nodes:
        x, y = lay.pos[n.id]
        fill = SUCCESS if n.success else CONTRIB if n.contributing else OTHER
        stroke = "#c62828" if not n.ok else "#333333" if n.contributing else "#9e9e9e"
        if n.is_chat:
            pts = [(x * s, (y - R - 1) * s), ((x + R + 1) * s, y * s), (x * s, (y + R + 1) * s), ((x - R - 1) * s, y * s)]
            draw.polygon(pts, fill=fill, outline=stroke, width=max(1, round(1.4 * s)))
        else:
            draw.ellipse([(x - R) * s, (y - R) * s, (x + R) * s, (y + R) * s], fill=fill, outline=stroke,
                         width=max(1, round(1.4 * s)))
        draw.text((x * s, y * s), TOOL_CODES.get(n.tool, n.tool[:2]), font=_font(9.5), fill="#111111", anchor="mm")
    ly = TOP + len(lay.agents) * LANE_H + 24
    x = 12
    for colour, label in ((SUCCESS, "success action"), (CONTRIB, "contributing"), (OTHER, "not contributing")):
        draw.ellipse([(x) * s, (ly - 7) * s, (x + 14) * s, (ly + 7) * s], fill=colour, outline="#333333")
        draw.text(((x + 19) * s, ly * s), label, font=_font(11), fill="black", anchor="lm")
        x += 30 + 7 * len(label)
    for k in sorted({e.kind for e in report.edges}):
        draw.line([x * s, ly * s, (x + 20) * s, ly * s], fill=EDGE_COLOURS.get(k, "#333333"), width=2 * s)
        draw.text(((x + 24) * s, ly * s), k, font=_font(11), fill="black", anchor="lm")
        x += 34 + 7 * len(k)
    out = Path(path)
    img.convert("RGB").save(out, "PNG", optimize=True)
    return out
