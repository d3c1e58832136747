"""Checks that what a task tells its agents is true (part of task validation, ``validate_task``).

A brief that sends an agent to a tile it cannot stand on, names an item that does not exist, or states an
objective its verifier does not test costs the agent actions it could not have saved: the benchmark would
measure guessing, not collaboration. Three checks, over the text an agent reads (description, objectives,
each agent's guideline, the game context, the shared plan):

- **places**: every ``(x,y)`` quoted is a walkable tile, or a resource node's or station's own tile followed
  closely by a walkable tile beside it ("copper_rock#709 at (464,308), stand beside it at (463,308)").
- **items**: every ``itemKey=...`` names an item, and no word that looks like an item key (snake_case, a
  near miss of a real key) names one that does not exist.
- **objective**: each progress check's item and receiver are named in the objective (with its count when
  more than one is wanted), and each player the objective says receives or holds something is one that
  some check tests.
- **carry limit**: a brief that states how many items one carries ("carries at most 20 items") states the
  task's ``carry_limit`` (the rules part of every brief states it anyway: core/play/templates/system.j2).
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any, Iterator

from .problems import Problem, did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from .task import Task, WorldIndex

_COORD = re.compile(r"\((\d+)\s*,\s*(\d+)\)")
_ITEM_ARG = re.compile(r"itemKey\s*=\s*['\"]?([A-Za-z0-9_]+)")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_BESIDE = 80  # characters after a node's tile within which the brief must say where to stand
_NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                 "twenty"]
# verbs after which the objective names a player who must end up with something
_RECEIVER = re.compile(r"\b([A-Za-z][\w]*)\s+(?:receives|gets|holds|carries|wields|ends up with|ends up wielding)\b")


def brief_texts(task: "Task") -> Iterator[tuple[str, str]]:
    """(field, text) of everything a brief shows an agent."""
    yield "task.description", task.description
    yield "objectives.primary", task.objectives.primary
    for i, s in enumerate(task.objectives.secondary):
        yield f"objectives.secondary[{i}]", s
    yield "relevant_game_context", task.relevant_game_context
    if task.shared_plan:
        yield "shared_plan", task.shared_plan
    for a in task.agents:
        yield f"{a.agent_id}.guideline", a.guideline


def brief_problems(task: "Task", w: "WorldIndex") -> list[Problem]:
    problems: list[Problem] = []
    fixed = _fixed_tiles(w)
    for field, text in brief_texts(task):
        if text:
            problems += _place_problems(field, text, w, fixed)
            problems += _item_problems(field, text, task, w)
            problems += _carry_problems(field, text, task)
    problems += _objective_problems(task, w)
    return problems


_CARRY = re.compile(r"\bcarr(?:y|ies|ying)\s+(?:at most|up to|no more than)\s+(\d+)\s+items?\b", re.I)


def _carry_problems(field: str, text: str, task: "Task") -> list[Problem]:
    """A carrying limit a brief states that is not the task's own (or that the task does not have)."""
    limit = int((task.world_rules or {}).get("carry_limit") or 0)
    out = []
    for m in _CARRY.finditer(text):
        said = int(m.group(1))
        if said != limit:
            out.append(Problem(field, f"says one {m.group(0)!r}, but the task's carry limit is "
                               + (f"{limit}" if limit else "not set (no limit)"),
                               f"say {limit} items" if limit else "set world_rules.carry_limit, or drop the sentence"))
    return out


def _fixed_tiles(w: "WorldIndex") -> dict[tuple[int, int], str]:
    """Tiles of the things that stand on a tile of their own: node ids and station kinds."""
    tiles = w.__dict__.get("_brief_fixed_tiles")
    if tiles is None:
        tiles = {(n.x, n.y): n.id for n in w.loaded.nodes}
        for s in w.loaded.stations:
            tiles.setdefault((s.x, s.y), s.kind)
        w.__dict__["_brief_fixed_tiles"] = tiles
    return tiles


def _place_problems(field: str, text: str, w: "WorldIndex", fixed: dict[tuple[int, int], str]) -> list[Problem]:
    gm = w.loaded.map
    out = []
    for m in _COORD.finditer(text):
        x, y = int(m.group(1)), int(m.group(2))
        if gm.walkable(x, y):
            continue
        thing = fixed.get((x, y))
        if thing is not None:
            after = [(int(a.group(1)), int(a.group(2))) for a in _COORD.finditer(text[m.end():m.end() + _BESIDE])]
            if any(gm.walkable(ax, ay) and abs(ax - x) + abs(ay - y) == 1 for ax, ay in after):
                continue  # "<node> at (x,y), stand beside it at (x',y')": true and complete
        near = gm.nearest_walkable(x, y, 30) if gm.in_bounds(x, y) else None
        what = f"{thing}'s own tile" if thing else ("off the map" if not gm.in_bounds(x, y) else "not walkable")
        fix = (f"say where to stand: a walkable tile beside it, e.g. ({near[0]},{near[1]}), right after it"
               if thing and near else f"quote a walkable tile{f', e.g. ({near[0]},{near[1]})' if near else ''}")
        out.append(Problem(field, f"quotes ({x},{y}) as a place, but it is {what}", fix))
    return out


def _item_problems(field: str, text: str, task: "Task", w: "WorldIndex") -> list[Problem]:
    out = []
    for m in _ITEM_ARG.finditer(text):
        key = m.group(1)
        if key not in w.items and key.upper() != key:  # DISH, N: placeholders
            out.append(Problem(field, f"itemKey={key} names no item", did_you_mean(key, w.items, "item key")))
    known = _known_words(task, w)
    for m in _SNAKE.finditer(text):
        word = m.group(0)
        if word in known or word in w.items:
            continue
        close = difflib.get_close_matches(word, list(w.items), n=1, cutoff=0.85)
        if close:
            out.append(Problem(field, f"'{word}' looks like an item key but names no item",
                               did_you_mean(word, w.items, "item key")))
    return out


def _known_words(task: "Task", w: "WorldIndex") -> set[str]:
    from ..world.tools import TOOLS

    words = set(w.node_types) | set(w.mob_types) | set(w.landmarks) | set(TOOLS)
    words |= {b.key for b in w.loaded.data.biomes}
    words |= {a.username for a in task.agents} | {a.role for a in task.agents if a.role}
    return words


def _item_words(key: str, w: "WorldIndex") -> set[str]:
    """How a text may name an item: its key, the key in words, its display name, and their plurals."""
    base = {key.lower(), key.replace("_", " ").lower()}
    item = w.items.get(key)
    if item is not None:
        base.add(item.name.lower())
    return base | {b + "s" for b in base} | {b + "es" for b in base}


def _named_agents(spec: Any, task: "Task") -> set[str]:
    """Agent ids a check names (agent, agents, to, role)."""
    p = spec.params
    refs = [p.get("agent"), p.get("to"), *(p.get("agents") or [])]
    ids = {task.resolve_agent(r) for r in refs if isinstance(r, str)} - {None}
    role = p.get("role")
    if isinstance(role, str):
        ids |= {a.agent_id for a in task.agents if a.role == role}
    return ids  # type: ignore[return-value]


def _objective_problems(task: "Task", w: "WorldIndex") -> list[Problem]:
    """What the objective says must agree with what the verifier tests: a number before an item is the count
    a check of that item wants; an item the objective names is one some check tests; "wields" or "wears" an
    item is an ``equipped`` check, and "holding" an item that cannot be equipped is refused (it can only be
    carried: say so); a player the objective says receives or holds something is one a check tests."""
    if task.verifier is None or not task.verifier.checks:
        return []
    objective = " ".join([task.objectives.primary, *task.objectives.secondary]).lower()
    out = []
    checked: set[str] = set()
    counts: dict[str, set[int]] = {}  # item -> the counts its checks want
    kinds: dict[str, set[str]] = {}  # item -> the checks that test it
    changed: dict[Any, list[int]] = {}  # check index or name -> counts a change_objective event sets
    for ev in (task.mechanics.events if task.mechanics is not None else ()):
        if getattr(ev, "do", None) == "change_objective" and isinstance((ev.set or {}).get("count"), int):
            changed.setdefault(ev.check, []).append(ev.set["count"])
    for i, spec in enumerate(task.verifier.checks):
        checked |= _named_agents(spec, task)
        p = spec.params
        item = p.get("item")
        if isinstance(item, str):
            counts.setdefault(item, set()).add(p.get("count", 1) if isinstance(p.get("count", 1), int) else 1)
            counts[item].update(changed.get(i, []) + changed.get(spec.name, []))  # an order that grows
            kinds.setdefault(item, set()).add(spec.check)
    for key, item in w.items.items():
        for m in _item_mentions(objective, key, w):
            before = objective[max(0, m.start() - 40):m.start()].split()[-4:]
            if key not in kinds:
                # (only a verifier that tests items can disagree on which: one of places or guards alone is
                # the honesty proof's business, not the brief's)
                if kinds and any(v in before for v in ("wields", "wielding", "wears", "wearing", "holds", "holding",
                                             "receives", "carries", "carrying", "crafts", "makes", "delivers")):
                    out.append(Problem("objectives.primary", f"the objective names {key}, which no verifier check "
                                       "tests", f"add a check of {key}, or reword the objective"))
                break
            said = next((_NUMBER_WORDS.index(b) if b in _NUMBER_WORDS else int(b) for b in before[-1:]
                         if b in _NUMBER_WORDS or b.isdigit()), None)
            if said is not None and said not in counts[key] and said > 1:
                out.append(Problem("objectives.primary", f"the objective says {said} {key}, but the verifier's "
                                   f"checks of {key} want {', '.join(map(str, sorted(counts[key])))}",
                                   "make the objective's count and the check's count the same"))
            worn = any(b.startswith(("wield", "wear")) for b in before)
            if worn and "equipped" not in kinds[key]:
                out.append(Problem("objectives.primary", f"the objective says {key} is wielded or worn, but no "
                                   f"equipped check tests it", f"add an equipped check of {key}, or reword"))
            # "holding a torch" reads as in hand (equipped); "holds 4 planks" is plainly a possession
            held = len(before) >= 2 and before[-2] in ("hold", "holds", "holding") and before[-1] in ("a", "an", "one", "the")
            if held and "equipped" not in kinds[key] and not item.slot:
                out.append(Problem("objectives.primary", f"the objective says holding {key}, but {key} cannot be "
                                   f"equipped: the verifier counts it carried", f"say 'carrying' {key}"))
    by_word = {}
    for a in task.agents:
        by_word[a.username.lower()] = a.agent_id
        if a.role:
            by_word.setdefault(a.role.lower(), a.agent_id)
    for m in _RECEIVER.finditer(objective):
        word = m.group(1).lower()
        agent_id = by_word.get(word)
        holders = {a.agent_id for a in task.agents if a.username.lower() == word or (a.role or "").lower() == word}
        if agent_id is not None and not holders & checked:
            out.append(Problem("objectives.primary", f"the objective says the {m.group(1)} "
                               f"{m.group(0).split(None, 1)[1]} something, but no verifier check tests "
                               f"{task.agent(agent_id).username}", "add a check naming that agent (agent: or to:), "
                               "or reword the objective"))
    return out


def _item_mentions(text: str, key: str, w: "WorldIndex") -> list[re.Match]:
    words = sorted(_item_words(key, w), key=len, reverse=True)
    return list(re.finditer(r"\b(?:" + "|".join(re.escape(x) for x in words) + r")\b", text))
