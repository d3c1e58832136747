"""The augmented suite: deterministic transformations, proofs before a variant is kept, the shipped 100+.

The shipped suite is checked from its files (count, provenance, harder than its source by the figures its
header records); a sample is proven here, `agentworld tasks prove --suite augmented` proves them all.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from agentworld.core.runs.augment import SOURCE_LINE, ModelProposer, dump_task, generate
from agentworld.core.runs.prove import prove_task
from agentworld.core.tasks.augment import RECIPES, TRANSFORMATIONS, recipe_candidates
from agentworld.core.tasks.plans import rounds_needed
from agentworld.core.tasks.task import find_task, load_suite, suite_files

DIMENSIONS = {"objective", "spawns", "starting items", "team size"}


def setup(task):
    return (task.objectives.primary, [c.model_dump() for c in task.verifier.checks], len(task.agents),
            [(a.x, a.y, [s.model_dump() for s in a.inventory + a.equipment]) for a in task.agents])


def test_transformations_are_deterministic_and_change_a_documented_dimension():
    task = find_task("task_04_goblins")
    for t in TRANSFORMATIONS.values():
        assert set(t.changes) <= DIMENSIONS
    for recipe in RECIPES:
        first = [raw for _, raw in recipe_candidates(task, recipe)]
        assert first == [raw for _, raw in recipe_candidates(task, recipe)]  # same input, same variants
        for parsed, _ in recipe_candidates(task, recipe):
            assert setup(parsed) != setup(task)


def test_a_variant_is_kept_only_when_it_passes_the_main_tasks_proof():
    seen = []
    source = find_task("task_01_staff")
    (kept,) = generate([source], target=1, progress=lambda task, recipe, ok, why: seen.append((recipe, ok, why)))
    assert kept.proof.ok and seen[-1] == ("+".join(kept.recipe), True, "")
    assert kept.task.id == "aug_01_staff_" + "_".join(kept.recipe)
    assert all(why for _, ok, why in seen[:-1])  # every candidate dropped before it says why
    if kept.recipe[0] == "split_role":
        assert len(kept.task.agents) == len(source.agents) + 1 and kept.task.agents[0].role == "porter"
    text = dump_task(kept)
    assert SOURCE_LINE.search(text).groups() == (
        source.id, str(rounds_needed(source.reference_solution)), str(source.rounds), str(len(source.agents)))
    assert yaml.safe_load(text)["id"] == kept.task.id


def test_the_shipped_suite_has_at_least_100_variants_each_harder_than_its_source():
    files = suite_files("augmented")
    tasks = load_suite("augmented")
    assert len(tasks) >= 100 and len({t.id for t in tasks}) == len(tasks)
    sources = set()
    for path, task in zip(files, tasks):
        text = path.read_text(encoding="utf-8")
        source, plan_rounds, budget, agents = SOURCE_LINE.search(text).groups()
        sources.add(source)
        assert "Changes: " in text and task.rounds <= int(budget)
        # harder on purpose: less slack in the same (or a smaller) budget, or more agents to coordinate
        harder = rounds_needed(task.reference_solution) > int(plan_rounds) or len(task.agents) > int(agents)
        assert harder, task.id
    assert len(sources) >= 30  # spread over the main suite, not piled on a few tasks


@pytest.mark.parametrize("index", [0, 57])
def test_a_sample_of_the_shipped_suite_is_proven(index: int):
    task = load_suite("augmented")[index]
    proof = prove_task(task)
    assert proof.ok, [f for f in proof.findings if not f.ok]


class ChatStub:
    """A real HTTP server on 127.0.0.1 answering chat completions with a fixed text."""

    def __init__(self, answer: str):
        self.answer = answer
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
                    {"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": stub.answer}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_models_proposal_is_kept_only_if_it_passes_the_same_proofs(monkeypatch, tmp_path: Path):
    shipped = suite_files("augmented")[0]  # a proven variant, proposed as if a model had written it
    task = find_task(SOURCE_LINE.search(shipped.read_text(encoding="utf-8")).group(1))
    good = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    monkeypatch.setenv("AW_TEST_PROPOSER_KEY", "sk-test-secret")
    stub = ChatStub(f"Here is a harder variant:\n```yaml\n{yaml.safe_dump(good, sort_keys=False)}```\n")
    with stub as url:
        proposer = ModelProposer("openai-compatible:proposer", base_url=url, api_key_env="AW_TEST_PROPOSER_KEY")
        aug, why = proposer.propose(task)
    assert why == "" and aug is not None and aug.task.id.endswith("_model1") and aug.proof.ok
    (request,) = stub.requests
    assert request["auth"] == "Bearer sk-test-secret" and request["body"]["model"] == "proposer"
    assert task.objectives.primary.split()[0] in request["body"]["messages"][0]["content"]  # it saw the task
    same = task.raw
    with ChatStub(f"```yaml\n{yaml.safe_dump(same, sort_keys=False)}```") as url:
        aug, why = ModelProposer("openai-compatible:p", base_url=url).propose(task)
    assert aug is None and "changes none of" in why
    broken = json.loads(json.dumps(good))
    broken["reference_solution"] = {"agent_1": [{"tool": "sleep", "args": {"seconds": 1}}]}
    with ChatStub(f"```yaml\n{yaml.safe_dump(broken, sort_keys=False)}```") as url:
        stub_url = url
        aug, why = ModelProposer("openai-compatible:p", base_url=url).propose(task)
    assert aug is None and why.startswith("solvable:")  # the same proof as a main task refused it
    with ChatStub("I cannot help with that") as url:
        aug, why = ModelProposer("openai-compatible:p", base_url=url).propose(task)
    assert aug is None and why
    aug, why = ModelProposer("openai-compatible:p", base_url=stub_url, timeout=2).propose(task)  # server gone
    assert aug is None and "the model service failed" in why


def test_augment_command_writes_proven_variants_and_a_readme(tmp_path: Path):
    from click.testing import CliRunner

    from agentworld.core.cli import _load_commands, cli
    from agentworld.core.runs.run_spec import build_spec
    from agentworld.core.runs.runner import select_tasks

    _load_commands()
    out = tmp_path / "aug"
    res = CliRunner().invoke(cli, ["tasks", "augment", "--task", "task_01_staff", "--target", "1", "--out", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    (written,) = [p for p in out.iterdir() if p.suffix == ".yaml"]
    assert written.name.startswith("aug_01_staff_") and (out / "README.md").is_file()
    assert f"| {written.stem} | task_01_staff |" in (out / "README.md").read_text()
    assert len(select_tasks(build_spec({"suite": "augmented"}))) >= 100  # `run --suite augmented` selects them
