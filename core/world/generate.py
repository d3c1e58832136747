"""Build the tile map and place resource nodes, mobs and stations from the data pack.

Everything here is a deterministic function of the data pack: the only randomness comes from numpy
generators seeded with ``map.seed`` (and a fixed salt per step), so the same data give the same tiles,
nodes and mobs in every run. ``map.tiles_sha256`` pins the result (checked by the loader).

Pipeline (all numpy, ~0.3 s for 1000 x 750):
 1. land polygons (coastline roughened by noise) on a sea background, biome regions by warped Voronoi
    seeds, beaches along the coast, blocked features (peaks, lava, bog pools) by noise thresholds;
 2. lakes, rivers, then roads (always walkable: bridges over water, passes through rock);
 3. the underground panel: rock with carved caves/dungeons, reachable only through portals;
 4. landmark and portal tiles cleared, then every walkable pocket not connected to an anchor (landmark
    or portal end) is filled in, so each area is exactly one connected component;
 5. resource nodes (blocked tiles, each with a fully walkable ring around it so they never cut paths),
    stations next to landmark centres, mobs in their spawn areas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .gamemap import GameMap, label_components
from .placements import MobPlacement, NodePlacement, StationPlacement, placements_sha256
from .models import WorldData


class GenerationError(ValueError):
    """The map description cannot produce a valid world (message names the entry and the fix)."""


@dataclass
class Generated:
    map: GameMap
    nodes: list[NodePlacement]
    mobs: list[MobPlacement]
    stations: list[StationPlacement]
    # named area (land mass / underground area) -> its anchor tile, for stats and tests
    areas: dict[str, tuple[int, int]] = field(default_factory=dict)

    def placements_sha256(self) -> str:
        return placements_sha256(self.nodes, self.mobs, self.stations)


# Salts keep each step's random stream independent, so editing one step does not reshuffle the others.
_SALT = {"coast": 1, "warp": 2, "feature": 3, "beach": 4, "cave": 5, "nodes": 6, "mobs": 7, "lake": 8, "meander": 9}


class StableRandom:
    """Random numbers that stay the same across numpy releases.

    numpy guarantees the raw output of its bit generators (PCG64) and of SeedSequence, but not the
    algorithms of ``Generator.random/permutation/choice``. Everything here is derived from the raw 64-bit
    stream with plain integer/float arithmetic, so the world does not change when numpy is upgraded.
    """

    def __init__(self, *key: int):
        self._bits = np.random.PCG64(np.random.SeedSequence(list(key)))

    def floats(self, n: int) -> np.ndarray:
        """``n`` floats in [0, 1) (float64, 53 random bits each)."""
        raw = self._bits.random_raw(n) if n else np.zeros(0, dtype=np.uint64)
        return (np.asarray(raw, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * float(self.floats(1)[0])

    def indices(self, n: int, k: int) -> np.ndarray:
        """``k`` random indices in [0, n), with repeats (cheap: no sort of ``n`` keys)."""
        return (self.floats(k) * n).astype(np.int64)

    def sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct random indices in [0, n), in draw order (requires k <= n)."""
        if k > n:
            raise ValueError(f"cannot draw {k} distinct indices from {n}")
        if 2 * k > n:
            return self.permutation(n)[:k].tolist()
        out: list[int] = []
        seen: set[int] = set()
        while len(out) < k:
            for i in self.indices(n, 2 * (k - len(out)) + 8).tolist():
                if i not in seen:
                    seen.add(i)
                    out.append(i)
                    if len(out) == k:
                        break
        return out

    def permutation(self, n: int) -> np.ndarray:
        """A random order of range(n): stable argsort of random keys."""
        return np.argsort(self.floats(n), kind="stable")


def _rng(seed: int, step: str, extra: int = 0) -> StableRandom:
    return StableRandom(seed, _SALT[step], extra)


# -- noise ------------------------------------------------------------------------------------------
def value_noise(rng: StableRandom, shape: tuple[int, int], scale: float, octaves: int = 3) -> np.ndarray:
    """Smooth fractal value noise in [0, 1], float32 of ``shape`` (h, w); ``scale`` = feature size in tiles.

    Each octave is a coarse random grid interpolated with smoothstep weights, separably (rows first),
    which costs three full-size array operations per octave.
    """
    h, w = shape
    total = np.zeros(shape, dtype=np.float32)
    amp, norm = 1.0, 0.0
    for octave in range(octaves):
        s = max(scale / (2 ** octave), 1.5)
        gh, gw = int(h / s) + 3, int(w / s) + 3
        grid = rng.floats(gh * gw).astype(np.float32).reshape(gh, gw)
        ys = np.arange(h, dtype=np.float32) / np.float32(s)
        xs = np.arange(w, dtype=np.float32) / np.float32(s)
        y0 = ys.astype(np.int32)
        x0 = xs.astype(np.int32)
        ty = ys - y0
        tx = xs - x0
        ty = ty * ty * (3 - 2 * ty)  # smoothstep: no grid artefacts
        tx = tx * tx * (3 - 2 * tx)
        rows = grid[:, x0] + (grid[:, x0 + 1] - grid[:, x0]) * tx[None, :]  # (gh, w)
        top = rows[y0]
        total += amp * (top + (rows[y0 + 1] - top) * ty[:, None])
        norm += amp
        amp *= 0.5
    # stretch to [0, 1]: averaging octaves pulls values towards 0.5
    lo, hi = float(total.min()), float(total.max())
    return ((total - lo) / max(hi - lo, 1e-6)).astype(np.float32)


# -- rasterising (pure numpy: the tiles must not depend on an imaging library's version) ----------------
def _polygon_mask(shape, points) -> np.ndarray:
    """Tiles whose centre (x, y) lies inside the polygon (even-odd rule)."""
    h, w = shape
    mask = np.zeros(shape, dtype=bool)
    pts = [(float(x), float(y)) for x, y in points]
    crossings: dict[int, list[float]] = {}
    for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):
        if y0 == y1:
            continue
        lo, hi = (y0, y1) if y0 < y1 else (y1, y0)
        for y in range(max(0, int(np.ceil(lo))), min(h - 1, int(np.ceil(hi)) - 1) + 1):
            if lo <= y < hi:
                crossings.setdefault(y, []).append(x0 + (y - y0) * (x1 - x0) / (y1 - y0))
    for y, xs in crossings.items():
        xs.sort()
        for xa, xb in zip(xs[0::2], xs[1::2]):
            a, b = max(0, int(np.ceil(xa))), min(w - 1, int(np.floor(xb)))
            if a <= b:
                mask[y, a:b + 1] = True
    return mask


def _polyline_mask(shape, points, width: float) -> np.ndarray:
    """Tiles within width/2 of the polyline (capsules per segment: joints and ends are round)."""
    h, w = shape
    r = width / 2.0
    mask = np.zeros(shape, dtype=bool)
    pts = [(float(x), float(y)) for x, y in points]
    if len(pts) == 1:
        pts = pts * 2
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        bx0, bx1 = max(0, int(min(x0, x1) - r) - 1), min(w - 1, int(max(x0, x1) + r) + 1)
        by0, by1 = max(0, int(min(y0, y1) - r) - 1), min(h - 1, int(max(y0, y1) + r) + 1)
        if bx0 > bx1 or by0 > by1:
            continue
        yy, xx = np.mgrid[by0:by1 + 1, bx0:bx1 + 1].astype(np.float64)
        dx, dy = x1 - x0, y1 - y0
        ll = dx * dx + dy * dy
        t = np.zeros_like(xx) if ll == 0 else np.clip(((xx - x0) * dx + (yy - y0) * dy) / ll, 0.0, 1.0)
        d2 = (xx - (x0 + t * dx)) ** 2 + (yy - (y0 + t * dy)) ** 2
        mask[by0:by1 + 1, bx0:bx1 + 1] |= d2 <= r * r
    return mask


def meander(points, rng: StableRandom, amplitude: float, step: float = 8.0) -> list[tuple[float, float]]:
    """Bend a polyline naturally: each segment gets smooth sideways offsets that vanish at its ends, so
    the waypoints (landmarks, bridges) stay exactly where the description puts them."""
    out = [tuple(map(float, points[0]))]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        dx, dy = x1 - x0, y1 - y0
        length = math.hypot(dx, dy)
        n = max(1, int(length // step))
        if amplitude <= 0 or n < 3:
            out.append((float(x1), float(y1)))
            continue
        nx, ny = -dy / length, dx / length
        # two random sine components give a smooth, non-repeating wiggle
        k1, k2 = rng.uniform(1.0, 2.5), rng.uniform(3.0, 5.0)
        p1, p2 = rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi)
        for i in range(1, n + 1):
            t = i / n
            off = amplitude * math.sin(math.pi * t) * (0.7 * math.sin(k1 * math.pi * t + p1)
                                                      + 0.3 * math.sin(k2 * math.pi * t + p2))
            out.append((x0 + dx * t + nx * off, y0 + dy * t + ny * off))
    return out


def _ellipse_mask(shape, x, y, rx, ry) -> np.ndarray:
    h, w = shape
    yy, xx = np.ogrid[:h, :w]
    return ((xx - x) / rx) ** 2 + ((yy - y) / ry) ** 2 <= 1.0


def _box_blur(a: np.ndarray, r: int) -> np.ndarray:
    """Mean over a (2r+1) window along both axes (edges clamp)."""
    if r < 1:
        return a.astype(np.float32)
    out = a.astype(np.float64)
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (r + 1, r)
        c = np.cumsum(np.pad(out, pad, mode="edge"), axis=axis)
        n = out.shape[axis]
        hi = np.take(c, np.arange(2 * r + 1, 2 * r + 1 + n), axis=axis)
        lo = np.take(c, np.arange(0, n), axis=axis)
        out = (hi - lo) / (2 * r + 1)
    return out.astype(np.float32)


def _blur(mask: np.ndarray, radius: float) -> np.ndarray:
    """Soft version of a mask in [0, 1]: three box blurs approximate a Gaussian of about ``radius``."""
    r = max(1, int(round(radius * 0.6)))
    out = mask.astype(np.float32)
    for _ in range(3):
        out = _box_blur(out, r)
    return out


def _dilate(mask: np.ndarray, steps: int = 1) -> np.ndarray:
    """4-connected dilation."""
    out = mask.copy()
    for _ in range(steps):
        grown = out.copy()
        grown[1:, :] |= out[:-1, :]
        grown[:-1, :] |= out[1:, :]
        grown[:, 1:] |= out[:, :-1]
        grown[:, :-1] |= out[:, 1:]
        out = grown
    return out


def _disc(shape, x, y, r) -> np.ndarray:
    h, w = shape
    mask = np.zeros(shape, dtype=bool)
    y0, y1, x0, x1 = max(0, y - r), min(h, y + r + 1), max(0, x - r), min(w, x + r + 1)
    if y0 < y1 and x0 < x1:
        yy, xx = np.ogrid[y0:y1, x0:x1]
        mask[y0:y1, x0:x1] = (xx - x) ** 2 + (yy - y) ** 2 <= r * r
    return mask


# -- the generator -----------------------------------------------------------------------------------
class _Builder:
    def __init__(self, data: WorldData):
        self.data = data
        spec = data.map
        self.spec = spec
        self.layout = spec.layout
        self.shape = (spec.height, spec.width)
        self.keys = [b.key for b in data.biomes]
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.walkable_biome = np.array([b.walkable for b in data.biomes], dtype=bool)
        self.biome = np.zeros(self.shape, dtype=np.uint8)
        self.road = np.zeros(self.shape, dtype=bool)
        self.seed = spec.seed

    def bi(self, key: str, where: str) -> int:
        if key not in self.index:
            raise GenerationError(f"map.yaml: {where} names biome {key!r}, which is not in `biomes:`; "
                                  f"add it there or use one of {', '.join(self.keys)}")
        return self.index[key]

    def among(self, biomes) -> np.ndarray:
        """Tiles whose biome is one of ``biomes`` (keys or indices); a lookup table beats np.isin here."""
        lut = np.zeros(len(self.keys), dtype=bool)
        for b in biomes:
            lut[b if isinstance(b, (int, np.integer)) else self.index[b]] = True
        return lut[self.biome]

    def walk(self) -> np.ndarray:
        return self.walkable_biome[self.biome] | self.road

    # 1. land and biomes
    def land(self) -> dict[str, np.ndarray]:
        lay = self.layout
        self.biome[:] = self.bi(lay.get("background", "sea"), "layout.background")
        masses = {}
        for i, mass in enumerate(lay.get("land", [])):
            key = mass["key"]
            amp = float(mass.get("coast_noise", 10))
            rough = float(mass.get("roughness", 1.8))  # how far the noise may push the coast from the polygon
            # work in the polygon's bounding box plus a margin the blur and noise can reach
            xs = [p[0] for p in mass["polygon"]]
            ys = [p[1] for p in mass["polygon"]]
            m = int(2 * amp) + 4
            x0, x1 = max(0, int(min(xs)) - m), min(self.shape[1], int(max(xs)) + m + 1)
            y0, y1 = max(0, int(min(ys)) - m), min(self.shape[0], int(max(ys)) + m + 1)
            win = (y1 - y0, x1 - x0)
            base = _polygon_mask(win, [(px - x0, py - y0) for px, py in mass["polygon"]])
            noise = value_noise(_rng(self.seed, "coast", i), win, scale=amp * 2.5, octaves=4)
            land = np.zeros(self.shape, dtype=bool)
            land[y0:y1, x0:x1] = _blur(base, radius=amp) + (noise - 0.5) * rough > 0.5
            # land masses never touch: a channel of open sea keeps islands islands
            if masses:
                others = np.zeros(self.shape, dtype=bool)
                for other in masses.values():
                    others |= other
                land &= ~_dilate(others, int(lay.get("channel", 6)))
            masses[key] = land
            self.biome[land] = self.bi(mass.get("biome", "meadow"), f"layout.land[{key}].biome")
        # sea cut off from the open ocean (holes the coast noise punched inland) is a lake, not salt water
        bg = self.bi(lay.get("background", "sea"), "layout.background")
        if "lake" in self.index:
            sea_lab = label_components(self.biome == bg)
            border = np.unique(np.concatenate([sea_lab[0], sea_lab[-1], sea_lab[:, 0], sea_lab[:, -1]]))
            inland = (sea_lab > 0) & ~np.isin(sea_lab, border[border > 0])
            self.biome[inland] = self.index["lake"]
        # regions: warped nearest-seed assignment, computed at half resolution then upsampled
        warp = float(lay.get("region_warp", 30))
        h2, w2 = (self.shape[0] + 1) // 2, (self.shape[1] + 1) // 2
        wscale = float(lay.get("region_warp_scale", 30))
        wx = (value_noise(_rng(self.seed, "warp", 0), (h2, w2), wscale) - 0.5) * 2 * warp
        wy = (value_noise(_rng(self.seed, "warp", 1), (h2, w2), wscale) - 0.5) * 2 * warp
        yy, xx = np.mgrid[0:h2, 0:w2].astype(np.float32) * 2
        xx += wx
        yy += wy
        for mass_key, seeds in lay.get("regions", {}).items():
            if mass_key not in masses:
                raise GenerationError(f"map.yaml: layout.regions has {mass_key!r}, which is not a land mass "
                                      f"(layout.land keys: {', '.join(masses)})")
            best = np.full((h2, w2), np.inf, dtype=np.float32)
            choice = np.zeros((h2, w2), dtype=np.uint8)
            for biome_key, sx, sy in seeds:
                d = (xx - sx) ** 2 + (yy - sy) ** 2
                closer = d < best
                best[closer] = d[closer]
                choice[closer] = self.bi(biome_key, f"layout.regions.{mass_key}")
            full = np.repeat(np.repeat(choice, 2, axis=0), 2, axis=1)[: self.shape[0], : self.shape[1]]
            land = masses[mass_key]
            self.biome[land] = full[land]
        # beaches along every coast
        beach = lay.get("beach")
        sea = self.biome == self.bi(lay.get("background", "sea"), "layout.background")
        if beach:
            width = int(beach.get("width", 3))
            near_sea = _dilate(sea, width)
            extra = _dilate(sea, width + int(beach.get("noise", 0)))
            jitter = value_noise(_rng(self.seed, "beach"), self.shape, 6) > 0.5
            self.biome[(near_sea | (extra & jitter)) & ~sea] = self.bi(beach["biome"], "layout.beach")
        # blocked features inside biomes
        for i, feat in enumerate(lay.get("features", [])):
            inside = self.biome == self.bi(feat["in"], f"layout.features[{i}].in")
            rows, cols = np.flatnonzero(inside.any(axis=1)), np.flatnonzero(inside.any(axis=0))
            if not len(rows):
                continue
            y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
            noise = value_noise(_rng(self.seed, "feature", i), (y1 - y0, x1 - x0), float(feat.get("scale", 12)))
            win = self.biome[y0:y1, x0:x1]
            win[inside[y0:y1, x0:x1] & (noise > float(feat["threshold"]))] = self.bi(feat["biome"], f"layout.features[{i}]")
        return masses

    # 2. water and roads
    def water(self) -> None:
        lake = self.bi("lake", "layout.lakes")
        h, w = self.shape
        for i, lk in enumerate(self.layout.get("lakes", [])):
            # work in a window around the lake: the noise and blur never reach further
            m = 12
            x0, x1 = max(0, lk["x"] - lk["rx"] - m), min(w, lk["x"] + lk["rx"] + m + 1)
            y0, y1 = max(0, lk["y"] - lk["ry"] - m), min(h, lk["y"] + lk["ry"] + m + 1)
            win = (y1 - y0, x1 - x0)
            base = _ellipse_mask(win, lk["x"] - x0, lk["y"] - y0, lk["rx"], lk["ry"])
            noise = value_noise(_rng(self.seed, "lake", i), win, 8, octaves=2)
            water = (_blur(base, 3) + (noise - 0.5) * 0.5) > 0.5
            self.biome[y0:y1, x0:x1][water] = lake
        for i, rv in enumerate(self.layout.get("rivers", [])):
            path = meander(rv["path"], _rng(self.seed, "meander", i), float(rv.get("meander", 10)))
            self.biome[_polyline_mask(self.shape, path, int(rv.get("width", 3)))] = lake

    def roads(self) -> None:
        width = int(self.layout.get("road_width", 3))
        water = self.among([k for k in ("sea", "lake") if k in self.index])
        amp = float(self.layout.get("road_meander", 0))
        for i, rd in enumerate(self.layout.get("roads", [])):
            path = meander(rd["path"], _rng(self.seed, "meander", 1000 + i), float(rd.get("meander", amp)))
            self.road |= _polyline_mask(self.shape, path, width)
        # a road over water is a bridge; through rock or lava it is a pass on the surrounding ground
        bridge = self.road & water
        if "bridge" in self.index:
            self.biome[bridge] = self.index["bridge"]
        self._clear_blocked(self.road & ~self.walkable_biome[self.biome])

    def _clear_blocked(self, mask: np.ndarray) -> None:
        """Turn blocked tiles in ``mask`` into the most common walkable biome around them."""
        if not mask.any():
            return
        ys, xs = np.nonzero(mask)
        for y, x in zip(ys.tolist(), xs.tolist()):
            y0, y1 = max(0, y - 6), min(self.shape[0], y + 7)
            x0, x1 = max(0, x - 6), min(self.shape[1], x + 7)
            window = self.biome[y0:y1, x0:x1].ravel()
            walkable = window[self.walkable_biome[window]]
            if "bridge" in self.index:
                walkable = walkable[walkable != self.index["bridge"]]
            if len(walkable):
                self.biome[y, x] = np.bincount(walkable).argmax()
            else:
                self.biome[y, x] = self.index.get("meadow", int(np.flatnonzero(self.walkable_biome)[0]))

    # 3. underground
    def underground(self) -> dict[str, tuple[int, int]]:
        ug = self.layout.get("underground")
        if not ug:
            return {}
        x0, y0, x1, y1 = ug["rect"]
        self.biome[y0:y1 + 1, x0:x1 + 1] = self.bi(ug.get("wall", "cave_wall"), "layout.underground.wall")
        self.road[y0:y1 + 1, x0:x1 + 1] = False
        anchors = {}
        for i, area in enumerate(ug.get("areas", [])):
            key = area["key"]
            floor_biome = self.bi(area["biome"], f"layout.underground.areas[{key}].biome")
            ax0, ay0, ax1, ay1 = area["rect"]
            floor = np.zeros(self.shape, dtype=bool)
            if area.get("style", "cave") == "cave":
                noise = value_noise(_rng(self.seed, "cave", i), (ay1 - ay0 + 1, ax1 - ax0 + 1), 9, octaves=2)
                inner = noise > float(area.get("threshold", 0.45))
                inner[:2, :] = inner[-2:, :] = False
                inner[:, :2] = inner[:, -2:] = False
                floor[ay0:ay1 + 1, ax0:ax1 + 1] = inner
            for rx0, ry0, rx1, ry1 in area.get("rooms", []):
                floor[ry0:ry1 + 1, rx0:rx1 + 1] = True
            if area.get("path"):
                floor |= _polyline_mask(self.shape, area["path"], 3)
            clip = np.zeros(self.shape, dtype=bool)
            clip[ay0:ay1 + 1, ax0:ax1 + 1] = True
            self.biome[floor & clip] = floor_biome
            anchors[key] = tuple(area["path"][0]) if area.get("path") else ((ax0 + ax1) // 2, (ay0 + ay1) // 2)
        return anchors

    # 4. anchors and pockets
    def anchors(self) -> list[tuple[str, int, int]]:
        out = [(f"landmark {lm.key}", lm.x, lm.y) for lm in self.data.landmarks]
        for p in self.data.portals:
            out.append((f"portal {p.key}", p.x, p.y))
            out.append((f"portal {p.key} destination", p.to_x, p.to_y))
        out += [(f"npc {n.key}", n.x, n.y) for n in self.data.npcs]
        return out

    def clear_anchors(self) -> None:
        h, w = self.shape
        mask = np.zeros(self.shape, dtype=bool)
        for lm in self.data.landmarks:
            # the landmark's inner area is open ground so stations and spawns fit
            mask |= _disc(self.shape, lm.x, lm.y, max(2, lm.radius // 2))
        for where, x, y in self.anchors():
            if not (0 <= x < w and 0 <= y < h):
                raise GenerationError(f"map.yaml: {where} at ({x}, {y}) is outside the {w} x {h} map; "
                                      f"move it inside")
            mask[max(0, y - 1):y + 2, max(0, x - 1):x + 2] = True
        self._clear_blocked(mask & ~self.walkable_biome[self.biome] & ~(self.biome == self.index.get("bridge", 255)))

    def fill_pockets(self, walk: np.ndarray) -> np.ndarray:
        labels = label_components(walk)
        keep = {int(labels[y, x]) for _, x, y in self.anchors()}
        keep.discard(0)
        kept = np.isin(labels, list(keep))
        pocket = walk & ~kept
        limit = int(self.layout.get("max_pocket_fill", 4000))
        if pocket.any():
            sizes = np.bincount(labels[pocket])
            big = int(sizes.max())
            if big > limit:
                lab = int(sizes.argmax())
                ys, xs = np.nonzero(labels == lab)
                raise GenerationError(
                    f"map.yaml: a walkable area of {big} tiles around ({int(xs.mean())}, {int(ys.mean())}) is cut off "
                    f"from every landmark and portal (limit layout.max_pocket_fill={limit}); connect it with a road "
                    f"or bridge, or add a landmark/portal there")
            self._fill(pocket)
            self.road &= ~pocket
        return labels

    def _fill(self, pocket: np.ndarray) -> None:
        """Turn pocket tiles into the blocked biome next to them (grown inward from the pocket's border)."""
        blocked = ~self.walkable_biome[self.biome]
        todo = pocket.copy()
        while todo.any():
            progressed = False
            for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                src_b = np.roll(self.biome, (dy, dx), axis=(0, 1))
                src_ok = np.roll(blocked, (dy, dx), axis=(0, 1)) & ~np.roll(todo, (dy, dx), axis=(0, 1))
                take = todo & src_ok
                if take.any():
                    self.biome[take] = src_b[take]
                    blocked |= take
                    todo &= ~take
                    progressed = True
            if not progressed:  # cannot happen (a pocket is bordered by blocked tiles); guard against loops
                raise GenerationError("map.yaml: could not fill a cut-off pocket; check the layout")

    # 5. placements
    def place_nodes(self, walk: np.ndarray, reserved: np.ndarray) -> list[tuple[str, int, int]]:
        """Clusters near named places first (layout.clusters), then every type scattered by density."""
        h, w = self.shape
        # a land node needs its whole 3x3 block walkable so that blocking it never cuts a path
        full = walk.copy()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                full &= np.roll(walk, (dy, dx), axis=(0, 1))
        full[0, :] = full[-1, :] = False
        full[:, 0] = full[:, -1] = False
        no_go = _dilate(reserved | self.road, 1)
        shore = np.zeros(self.shape, dtype=bool)  # water tiles with a walkable tile next to them
        shore[1:, :] |= walk[:-1, :]
        shore[:-1, :] |= walk[1:, :]
        shore[:, 1:] |= walk[:, :-1]
        shore[:, :-1] |= walk[:, 1:]
        shore &= ~walk & ~self.walkable_biome[self.biome]
        taken = np.zeros(self.shape, dtype=bool)  # tiles within 2 of a placed node (Chebyshev)
        out: list[tuple[str, int, int]] = []
        water_kinds = ~self.walkable_biome
        types = {nt.key: nt for nt in self.data.node_types}

        def scatter(key: str, idx: np.ndarray, target: int, rng: StableRandom) -> int:
            placed, tries = 0, 0
            # draw candidates with repeats until the target is met; spacing rejects some, so allow 30x tries
            while placed < target and tries < 30 * target and len(idx):
                batch = idx[rng.indices(len(idx), 2 * (target - placed) + 16)]
                for flat in batch.tolist():
                    tries += 1
                    y, x = divmod(flat, w)
                    if taken[y, x]:
                        continue
                    taken[max(0, y - 2):y + 3, max(0, x - 2):x + 3] = True
                    out.append((key, x, y))
                    placed += 1
                    if placed >= target:
                        break
            return placed

        for c_i, cl in enumerate(self.layout.get("clusters", [])):
            where = f"map.yaml: layout.clusters[{c_i}] ({cl.get('node')} near {cl.get('near', cl.get('at'))})"
            nt = types.get(cl.get("node"))
            if nt is None:
                raise GenerationError(f"{where}: node type {cl.get('node')!r} is not in nodes.yaml")
            if "near" in cl:
                lms = {lm.key: lm for lm in self.data.landmarks}
                if cl["near"] not in lms:
                    raise GenerationError(f"{where}: landmark {cl['near']!r} is not in map.yaml landmarks")
                cx, cy = lms[cl["near"]].x, lms[cl["near"]].y
            else:
                cx, cy = cl["at"]
            disc = _disc(self.shape, cx, cy, int(cl.get("radius", 15)))
            if nt.kind == "fishing_spot":  # on the type's own water biomes, ignoring its shore list
                water = [b for b in nt.biomes if b in self.index and not self.walkable_biome[self.index[b]]]
                ok = shore & self.among(water)
            else:
                ok = full
            ok = ok & disc & ~no_go & ~taken
            got = scatter(nt.key, np.flatnonzero(ok), int(cl["count"]), _rng(self.seed, "nodes", 10_000 + c_i))
            if got < int(cl["count"]):
                raise GenerationError(f"{where}: only {got} of {cl['count']} fit (free open ground, or shoreline for "
                                      f"fishing spots, within radius {cl.get('radius', 15)}); widen the radius or "
                                      f"lower the count")

        for t_i, nt in enumerate(self.data.node_types):
            biomes = [self.bi(b, f"nodes.yaml node type {nt.key}.biomes") for b in nt.biomes]
            if nt.kind == "fishing_spot":
                water = [b for b in biomes if water_kinds[b]]
                shore_biomes = [b for b in biomes if not water_kinds[b]]
                if not water:
                    raise GenerationError(f"nodes.yaml: fishing spot {nt.key} lists no water biome in biomes; "
                                          f"add one (e.g. sea, lake) next to its shore biomes")
                shore_ok = walk & (self.among(shore_biomes) if shore_biomes else True)
                near = np.zeros(self.shape, dtype=bool)
                near[1:, :] |= shore_ok[:-1, :]
                near[:-1, :] |= shore_ok[1:, :]
                near[:, 1:] |= shore_ok[:, :-1]
                near[:, :-1] |= shore_ok[:, 1:]
                eligible = self.among(water) & shore & near & ~no_go
            else:
                eligible = full & self.among(biomes) & ~no_go
            idx = np.flatnonzero(eligible & ~taken)
            target = int(round(nt.density * len(idx) / 10_000))
            if target:
                scatter(nt.key, idx, target, _rng(self.seed, "nodes", t_i))
        return out

    def place_stations(self, walk: np.ndarray) -> list[StationPlacement]:
        out = []
        # stations sit around the landmark centre, two tiles apart, on walkable tiles
        ring = [(3, 0), (-3, 0), (0, 3), (0, -3), (3, 3), (-3, -3), (3, -3), (-3, 3)]
        for lm in self.data.landmarks:
            used: set[tuple[int, int]] = set()
            for i, kind in enumerate(lm.stations):
                dx, dy = ring[i % len(ring)]
                spot = self._nearest_free(walk, lm.x + dx, lm.y + dy, used)
                if spot is None:
                    raise GenerationError(f"map.yaml: landmark {lm.key}: no walkable tile for station {kind}; "
                                          f"move the landmark onto open ground")
                used.add(spot)
                out.append(StationPlacement(kind, spot[0], spot[1], lm.key))
        return out

    def _nearest_free(self, walk, x, y, used, max_r=8):
        for r in range(max_r + 1):
            for dy in range(-r, r + 1):
                for dx in (-(r - abs(dy)), r - abs(dy)):
                    xx, yy = x + dx, y + dy
                    if 0 <= xx < self.shape[1] and 0 <= yy < self.shape[0] and walk[yy, xx] and (xx, yy) not in used:
                        return (xx, yy)
        return None

    def place_mobs(self, walk: np.ndarray, labels: np.ndarray, reserved: np.ndarray) -> list[tuple[str, int, int]]:
        mob_keys = {m.key: m for m in self.data.mob_types}
        safe = np.zeros(self.shape, dtype=bool)  # villages stay free of aggressive mobs
        for lm in self.data.landmarks:
            if lm.kind in ("village", "farm", "dock", "shrine", "forge"):
                safe |= _disc(self.shape, lm.x, lm.y, lm.radius + 4)
        out = []
        occupied = reserved.copy()
        for i, sp in enumerate(self.data.mob_spawns):
            where = f"mobs.yaml mob_spawns[{i}] ({sp.mob})"
            eligible = walk & ~occupied & (labels > 0)
            if sp.area is not None:
                x0, y0, x1, y1 = sp.area
                box = np.zeros(self.shape, dtype=bool)
                box[max(0, y0):y1 + 1, max(0, x0):x1 + 1] = True
                eligible &= box
            if sp.biomes:
                eligible &= self.among([self.bi(b, where) for b in sp.biomes])
            mob = mob_keys.get(sp.mob)
            if mob is not None and mob.aggro_range > 0 and not mob.boss:
                eligible &= ~safe
            idx = np.flatnonzero(eligible)
            if len(idx) < sp.count:
                raise GenerationError(f"{where}: only {len(idx)} free walkable tiles match its area/biomes but "
                                      f"count is {sp.count}; widen the area, fix the biomes or lower count")
            rng = _rng(self.seed, "mobs", i)
            chosen = np.sort(idx[rng.sample(len(idx), sp.count)])
            for flat in chosen.tolist():
                y, x = divmod(flat, self.shape[1])
                occupied[y, x] = True
                out.append((sp.mob, x, y))
        return out


def generate(data: WorldData) -> Generated:
    """Build the map and all placements for a data pack (deterministic)."""
    b = _Builder(data)
    masses = b.land()
    b.water()
    b.roads()
    area_anchors = b.underground()
    b.clear_anchors()
    walk = b.walk()
    b.fill_pockets(walk)
    walk = b.walk()

    # tiles nodes must not take: landmark centres, portal ends, station spots
    reserved = np.zeros(b.shape, dtype=bool)
    for lm in data.landmarks:
        reserved |= _disc(b.shape, lm.x, lm.y, max(3, lm.radius // 2 + 1))
    for _, x, y in b.anchors():
        reserved[max(0, y - 2):y + 3, max(0, x - 2):x + 3] = True
    stations = b.place_stations(walk)
    for st in stations:
        reserved[st.y, st.x] = True
    raw_nodes = b.place_nodes(walk, reserved)
    # bake nodes in as blocked tiles (fishing spots are on water already)
    for _, x, y in raw_nodes:
        walk[y, x] = False
    labels = label_components(walk)
    raw_mobs = b.place_mobs(walk, labels, reserved)

    # ids: one counter for the whole world, nodes in reading order then mobs in spawn order
    raw_nodes.sort(key=lambda t: (t[2], t[1]))
    nodes = [NodePlacement(f"{k}#{i}", k, x, y) for i, (k, x, y) in enumerate(raw_nodes, start=1)]
    start = len(nodes) + 1
    mobs = [MobPlacement(f"{k}#{i}", k, x, y) for i, (k, x, y) in enumerate(raw_mobs, start=start)]

    gmap = GameMap(b.biome, b.keys, walk, data.map.version, road=b.road, components=labels)
    # an anchor tile per area: the first landmark on each land mass, the entrance of each underground area
    areas: dict[str, tuple[int, int]] = {}
    for key, mask in masses.items():
        inside = [lm for lm in data.landmarks if mask[lm.y, lm.x]]
        if not inside:
            continue
        areas[key] = (inside[0].x, inside[0].y)
        # a land mass is one connected area: every landmark on it reachable from its first landmark on foot
        home = labels[inside[0].y, inside[0].x]
        cut_off = [lm.key for lm in inside if labels[lm.y, lm.x] != home]
        if cut_off:
            raise GenerationError(f"map.yaml: landmarks {cut_off} on land mass {key} cannot be reached on foot from "
                                  f"{inside[0].key}; connect them with a road (roads bridge water and cut through rock)")
    owners: dict[int, str] = {}
    for key, (ax, ay) in areas.items():
        c = int(labels[ay, ax])
        if c in owners:
            raise GenerationError(f"map.yaml: land masses {owners[c]} and {key} are connected on foot; move them "
                                  f"apart or widen layout.channel (tiles of sea kept between land masses)")
        owners[c] = key
    areas.update(area_anchors)
    return Generated(gmap, nodes, mobs, stations, areas)
