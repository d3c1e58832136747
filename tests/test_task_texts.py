"""What the players read in every shipped task (main and augmented) is plain, true English (issue 28: pilots were
misled by a road called "clear" that roaming goblins walk onto, and stumbled on "a anvil" and "the the ford").

The texts are the ones a player's brief is made of: the task's name and description, the objectives, the shared
context, the success criteria, each agent's guideline and the events' messages (a reference plan's chat is not
read by players and is left out)."""

import functools
import re
from pathlib import Path

import pytest
import yaml

from agentworld.core.yamlio import YAML_LOADER

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("tasks/main/*.yaml"), *ROOT.glob("tasks/augmented/*.yaml")])


@functools.cache
def task_file(path: Path) -> dict:
    """The task file as the harness reads it (libyaml's safe loader where installed), parsed once for every test
    here (the checks only read it)."""
    return yaml.load(path.read_text(), Loader=YAML_LOADER)

# "a" before a word that starts with a vowel sound ("a anvil", "a iron_platebody"); "u" words are left out
# ("a unit" is right)
A_BEFORE_VOWEL = re.compile(r"\b[aA] ([aeioAEIO][\w']*)")
DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.IGNORECASE)
# a road, track or way said to be "clear": a mob that roams knows no roads (say which camps it passes instead)
WRONG_PLURAL = re.compile(r"\b(?:wolfs|thiefs)\b", re.IGNORECASE)  # a template's "{{ quarry }}s" on "wolf"
CLEAR_ROAD = re.compile(r"\bclear of\b|\bkeeps? clear\b|\b(?:is|are) clear\b|\bclear (?:way|track|road)s?\b",
                        re.IGNORECASE)


def player_texts(raw: dict) -> list[tuple[str, str]]:
    out = [("task.name", (raw.get("task") or {}).get("name")),
           ("task.description", (raw.get("task") or {}).get("description")),
           ("relevant_game_context", raw.get("relevant_game_context"))]
    out += [(f"objectives.{k}", v) for k, v in (raw.get("objectives") or {}).items()]
    out += [(f"success_criteria[{i}]", v) for i, v in enumerate(raw.get("success_criteria") or [])]
    out += [(f"{k}.guideline", v.get("guideline")) for k, v in raw.items() if isinstance(v, dict) and "guideline" in v]
    out += [(f"events[{i}].message", e.get("message")) for i, e in enumerate(raw.get("events") or [])
            if isinstance(e, dict)]
    return [(where, text) for where, text in out if isinstance(text, str)]


def problems(raw: dict) -> list[str]:
    found = []
    for where, text in player_texts(raw):
        for rule, rx in (("'a' before a vowel", A_BEFORE_VOWEL), ("a doubled word", DOUBLED),
                         ("a road called clear", CLEAR_ROAD), ("a wrong plural", WRONG_PLURAL)):
            for m in rx.finditer(text):
                found.append(f"{where}: {rule}: ...{text[max(0, m.start() - 30):m.end() + 30]!r}...")
    return found


def test_the_checks_catch_what_pilots_found():
    bad = {"task": {"name": "A barricade at the the Silverrun ford"},
           "relevant_game_context": "within 4 tiles of a anvil. The track by (470,445) keeps clear of them.",
           "agent_1": {"guideline": "You ordered a iron_platebody. The roads are clear of goblins. Two wolfs."}}
    assert len(problems(bad)) == 6
    good = {"relevant_game_context": "within 4 tiles of an anvil; a unit of a clearing. The track passes no camp.",
            "agent_1": {"guideline": "You ordered an iron_platebody and a steel_sword."}}
    assert problems(good) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_shipped_task_reads_true(path):
    assert FILES, "no task files found"
    assert problems(task_file(path)) == []


# a node named with what one harvest call gives: "<id> at (x,y), stand beside it at (x,y) (...; gives apple, up to
# 3 per harvest call)" is true only of a node whose every gather gives one item (an apple tree's gives 1 or 2)
PER_CALL = re.compile(r"([a-z_]+#\d+)\s+at\s+\(\d+,\d+\),\s+stand\s+beside\s+it\s+at\s+\(\d+,\d+\)\s+\([^()]*gives\s+"
                      r"[a-z_, ]+,\s+up\s+to\s+(\d+)\s+per\s+harvest\s+call\)")


def test_what_a_harvest_call_gives_is_what_the_engine_gives():
    from agentworld.core.world.datapack import load_world
    world = load_world()
    types = {t.key: t for t in world.data.node_types}
    nodes = {n.id: n for n in world.nodes}
    seen = 0
    for path in FILES:
        for where, text in player_texts(task_file(path)):
            for node_id, n in PER_CALL.findall(text):
                t = types[nodes[node_id].type]
                seen += 1
                assert int(n) == t.harvests and all(y.max <= 1 for y in t.yields), \
                    f"{path.stem} {where}: {node_id} 'up to {n} per harvest call'"
    assert seen > 50  # the pattern still finds the node sentences


# where a brief tells a player to stand to work a node
STAND = re.compile(r"([a-z_]+#\d+)\s+at\s+\(\d+,\d+\),\s+stand\s+beside\s+it\s+at\s+\((\d+),(\d+)\)")


def beasts_reaching(world, raw: dict, tile: tuple[int, int]) -> list[str]:
    """The aggressive mobs that can strike at ``tile`` in the task ``raw``: from their spawn, anywhere in their
    leash, or anywhere on their patrol (the task's ``mobs:`` block on top of the data pack's motion)."""
    from agentworld.core.world.roaming import motion_for

    if not (raw.get("world_rules") or {}).get("aggro", True):
        return []  # the task turns attacks off
    overrides = raw.get("mobs") or {}
    found = []
    for m in world.mobs:
        mt = world.mob_type(m.type)
        far = abs(m.x - tile[0]) + abs(m.y - tile[1])
        if mt.aggro_range <= 0 or far > mt.aggro_range + 60:
            continue
        motion = motion_for(world.map, m.id, mt, (m.x, m.y), overrides)
        if motion is None:
            near = far
        elif motion.loop:
            near = min(abs(x - tile[0]) + abs(y - tile[1]) for x, y in motion.loop)
        else:
            near = max(far - motion.leash, 0)
        if near <= mt.aggro_range:
            found.append(m.id)
    return found


def test_no_brief_sends_a_player_to_stand_in_a_beasts_reach():
    """A stand tile a brief names is out of every aggressive mob's reach (task_510's chandler was sent to stand
    7 tiles from a fire imp with range 6 and leash 4: a team that followed its brief was struck)."""
    from agentworld.core.world.datapack import load_world
    world = load_world()
    imp_rock = {"relevant_game_context": "coal_rock#1131 at (808,408), stand beside it at (808,407)"}
    assert beasts_reaching(world, imp_rock, (808, 407)) == ["fire_imp#2994"]  # the check finds the old trap
    assert beasts_reaching(world, {**imp_rock, "mobs": {"fire_imp": {"roam": 0}}}, (808, 407)) == []
    assert beasts_reaching(world, {**imp_rock, "world_rules": {"aggro": False}}, (808, 407)) == []
    seen, bad = 0, []
    for path in FILES:
        raw = task_file(path)
        for where, text in player_texts(raw):
            for node_id, x, y in STAND.findall(text):
                seen += 1
                if beasts := beasts_reaching(world, raw, (int(x), int(y))):
                    bad.append(f"{path.stem} {where}: {node_id}'s stand tile ({x},{y}) is in reach of {beasts}")
    assert seen > 50 and bad == []
