"""What an agent is told is true, complete and quiet (issue 27): walks to blocked tiles end beside them, the
brief checks of task validation, NPC notes said once, and the no-chat variant's rewritten briefs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core.cli.tasks import tasks_group
from agentworld.core.play.prompts import team_briefs
from agentworld.core.tasks.briefs import brief_problems
from agentworld.core.tasks.task import find_task, load_suite, world_index
from agentworld.core.tasks.variants import apply_variant
from agentworld.core.world.api import PlayerSpec
from agentworld.core.world.engine import EmbeddedWorld

DATA = Path(__file__).parent / "data"
STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path


def _world_with(x: int, y: int) -> EmbeddedWorld:
    w = EmbeddedWorld(seed=0)
    w.add_player(PlayerSpec(agent_id="a", username="walker", x=x, y=y))
    return w


def test_a_walk_to_a_node_tile_ends_beside_it_and_says_so():
    w = _world_with(460, 308)
    r = w.move_character("a", 464, 308)  # copper_rock#709's own tile
    assert r.ok and r.text.startswith("(464,308) is copper_rock#709's tile; you stand beside it at (463,308).")
    st = w.player_state("a")
    assert (st.x, st.y) == (463, 308) and r.effects.move.end == (463, 308)
    again = w.move_character("a", 464, 308)
    assert again.ok and "you already stand beside it at (463,308)" in again.text


def test_a_walk_into_water_next_to_the_shore_ends_on_the_shore():
    w = _world_with(490, 402)
    r = w.move_character("a", 493, 401)  # trout_spot#1096, in water
    assert r.ok and "(493,401) is trout_spot#1096's tile; you stand beside it at (493,402)" in r.text
    assert not w.map.walkable(493, 401) and w.map.walkable(*r.effects.move.end)


def test_off_the_map_is_still_refused():
    w = _world_with(460, 308)
    r = w.move_character("a", -5, 308)
    assert not r.ok and r.error == "blocked" and "off the map" in r.text


def test_an_npc_line_is_a_note_once_not_every_turn():
    w = EmbeddedWorld(seed=0)
    npc = w.data.npcs[0]
    x, y = w.map.nearest_walkable(npc.x + 1, npc.y, 10)
    w.add_player(PlayerSpec(agent_id="a", username="u", x=x, y=y))
    assert w.peek("a").notes == w.observe("a").notes != []  # peeking does not use it up
    assert not any("says:" in n for n in w.observe("a").notes)
    assert not any("says:" in n for n in w.observe("a").notes)


def _task_yaml(tid: str) -> dict:
    path = find_task(tid).path
    return yaml.safe_load(Path(path).read_text())


def _validate(tmp_path: Path, raw: dict) -> tuple[int, str]:
    f = tmp_path / f"{raw['id']}.yaml"
    f.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = CliRunner().invoke(tasks_group, ["validate", str(f)])
    return res.exit_code, res.output


def test_validate_refuses_a_guide_that_sends_an_agent_to_a_node_tile(tmp_path):
    raw = _task_yaml("task_90_hearthmoor_stores")
    raw["agent_1"]["guideline"] = "Mine copper_rock#709 at (464,308)."
    code, out = _validate(tmp_path, raw)
    assert code == 1 and "quotes (464,308) as a place, but it is copper_rock#709's own tile" in out
    assert "(463,308)" in out or "beside it" in out  # the fix names where to stand
    raw["agent_1"]["guideline"] = "Mine copper_rock#709 at (464,308), stand beside it at (463,308)."
    assert _validate(tmp_path, raw)[0] == 0


def test_validate_refuses_an_objective_whose_receiver_no_check_tests(tmp_path):
    raw = _task_yaml(str(DATA / "trout_supper.yaml"))  # retired task_57, a fixture
    raw["objectives"]["primary"] = raw["objectives"]["primary"].replace("the cook receives", "the fisher receives")
    code, out = _validate(tmp_path, raw)
    assert code == 1 and "the fisher receives something, but no verifier check tests fisher" in out


def test_validate_refuses_holding_an_item_that_cannot_be_held_and_unknown_item_keys(tmp_path):
    raw = _task_yaml("task_88_dock_beacons")
    raw["objectives"]["primary"] = "In one round, every keeper stands at its own beacon post holding a torch."
    raw["agent_2"]["guideline"] += " craft_item(skill='Crafting', itemKey='torchh', count=4)."
    code, out = _validate(tmp_path, raw)
    assert code == 1 and "says holding torch, but torch cannot be equipped" in out
    assert "itemKey=torchh names no item" in out


def test_validate_refuses_an_objective_count_the_check_does_not_want(tmp_path):
    raw = _task_yaml(STAFF)
    raw["objectives"]["primary"] = "The wizard crafts four staffs and ends up wielding one."
    code, out = _validate(tmp_path, raw)
    assert code == 1 and "says 4 staff, but the verifier's checks of staff want 1, 3" in out


@pytest.mark.parametrize("suite", ["main", "augmented"])
def test_every_shipped_brief_is_true(suite):
    w = world_index()
    bad = {t.id: [str(p) for p in brief_problems(t, w)] for t in load_suite(suite)}
    assert {k: v for k, v in bad.items() if v} == {}


def test_no_word_of_chat_in_any_brief_without_chat():
    talk = re.compile(r"\b(chat|send_chat_message|tells? you|ask (the|your)|until you tell)\b", re.IGNORECASE)
    rules = EmbeddedWorld(seed=0).rules
    for task in load_suite("main"):
        played = apply_variant(task, "no_communication")
        for agent_id, brief in team_briefs(played, rules, can_chat=False).items():
            text = brief.render()
            assert not talk.search(text), (task.id, agent_id, talk.search(text).group(0))
            assert "sleep uses your turn but not your action budget" in text


@pytest.mark.anyio
async def test_a_walk_that_ends_on_a_post_says_whose_post_it_is():
    from agentworld.core.play.episode import Episode, posts_of
    from agentworld.core.play.protocol import Team, Turn, TurnOutcome

    task = find_task("task_88_dock_beacons")
    posts = posts_of(task)
    other_post = next(t for t, o in posts.items() if o[1] == "keeper_2")
    own_post = next(t for t, o in posts.items() if o[1] == "keeper_1")

    class Walk(Team):  # keeper_1 walks to keeper_2's post and stays; everyone else waits
        async def act(self, turn: Turn) -> TurnOutcome:
            if turn.username == "keeper_1":
                await turn.port.call("move_character", {"x": other_post[0], "y": other_post[1]})
            else:
                await turn.port.call("sleep", {})
            return TurnOutcome()

    assert own_post != other_post
    ep = Episode(task, Walk())
    await ep.run()
    walks = [e for e in ep.events if getattr(e, "username", None) == "keeper_1" and e.tool == "move_character"]
    arrived = [e.result for e in walks if e.effects.move.end == other_post]
    assert arrived and all(r.endswith(f"({other_post[0]},{other_post[1]}) is keeper_2's post.") for r in arrived)
    assert not any("post" in e.result for e in walks if e.effects.move.end != other_post)


def test_only_npc_lines_about_the_task_are_kept():
    from agentworld.core.play.notes import NoteFilter

    w = EmbeddedWorld(seed=0)
    lines = {n.key: f"{n.name} (npc at {n.x},{n.y}) says: {n.says}" for n in w.data.npcs}
    cooking = NoteFilter(find_task(str(DATA / "trout_supper.yaml")))  # retired task_57, a fixture
    assert not cooking.keep(lines["elder_maren"])  # ore and anvils, in the kitchen's own town
    assert cooking.keep(lines["farmer_hale"])  # flour and bread
    assert cooking.keep("keeper_2 gave you 1 torch in round 3.")  # not an NPC's line: always shown
    assert NoteFilter(find_task("task_09_bronze_blade")).keep(lines["smith_dorrin"])
