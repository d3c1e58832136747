"""The compiled-template cache of the prompts (core/play/prompts.py): kept beside the built worlds, and never
the reason a prompt differs or a render fails, whatever state the cache directory is in."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentworld.core.play import prompts
from agentworld.core.tasks.task import find_task
from agentworld.core.world.datapack import load_world

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path


def render_fresh() -> str:
    """The system and user prompts of a shipped task, from a fresh Jinja2 environment (as a new process)."""
    prompts._env.cache_clear()
    prompts.template.cache_clear()
    task = find_task(STAFF)
    system = prompts.render_system(task, task.agents[0], load_world().data.rules)
    user = prompts.render_user("You see a tree.", username=task.agents[0].username, round=2, max_rounds=25)
    return system + "\n---\n" + user


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTWORLD_WORLD_CACHE", raising=False)
    yield tmp_path / "cache"
    prompts._env.cache_clear()
    prompts.template.cache_clear()


def test_compiled_templates_are_kept_and_render_the_same(cache_root, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_WORLD_CACHE", "0")
    uncached = render_fresh()
    monkeypatch.delenv("AGENTWORLD_WORLD_CACHE")
    first = render_fresh()
    entries = sorted((cache_root / "templates").glob("__jinja2_*.cache"))
    assert len(entries) == 2  # system.j2 and user.j2
    assert render_fresh() == first == uncached  # the second one loaded the kept code


def test_a_corrupt_entry_is_compiled_anew(cache_root):
    expected = render_fresh()
    from jinja2.bccache import bc_magic

    for cut in (len(bc_magic), len(bc_magic) + 30):  # Jinja2's header intact, what follows broken
        for entry in (cache_root / "templates").glob("__jinja2_*.cache"):
            entry.write_bytes(entry.read_bytes()[:cut] + b"\x00garbage\xff")
        assert render_fresh() == expected
    for entry in (cache_root / "templates").glob("__jinja2_*.cache"):
        entry.write_bytes(b"")
    assert render_fresh() == expected


def test_an_unwritable_cache_directory_never_fails_a_render(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("AGENTWORLD_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setenv("AGENTWORLD_WORLD_CACHE", "0")
    expected = render_fresh()
    monkeypatch.delenv("AGENTWORLD_WORLD_CACHE")
    try:
        assert render_fresh() == expected
    finally:
        prompts._env.cache_clear()
        prompts.template.cache_clear()
