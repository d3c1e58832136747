"""CCE: the causal graph, metrics, the paper method (skip and batching rules), the grounded method, the cache."""

from __future__ import annotations

import json

import pytest

from agentworld.core.cce.graph import CausalGraph, EpisodeError, compute_metrics, find_episode_dirs, load_episode
from agentworld.core.cce.score import ScoreOptions, read_report, score_episode, write_report
from agentworld.core.cce.grounded import GroundedJudge
from agentworld.core.cce.judges import JudgeCache, ScriptedJudge
from agentworld.core.cce.synth import STAFF_CONTRIBUTING, STAFF_SUCCESS, EpisodeBuilder, staff_episode
from agentworld.core.play.records import Checkpoint


@pytest.fixture
def staff(tmp_path):
    return staff_episode(tmp_path / "ep_staff")


def labels_judge():
    return ScriptedJudge.from_labels(STAFF_SUCCESS, STAFF_CONTRIBUTING)


# -- graph and metrics ------------------------------------------------------------------------------------------


def test_contributing_is_success_plus_ancestors_and_metrics(staff):
    ep = load_episode(staff)
    g = CausalGraph.from_episode(ep)
    assert len(g.nodes) == 11  # every tool call and chat, no-call turns excluded
    g.add_edge("r1.agent_1", "r2.agent_1", "move")
    g.add_edge("r2.agent_1", "r3.agent_1", "items")
    g.add_edge("r2.agent_3", "r3.agent_3", "move")  # a chain that ends nowhere useful
    g.mark_success("r3.agent_1")
    assert g.contributing() == {"r1.agent_1", "r2.agent_1", "r3.agent_1"}
    m = compute_metrics(g.ordered(), g.contributing(), ep.agents)
    assert m.cce == pytest.approx(3 / 11)
    assert m.pac == {"agent_1": pytest.approx(3 / 4), "agent_2": 0.0, "agent_3": 0.0}


def test_edges_back_in_time_or_to_unknown_ids_are_refused(staff):
    g = CausalGraph.from_episode(load_episode(staff))
    assert not g.add_edge("r3.agent_1", "r2.agent_1", "judge")
    assert not g.add_edge("r1.agent_1", "r9.agent_9", "judge")
    assert g.g.number_of_edges() == 0 and len(g.notes) == 2


def test_pac_is_none_for_an_agent_without_actions(tmp_path):
    b = EpisodeBuilder(agents={"agent_1": "a", "agent_2": "b"})
    b.harvest(1, "agent_1", "oak_tree#1", "oak_logs", 2)
    folder = b.write(tmp_path / "ep", checkpoints=[Checkpoint(name="oak_logs", check="item_count", value=2,
                                                              target=2, achieved=True)])
    report = score_episode(folder, GroundedJudge())
    assert report.pac == {"agent_1": 1.0, "agent_2": None}
    assert report.cce == 1.0 and report.pac_spread() == (1.0, 1.0)


def test_failed_task_scores_zero_without_calls_unless_asked(tmp_path):
    folder = staff_episode(tmp_path / "failed", success=False)
    judge = labels_judge()
    report = score_episode(folder, judge)
    assert report.cce == 0.0 and not report.judged and report.raw_cce is None and judge.calls == 0
    anyway = score_episode(folder, judge, options=ScoreOptions(judge_failed=True))
    assert anyway.cce == 0.0 and anyway.raw_cce == pytest.approx(6 / 11)
    assert set(anyway.pac.values()) == {0.0}


# -- the paper method -------------------------------------------------------------------------------------------


def test_paper_method_recovers_the_known_answer_and_skips_round_without_later_contributors(staff):
    judge = labels_judge()
    report = score_episode(staff, judge)
    assert set(report.success_actions) == STAFF_SUCCESS
    assert report.contributing_ids() == STAFF_CONTRIBUTING
    assert report.cce == pytest.approx(6 / 11)
    # step 1 + rounds 3, 2, 1; round 4 has no contributing action after it: skipped, no call
    assert [q["kind"] for q in judge.questions] == ["success", "round", "round", "round"]
    assert [q["rounds"] for q in judge.questions[1:]] == [[3], [2], [1]]
    assert report.skipped_rounds == [4] and report.judge_calls == 4
    # round 3 is asked about its non-success actions, against the later (same-round) craft
    r3 = judge.questions[1]
    assert [c["id"] for c in r3["candidates"]] == ["r3.agent_1", "r3.agent_3"]
    assert [t["id"] for t in r3["targets"]] == ["r3.agent_2"]
    assert all(e.kind == "inferred" for e in report.edges)


def test_paper_method_skips_every_round_after_an_early_success(tmp_path):
    b = EpisodeBuilder(agents={"agent_1": "a", "agent_2": "b"})
    b.harvest(1, "agent_1", "oak_tree#1", "oak_logs", 2)
    b.idle(1, "agent_2")
    for rnd in (2, 3, 4):
        b.idle(rnd, "agent_1")
        b.idle(rnd, "agent_2")
    folder = b.write(tmp_path / "ep")
    judge = ScriptedJudge.from_labels({"r1.agent_1"}, set())
    report = score_episode(folder, judge)
    assert judge.calls == 1  # only step 1: rounds 4..2 have nothing after them, round 1 has nothing after step 0
    assert report.skipped_rounds == [1, 2, 3, 4]
    assert report.cce == pytest.approx(1 / 8)


def test_a_wait_is_not_an_action_of_cce(tmp_path):
    """An ok sleep passes the turn on purpose and uses no action budget: it is not in T (docs/cce.md); a
    stop_action, or a sleep the world refused, is."""
    b = EpisodeBuilder(agents={"agent_1": "a", "agent_2": "b"})
    b.harvest(1, "agent_1", "oak_tree#1", "oak_logs", 2)
    b.idle(1, "agent_2", tool="sleep")
    b.idle(2, "agent_1", tool="sleep")
    b.idle(2, "agent_2")  # stop_action
    folder = b.write(tmp_path / "ep")
    assert sorted(CausalGraph.from_episode(load_episode(folder)).nodes) == ["r1.agent_1", "r2.agent_2"]
    report = score_episode(folder, ScriptedJudge.from_labels({"r1.agent_1"}, set()))
    assert report.n_actions == 2 and report.cce == pytest.approx(1 / 2)


def test_rounds_per_call_batches_the_sweep(staff):
    judge = labels_judge()
    report = score_episode(staff, judge, options=ScoreOptions(extra={"rounds_per_call": 2}))
    assert [q["rounds"] for q in judge.questions[1:]] == [[3, 4], [1, 2]]
    assert report.contributing_ids() == STAFF_CONTRIBUTING


def test_judge_enables_become_edges_with_reasons(staff):
    def fn(q):
        if q["kind"] == "success":
            return {"success_action_ids": ["r3.agent_2", "r99.nobody"], "reasons": {"r3.agent_2": "made the staff"}}
        if q["rounds"] == [3]:
            return {"contributing_ids": ["r3.agent_1"], "not_contributing_ids": ["r3.agent_3"],
                    "enables": {"r3.agent_1": ["r3.agent_2"]}, "reasons": {"r3.agent_1": "handed over the logs"}}
        return {"contributing_ids": [], "not_contributing_ids": [c["id"] for c in q["candidates"]]}

    report = score_episode(staff, ScriptedJudge(fn=fn))
    assert report.contributing_ids() == {"r3.agent_1", "r3.agent_2"}
    edge = next(e for e in report.edges if e.source == "r3.agent_1")
    assert (edge.target, edge.kind, edge.reason) == ("r3.agent_2", "judge", "handed over the logs")
    nodes = {n.id: n for n in report.nodes}
    assert nodes["r3.agent_2"].reason == "made the staff" and nodes["r3.agent_1"].reason == "handed over the logs"
    assert any("r99.nobody" in n for n in report.notes)


def test_malformed_answers_are_recorded_not_raised(staff):
    judge = ScriptedJudge.from_rule("malformed")
    report = score_episode(staff, judge)
    assert report.cce is None and report.partial_cce == 0.0 and not report.complete
    assert report.failed_calls == 1 and report.n_contributing == 0
    assert "success_action_ids" in report.calls[0].error
    assert any("failed after retries" in n for n in report.notes)

    def boom(q):
        raise RuntimeError("judge exploded")

    report = score_episode(staff, ScriptedJudge(fn=boom))
    assert report.failed_calls == 1 and "judge exploded" in report.calls[0].error


def test_a_failed_round_question_leaves_that_round_out(staff):
    def fn(q):
        if q["kind"] == "success":
            return {"success_action_ids": ["r3.agent_2"]}
        if q["rounds"] == [2]:
            return {"contributing": "not the expected shape"}
        return {"contributing_ids": [c["id"] for c in q["candidates"]], "not_contributing_ids": []}

    report = score_episode(staff, ScriptedJudge(fn=fn))
    assert report.failed_calls == 1 and not report.complete and report.cce is None
    assert 0 < report.partial_cce < 1  # what the judge did answer: a lower bound
    assert "r2.agent_1" not in report.contributing_ids()
    assert "r3.agent_1" in report.contributing_ids()


# -- cache ------------------------------------------------------------------------------------------------------


def test_cache_makes_the_second_run_free(staff, tmp_path):
    cache = JudgeCache(tmp_path / "cache")
    judge = labels_judge()
    first = score_episode(staff, judge, cache=cache)
    assert judge.calls == 4 and first.judge_calls == 4 and first.tokens_in > 0
    second = score_episode(staff, judge, cache=cache)
    assert judge.calls == 4  # nothing asked again
    assert second.judge_calls == 0 and second.cached_calls == 4 and second.tokens_in == 0
    assert second.contributing_ids() == first.contributing_ids()
    other_model = ScriptedJudge.from_labels(STAFF_SUCCESS, STAFF_CONTRIBUTING, name="scripted2")
    score_episode(staff, other_model, cache=cache)
    assert other_model.calls == 4  # the key includes the judge name


def test_failed_answers_are_not_cached(staff, tmp_path):
    cache = JudgeCache(tmp_path / "cache")
    score_episode(staff, ScriptedJudge.from_rule("malformed", name="flaky", model="m"), cache=cache)
    judge = ScriptedJudge(fn=ScriptedJudge.from_labels(STAFF_SUCCESS, STAFF_CONTRIBUTING).fn, name="flaky", model="m")
    report = score_episode(staff, judge, cache=cache)
    assert judge.calls == 4 and report.contributing_ids() == STAFF_CONTRIBUTING


# -- grounded ---------------------------------------------------------------------------------------------------


def test_grounded_on_the_staff_episode(staff):
    report = score_episode(staff, GroundedJudge())
    assert report.success_actions == ["r3.agent_2"]
    assert report.contributing_ids() == STAFF_CONTRIBUTING
    assert report.judge_calls == 0
    kinds = {(e.source, e.target): e.kind for e in report.edges}
    assert kinds[("r2.agent_1", "r3.agent_1")] == "items"  # the harvested logs were handed over
    assert kinds[("r3.agent_1", "r3.agent_2")] == "items"  # ...and consumed by the craft
    assert kinds[("r1.agent_1", "r2.agent_1")] == "move"
    assert kinds[("r2.agent_2", "r3.agent_1")] == "receiver_move"
    assert kinds[("r1.agent_2", "r2.agent_1")] == "chat_rule"
    assert report.pac == {"agent_1": 0.75, "agent_2": 1.0, "agent_3": 0.0}


def test_grounded_fifo_lots_and_kills(tmp_path):
    b = EpisodeBuilder(agents={"agent_1": "fighter", "agent_2": "smith"})
    b.harvest(1, "agent_1", "oak_tree#1", "oak_logs", 2)  # first lot: transferred
    b.idle(1, "agent_2")
    b.harvest(2, "agent_1", "oak_tree#2", "oak_logs", 2)  # second lot: stays, unused
    b.idle(2, "agent_2")
    b.transfer(3, "agent_1", "agent_2", "oak_logs", 2)
    b.craft(3, "agent_2", "club", {"oak_logs": 2})
    b.attack(4, "agent_1", "goblin#3", loot={"coins": 3})
    b.idle(4, "agent_2")
    folder = b.write(tmp_path / "ep", checkpoints=[
        Checkpoint(name="club crafted", check="item_count", value=1, target=1, achieved=True),
        Checkpoint(name="goblin killed", check="kills", value=1, target=1, achieved=True)])
    report = score_episode(folder, GroundedJudge())
    assert set(report.success_actions) == {"r3.agent_2", "r4.agent_1"}
    assert report.contributing_ids() == {"r1.agent_1", "r3.agent_1", "r3.agent_2", "r4.agent_1"}


def test_grounded_chat_rule_needs_a_contributing_target(tmp_path):
    b = EpisodeBuilder(agents={"agent_1": "a", "agent_2": "b"})
    b.chat(1, "agent_1", "b, please chop oak_tree#1")
    b.chat(1, "agent_2", "I will mine stone instead", recipients=["agent_1"])
    b.harvest(2, "agent_1", "rock#1", "stone", 1)
    b.harvest(2, "agent_2", "oak_tree#1", "oak_logs", 2)
    folder = b.write(tmp_path / "ep", checkpoints=[Checkpoint(name="oak_logs", check="item_count", value=2,
                                                              target=2, achieved=True)])
    report = score_episode(folder, GroundedJudge())
    # the request named the tree agent_2 chopped; agent_2's reply named stone, which is not the objective
    assert report.contributing_ids() == {"r1.agent_1", "r2.agent_2"}


def test_grounded_with_a_scripted_chat_judge_batches_by_round(staff):
    chat = ScriptedJudge.from_labels(set(), set(), chat_links={"r1.agent_2": ["r3.agent_1"]})
    report = score_episode(staff, GroundedJudge(chat))
    assert chat.calls == 1 and chat.questions[0]["kind"] == "chat"
    msg = chat.questions[0]["messages"][0]
    assert msg["id"] == "r1.agent_2" and {t["id"] for t in msg["targets"]} >= {"r2.agent_1", "r3.agent_1"}
    assert ("r1.agent_2", "r3.agent_1", "chat_judge") in {(e.source, e.target, e.kind) for e in report.edges}
    assert report.contributing_ids() == STAFF_CONTRIBUTING and report.judge_calls == 1


# -- files ------------------------------------------------------------------------------------------------------


def test_cce_json_round_trips_and_lists_judges(staff):
    report = score_episode(staff, GroundedJudge())
    write_report(staff, report)
    again = read_report(staff)
    assert again == report.model_copy(update={"label": "grounded-rules"})
    assert (staff / "cce" / "grounded-rules.json").is_file()
    data = json.loads((staff / "cce.json").read_text())
    assert {"nodes", "edges", "success_actions", "judge", "model", "calls", "tokens_in", "pac"} <= set(data)
    node = data["nodes"][0]
    assert {"id", "round", "agent", "action", "contributing", "reason"} <= set(node)


def test_episode_discovery_and_clear_errors(tmp_path):
    staff_episode(tmp_path / "run" / "t1" / "seed0")
    staff_episode(tmp_path / "run" / "t2" / "seed0")
    assert [p.parent.name for p in find_episode_dirs(tmp_path / "run")] == ["t1", "t2"]
    assert find_episode_dirs(tmp_path / "run" / "t1" / "seed0") == [tmp_path / "run" / "t1" / "seed0"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(EpisodeError, match="no episode folders"):
        find_episode_dirs(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trajectory.jsonl").write_text('{"type": "turn"}\n{"type": "end", "reason": "aborted", "rounds": 0}\n')
    with pytest.raises(EpisodeError, match=r"trajectory.jsonl:1"):
        load_episode(bad)


def test_a_torn_last_line_is_tolerated(staff):
    text = (staff / "trajectory.jsonl").read_text()
    (staff / "trajectory.jsonl").write_text(text + '{"type": "turn", "st')
    assert len(load_episode(staff).turns) == 11


def test_target_window_bounds_what_a_round_question_shows(staff):
    judge = labels_judge()
    report = score_episode(staff, judge, options=ScoreOptions(extra={"target_window": 1}))
    r1 = judge.questions[-1]
    assert r1["rounds"] == [1] and {t["round"] for t in r1["targets"]} == {2}
    assert report.contributing_ids() == STAFF_CONTRIBUTING


def test_grounded_chat_rule_reads_coordinates_and_landmark_names(tmp_path):
    from agentworld.core.world.datapack import load_world

    lm = load_world().data.landmarks[0]
    b = EpisodeBuilder(agents={"agent_1": "lead", "agent_2": "scout", "agent_3": "runner"})
    b.chat(1, "agent_1", f"scout: go to {lm.name}; runner: meet me at (120, 80)")
    b.move(2, "agent_2", (0, 0), (lm.x + 1, lm.y))
    b.move(2, "agent_3", (0, 0), (121, 82))
    b.move(3, "agent_2", (lm.x + 1, lm.y), (lm.x + 40, lm.y))  # wandering on: not the named place
    folder = b.write(tmp_path / "ep")
    graph_report = score_episode(folder, GroundedJudge())
    # no objective known: round 3's move is the success; the scout's walk r2 -> r3 contributes, so the
    # message that named the landmark r2 walked to links to it. The runner's walk enables nothing, so the
    # matching coordinates give no edge (chat edges only go to contributing actions).
    edges = {(e.source, e.target): e.reason for e in graph_report.edges if e.kind == "chat_rule"}
    assert "place the message named" in edges.get(("r1.agent_1", "r2.agent_2"), "")
    assert ("r1.agent_1", "r2.agent_3") not in edges
    assert graph_report.contributing_ids() == {"r1.agent_1", "r2.agent_2", "r3.agent_2"}


def test_a_same_round_chain_is_found_in_one_call(tmp_path):
    b = EpisodeBuilder(agents={"agent_1": "a", "agent_2": "b", "agent_3": "c"})
    b.harvest(1, "agent_1", "oak_tree#1", "oak_logs", 2)
    b.idle(1, "agent_2")
    b.idle(1, "agent_3")
    b.transfer(2, "agent_1", "agent_2", "oak_logs", 2)  # a: enables b in the same round
    b.craft(2, "agent_2", "stick", {"oak_logs": 2})  # b: enables the final transfer
    b.idle(2, "agent_3")
    b.transfer(3, "agent_2", "agent_3", "stick", 1)
    folder = b.write(tmp_path / "ep")

    def fn(q):
        if q["kind"] == "success":
            return {"success_action_ids": ["r3.agent_2"]}
        if q["rounds"] == [2]:
            return {"contributing_ids": ["r2.agent_1", "r2.agent_2"], "not_contributing_ids": ["r2.agent_3"],
                    "enables": {"r2.agent_1": ["r2.agent_2"], "r2.agent_2": ["r3.agent_2"]}}
        return {"contributing_ids": ["r1.agent_1"], "not_contributing_ids": ["r1.agent_2", "r1.agent_3"]}

    judge = ScriptedJudge(fn=fn)
    report = score_episode(folder, judge)
    assert judge.calls == 3
    assert report.contributing_ids() == {"r1.agent_1", "r2.agent_1", "r2.agent_2", "r3.agent_2"}
    assert ("r2.agent_1", "r2.agent_2", "judge") in {(e.source, e.target, e.kind) for e in report.edges}
    # the effects rule reaches the same chain on its own
    rule = score_episode(folder, ScriptedJudge.from_rule("effects"))
    assert {"r2.agent_1", "r2.agent_2"} <= rule.contributing_ids()
