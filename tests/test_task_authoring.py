"""The task-authoring tool (``tools/task_authoring/build.py``): asked for one family, it renders only that
family; a name it does not know is an error naming it; a committed task matches its family's rendering."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "task_authoring"


@pytest.fixture(scope="module")
def build():
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location("task_authoring_build", TOOLS / "build.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(TOOLS))


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
