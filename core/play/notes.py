"""Which NPC lines an agent is shown: only those about the task's items or the places its brief names.

The embedded world makes an NPC's line a note when the NPC comes into view and when it says something new
(``core/world/observe.py``); it does not know the task. An episode keeps such a note only when the line is
about the task: it names one of the task's items (the verifier's, the inputs of the recipes that make them,
and the agents' starting kit; by key, name or last word: ``ore`` for ``copper_ore``), or a place the brief
names other than where the NPC stands (a ferryman's island, a warden's crypt). A blacksmith's tip about ore
and anvils is noise in a cooking task, even in the same town.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..tasks.task import Task

NPC_NOTE = re.compile(r"^.+ \(npc at (\d+),(\d+)\) says: (.*)$", re.S)


class NoteFilter:
    """``keep(note)``: whether an observation note is shown (every note that is not an NPC's line is)."""

    def __init__(self, task: "Task"):
        from ..tasks.briefs import brief_texts
        from ..tasks.task import world_index

        w = world_index()
        items = set()
        for spec in task.verifier.checks if task.verifier is not None else ():
            for key in ("item", "mob"):
                if isinstance(spec.params.get(key), str):
                    items.add(spec.params[key])
        for key in list(items):  # what the objective's items are made from
            for r in w.recipes_by_output.get(key, []):
                items |= set(r.inputs)
        for a in task.agents:
            items |= {s.item for s in a.inventory} | {s.item for s in a.equipment}
        words = set()
        for key in items:
            words |= {key.lower(), key.replace("_", " ").lower(), key.split("_")[-1].lower()}
            if key in w.items:
                words.add(w.items[key].name.lower())
        words = {x for x in words if len(x) > 2}
        self._words = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
                                 + r")(?:s|es)?\b") if words else None
        text = " ".join(t for _, t in brief_texts(task)).lower()
        self._places = [lm for lm in w.landmarks.values() if lm.key in text or lm.name.lower() in text]
        self._kept: dict[str, bool] = {}

    def keep(self, note: str) -> bool:
        verdict = self._kept.get(note)
        if verdict is None:
            verdict = self._kept[note] = self._relevant(note)
        return verdict

    def _relevant(self, note: str) -> bool:
        m = NPC_NOTE.match(note)
        if m is None:
            return True
        x, y, line = int(m.group(1)), int(m.group(2)), m.group(3).lower()
        if self._words is not None and self._words.search(line):
            return True
        return any(lm.name.lower() in line and abs(lm.x - x) + abs(lm.y - y) > lm.radius for lm in self._places)


def note_filter(task: "Task") -> Any:
    """The task's :class:`NoteFilter`, or None when it cannot be built (a task the world index cannot read)."""
    try:
        return NoteFilter(task)
    except Exception:  # noqa: BLE001 - a filter that cannot be built shows every note, as before
        return None
