"""The counterfactual CCE judge: an action contributes when the episode replayed without it loses a checkpoint.

Checked against the world itself (every verdict on a real oracle episode is re-tested by a replay of its own),
against a hand-made world whose causal structure is known (jointly necessary actions, an agent that helped
nobody, a message no replay can miss), its replay bound and cap, and `cce compare` beside the grounded and
the paper method."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cce.counterfactual import SLEEP, CounterfactualJudge, Replayer, Search, replay_bound
from agentworld.core.cce.graph import load_episode
from agentworld.core.cce.score import score_episode
from agentworld.core.cce.synth import EpisodeBuilder
from agentworld.core.cli import _load_commands, cli
from agentworld.core.play.records import Checkpoint
from agentworld.core.world.tools import CHAT_TOOLS

_load_commands()
TASK = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), terminal_width=200, catch_exceptions=False)


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cf") / "run"
    r = invoke("run", "--task", TASK, "--task", "task_09_bronze_blade", "--framework", "oracle", "--out", str(out),
               "--no-progress")
    assert r.exit_code == 0, r.output
    return out


def episode_dir(run: Path, task: str) -> Path:
    return next(p for p in (run / "episodes").iterdir() if p.name.startswith(task))


def test_every_verdict_on_an_oracle_episode_is_what_the_world_says(oracle_run: Path):
    folder = episode_dir(oracle_run, "task_01_staff")
    report = score_episode(folder, CounterfactualJudge())
    assert report.complete and report.cce is not None and report.method == "counterfactual"
    cf = report.counterfactual
    assert cf["replays"] == len(cf["tests"]) <= cf["bound"] and cf["seconds"] > 0
    assert not cf["capped"] and not cf["untested"]
    ep = load_episode(folder)
    replayer = Replayer(ep)
    baseline = set(asyncio.run(replayer.achieved()))
    assert {b.split(":", 1)[1] for b in baseline} == {c.name for c in ep.result.checkpoints if c.achieved}
    contributing = report.contributing_ids()
    assert contributing and report.success_actions
    for node in report.nodes:
        if node.is_chat or node.tool == SLEEP[0]:
            continue
        lost = baseline - set(asyncio.run(replayer.achieved([(node.round, node.agent)])))
        if node.id in contributing and "jointly" not in node.reason:
            assert lost, f"{node.id} ({node.action}) is marked contributing, but replaying without it loses nothing"
            if not node.success:  # its reason names what is lost without it (a success action's, what it achieved)
                assert all(name in node.reason for name in (c.split(":", 1)[1] for c in lost)), node.reason
        elif node.id not in contributing:
            assert not lost, f"{node.id} ({node.action}) is not marked, but without it {sorted(lost)} is lost"
    # a fixed replay cannot miss a message: none is credited, and each was tested
    chats = [n for n in report.nodes if n.is_chat]
    assert chats and not any(n.contributing for n in chats)
    assert cf["by_unit"].get("message") == sum(1 for n in chats if n.ok)
    # every contributing action reaches a success action (C = S + ancestors) by counterfactual edges
    assert {e.kind for e in report.edges} <= {"counterfactual"}


def test_the_judge_is_deterministic_and_its_cap_is_kept(oracle_run: Path):
    folder = episode_dir(oracle_run, "task_09_bronze_blade")
    a = score_episode(folder, CounterfactualJudge())
    b = score_episode(folder, CounterfactualJudge())
    assert [n.contributing for n in a.nodes] == [n.contributing for n in b.nodes]
    assert [t["turns"] for t in a.counterfactual["tests"]] == [t["turns"] for t in b.counterfactual["tests"]]
    capped = score_episode(folder, CounterfactualJudge(max_replays=5))
    cf = capped.counterfactual
    assert cf["replays"] == 5 and cf["capped"] and cf["untested"]
    assert any("replay cap reached" in n for n in capped.notes)
    # what the cap left untested counts as contributing, never silently as not
    untested = set(cf["untested"])
    assert untested <= capped.contributing_ids()
    assert a.contributing_ids() <= capped.contributing_ids()


class ToyWorld:
    """A world whose causal structure is known: the checkpoint is lost when any ``needed`` turn sleeps, or
    when every turn of ``jointly`` sleeps (either would have done). Counts the replays it is asked for."""

    def __init__(self, needed, jointly):
        self.needed, self.jointly, self.calls = set(needed), set(jointly), 0

    async def achieved(self, sleeping=()):
        self.calls += 1
        s = set(sleeping)
        lost = bool(s & self.needed) or (self.jointly and self.jointly <= s)
        return [] if lost else ["0:staff with crafter"]


def toy_episode(folder: Path) -> Path:
    b = EpisodeBuilder(task_id="toy", agents={"agent_1": "lumber", "agent_2": "crafter", "agent_3": "idler"})
    b.move(1, "agent_1", (10, 10), (14, 10))       # either leg of the walk would have done
    b.chat(1, "agent_2", "lumber, bring me 3 oak_logs")
    b.idle(1, "agent_3")
    b.move(2, "agent_1", (14, 10), (20, 10))
    b.move(2, "agent_2", (30, 10), (22, 10))
    b.move(2, "agent_3", (5, 5), (6, 9))
    b.harvest(3, "agent_1", "oak_tree#1", "oak_logs", 3)
    b.idle(3, "agent_2")
    b.harvest(3, "agent_3", "rock#4", "stone", 2)
    b.transfer(4, "agent_1", "agent_2", "oak_logs", 3)
    b.craft(4, "agent_2", "staff", {"oak_logs": 3})
    b.idle(4, "agent_3")
    b.chat(5, "agent_1", "done")
    b.idle(5, "agent_2")
    b.idle(5, "agent_3")
    return b.write(folder, checkpoints=[Checkpoint(name="staff with crafter", check="item_count", value=1, target=1,
                                                   achieved=True)])


def test_a_known_causal_structure_is_found(tmp_path: Path):
    ep = load_episode(toy_episode(tmp_path / "toy"), with_task=False)
    needed = {(3, "agent_1"), (4, "agent_1"), (4, "agent_2")}
    world = ToyWorld(needed, {(1, "agent_1"), (2, "agent_1")})
    search = Search(ep, replayer=world)
    asyncio.run(search.run())
    graph = search.graph()
    contributing = graph.contributing()
    assert contributing == {"r3.agent_1", "r4.agent_1", "r4.agent_2", "r1.agent_1", "r2.agent_1"}
    assert set(graph.success) == {"r4.agent_2"}  # the last action without which the checkpoint is lost
    assert "jointly necessary" in graph.mark_reasons["r1.agent_1"]
    assert graph.mark_reasons["r3.agent_1"].startswith("without it, lost: staff with crafter")
    s = search.summary(0.0)
    units = s["by_unit"]
    # agent_3 helped nobody: one replay without it, none of its actions tested; agent_2's move is tested and
    # found unneeded; the two messages are each tested once
    assert units["agent"] == 3 and units["message"] == 2
    assert not any("agent_3" in t["label"] for t in s["tests"] if t["unit"] in ("group", "action", "suffix"))
    assert world.calls == s["replays"] <= s["bound"]
    # agent_1's chat in round 5 comes after its last needed round: the suffix search finds round 4
    assert any(t["unit"] == "suffix" and t["label"] == "agent_1 sleeps from round 5 on" and not t["lost"]
               for t in s["tests"])


def test_replay_bound_by_hand():
    # one agent with 5 actions (groups of 4): 1 + ceil(log2 5)=3 + 2 groups x 2 + 5 = 13; 2 messages; original 1
    assert replay_bound([5], 2, 4) == 1 + 2 + 13
    assert replay_bound([0, 1], 0, 4) == 1 + (1 + 0 + 2 + 1)


def test_judge_options_are_checked():
    from agentworld.core import plugins
    from agentworld.core.cce.judges import JudgeConfigError

    make = plugins.get("judge", "counterfactual")
    assert make(group_size="2", max_replays="10", messages="false").messages is False
    for bad in ({"group_size": "0"}, {"max_replays": "x"}, {"colour": "red"}, {"model": "gpt-4.1"}):
        with pytest.raises(JudgeConfigError):
            make(**bad)


def test_cce_and_compare_print_the_replays_and_the_agreement(oracle_run: Path):
    r = invoke("cce", str(oracle_run), "--judge", "counterfactual")
    assert r.exit_code == 0, r.output
    assert "replays" in r.output and "counterfactual:" in r.output and "group size 4" in r.output
    r = invoke("cce", "compare", str(oracle_run), "--judges", "counterfactual", "grounded", "scripted")
    assert r.exit_code == 0, r.output
    assert "Cohen's kappa" in r.output and "Agents ranked by PAC" in r.output
    assert "judge counterfactual:" in r.output and "replays in" in r.output
    stored = json.loads((episode_dir(oracle_run, "task_01_staff") / "cce" / "counterfactual.json").read_text())
    assert stored["counterfactual"]["replays"] >= 1 and stored["method"] == "counterfactual"
    assert all(n["tool"] not in CHAT_TOOLS or not n["contributing"] for n in stored["nodes"])
