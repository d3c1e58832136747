"""What the players read in every shipped task (main and augmented) is plain, true English (issue 28: pilots were
misled by a road called "clear" that roaming goblins walk onto, and stumbled on "a anvil" and "the the ford").

The texts are the ones a player's brief is made of: the task's name and description, the objectives, the shared
context, the success criteria, each agent's guideline and the events' messages (a reference plan's chat is not
read by players and is left out)."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("tasks/main/*.yaml"), *ROOT.glob("tasks/augmented/*.yaml")])

# "a" before a word that starts with a vowel sound ("a anvil", "a iron_platebody"); "u" words are left out
# ("a unit" is right)
A_BEFORE_VOWEL = re.compile(r"\b[aA] ([aeioAEIO][\w']*)")
DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.IGNORECASE)
# a road, track or way said to be "clear": a mob that roams knows no roads (say which camps it passes instead)
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
                         ("a road called clear", CLEAR_ROAD)):
            for m in rx.finditer(text):
                found.append(f"{where}: {rule}: ...{text[max(0, m.start() - 30):m.end() + 30]!r}...")
    return found


def test_the_checks_catch_what_pilots_found():
    bad = {"task": {"name": "A barricade at the the Silverrun ford"},
           "relevant_game_context": "within 4 tiles of a anvil. The track by (470,445) keeps clear of them.",
           "agent_1": {"guideline": "You ordered a iron_platebody. The roads are clear of goblins."}}
    assert len(problems(bad)) == 5
    good = {"relevant_game_context": "within 4 tiles of an anvil; a unit of a clearing. The track passes no camp.",
            "agent_1": {"guideline": "You ordered an iron_platebody and a steel_sword."}}
    assert problems(good) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_shipped_task_reads_true(path):
    assert FILES, "no task files found"
    assert problems(yaml.safe_load(path.read_text())) == []


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
        for where, text in player_texts(yaml.safe_load(path.read_text())):
            for node_id, n in PER_CALL.findall(text):
                t = types[nodes[node_id].type]
                seen += 1
                assert int(n) == t.harvests and all(y.max <= 1 for y in t.yields), \
                    f"{path.stem} {where}: {node_id} 'up to {n} per harvest call'"
    assert seen > 50  # the pattern still finds the node sentences
