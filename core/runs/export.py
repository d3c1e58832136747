"""Exporting episodes to the paper's trajectory JSON, in a form the paper's own scoring helpers can score.

One ``task_<id>_trajectory.json`` per episode (docs/paper.md lists every field and why it is there):
``task_id`` (the task's ``paper_id`` when it has one, e.g. ``task_17``, else our id), ``task_key`` and
``task_source`` (our id and ``agentworld``: the paper's scorer accepts these in place of a ``task_<digits>``
id), ``timestamp``, ``task_definition`` (the task YAML as parsed), ``rounds`` and ``metrics``.

Each round holds one record per acting agent: ``agent_name`` (the YAML key), ``status``
(``📊 Lv.3 | XP:120 | ❤️45/50 | 💙0/0 | 📍(388,3)``), ``action`` (``tool(k=v, ...)``, ``""`` for a turn
without a call), ``observation`` and ``thinking``. The observation carries what the paper's helpers read:
``result`` (the text the agent saw), ``status`` (``success``/``failure``), ``inventory.items`` and
``inventory.equipped``, ``playerStatus`` and, on attacks, ``mobs`` with the target (a killed one at 0 HP).
HP lost at a world tick shows in the agent's next record; an agent killed at a tick, or hurt at a tick
after its last turn, gets an extra record (``action: ""``, ``source: "world_tick"``) in that round, so the
paper's "all alive" check sees the death. Agents that left have no records in later rounds.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..play.records import AgentStatus, EndEvent, StartEvent, TickEvent, TurnEvent, parse_event
from ..play.trajectory import TRAJECTORY_FILE, read_events
from ..world.tools import format_call
from .integrity import replay_status

TASK_FILE = "task.json"  # the task definition, written by the episode next to the trajectory
TASK_SOURCE = "agentworld"


def status_line(s: AgentStatus | None) -> str:
    if s is None:
        return ""
    # the world has no mana: 💙0/0 keeps the paper's field layout for its parsers
    return f"📊 Lv.{s.level} | XP:{s.xp} | ❤️{s.hp}/{s.max_hp} | 💙0/0 | 📍({s.x},{s.y})"


def action_string(ev: TurnEvent) -> str:
    """``tool(k=v, ...)``; a turn without a tool call is ``""`` (what the paper's scorer expects)."""
    return format_call(ev.tool, ev.arguments) if ev.tool else ""


def file_stem(task_id: str) -> str:
    """``task_<id>``, without doubling a ``task_`` prefix the id already has."""
    return task_id if task_id.startswith("task_") else f"task_{task_id}"


def _task_definition(episode_dir: Path, task_id: str) -> dict[str, Any]:
    f = episode_dir / TASK_FILE
    if f.is_file():
        return json.loads(f.read_text(encoding="utf-8"))
    try:
        from ..tasks.task import find_task

        return find_task(task_id, validate=False).raw
    except (KeyError, ValueError):
        return {"id": task_id}


@lru_cache(maxsize=1)
def _mob_facts() -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """(mob instance id -> type key, type key -> (display name, max HP)) from the world data pack."""
    try:
        from ..world.datapack import load_world

        loaded = load_world()
    except Exception:  # noqa: BLE001 - no data pack: mob names fall back to their type keys
        return {}, {}
    types = {m.key: (m.name, m.hp) for m in loaded.data.mob_types}
    return {m.id: m.type for m in loaded.mobs}, types


def _mobs(ev: TurnEvent) -> list[dict[str, Any]]:
    """The attack's target as the paper's ``observation.mobs`` shows it (killed: ``hitPoints`` 0)."""
    if ev.tool != "attack_entity":
        return []
    instances, types = _mob_facts()
    out = []
    for k in ev.effects.kills:
        name, max_hp = types.get(k.mob, (k.mob, 0))
        name = k.name or name  # a server world names its own mobs (our data pack's names are not its)
        out.append({"instance": k.instance, "key": k.mob, "name": name, "level": k.level, "hitPoints": 0,
                    "maxHitPoints": max_hp})
    target = ev.effects.target or str((ev.arguments or {}).get("targetInstance", ""))
    if not out and target and target in instances:  # fought, not killed: its HP is unknown here (null)
        key = instances[target]
        name, max_hp = types.get(key, (key, 0))
        out.append({"instance": target, "key": key, "name": name, "hitPoints": None, "maxHitPoints": max_hp})
    return out


def _slot_of(item: str) -> str:
    try:
        from ..world.datapack import load_world

        return load_world().item(item).slot or "equipped"
    except Exception:  # noqa: BLE001 - no data pack or an unknown item: one generic slot
        return "equipped"


class _Equipment:
    """Per agent, slot -> item key after each turn: the turn's status when it records equipment; for
    trajectories written before statuses did, the task's starting equipment followed by the equip effects."""

    def __init__(self, task_def: dict[str, Any]):
        self.slots: dict[str, dict[str, str]] = {}
        for key, spec in task_def.items():
            if isinstance(key, str) and key.startswith("agent_") and isinstance(spec, dict):
                items = [e.get("item") for e in spec.get("equipped_items") or [] if isinstance(e, dict)]
                self.slots[key] = {_slot_of(it): it for it in items if it}

    def after(self, ev: TurnEvent) -> list[dict[str, Any]]:
        st = ev.status
        if st is not None and st.equipment is not None:
            self.slots[ev.agent] = dict(st.equipment)
        elif ev.ok and ev.effects.equipped is not None:
            self.slots.setdefault(ev.agent, {})[ev.effects.equipped.slot] = ev.effects.equipped.item
        return self.view(ev.agent)

    def view(self, agent: str) -> list[dict[str, Any]]:
        return [{"slot": s, "key": k} for s, k in sorted(self.slots.get(agent, {}).items())]


def _observation(ev: TurnEvent | None, st: AgentStatus | None, equipped: list[dict[str, Any]],
                 result: str, ok: bool, mobs: list[dict[str, Any]]) -> dict[str, Any]:
    obs: dict[str, Any] = {
        "result": result,
        "status": "success" if ok else "failure",
        "inventory": {"items": [{"key": i["key"], "name": i["name"], "count": i["count"]}
                                for i in (st.inventory if st else [])],
                      "equipped": equipped},
        "playerStatus": {"hitPoints": st.hp if st else 0, "maxHitPoints": st.max_hp if st else 0,
                         "alive": st.alive if st else True},
    }
    if mobs:
        obs["mobs"] = mobs
    return obs


def _record(ev: TurnEvent, equipment: _Equipment) -> dict[str, Any]:
    equipped = equipment.after(ev)
    return {"agent_name": ev.agent, "status": status_line(ev.status), "action": action_string(ev),
            "observation": _observation(ev, ev.status, equipped, ev.result, ev.ok and ev.tool is not None,
                                        _mobs(ev)),
            "thinking": ev.thinking}


def _tick_records(tick: TickEvent, last: dict[str, AgentStatus], later_turn: set[str],
                  equipment: _Equipment) -> list[dict[str, Any]]:
    """Extra records for agents a tick killed, or hurt after their last turn (their next record cannot
    carry it). The status is the agent's last one with the tick's HP and inventory changes applied."""
    changes: dict[str, list[Any]] = {}
    for h in tick.effects.hp:
        changes.setdefault(h.agent, []).append(h)
    out = []
    for agent in [*dict.fromkeys([*tick.effects.deaths, *changes])]:
        st = last.get(agent)
        died = agent in tick.effects.deaths
        if st is None or (not died and agent in later_turn):
            continue
        hits = changes.get(agent, [])
        hp = 0 if died else (hits[-1].after if hits else st.hp)
        if not died and hp == st.hp:
            continue
        inv = Counter({i["key"]: i["count"] for i in st.inventory})
        names = {i["key"]: i["name"] for i in st.inventory}
        for d in tick.effects.lost:
            if d.agent == agent:
                inv[d.item] -= d.count
        for d in tick.effects.gained:
            if d.agent == agent:
                inv[d.item] += d.count
                names.setdefault(d.item, d.item)
        new = st.model_copy(update={"hp": hp, "alive": st.alive and not died,
                                    "inventory": [{"key": k, "name": names.get(k, k), "count": n}
                                                  for k, n in inv.items() if n > 0]})
        last[agent] = new
        causes = ", ".join(f"HP {h.before} -> {h.after}" + (f" ({h.cause})" if h.cause else "") for h in hits)
        text = f"World tick after round {tick.round}: " + (causes or "no HP change") + ("; died" if died else "")
        out.append({"agent_name": agent, "status": status_line(new), "action": "",
                    "observation": _observation(None, new, equipment.view(agent), text, not died, []),
                    "thinking": "", "source": "world_tick"})
    return out


def _duration(start: StartEvent, end: EndEvent | None, result: dict[str, Any]) -> float:
    if result.get("wall_s"):
        return float(result["wall_s"])
    try:
        return (datetime.fromisoformat(end.timestamp) - datetime.fromisoformat(start.timestamp)).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return 0.0


def paper_trajectory(episode_dir: str | Path) -> dict[str, Any]:
    d = Path(episode_dir)
    events = read_events(d / TRAJECTORY_FILE)
    start = next((e for e in events if isinstance(e, StartEvent)), None)
    if start is None:
        raise ValueError(f"{d / TRAJECTORY_FILE}: no start event; not an episode trajectory")
    end = next((e for e in events if isinstance(e, EndEvent)), None)
    if end is None:  # cut short (killed, truncated): exporting it would silently drop the missing rounds
        raise ValueError(f"{d / TRAJECTORY_FILE}: no end event (the episode was cut short or the file is "
                         f"truncated); rerun it with `agentworld run --resume` before exporting")
    turns = [e for e in events if isinstance(e, TurnEvent)]
    task_def = _task_definition(d, start.task_id)
    equipment = _Equipment(task_def)
    last_turn_round = {}
    for ev in turns:
        last_turn_round[ev.agent] = ev.round
    rounds: dict[int, list[dict[str, Any]]] = {}
    last: dict[str, AgentStatus] = {}
    for ev in events:
        if isinstance(ev, TurnEvent):
            rounds.setdefault(ev.round, []).append(_record(ev, equipment))
            if ev.status is not None:
                last[ev.agent] = ev.status
        elif isinstance(ev, TickEvent) and (ev.effects.hp or ev.effects.deaths):
            later = {a for a, r in last_turn_round.items() if r > ev.round}
            extra = _tick_records(ev, last, later, equipment)
            if extra:
                rounds.setdefault(ev.round, []).extend(extra)
    result_file = d / "result.json"
    result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.is_file() else {}
    chats = sum(1 for e in turns if e.tool is not None and e.effects.chat is not None)  # messages delivered
    actions = sum(1 for e in turns if e.counts_as_action and e.tool is not None)
    total_rounds = end.rounds if end else max(rounds, default=0)
    failed = _failed_agents(start, turns, last)
    paper_id = task_def.get("paper_id") if isinstance(task_def, dict) else None
    replay, detail = replay_status(d)
    return {
        "task_id": paper_id or start.task_id,
        "task_key": start.task_id,
        "task_source": TASK_SOURCE,
        "timestamp": start.timestamp,
        "task_definition": task_def,
        "rounds": [{"round": r, "actions": rounds[r]} for r in sorted(rounds)],
        "metrics": {
            "total_rounds": total_rounds,
            "max_rounds": start.max_rounds,
            "total_agents": len(start.agents),
            "total_actions": actions,
            "total_chats": chats,
            "task_verified_success": bool(result.get("success", False)),
            "task_verification_message": result.get("message", ""),
            "early_stopped": bool(end and end.reason != "round_budget"),
            "total_duration_seconds": round(_duration(start, end, result), 3),
            "successful_agents": len(start.agents) - len(failed),
            "failed_agents": len(failed),
        },
        # `agentworld replay --check`'s verdict on exactly these files: verified, failed or not checked
        "replay": {"status": replay, "detail": detail},
    }


def _failed_agents(start: StartEvent, turns: list[TurnEvent], last: dict[str, AgentStatus]) -> set[str]:
    """Agents that died or lost a turn to an infrastructure error (the others count as successful)."""
    out = {a for a, st in last.items() if not st.alive}
    return out | {t.agent for t in turns if t.infra_error}


def episode_dirs(run_dir: str | Path) -> list[Path]:
    """The episode folders under ``run_dir`` (or ``run_dir`` itself when it is one)."""
    root = Path(run_dir)
    if (root / TRAJECTORY_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(TRAJECTORY_FILE))


def export_paper(episode_dir: str | Path, out_dir: str | Path, *, subfolder: str | None = None) -> Path:
    """Write ``task_<id>_trajectory.json`` for one episode; returns its path."""
    data = paper_trajectory(episode_dir)
    out = Path(out_dir) / subfolder if subfolder else Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{file_stem(data['task_id'])}_trajectory.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _task_id(episode_dir: Path) -> str | None:
    """The task id of an episode from its first trajectory line (the start event), not reading the rest."""
    with (episode_dir / TRAJECTORY_FILE).open(encoding="utf-8") as fh:
        first = fh.readline()
    try:
        event = parse_event(first)
    except ValueError:  # pydantic's ValidationError is one; paper_trajectory names the damaged file
        return None
    return event.task_id if isinstance(event, StartEvent) else None


def export_run(run_dir: str | Path, out_dir: str | Path) -> list[Path]:
    """Export every episode under ``run_dir``; episodes of the same task go to per-episode subfolders."""
    dirs = episode_dirs(run_dir)
    if not dirs:
        raise FileNotFoundError(f"no {TRAJECTORY_FILE} under {run_dir}; give an episode or run folder")
    task_ids = {d: _task_id(d) for d in dirs}
    per_task = Counter(task_ids.values())
    return [export_paper(d, out_dir, subfolder=d.name if per_task[task_ids[d]] > 1 else None) for d in dirs]
