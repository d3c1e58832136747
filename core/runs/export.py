"""Exporting episodes to the paper's trajectory JSON (paper-format.md section 3).

One ``task_<id>_trajectory.json`` per episode: ``task_id``, ``timestamp``, ``task_definition`` (the task
YAML as parsed), ``rounds`` (per round, one record per acting agent: ``agent_name`` = YAML key, ``status``
like ``📊 Lv.3 | XP:120 | ❤️45/50 | 💙0/0 | 📍(388,3)``, ``action`` as ``tool(k=v, ...)``, ``observation``
with ``inventory.items`` [{key, name, count}] and ``playerStatus``, ``thinking``) and ``metrics``. Agents
that left have no records in later rounds because the episode records turns of active agents only.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..play.records import AgentStatus, EndEvent, StartEvent, TurnEvent, parse_event
from ..world.tools import format_call
from ..play.trajectory import TRAJECTORY_FILE, read_events

TASK_FILE = "task.json"  # the task definition, written by the episode next to the trajectory


def status_line(s: AgentStatus | None) -> str:
    if s is None:
        return ""
    # the world has no mana: 💙0/0 keeps the paper's field layout for its parsers
    return f"📊 Lv.{s.level} | XP:{s.xp} | ❤️{s.hp}/{s.max_hp} | 💙0/0 | 📍({s.x},{s.y})"


def action_string(ev: TurnEvent) -> str:
    return format_call(ev.tool, ev.arguments) if ev.tool else "no_action()"


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


def paper_trajectory(episode_dir: str | Path) -> dict[str, Any]:
    d = Path(episode_dir)
    events = read_events(d / TRAJECTORY_FILE)
    start = next((e for e in events if isinstance(e, StartEvent)), None)
    if start is None:
        raise ValueError(f"{d / TRAJECTORY_FILE}: no start event; not an episode trajectory")
    end = next((e for e in events if isinstance(e, EndEvent)), None)
    turns = [e for e in events if isinstance(e, TurnEvent)]
    rounds: dict[int, list[dict[str, Any]]] = {}
    for ev in turns:
        st = ev.status
        rounds.setdefault(ev.round, []).append({
            "agent_name": ev.agent,
            "status": status_line(st),
            "action": action_string(ev),
            "observation": {
                "inventory": {"items": [{"key": i["key"], "name": i["name"], "count": i["count"]}
                                        for i in (st.inventory if st else [])]},
                "playerStatus": {"hitPoints": st.hp if st else 0, "maxHitPoints": st.max_hp if st else 0},
            },
            "thinking": ev.thinking,
        })
    result_file = d / "result.json"
    result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.is_file() else {}
    chats = sum(1 for e in turns if e.tool is not None and not e.counts_as_action)
    actions = sum(1 for e in turns if e.counts_as_action and e.tool is not None)
    total_rounds = end.rounds if end else max(rounds, default=0)
    return {
        "task_id": start.task_id,
        "timestamp": start.timestamp,
        "task_definition": _task_definition(d, start.task_id),
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
        },
    }


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
