"""Draw the world map as a PNG for task authors: biomes, roads, landmarks (labelled), portals, and optionally
a task's spawns and targets.

The picture is built at one pixel per tile with numpy (biome colours with light shading so terrain reads
as terrain), scaled with nearest-neighbour, then annotated with PIL at the output resolution so labels stay
sharp at any scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .datapack import LoadedWorld
from .generate import StableRandom, value_noise

ROAD = (176, 140, 96)
NODE_COLORS = {"tree": (20, 70, 25), "rock": (70, 60, 60), "fishing_spot": (210, 240, 255), "plant": (200, 60, 160)}
PORTAL_COLOR = (150, 40, 200)


MECHANIC_COLOR = (235, 120, 0)
_MARK_TAG = {"spawn": "S", "target": "T", "mechanic": "M"}
_MARK_TEXT = {"spawn": (30, 60, 160), "target": (160, 20, 20), "mechanic": (170, 80, 0)}


@dataclass
class Marker:
    """A point to highlight: a task's spawn (``kind="spawn"``), target (``kind="target"``) or the place of one
    of its world mechanics (``kind="mechanic"``: an event, a joint action, a hidden thing, a hazard zone),
    with the ``radius`` of its area and the ``route`` of a patrol, when it has them."""

    x: int
    y: int
    label: str
    kind: str = "target"
    radius: int = 0
    route: list[tuple[int, int]] | None = None


Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(anchors: list[tuple[float, float]], sizes: list[tuple[float, float]], gap: float,
                 bounds: Box | None = None, avoid: list[Box] = ()) -> list[Box]:
    """Boxes for labels of size ``sizes`` near ``anchors`` that do not overlap each other or the anchors.

    Greedy, in order: each label tries eight directions around its anchor at growing distances and takes
    the first box that overlaps nothing placed so far (labels, the anchors' own markers, ``gap`` wide, and
    the ``avoid`` boxes: text already drawn), else the least overlapping one; callers draw a leader line
    when a box ends up far from its anchor.
    """
    markers = [(x - gap, y - gap, x + gap, y + gap) for x, y in anchors] + list(avoid)
    placed: list[Box] = []
    dirs = [(1, -1), (1, 1), (-1, -1), (-1, 1), (1, 0), (-1, 0), (0, -1), (0, 1)]
    for (ax, ay), (w, h) in zip(anchors, sizes):
        best, best_cost = None, float("inf")
        for ring in range(1, 9):
            d = gap * (1 + 1.6 * (ring - 1))
            for dx, dy in dirs:
                x0 = ax + dx * d - (w if dx < 0 else w / 2 if dx == 0 else 0)
                y0 = ay + dy * d - (h if dy < 0 else h / 2 if dy == 0 else 0)
                box = (x0, y0, x0 + w, y0 + h)
                if bounds and (box[0] < bounds[0] or box[1] < bounds[1] or box[2] > bounds[2] or box[3] > bounds[3]):
                    continue
                cost = sum(_overlap(box, o) for o in placed) + sum(_overlap(box, m) for m in markers)
                if cost < best_cost:
                    best, best_cost = box, cost
                if cost == 0:
                    break
            if best_cost == 0:
                break
        if best is None:  # nothing fits inside the bounds: to the right of the anchor
            best = (ax + gap, ay - h / 2, ax + gap + w, ay + h / 2)
        placed.append(best)
    return placed


def _font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType: the fixed bitmap font still works
        return ImageFont.load_default()


def base_image(world: LoadedWorld, show_nodes: bool = True) -> Image.Image:
    """One pixel per tile: biome colours, shading, roads and (optionally) resource nodes."""
    gmap = world.map
    palette = np.array([b.color for b in world.data.biomes], dtype=np.float32)
    rgb = palette[gmap.biome]
    # subtle texture: terrain looks like terrain, and blocked ground reads darker
    shade = value_noise(StableRandom(7), (gmap.height, gmap.width), 10, octaves=2)
    rgb *= (0.9 + 0.16 * shade)[..., None]
    blocked = ~gmap.walkable_grid
    rgb[blocked & np.isin(gmap.biome, [i for i, b in enumerate(world.data.biomes) if b.walkable])] *= 0.55
    rgb[gmap.road] = ROAD
    img = np.clip(rgb, 0, 255).astype(np.uint8)
    if show_nodes:
        for n in world.nodes:
            img[n.y, n.x] = NODE_COLORS[world.node_type(n.type).kind]
    return Image.fromarray(img, "RGB")


def render_map(world: LoadedWorld, out: str | Path, scale: float = 2.0, markers: list[Marker] | None = None,
               title: str | None = None, show_nodes: bool = True,
               window: tuple[int, int, int, int] | None = None) -> Path:
    """Write the map PNG to ``out`` and return its path.

    ``scale`` = output pixels per tile; ``window`` = (x0, y0, x1, y1) inclusive draws only that part (a
    zoomed view of a task's area). Markers are numbered on the map and listed in the side panel, so
    agents spawned on neighbouring tiles stay readable.
    """
    if scale <= 0:
        raise ValueError(f"scale must be > 0 (got {scale}); 1 = one pixel per tile, 2 = double size")
    gmap = world.map
    wx0, wy0, wx1, wy1 = window or (0, 0, gmap.width - 1, gmap.height - 1)
    wx0, wy0 = max(0, wx0), max(0, wy0)
    wx1, wy1 = min(gmap.width - 1, wx1), min(gmap.height - 1, wy1)
    if wx0 > wx1 or wy0 > wy1:
        raise ValueError(f"window {window} does not overlap the {gmap.width} x {gmap.height} map")
    img = base_image(world, show_nodes).crop((wx0, wy0, wx1 + 1, wy1 + 1))
    size = (max(1, round((wx1 - wx0 + 1) * scale)), max(1, round((wy1 - wy0 + 1) * scale)))
    img = img.resize(size, Image.NEAREST)
    # a panel on the right holds the legend, so it never hides the map
    fs = max(11, min(22, round(7 * scale)))
    font, small = _font(fs), _font(max(10, round(fs * 0.8)))
    texts = [title or "", *(f"T00 {m.label} ({m.x}, {m.y})" for m in markers or [])]
    widest = max(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(t, font=small) for t in texts)
    panel_w = max(190, round(fs * 12), int(widest) + 20)
    canvas = Image.new("RGB", (size[0] + panel_w, max(size[1], 600)), (246, 244, 238))
    canvas.paste(img, (0, 0))
    img = canvas
    draw = ImageDraw.Draw(img, "RGBA")

    def px(x: float, y: float) -> tuple[float, float]:
        return ((x - wx0 + 0.5) * scale, (y - wy0 + 0.5) * scale)

    def inside(x: float, y: float, margin: float = 0) -> bool:
        return wx0 - margin <= x <= wx1 + margin and wy0 - margin <= y <= wy1 + margin

    drawn: list[Box] = []  # text on the map so far, which the task markers' numbers keep clear of

    def label(x: float, y: float, text: str, f=font, fill=(20, 20, 20), anchor="mm"):
        stroke = max(1, round(fs / 8))
        draw.text((x, y), text, font=f, fill=fill, anchor=anchor, stroke_width=stroke, stroke_fill=(255, 255, 255))
        drawn.append(draw.textbbox((x, y), text, font=f, anchor=anchor, stroke_width=stroke))

    # coordinate ticks along the top and left edges, for reading positions off the picture
    span = max(wx1 - wx0, wy1 - wy0)
    step = 100 if span > 300 else 50 if span > 150 else 10
    for gx in range((wx0 // step + 1) * step, wx1 + 1, step):
        x, _ = px(gx, wy0)
        draw.line([x, 0, x, 8], fill=(255, 255, 255, 220), width=1)
        draw.text((x + 2, 1), str(gx), font=small, fill=(255, 255, 255), stroke_width=1, stroke_fill=(0, 0, 0))
    for gy in range((wy0 // step + 1) * step, wy1 + 1, step):
        _, y = px(wx0, gy)
        draw.line([0, y, 8, y], fill=(255, 255, 255, 220), width=1)
        draw.text((2, y + 1), str(gy), font=small, fill=(255, 255, 255), stroke_width=1, stroke_fill=(0, 0, 0))
    # underground panel frame and title
    ug = world.data.map.layout.get("underground")
    if ug and window is None:
        x0, y0, x1, y1 = ug["rect"]
        draw.rectangle([*px(x0 - 0.5, y0 - 0.5), *px(x1 + 0.5, y1 + 0.5)], outline=(240, 240, 240),
                       width=max(1, round(scale)))
        label(*px((x0 + x1) / 2, y0 - 6), "UNDERGROUND (portals only)", small)
    # stations: small squares
    for st in world.stations:
        if inside(st.x, st.y):
            cx, cy = px(st.x, st.y)
            r = max(2, scale * 0.6 if window else scale * 1.2)
            draw.rectangle([cx - r, cy - r, cx + r, cy + r], fill=(250, 220, 60, 255), outline=(60, 40, 0))
            if window is not None:  # zoomed in: say which station it is
                label(cx, cy + r + fs * 0.5, st.kind, small, fill=(90, 60, 0))
    # landmarks: ring + name
    for lm in world.data.landmarks:
        if inside(lm.x, lm.y, lm.radius):
            cx, cy = px(lm.x, lm.y)
            r = max(4, lm.radius * scale * (1.0 if window else 0.6))
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=(20, 20, 20, 230), width=max(1, round(fs / 8)))
            label(cx, cy - r - fs * 0.6, lm.name)
    # portals: diamond, dashed link to the destination
    for pt in world.data.portals:
        ends = [(x, y) for x, y in ((pt.x, pt.y), (pt.to_x, pt.to_y)) if inside(x, y)]
        for (x, y) in ends:
            cx, cy = px(x, y)
            r = max(3, min(scale * 2.2, 9))
            draw.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=PORTAL_COLOR + (255,),
                         outline=(255, 255, 255))
        if window is None:
            _dashed(draw, px(pt.x, pt.y), px(pt.to_x, pt.to_y), PORTAL_COLOR + (150,), max(1, round(scale * 0.6)),
                    6 * scale)
        if inside(pt.x, pt.y):
            mx, my = px(pt.x, pt.y)
            # to the right of the entrance: landmark names sit above their rings, so the two rarely collide
            off = max(5, min(scale * 3, 12))
            if mx + off + draw.textlength(pt.name, font=small) < size[0] - 2:
                label(mx + off, my + fs * 0.5, pt.name, small, fill=PORTAL_COLOR, anchor="lm")
            else:  # no room before the map's right edge: write it to the left
                label(mx - off, my + fs * 0.5, pt.name, small, fill=PORTAL_COLOR, anchor="rm")
    # task markers: numbered symbols here, names in the side panel; the numbers are placed so that none
    # overlaps another (16 agents spawned on neighbouring tiles stay readable), with a leader line when a
    # number had to move away from its symbol
    listed = []
    shown = []
    r = max(4, min(scale * 2, 10))
    for i, m in enumerate(markers or [], start=1):
        tag = f"{_MARK_TAG.get(m.kind, 'T')}{i}"
        listed.append((tag, m))
        if m.route and len(m.route) > 1:  # a patrol route, closed back to its start
            pts = [px(x, y) for x, y in [*m.route, m.route[0]]]
            for a, b in zip(pts, pts[1:]):
                _dashed(draw, a, b, MECHANIC_COLOR + (230,), 2, max(3, scale * 2))
        if not inside(m.x, m.y):
            continue
        cx, cy = px(m.x, m.y)
        if m.kind == "mechanic":
            if m.radius:  # the area it covers (Manhattan: a diamond)
                rr = m.radius * scale
                draw.polygon([(cx, cy - rr), (cx + rr, cy), (cx, cy + rr), (cx - rr, cy)],
                             outline=MECHANIC_COLOR + (255,), fill=MECHANIC_COLOR + (40,))
            draw.rectangle([cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8], fill=MECHANIC_COLOR + (255,),
                           outline=(255, 255, 255), width=1)
        elif m.kind == "spawn":
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(30, 120, 255, 255), outline=(255, 255, 255), width=2)
        else:
            draw.line([cx - r, cy - r, cx + r, cy + r], fill=(230, 20, 20), width=3)
            draw.line([cx - r, cy + r, cx + r, cy - r], fill=(230, 20, 20), width=3)
        shown.append((tag, m, cx, cy))
    sizes = []
    for tag, *_ in shown:
        x0, y0, x1, y1 = draw.textbbox((0, 0), tag, font=small, stroke_width=max(1, round(fs / 8)))
        sizes.append((x1 - x0 + 2, y1 - y0 + 2))
    boxes = place_labels([(cx, cy) for *_, cx, cy in shown], sizes, gap=r + 1, bounds=(0, 0, size[0], size[1]),
                         avoid=list(drawn))
    for (tag, m, cx, cy), box in zip(shown, boxes):
        colour = _MARK_TEXT.get(m.kind, _MARK_TEXT["target"])
        near_x, near_y = min(max(cx, box[0]), box[2]), min(max(cy, box[1]), box[3])
        if abs(near_x - cx) + abs(near_y - cy) > 2.5 * r:
            draw.line([cx, cy, near_x, near_y], fill=colour + (200,), width=1)
        label(box[0] + 1, box[1] + 1, tag, small, fill=colour, anchor="lt")
    _legend(draw, world, small, title, x0=size[0], markers=listed, window=window)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out, "PNG", optimize=False)
    return out


def _dashed(draw, a, b, fill, width, dash):
    (x0, y0), (x1, y1) = a, b
    length = max(1.0, ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5)
    steps = int(length // dash)
    for i in range(0, steps, 2):  # no dashes when the line is shorter than one dash
        t0, t1 = i / steps, min(1, (i + 1) / steps)
        draw.line([(x0 + (x1 - x0) * t0, y0 + (y1 - y0) * t0), (x0 + (x1 - x0) * t1, y0 + (y1 - y0) * t1)],
                  fill=fill, width=width)


def _legend(draw, world: LoadedWorld, font, title, x0: float, markers=(), window=None):
    pad = 8
    line = (font.size if hasattr(font, "size") else 11) + 5
    y = pad
    x = x0 + pad
    draw.text((x, y), title or "Aldermere", font=font, fill=(0, 0, 0))
    y += line
    draw.text((x, y), f"world {world.version}, {world.map.width} x {world.map.height} tiles", font=font,
              fill=(70, 70, 70))
    y += line
    if window:
        draw.text((x, y), f"view x {window[0]}..{window[2]}, y {window[1]}..{window[3]}", font=font, fill=(70, 70, 70))
        y += line
    y += line / 2
    if markers:
        for tag, m in markers:
            color = _MARK_TEXT.get(m.kind, _MARK_TEXT["target"])
            area = f" r{m.radius}" if m.radius else ""
            draw.text((x, y), f"{tag} {m.label} ({m.x}, {m.y}){area}", font=font, fill=color)
            y += line
        y += line / 2
    entries = [(b.name, tuple(b.color)) for b in world.data.biomes]
    entries += [("Road", ROAD), ("Station", (250, 220, 60)), ("Portal", PORTAL_COLOR)]
    for name, color in entries:
        draw.rectangle([x, y + 2, x + line - 5, y + line - 3], fill=color, outline=(40, 40, 40))
        draw.text((x + line + 2, y), name, font=font, fill=(0, 0, 0))
        y += line
    y += line / 2
    for kind, color in NODE_COLORS.items():
        draw.rectangle([x + 3, y + 5, x + 7, y + 9], fill=color, outline=(40, 40, 40))
        draw.text((x + line + 2, y), kind.replace("_", " "), font=font, fill=(0, 0, 0))
        y += line
