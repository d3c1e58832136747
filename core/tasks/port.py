"""``agentworld tasks port``: a task file in the paper's shape, rewritten for the embedded world.

The paper's item keys, skill keys and coordinates belong to the paper's game. Porting maps item and skill
keys with the shipped table (``paper_mapping.py``), moves the team's spawns to the nearest free walkable
tiles of one of our landmarks (keeping the agents' offsets from each other, bounded), rewrites the mapped
keys in the free-text fields, drops what our world has no use for (character passwords, enchantments) and
lists plainly what it could not map: items with no counterpart, and free text that still names them.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..world.models import SKILLS
from ..yamlio import load_yaml
from .paper_mapping import PaperMapping, paper_mapping
from .task import _AGENT_KEY

TEXT_FIELDS = ("relevant_game_context", "shared_plan")


@dataclass
class PortReport:
    changed: list[str] = field(default_factory=list)  # what was rewritten
    unmapped: list[str] = field(default_factory=list)  # what could not be mapped (removed or left as text)

    def lines(self) -> list[str]:
        return ([f"mapped: {c}" for c in self.changed] + [f"NOT MAPPED: {u}" for u in self.unmapped])


def port_file(path: str | Path, out: str | Path | None = None) -> tuple[Path, PortReport]:
    """Port one task file; writes ``out`` (default ``<stem>_ported.yaml`` beside it) and returns the report."""
    src = Path(path)
    raw = load_yaml(src.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(f"{src}: a task file is a YAML mapping (task:, objectives:, agent_1: ...)")
    ported, report = port_task(raw, default_id=src.stem)
    dest = Path(out) if out else src.with_name(f"{src.stem}_ported.yaml")
    header = [f"# Ported from {src.name} by `agentworld tasks port` (mapping: core/tasks/data/paper_mapping.yaml)."]
    header += [f"# {line}" for line in report.lines()]
    dest.write_text("\n".join(header) + "\n" + yaml.safe_dump(ported, sort_keys=False, allow_unicode=True, width=110),
                    encoding="utf-8")
    return dest, report


def port_task(raw: dict[str, Any], *, default_id: str, mapping: PaperMapping | None = None,
              world: Any = None) -> tuple[dict[str, Any], PortReport]:
    """The ported task (a new dict) and what was and was not mapped."""
    from .task import world_index

    m = mapping or paper_mapping()
    w = world_index(world)
    out = copy.deepcopy(raw)
    rep = PortReport()
    out.setdefault("id", re.sub(r"[^A-Za-z0-9_.-]+", "_", default_id))
    agents = [k for k in out if isinstance(k, str) and _AGENT_KEY.match(k) and isinstance(out[k], dict)]
    for key in agents:
        _port_agent(key, out[key], m, w, rep)
    _move_spawns(out, agents, m, w, rep)
    _port_text(out, m, w, rep)
    return out, rep


# ---------------------------------------------------------------------------------------------- agents
def _port_agent(key: str, block: dict[str, Any], m: PaperMapping, w: Any, rep: PortReport) -> None:
    if block.pop("password", None) is not None:
        rep.changed.append(f"{key}.password dropped (a login of the paper's server; our characters have none)")
    skills = block.get("skill_levels") or {}
    if isinstance(skills, dict):
        new: dict[str, int] = {}
        for skill, level in skills.items():
            ours = m.skills.get(str(skill).lower(), str(skill).lower() if str(skill).lower() in SKILLS else None)
            if ours is None:
                rep.unmapped.append(f"{key}.skill_levels.{skill}: no such skill here (removed)")
                continue
            lv = max(1, min(int(level), w.max_level)) if isinstance(level, int) else level
            if lv != level:
                rep.changed.append(f"{key}.skill_levels.{skill}: level {level} -> {lv} (our levels go to {w.max_level})")
            new[ours] = lv
        block["skill_levels"] = new
    inventory = [s for s in (_port_stack(key, "inventory_items", i, s, m, w, rep)
                             for i, s in enumerate(block.get("inventory_items") or [])) if s]
    equipped = []
    for i, s in enumerate(block.get("equipped_items") or []):
        st = _port_stack(key, "equipped_items", i, s, m, w, rep)
        if st is None:
            continue
        if w.items[st["item"]].slot is None:
            rep.changed.append(f"{key}.equipped_items[{i}]: {st['item']} cannot be equipped here; moved to inventory_items")
            inventory.append(st)
        else:
            equipped.append(st)
    block["inventory_items"], block["equipped_items"] = inventory, equipped


def _port_stack(agent: str, fld: str, i: int, stack: Any, m: PaperMapping, w: Any, rep: PortReport) -> dict | None:
    where = f"{agent}.{fld}[{i}]"
    if not isinstance(stack, dict) or "item" not in stack:
        rep.unmapped.append(f"{where}: not an item entry ({stack!r}); removed")
        return None
    st = {k: v for k, v in stack.items() if k != "enchant"}
    if stack.get("enchant"):
        rep.changed.append(f"{where}: enchant {stack['enchant']} dropped (our world has no enchantments)")
    key = str(stack["item"])
    if key in w.items and key not in m.items:
        return st
    ours = m.items.get(key)
    if ours is None or ours not in w.items:
        why = "no counterpart in our world" if key in m.items else "not in the mapping table"
        rep.unmapped.append(f"{where}: item '{key}' ({why}); removed")
        return None
    if ours != key:
        rep.changed.append(f"{where}: {key} -> {ours}")
    st["item"] = ours
    return st


# ---------------------------------------------------------------------------------------------- spawns
def _move_spawns(out: dict[str, Any], agents: list[str], m: PaperMapping, w: Any, rep: PortReport) -> None:
    locs = [(k, out[k].get("location") or {}) for k in agents]
    if not locs:
        return
    landmark, why = _team_place(out, agents, m, w)
    lm = w.landmarks[landmark]
    x0, y0 = _xy(locs[0][1])
    taken: set[tuple[int, int]] = set()
    cap = m.places.max_offset
    for key, loc in locs:
        x, y = _xy(loc)
        dx, dy = max(-cap, min(cap, x - x0)), max(-cap, min(cap, y - y0))
        tile = _free_walkable(w.loaded.map, lm.x + dx, lm.y + dy, taken)
        taken.add(tile)
        out[key]["location"] = {"x": tile[0], "y": tile[1]}
        rep.changed.append(f"{key}.location ({x},{y}) -> ({tile[0]},{tile[1]}) near {lm.name} ({why})")


def _xy(loc: Any) -> tuple[int, int]:
    try:
        return int(loc.get("x", 0)), int(loc.get("y", 0))
    except (AttributeError, TypeError, ValueError):
        return 0, 0


def _team_place(out: dict[str, Any], agents: list[str], m: PaperMapping, w: Any) -> tuple[str, str]:
    task = out.get("task") or {}
    obj = out.get("objectives") or {}
    text = " ".join(str(v) for v in (task.get("description", ""), obj.get("primary", ""),
                                     out.get("relevant_game_context", ""))).lower()
    for word, landmark in m.places.words.items():
        if landmark in w.landmarks and re.search(rf"\b{re.escape(word)}\b", text):
            return landmark, f"the task mentions '{word}'"
    skills = out[agents[0]].get("skill_levels") or {}
    if skills:
        best = max(skills, key=lambda s: (skills[s] if isinstance(skills[s], int) else 0, s))
        landmark = m.places.skills.get(best)
        if landmark in w.landmarks:
            return landmark, f"{agents[0]}'s strongest skill is {best}"
    return m.places.default, "default place"


def _free_walkable(gmap: Any, x: int, y: int, taken: set[tuple[int, int]]) -> tuple[int, int]:
    """The walkable tile nearest to (x, y) (clamped onto the map) that no teammate spawns on."""
    x, y = max(0, min(gmap.width - 1, x)), max(0, min(gmap.height - 1, y))
    for r in range(0, max(gmap.width, gmap.height)):
        ring = sorted((abs(dx) + abs(dy), y + dy, x + dx) for dx in range(-r, r + 1) for dy in {r - abs(dx), abs(dx) - r})
        for _, ty, tx in ring:
            if gmap.walkable(tx, ty) and (tx, ty) not in taken:
                return tx, ty
    raise ValueError("the map has no free walkable tile")  # pragma: no cover - a map always has walkable land


# ------------------------------------------------------------------------------------------- free text
def _port_text(out: dict[str, Any], m: PaperMapping, w: Any, rep: PortReport) -> None:
    """Rewrite mapped item keys named in free text; report the unmapped ones it still names."""
    def fix(where: str, text: str) -> str:
        for key, ours in m.items.items():
            pattern = re.compile(rf"\b{re.escape(key)}\b")
            if not pattern.search(text):
                continue
            if ours is None:
                rep.unmapped.append(f"{where} names '{key}', which has no counterpart in our world; reword it")
            elif ours != key:
                text = pattern.sub(ours, text)
                rep.changed.append(f"{where}: '{key}' -> '{ours}'")
        return text

    for fld in TEXT_FIELDS:
        if isinstance(out.get(fld), str):
            out[fld] = fix(fld, out[fld])
    task = out.get("task")
    if isinstance(task, dict) and isinstance(task.get("description"), str):
        task["description"] = fix("task.description", task["description"])
    obj = out.get("objectives")
    if isinstance(obj, dict):
        if isinstance(obj.get("primary"), str):
            obj["primary"] = fix("objectives.primary", obj["primary"])
        if isinstance(obj.get("secondary"), list):
            obj["secondary"] = [fix(f"objectives.secondary[{i}]", s) if isinstance(s, str) else s
                                for i, s in enumerate(obj["secondary"])]
    if isinstance(out.get("success_criteria"), list):
        out["success_criteria"] = [fix(f"success_criteria[{i}]", s) if isinstance(s, str) else s
                                   for i, s in enumerate(out["success_criteria"])]
