"""The task-authoring tool (``tools/task_authoring/build.py``): asked for one family, it renders only that
family; a name it does not know is an error naming it; a committed task matches its family's rendering."""

from __future__ import annotations

import pytest


def test_one_family_asked_is_the_only_one_rendered(build, monkeypatch, capsys):
    rendered = []
    real = build.render
    monkeypatch.setattr(build, "render", lambda template, params: rendered.append(params["id"]) or real(template, params))
    # --check: the committed task_01_staff is what its family renders today (nothing would change)
    assert build.main(["--check", "staff"]) == 0, capsys.readouterr().out
    assert rendered == ["task_01_staff"]
    rendered.clear()
    docs = build.family_docs(build.FAMILIES / "hunt.yaml", {"task_44_oakridge_wolves"})
    assert [d["id"] for d in docs] == rendered == ["task_44_oakridge_wolves"]  # one variant of a family of many


def test_an_unknown_name_is_an_error_naming_it(build, monkeypatch, capsys):
    monkeypatch.setattr(build, "render", lambda *a: pytest.fail("nothing is rendered for a bad name"))
    with pytest.raises(SystemExit) as exc:
        build.main(["--check", "staff", "task_999_nowhere"])
    assert exc.value.code == 2
    assert "no family or task id task_999_nowhere" in capsys.readouterr().err


def test_helpers_refuse_what_the_world_does_not_have(build):
    A = build.A
    assert len(A.spots(A.landmark("hearthmoor"), 5)) == 5
    with pytest.raises(AssertionError):  # fewer tiles than asked for is an error, not a short list
        A.spots(A.landmark("hearthmoor"), 10_000, max_d=3)
    with pytest.raises(build.PlanError, match="fewer than 1000 goblin mobs"):
        build.mob("goblin", "hearthmoor", k=999)
    nearest = build.node("tree", "hearthmoor")
    assert build.node_far("tree", "hearthmoor", 0) == nearest
    far = build.node_far("tree", "hearthmoor", 30)
    assert A.dist(A.landmark("hearthmoor"), (far.x, far.y)) >= 30 and far.harvests >= 1


def test_a_design_with_mechanics_is_built_with_them(build, capsys):
    """silver_seam's committed task is what its family renders, and the family's mechanics blocks (events,
    hidden information, finite nodes) reach the file: a build that dropped them would ship a task whose brief
    promises a hidden seam that the world does not have."""
    assert build.main(["--check", "silver_seam"]) == 0, capsys.readouterr().out
    (doc,) = build.family_docs(build.FAMILIES / "silver_seam.yaml", {"task_501_deepdelve_silver_seam"})
    _, text = build.build_task("silver_seam", doc)
    import yaml

    task = yaml.safe_load(text)
    assert task["hidden"][0]["kind"] == "vein" and task["events"][0]["do"] == "deplete_node"
    assert list(task["nodes"]) == [task["hidden"][0]["nodes"][task["hidden"][0]["pick"]]]
    # every silver rock but the shortlist is worked out at the start
    assert len(task["events"][0]["nodes"]) + len(task["hidden"][0]["nodes"]) == len(build.node_ids("silver_rock"))


def test_a_pickup_step_walks_onto_the_item(build):
    """{pickup: ID, at: [x, y]}: the plan walks into reach and picks the ground item up (a cache, a heavy load)."""
    plan = build.compile_plan({"agent_1": (450, 400)}, {"agent_1": [{"pickup": "load#1", "at": [452, 398]}]})
    steps = plan.solution()["agent_1"]
    assert steps[-1] == {"tool": "pickup_resource", "args": {"targetInstance": "load#1"}}
    assert plan.pos["agent_1"] == (452, 398)


def test_beasts_on_names_every_aggressive_mob_that_can_reach_the_ways(build):
    """A brief that names some beasts of a way reads as naming them all: the helper lists every aggressive
    mob whose range plus leash reaches the engine's shortest walk, and leaves out what the brief names apart."""
    A = build.A
    ironhold_to_dock = [[(473, 254), (812, 470)]]  # task_401's direct way: past the fire imps' hills
    words = A.beasts_on(ironhold_to_dock)
    assert "fire imps (level 34, hits up to 12)" in words and "a lava hound (level 40" in words
    assert words.index("goblin") < words.index("fire imps")  # weakest first
    path = A.route(A.G, (473, 254), (812, 470))
    near = {A.W.mob_type(m.type).name.lower() for m in A.W.mobs if A.W.mob_type(m.type).aggro_range > 0
            and any(A.dist(q, (m.x, m.y)) <= A._reach(A.W.mob_type(m.type)) for q in path)}
    assert len(near) >= 3 and words.count("(level ") == len(near)  # every aggressive type in reach, no other
    assert all(name.rstrip("f") in words for name in near)
    imps = tuple(m.id for m in A.W.mobs if m.type == "fire_imp")
    assert "fire imp" not in A.beasts_on(ironhold_to_dock, skip=imps)
    assert A.beasts_on([[(450, 400), (450, 400)]]) == "no beast"


def test_node_clear_skips_a_node_whose_stand_tile_a_beast_reaches(build):
    """task_510's first coal rock stands within a fire imp's range plus leash: node() picks it, node_clear() the
    nearest rock no aggressive mob can reach from where its text tells a player to stand."""
    A = build.A
    saltmarsh = (811, 470)
    trap = build.node("coal_rock", saltmarsh)
    assert trap.id == "coal_rock#1131"
    assert [m.id for m in A.beasts_reaching(A.stand_tile(A.W.node_by_id[trap.id]))] == ["fire_imp#2994"]
    clear = build.node_clear("coal_rock", saltmarsh)
    assert clear.id != trap.id and A.beasts_reaching(A.stand_tile(A.W.node_by_id[clear.id])) == []
    far = build.node_clear("coal_rock", saltmarsh, min_d=200)
    assert A.dist(saltmarsh, (far.x, far.y)) >= 200
