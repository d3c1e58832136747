"""`agentworld tasks port` and the paper-aware hints of `tasks validate`, on task files in the paper's shape
(tests/data/paper_tasks: the paper's item keys, spawns at sea or off our map)."""

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli
from agentworld.core.tasks.paper_mapping import paper_mapping
from agentworld.core.tasks.port import port_file
from agentworld.core.tasks.task import TaskError, load_task, world_index

PAPER = Path(__file__).parent / "data" / "paper_tasks"
FILES = sorted(PAPER.glob("task_*.yaml"))


def problems_of(path: Path) -> list:
    with pytest.raises(TaskError) as err:
        load_task(path)
    return err.value.problems


def test_there_are_at_least_ten_paper_shaped_files_and_none_is_valid_as_written():
    assert len(FILES) >= 10
    for f in FILES:
        assert problems_of(f), f


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_port_makes_every_file_valid_and_lists_what_it_could_not_map(path, tmp_path):
    out, report = port_file(path, tmp_path / path.name)
    task = load_task(out)  # raises if the ported task is not valid
    raw = yaml.safe_load(path.read_text())
    gmap = world_index().loaded.map
    spawns = [(a.x, a.y) for a in task.agents]
    assert all(gmap.walkable(x, y) for x, y in spawns) and len(set(spawns)) == len(spawns)
    assert [a.username for a in task.agents] == [raw[k]["username"] for k in raw if k.startswith("agent_")]
    written = out.read_text()
    assert "password" not in yaml.safe_load(written).get("agent_1", {})
    for line in report.lines():  # the report is kept in the file
        assert f"# {line}" in written
    mapping = paper_mapping()
    for key in (k for k in raw if k.startswith("agent_")):
        for stack in raw[key].get("inventory_items", []) + raw[key].get("equipped_items", []):
            if mapping.items.get(stack["item"], "") is None:
                assert any(f"item '{stack['item']}'" in u for u in report.unmapped), stack


def test_port_report_names_unmapped_items_skills_and_free_text(tmp_path):
    out, report = port_file(PAPER / "task_05_shrimp_stew.yaml", tmp_path / "t5.yaml")
    unmapped = "\n".join(report.unmapped)
    for word in ("bucket", "bowlmedium", "corn", "tomato", "eating"):
        assert word in unmapped
    assert "relevant_game_context names 'tomato'" in unmapped
    task = load_task(out)
    cook = task.agent("cook")
    assert cook.inventory == [] and "eating" not in cook.skills
    assert "cooked_shrimp" in task.objectives.primary and "fish_stew" in task.relevant_game_context


def test_port_maps_items_keeps_offsets_and_clamps_levels(tmp_path):
    out, report = port_file(PAPER / "task_11_party_levels.yaml", tmp_path / "t11.yaml")
    task = load_task(out)
    assert task.agent("guard_one").skills["strength"] == world_index().max_level
    assert [s.item for s in task.agent("guard_two").equipment] == ["shortbow"]
    assert any("enchant 5 dropped" in c for c in report.changed)
    miner, guard = task.agent("miner_two"), task.agent("guard_one")
    assert abs(miner.x - guard.x) + abs(miner.y - guard.y) <= 6  # they spawned 2 tiles apart in the paper's file
    assert any("near Deepdelve Mine (the task mentions 'mines')" in c for c in report.changed)


def test_port_picks_the_place_the_text_names(tmp_path):
    out, report = port_file(PAPER / "task_05_shrimp_stew.yaml", tmp_path / "t5.yaml")
    assert any("near Fisher's Rest (the task mentions 'beach')" in c for c in report.changed)


def test_validate_hints_name_the_mapped_item_not_the_closest_spelling():
    probs = {p.field: p for p in problems_of(PAPER / "task_01_staff.yaml")}
    flask = probs["agent_1.inventory_items[0].item"]
    assert "healing_potion" in flask.fix and "flax" not in flask.fix
    assert "leather_body" in probs["agent_2.equipped_items[0].item"].fix
    no_counterpart = {p.field: p for p in problems_of(PAPER / "task_05_shrimp_stew.yaml")}
    assert "no counterpart" in no_counterpart["agent_1.inventory_items[1].item"].fix


def test_validate_gives_a_walkable_tile_for_every_bad_spawn():
    gmap = world_index().loaded.map
    seen = 0
    for f in FILES:
        for p in problems_of(f):
            if p.field.endswith(".location"):
                seen += 1
                x, y = (int(v) for v in p.fix.rsplit("(", 1)[1].rstrip(")").split(","))
                assert gmap.walkable(x, y), (f, p)
    assert seen >= 20


def test_validate_refuses_enchantments_with_a_word():
    probs = {p.field: p for p in problems_of(PAPER / "task_03_rat_hunt.yaml")}
    assert "no enchantments" in probs["agent_1.equipped_items[0].enchant"].message


def test_passwords_are_accepted_and_never_kept():
    task = load_task(PAPER / "task_01_staff.yaml", validate=False)
    assert task.raw["agent_1"]["password"] == "***"
    assert "lumber123" not in repr(task) and "lumber123" not in task.model_dump_json()


def test_the_port_command(tmp_path):
    _load_commands()
    out = tmp_path / "ported.yaml"
    res = CliRunner().invoke(cli, ["tasks", "port", str(PAPER / "task_09_berries_survival.yaml"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "NOT MAPPED" in res.output and "wolfarmor" in res.output and "it validates" in res.output
    res = CliRunner().invoke(cli, ["tasks", "validate", str(out)])
    assert res.exit_code == 0 and "1/1 task files valid" in res.output
    bad = CliRunner().invoke(cli, ["tasks", "port", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2 and "does not exist" in bad.output


# the item keys of the paper's task files (shared/reference/paper-format.md section 3.2)
PAPER_KEYS = """apple arrow axe bead bluesword firebead firestaff fishingpole flask goldbar healthpotion heavysword
leatherarmor leatherboots lightningbead lightningstaff manapotion pickaxe platearmor staff sword woodenbow logs
willowlogs stick staff woodenbow sword2 stew stew2 bowlmedium mushroom2 corn tomato blueberry silverring goldring
goldensword goldenbow naturestaff icestaff ironore ironbar coal bronzebar goldbar shrimp cookedshrimp bucket
wolfarmor""".split()
PAPER_SKILLS = "accuracy strength defense health magic archery lumberjacking mining fishing cooking smithing crafting " \
               "fletching foraging".split()


def test_the_mapping_table_covers_the_papers_keys_and_names_only_what_exists_here():
    from agentworld.core.world.models import SKILLS

    m, w = paper_mapping(), world_index()
    assert set(PAPER_KEYS) <= set(m.items)
    assert all(ours in w.items for ours in m.items.values() if ours is not None)
    assert m.items["flask"] in w.items and w.items[m.items["flask"]].heal > 0  # a healing drink, not flax
    assert w.items[m.items["leatherarmor"]].slot == "body"
    assert all(m.skills[s] in SKILLS for s in PAPER_SKILLS)
    places = [m.places.default, *m.places.words.values(), *m.places.skills.values()]
    assert all(p in w.landmarks for p in places)
