"""What an agent reads must be true (confusions pilot teams reported while playing through `agentworld seat`):
the inventory line's slot count agrees with its rows and a row keeps its index while its item is held;
craft_item says crafts and items apart; the observation says where the agent acts in the round and, once
the episode is over, says so instead of a round and actions left; the brief states the carry limit, walk
stops and finite nodes exactly when the task has them."""

import asyncio
import sys
from pathlib import Path

import pytest
import yaml

from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import PolicyTeam, make_policy
from agentworld.core.play.prompts import team_briefs, turn_order_text
from agentworld.core.tasks.task import TaskError, find_task
from agentworld.core.world.api import PlayerSpec, StackSpec
from agentworld.core.world.engine import EmbeddedWorld
from agentworld.core.world.observation import Observation
from agentworld.core.world.tools import TOOLS

sys.path.insert(0, str(Path(__file__).parent))
from test_events import task_with  # noqa: E402  (the staff task with some blocks changed, validated)

STAFF_FILE = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path
STAFF = yaml.safe_load(Path(find_task(STAFF_FILE).path).read_text(encoding="utf-8"))
HEARTHMOOR = (449, 399)


def world_with(**inventories):
    """The real world with players at Hearthmoor holding what is given: name={item: count}."""
    w = EmbeddedWorld(seed=0)
    for i, (name, inv) in enumerate(inventories.items()):
        w.add_player(PlayerSpec(agent_id=f"agent_{i + 1}", username=name, x=HEARTHMOOR[0] + i, y=HEARTHMOOR[1],
                                skills={"fletching": 5, "crafting": 5},
                                inventory=[StackSpec(item=k, count=n) for k, n in inv.items()]))
    return w


def inventory_line(w, agent):
    return next(line for line in w.observe(agent).render_text().splitlines() if line.startswith("Inventory"))


def test_the_inventory_line_counts_the_slots_its_rows_fill_and_a_row_keeps_its_index():
    w = world_with(wizard={"staff": 2, "bead": 3}, smith={})
    line = inventory_line(w, "agent_1")
    assert line == "Inventory (3/28 slots): [0] staff x2 (2 slots), [2] bead x3"  # 2 + 1 slots: as the header says
    give = TOOLS["transfer_items"].execute(w, "agent_1", {"targetPlayer": "smith", "itemKey": "staff", "count": 1})
    assert give.ok
    assert inventory_line(w, "agent_1") == "Inventory (2/28 slots): [0] staff x1, [2] bead x3"  # still [0]
    # equip by the index read before the transfer: still the staff, and nothing else takes its place
    assert TOOLS["equip_item"].execute(w, "agent_1", {"index": 0}).text.startswith("Equipped Staff")
    assert inventory_line(w, "agent_1") == "Inventory (1/28 slots): [2] bead x3"
    # the equip tool's own words say what a remembered index can turn into
    assert "itemKey is safer" in TOOLS["equip_item"].args.model_json_schema()["properties"]["index"]["description"]


def test_a_row_stays_at_its_index_when_one_of_several_is_equipped():
    w = world_with(wizard={"staff": 3})
    assert TOOLS["equip_item"].execute(w, "agent_1", {"itemKey": "staff"}).ok
    assert inventory_line(w, "agent_1") == "Inventory (2/28 slots): [0] staff x2 (2 slots)"


def test_craft_item_says_crafts_and_items_apart():
    w = world_with(fletcher={"logs": 2, "knife": 1})
    r = TOOLS["craft_item"].execute(w, "agent_1", {"skill": "Fletching", "itemKey": "arrow_shaft", "count": 30})
    assert r.ok and r.text.startswith("Made 2 of the 30 crafts asked for (materials ran out; one craft makes "
                                      "15 arrow_shaft): +30 arrow_shaft.")
    w = world_with(fletcher={"logs": 2, "knife": 1})
    r = TOOLS["craft_item"].execute(w, "agent_1", {"skill": "Fletching", "itemKey": "stick", "count": 1})
    assert r.ok and r.text.startswith("Made 1 craft as asked (one craft makes 2 stick): +2 stick.")
    assert "crafts" in TOOLS["craft_item"].args.model_json_schema()["properties"]["count"]["description"]


@pytest.mark.parametrize("names, pos, text", [
    (["a"], 0, None),
    (["a", "b", "c"], 0, "you act 1st of 3 this round; after you: b, c"),
    (["a", "b", "c"], 1, "you act 2nd of 3 this round; before you: a; after you: c"),
    (["a", "b", "c"], 2, "you act 3rd of 3 this round; before you: a, b"),
    ([f"p{i}" for i in range(20)], 10, "you act 11th of 20 this round; before you: 4 more, then p4, p5, p6, p7, "
                                       "p8, p9; after you: p11, p12, p13, p14, p15, p16, then 3 more"),
])
def test_the_turn_line_says_where_an_agent_acts_in_the_round(names, pos, text):
    assert turn_order_text(names, pos) == text


def test_the_turn_line_says_who_has_left_and_why():
    gone = ["prospector (died in round 20)"]
    assert turn_order_text(["a", "b"], 1, gone) == ("you act 2nd of 2 this round; before you: a; out of the "
                                                    "episode: prospector (died in round 20)")
    assert turn_order_text(["a"], 0, gone) == "you are the only one left in play; out of the episode: prospector (died in round 20)"
    many = [f"p{i} (died in round 3)" for i in range(8)]
    assert turn_order_text(["a", "b"], 0, many).endswith("p5 (died in round 3), and 2 more")


def _first_lines(tmp_path, policy: str, leaves: tuple[str, int] | None = None) -> dict[tuple[int, str], str]:
    """(round, agent) -> the first line of what that turn showed, playing STAFF_FILE with ``policy``; ``leaves``:
    (agent, round) where that agent calls complete instead."""
    task = find_task(STAFF_FILE)
    seen: dict[tuple[int, str], str] = {}

    class Watch(PolicyTeam):
        async def act(self, turn):
            seen[(turn.round, turn.agent_id)] = turn.observation_text.splitlines()[0]
            if leaves == (turn.agent_id, turn.round):
                return await turn.port.call("complete", {"response": "done"}) and None
            return await super().act(turn)

    asyncio.run(Episode(task, Watch(make_policy(policy, 0, task)), seed=0, out_dir=tmp_path).run())
    return seen


def test_a_teammate_who_leaves_is_named_in_everyone_elses_turn_line(tmp_path):
    # a pilot's quartermaster could not tell a dead prospector from a silent one: the turn count only fell
    lines = _first_lines(tmp_path, "idle", leaves=("agent_1", 2))
    assert "out of the episode" not in lines[(2, "agent_1")]
    # later in the same round the news is there already, beside the order the round began with
    assert lines[(2, "agent_2")].endswith("you act 2nd of 3 this round; before you: lumberjack; after you: wizard; "
                                          "out of the episode: lumberjack (declared its part done in round 2)")
    assert lines[(3, "agent_2")].endswith("you act 1st of 2 this round; after you: wizard; out of the episode: "
                                          "lumberjack (declared its part done in round 2)")
    assert "agent_1" not in {a for r, a in lines if r > 2}


def test_each_turn_shows_the_agents_place_in_this_rounds_order(tmp_path):
    lines = _first_lines(tmp_path, "oracle")
    assert lines[(1, "agent_1")] == ("Round 1/25 | actions left 25 | you act 1st of 3 this round; after you: "
                                     "woodworker, wizard")
    assert lines[(1, "agent_2")].endswith("you act 2nd of 3 this round; before you: lumberjack; after you: wizard")
    task = find_task(STAFF_FILE)
    assert "lumberjack, woodworker, wizard" in team_briefs(task, make_rules(task))["agent_1"].render()


def make_rules(task):
    from agentworld.core.world.datapack import load_world
    from agentworld.core.world.engine import make_rules as rules_of

    return rules_of(load_world().data.rules, task.world_rules)


def test_an_observation_after_the_end_says_the_episode_is_over_and_shows_no_round():
    obs = Observation(agent_id="agent_1", username="a", round=18, max_rounds=43, actions_left=7, x=1, y=2,
                      biome="Meadow", hp=10, max_hp=10, turn="you act 1st of 3 this round")
    assert obs.render_text().startswith("Round 18/43 | actions left 7 | you act 1st of 3 this round")
    over = obs.model_copy(update={"over": "success, checkpoints 3/3 (PSR 1.00); it ended in round 18: the "
                                          "objective was met", "actions_left": None})
    text = over.render_text()
    assert text.startswith("The episode is over: success, checkpoints 3/3") and "No more turns" in text
    assert "Round" not in text and "actions left" not in text


def test_a_lost_episode_says_which_checks_fell_short():
    # pilots read "checkpoints 2/3" and could not tell which part of the objective they had missed
    from agentworld.core.play.records import EpisodeOutcome

    lost = EpisodeOutcome(success=False, end_reason="round_budget", rounds=31, checkpoints_passed=2,
                          checkpoints_total=3, psr=0.0, message="the watch's order: 4/5, the post kept: 1/1")
    assert lost.text().endswith("the round budget is used up (the checks: the watch's order: 4/5, the post kept: 1/1)")
    won = lost.model_copy(update={"success": True, "end_reason": "verifier_passed", "psr": 1.0})
    assert won.text().endswith("it ended in round 31: the verifier passed")  # a win needs no list


def brief(task):
    return team_briefs(task, make_rules(task))["agent_1"].render()


def test_the_brief_states_the_carry_limit_walk_stops_and_finite_nodes_only_when_the_task_has_them():
    plain = brief(task_with())
    assert "carry at most" not in plain and "finite" not in plain
    assert "engage you when your walk comes within their range" in plain
    rich = brief(task_with(world_rules={"carry_limit": 12}, nodes={"tree#1068": {"total": 6}}))
    assert "You carry at most 12 items in all" in rich and "Some resource nodes are finite" in rich
    calm = brief(task_with(world_rules={"walk_aggro": False}))
    assert "engage you when your walk" not in calm and "(walks are not stopped)" in calm
    peaceful = brief(task_with(world_rules={"aggro": False}))
    assert "Aggressive mobs" not in peaceful and "aggressive mob" not in peaceful
    # what a death does (aug_326's porters asked whether a dead porter's potions could be picked up)
    assert "it is out of the episode for good, and what it carries goes out with it" in plain
    again = brief(task_with(world_rules={"death": "respawn"}))
    assert "comes back at its start with full HP; what it carried lies on the ground where it fell" in again
    assert "out of the episode for good" not in again


def test_a_brief_that_states_another_carry_limit_is_refused():
    raw_guide = STAFF["agent_1"]["guideline"] + "\nEach of you carries at most 20 items."
    with pytest.raises(TaskError) as err:
        task_with(world_rules={"carry_limit": 12}, agent_1={**STAFF["agent_1"], "guideline": raw_guide})
    assert "agent_1.guideline" in str(err.value) and "carry limit is 12" in str(err.value)
    with pytest.raises(TaskError) as err:
        task_with(agent_1={**STAFF["agent_1"], "guideline": raw_guide})
    assert "not set (no limit)" in str(err.value)
    assert task_with(world_rules={"carry_limit": 20}, agent_1={**STAFF["agent_1"], "guideline": raw_guide})
