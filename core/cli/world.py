"""CLI: ``agentworld world stats|render|near|sources|pin`` and ``agentworld tools`` (registered through the plugin hook)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from ..hookspecs import hookimpl

_DATA_HELP = "World data pack directory (default: the built-in pack)."


def _load(data_dir: str | None, check_hash: bool = True):
    from ..world.datapack import DataPackError, load_world

    try:
        return load_world(data_dir, check_hash=check_hash)
    except DataPackError as e:
        raise click.ClickException(str(e)) from None


def task_markers(world, task) -> list:
    """Spawns of a task's agents and the places its reference solution and checks point at."""
    from ..world.render import Marker

    marks = [Marker(a.x, a.y, a.username or a.agent_id, "spawn") for a in task.agents]
    seen: set[tuple[int, int]] = {(m.x, m.y) for m in marks}

    def add(x: int, y: int, label: str) -> None:
        if (x, y) not in seen and 0 <= x < world.map.width and 0 <= y < world.map.height:
            seen.add((x, y))
            marks.append(Marker(x, y, label, "target"))

    def scan(obj: Any, label: str) -> None:
        if isinstance(obj, dict):
            if isinstance(obj.get("x"), int) and isinstance(obj.get("y"), int):
                add(obj["x"], obj["y"], label)
            for k, v in obj.items():
                scan(v, label if k in ("args", "checks") else str(k) if isinstance(k, str) else label)
        elif isinstance(obj, list):
            for v in obj:
                scan(v, label)
        elif isinstance(obj, str):
            if obj in world.node_by_id:
                n = world.node_by_id[obj]
                add(n.x, n.y, obj)
            elif obj in world.mob_by_id:
                m = world.mob_by_id[obj]
                add(m.x, m.y, obj)
            elif obj in world._landmarks:
                lm = world.landmark(obj)
                add(lm.x, lm.y, lm.name)

    for agent_id, steps in (task.reference_solution or {}).items():
        for step in steps:
            scan(step.args, f"{agent_id}: {step.tool}")
    if task.verifier is not None:
        scan([c.model_dump() for c in task.verifier.checks], "check")
    from ..tasks.mechanics import mechanic_places

    for label, x, y, radius, route in mechanic_places(task, world):  # events, joint actions, hidden things, mobs
        marks.append(Marker(x, y, label, "mechanic", radius=radius, route=route))
    return marks


def _window(world, around: str, radius: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) around 'X,Y' or a landmark key."""
    if "," in around:
        try:
            x, y = (int(v) for v in around.split(","))
        except ValueError:
            raise click.BadParameter(f"{around!r}: give X,Y (e.g. 450,400) or a landmark key",
                                     param_hint="--around") from None
    else:
        try:
            lm = world.landmark(around)
        except KeyError:
            keys = ", ".join(lm.key for lm in world.data.landmarks)
            raise click.BadParameter(f"{around!r} is not a landmark; use X,Y or one of: {keys}",
                                     param_hint="--around") from None
        x, y = lm.x, lm.y
    if not (0 <= x < world.map.width and 0 <= y < world.map.height):
        raise click.BadParameter(f"({x}, {y}) is outside the {world.map.width} x {world.map.height} map",
                                 param_hint="--around")
    return (x - radius, y - radius, x + radius, y + radius)


def describe_near(world, x: int, y: int, radius: int) -> list[dict[str, Any]]:
    """Rows for `world near`: every static placement within ``radius`` (closest first)."""
    from ..world.datapack import MobPlacement, NodePlacement, PortalEnd, StationPlacement

    rows = []
    for e in world.entities_near(x, y, radius):
        d = abs(e.x - x) + abs(e.y - y)
        if isinstance(e, NodePlacement):
            t = world.node_type(e.type)
            details = (f"{t.skill} {t.level}, tool {t.tool or 'none'}, yields "
                       + ", ".join(yy.item for yy in t.yields))
            rows.append({"what": "node", "id": e.id, "x": e.x, "y": e.y, "distance": d, "details": details})
        elif isinstance(e, MobPlacement):
            t = world.mob_type(e.type)
            details = f"level {t.level}, hp {t.hp}, aggro {t.aggro_range}" + (", BOSS" if t.boss else "")
            rows.append({"what": "mob", "id": e.id, "x": e.x, "y": e.y, "distance": d, "details": details})
        elif isinstance(e, StationPlacement):
            rows.append({"what": "station", "id": e.kind, "x": e.x, "y": e.y, "distance": d,
                         "details": f"at {e.landmark}"})
        elif isinstance(e, PortalEnd):
            rows.append({"what": "portal", "id": e.key, "x": e.x, "y": e.y, "distance": d,
                         "details": f"{e.name} -> ({e.to_x}, {e.to_y})"})
        else:  # NPC
            rows.append({"what": "npc", "id": e.key, "x": e.x, "y": e.y, "distance": d, "details": e.says})
    return rows


def item_sources(world, item_key: str) -> dict[str, list[dict[str, Any]]]:
    """Nodes that yield ``item_key``, mobs that drop it, recipes that make it."""
    nodes, mobs = [], []
    for nt in world.data.node_types:
        if any(y.item == item_key for y in nt.yields):
            placed = [n for n in world.nodes if n.type == nt.key]
            example = placed[0] if placed else None
            near = world.nearest_landmark(example.x, example.y)[0].key if example else "-"
            nodes.append({"node_type": nt.key, "skill": nt.skill, "level": nt.level, "tool": nt.tool,
                          "count": len(placed), "example": example.id if example else "-", "near": near})
    counts: dict[str, int] = {}
    for m in world.mobs:
        counts[m.type] = counts.get(m.type, 0) + 1
    for mt in world.data.mob_types:
        for drop in mt.drops:
            if drop.item == item_key:
                mobs.append({"mob": mt.key, "level": mt.level, "chance": drop.chance, "count": counts.get(mt.key, 0)})
    recipes = [{"recipe": r.key, "skill": r.skill, "level": r.level, "inputs": dict(r.inputs),
                "makes": r.outputs[item_key], "station": r.station, "tool": r.tool}
               for r in world.recipes_making(item_key)]
    return {"nodes": nodes, "mobs": mobs, "recipes": recipes}


@click.group("world")
def world_group() -> None:
    """Inspect the embedded world: counts, map picture, hash pinning."""


@world_group.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, exists=True), help=_DATA_HELP)
def stats_cmd(as_json: bool, data_dir: str | None) -> None:
    """Counts of the world: size, biomes, items, recipes, resource nodes, mobs, portals, landmarks."""
    t0 = time.perf_counter()
    world = _load(data_dir)
    load_s = time.perf_counter() - t0
    stats = world.stats()
    if as_json:
        click.echo(json.dumps(stats, indent=2))
        return
    from rich.table import Table

    from ..console import make_console

    table = Table("figure", "value", title=f"AgentWorld world {stats['version']}")
    for k, v in stats.items():
        table.add_row(k, f"{v:,}" if isinstance(v, int) else str(v))
    table.add_row("load time", f"{load_s:.2f} s")
    make_console().print(table)
    lm = Table("landmark", "name", "x", "y", "stations", title="Landmarks")
    for m in world.data.landmarks:
        lm.add_row(m.key, m.name, str(m.x), str(m.y), ", ".join(m.stations))
    make_console().print(lm)


@world_group.command("render")
@click.option("--out", "out", type=click.Path(dir_okay=False), default="map.png", show_default=True,
              help="PNG file to write.")
@click.option("--scale", type=float, default=None,
              help="Output pixels per tile (default 2 for the whole map, ~1000 px wide for --around).")
@click.option("--task", "task_id", default=None, help="Mark this task's spawns and targets.")
@click.option("--no-nodes", is_flag=True, help="Leave resource nodes out (a cleaner picture).")
@click.option("--around", default=None, help="Zoom: draw only around 'X,Y' or a landmark key (see --radius).")
@click.option("--radius", type=int, default=40, show_default=True, help="Half-size of the --around view in tiles.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, exists=True), help=_DATA_HELP)
def render_cmd(out: str, scale: float | None, task_id: str | None, no_nodes: bool, around: str | None,
               radius: int, data_dir: str | None) -> None:
    """Draw the map (biomes, roads, landmarks, portals; optionally a task's spawns and targets) to a PNG."""
    if scale is not None and not 0 < scale <= 24:
        raise click.BadParameter("use a scale in (0, 24]: 1 = one pixel per tile", param_hint="--scale")
    if radius < 5:
        raise click.BadParameter("use a radius of at least 5 tiles", param_hint="--radius")
    world = _load(data_dir)
    window = None
    if around:
        window = _window(world, around, radius)
    if scale is None:  # about 2,000 px wide for the whole map, about 1,000 px for a zoomed view
        scale = 2.0 if window is None else max(2.0, round(1000 / (window[2] - window[0] + 1), 1))
    markers, title = None, None
    if task_id:
        try:
            from ..tasks.task import find_task
        except ImportError as e:
            raise click.ClickException(f"--task needs agentworld.core.tasks.task (the task loader), which failed to "
                                       f"import: {e}; render without --task") from None
        try:
            task = find_task(task_id)
        except Exception as e:  # the task loader's own errors name the file and the fix
            raise click.ClickException(f"--task {task_id}: {e}") from None
        markers = task_markers(world, task)
        title = f"Task {task.id}: {task.name}"
    from ..world.render import render_map

    path = render_map(world, out, scale=scale, markers=markers, title=title, show_nodes=not no_nodes,
                      window=window)
    from PIL import Image

    with Image.open(path) as im:
        size = im.size
    click.echo(f"wrote {path} ({size[0]} x {size[1]} px)")


@world_group.command("near")
@click.argument("place")
@click.option("--radius", type=int, default=20, show_default=True, help="Manhattan radius in tiles.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, exists=True), help=_DATA_HELP)
def near_cmd(place: str, radius: int, as_json: bool, data_dir: str | None) -> None:
    """What is around PLACE ('X,Y' or a landmark key): nodes, mobs, stations, portals, NPCs with ids.

    For task authors: reference solutions and checks name these instance ids and tiles.
    """
    if not 0 <= radius <= 200:
        raise click.BadParameter("use a radius in 0..200", param_hint="--radius")
    world = _load(data_dir)
    x0, y0, _, _ = _window(world, place, 0)
    rows = describe_near(world, x0, y0, radius)
    if as_json:
        click.echo(json.dumps({"x": x0, "y": y0, "radius": radius, "biome": world.map.biome_at(x0, y0),
                               "walkable": world.map.walkable(x0, y0), "entities": rows}, indent=2))
        return
    from rich.table import Table

    from ..console import make_console

    table = Table("what", "id / kind", "x", "y", "dist", "details",
                  title=f"within {radius} of ({x0}, {y0}) [{world.map.biome_at(x0, y0)}]")
    for r in rows:
        table.add_row(r["what"], r["id"], str(r["x"]), str(r["y"]), str(r["distance"]), r["details"])
    make_console().print(table)


@world_group.command("sources")
@click.argument("item_key")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, exists=True), help=_DATA_HELP)
def sources_cmd(item_key: str, as_json: bool, data_dir: str | None) -> None:
    """Where ITEM_KEY comes from: resource nodes, mob drops and recipes (with places)."""
    world = _load(data_dir)
    try:
        world.item(item_key)
    except KeyError as e:
        raise click.ClickException(str(e.args[0])) from None
    found = item_sources(world, item_key)
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    click.echo(f"{item_key} ({world.item(item_key).name}):")
    for n in found["nodes"]:
        click.echo(f"  harvest {n['node_type']} ({n['skill']} {n['level']}, tool {n['tool'] or 'none'}): "
                   f"{n['count']} placed, e.g. {n['example']} near {n['near']}")
    for m in found["mobs"]:
        click.echo(f"  kill {m['mob']} (level {m['level']}): {m['chance']:.0%} chance, {m['count']} spawned")
    for r in found["recipes"]:
        ins = ", ".join(f"{v} {k}" for k, v in r["inputs"].items())
        click.echo(f"  {r['skill']} {r['level']}: {ins}" + (f" at a {r['station']}" if r["station"] else "")
                   + (f" with a {r['tool']}" if r["tool"] else "") + f" -> {r['makes']}")
    if not any(found.values()):
        click.echo("  no source in this world (starting inventory only)")


@world_group.command("pin")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, exists=True), help=_DATA_HELP)
def pin_cmd(data_dir: str | None) -> None:
    """Regenerate the map and write its tiles and placements hashes into map.yaml (after editing the pack on purpose)."""
    from ..world.datapack import DataPackError, load_world_data, pin_tiles_hash

    try:
        old, new = pin_tiles_hash(Path(data_dir) if data_dir else None)
        # the hash just written: re-reading the pack is enough, generating the world again is not needed
        placements = load_world_data(data_dir).map.layout["placements_sha256"]
    except DataPackError as e:
        raise click.ClickException(str(e)) from None
    if old == new:
        click.echo(f"tiles_sha256 unchanged: {new}\nplacements_sha256: {placements}")
    else:
        click.echo(f"tiles_sha256: {old} -> {new}\nplacements_sha256: {placements}\nThe tiles changed: bump "
                   f"map.version in map.yaml and re-validate tasks (`agentworld tasks validate`).")


@click.command("tools")
@click.option("--json", "as_json", is_flag=True, help="Print the OpenAI function-calling schemas as JSON.")
def tools_cmd(as_json: bool) -> None:
    """The 13 tools agents act through (names, parameters, descriptions)."""
    from ..world.tools import TOOLS, openai_tools

    schemas = openai_tools()
    if as_json:
        click.echo(json.dumps(schemas, indent=2))
        return
    from rich.table import Table

    from ..console import make_console

    table = Table("tool", "parameters", "description", title=f"{len(schemas)} tools")
    for s in schemas:
        fn = s["function"]
        props = fn["parameters"].get("properties", {})
        required = set(fn["parameters"].get("required", []))
        params = ", ".join(f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}" for k, v in props.items())
        chat = " (chat)" if TOOLS[fn["name"]].is_chat else ""
        table.add_row(fn["name"] + chat, params or "-", fn["description"])
    make_console().print(table)


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(world_group)
    cli.add_command(tools_cmd)
