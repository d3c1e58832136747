"""Communication analysis (core/cce/comms.py) and `agentworld analyze comms / import-labels` on real episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cce.comms import (DEFAULT_TAXONOMY, aggregate, analyze_episode, class_counts, classify,
                                       load_taxonomy, read_labels)
from agentworld.core.cce.graph import load_episode
from agentworld.core.cce.judges import Asker, JudgeCache, ScriptedJudge, message_class_rule
from agentworld.core.cli import _load_commands, cli
from agentworld.core.tasks.task import load_suite

_load_commands()


def communication_tasks() -> list[str]:
    """Tasks marked as needing communication, else those whose reference solution chats."""
    tasks = load_suite("main")
    marked = [t.id for t in tasks if getattr(t, "needs_communication", False)]
    if marked:
        return sorted(marked, key=lambda i: next(len(t.agents) * t.rounds for t in tasks if t.id == i))[:3]
    return [t.id for t in tasks if any(s.tool in ("chat", "send_chat_message")
                                       for steps in (t.reference_solution or {}).values() for s in steps)][:3]


@pytest.fixture(scope="module")
def comm_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("comms") / "run"
    args = ["run", "--framework", "oracle", "--out", str(out), "--no-progress"]
    for t in communication_tasks():
        args += ["--task", t]
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def test_communication_numbers_of_an_oracle_run(comm_run: Path):
    folders = sorted(p.parent for p in comm_run.rglob("trajectory.jsonl"))
    eps = [analyze_episode(load_episode(f)) for f in folders]
    assert eps and all(e.success for e in eps)
    for e, f in zip(eps, folders):
        ep = load_episode(f)
        chat_turns = [t for t in ep.turns if t.tool in ("chat", "send_chat_message")]
        assert e.chats == len(chat_turns) and e.tool_calls == len(ep.turns)
        if chat_turns:
            assert e.first_chat_round == min(t.round for t in chat_turns)
            # recipients come from the deliveries, so every delivered message has a sender -> recipient edge
            pairs = e.pairs()
            assert sum(pairs.values()) == sum(len(t.effects.chat.recipients) for t in chat_turns if t.effects.chat)
    agg = aggregate(eps)
    overall = agg["overall"]
    assert overall["episodes"] == len(eps) and overall["chats"] == sum(e.chats for e in eps)
    assert overall["chats"] > 0, "the communication tasks' oracle plans chat"
    assert overall["chat_share"] == pytest.approx(overall["chats"] / sum(e.tool_calls for e in eps))
    assert overall["chat_share_failed"] is None  # no failed episode
    # the oracle's messages announce what it needs or brings: a recipient acts on most of them
    assert overall["unfollowed"] < overall["chats"]


def test_analyze_comms_prints_the_table_and_classifies_with_a_scripted_judge(comm_run: Path):
    res = CliRunner().invoke(cli, ["analyze", "comms", str(comm_run)], terminal_width=200, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "Communication per task" in res.output and "first chat round" in res.output
    assert "Who talks to whom" in res.output
    res = CliRunner().invoke(cli, ["analyze", "comms", str(comm_run), "--judge", "scripted", "--json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    classes = data["classes"]
    assert classes["labelled"] == data["overall"]["chats"] and classes["unlabelled"] == 0
    stored = list(comm_run.rglob("comms/scripted-effects.json"))
    assert stored and all(json.loads(p.read_text())["complete"] for p in stored)
    # asked again: answered from the cache
    res = CliRunner().invoke(cli, ["analyze", "comms", str(comm_run), "--judge", "scripted"], terminal_width=200)
    assert "Message classes" in res.output


def test_facts_drive_the_offline_classes(tmp_path: Path):
    q = {"kind": "comms", "taxonomy": DEFAULT_TAXONOMY, "messages": [
        {"id": "r1.a", "recipients": ["b"], "facts": {"delivered": True, "claims_not_held": ["logs"]}},
        {"id": "r2.a", "recipients": [], "facts": {"delivered": True}},
        {"id": "r3.a", "recipients": ["b"], "facts": {"delivered": True, "names_unreached": ["carol"]}},
        {"id": "r4.a", "recipients": ["b"], "facts": {"delivered": True, "repeats": "r1.a"}},
        {"id": "r5.a", "recipients": ["b"], "facts": {"delivered": True}}]}
    got = [x["class"] for x in message_class_rule(q)["labels"]]
    assert got == ["false_self_claim", "wrong_or_missing_recipient", "wrong_or_missing_recipient",
                   "stale_or_redundant", "ok"]
    custom = tmp_path / "tax.yaml"
    custom.write_text("ok: fine\nvague: says too little\n")
    assert load_taxonomy(custom) == {"ok": "fine", "vague": "says too little"}
    custom.write_text("vague: says too little\n")
    with pytest.raises(ValueError, match="needs an 'ok' class"):
        load_taxonomy(custom)


def test_a_judge_that_fails_leaves_messages_unlabelled_not_defaulted(comm_run: Path, tmp_path: Path):
    folder = next(p.parent for p in comm_run.rglob("trajectory.jsonl")
                  if analyze_episode(load_episode(p.parent)).chats)
    ep = load_episode(folder)
    ec = analyze_episode(ep)
    broken = ScriptedJudge(fn=lambda q: {"nothing": True}, name="broken")
    res = classify(ep, ec, Asker(broken, JudgeCache(tmp_path / "cache")), DEFAULT_TAXONOMY, batch=1)
    assert not res.complete and res.failed_calls == len(ec.messages) and not res.labels
    assert res.unlabelled == [m.id for m in ec.messages]
    assert class_counts([res])["unlabelled"] == len(ec.messages)


def test_import_labels_reports_agreement_and_kappa(comm_run: Path, tmp_path: Path):
    res = CliRunner().invoke(cli, ["cce", str(comm_run), "--judge", "grounded"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["analyze", "comms", str(comm_run), "--judge", "scripted"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = []
    for folder in sorted(p.parent for p in comm_run.rglob("trajectory.jsonl")):
        rep = json.loads((folder / "cce" / "grounded-rules.json").read_text())
        eid = rep["episode_id"]
        # a "human" who agrees with the judge except on the first two actions
        for i, n in enumerate(rep["nodes"]):
            flip = i < 2
            rows.append({"episode": eid, "item": n["id"], "kind": "cce",
                         "label": "contributing" if n["contributing"] != flip else "not_contributing"})
        labels = read_labels(folder, "scripted-effects")
        for x in labels.labels if labels else []:
            rows.append({"episode": eid, "item": x.message_id, "kind": "message", "label": x.label})
    f = tmp_path / "labels.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cce_rows = [r for r in rows if r["kind"] == "cce"]
    res = CliRunner().invoke(cli, ["analyze", "import-labels", str(f), str(comm_run), "--judge", "grounded-rules",
                                   "--kind", "cce", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)["results"]["cce"]
    n_eps = len({r["episode"] for r in cce_rows})
    assert out["n"] == len(cce_rows)
    assert out["agreement"] == pytest.approx((len(cce_rows) - 2 * n_eps) / len(cce_rows))
    assert -1 <= out["kappa"] < 1
    # message classes against the judge that produced them: perfect agreement
    msg = tmp_path / "messages.csv"
    msg.write_text("episode,item,label\n" + "".join(f"{r['episode']},{r['item']},{r['label']}\n"
                                                    for r in rows if r["kind"] == "message"))
    res = CliRunner().invoke(cli, ["analyze", "import-labels", str(msg), str(comm_run), "--judge", "scripted-effects",
                                   "--kind", "message"], terminal_width=200, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "message classes" in res.output and "1.000" in res.output
    bad = tmp_path / "bad.csv"
    bad.write_text("episode,item\nx,y\n")
    res = CliRunner().invoke(cli, ["analyze", "import-labels", str(bad), str(comm_run), "--judge", "grounded"])
    assert res.exit_code != 0 and "needs the fields episode, item and label" in res.output
