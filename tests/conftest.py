"""Shared test configuration: async tests run on anyio's pytest plugin (asyncio backend); ``build`` is the
task-authoring tool (tools/task_authoring/build.py) loaded as a module."""

import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "task_authoring"


@pytest.fixture
def anyio_backend():
    return "asyncio"


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


@pytest.fixture(scope="session")
def oracle_episode(tmp_path_factory):
    """``await oracle_episode(task)``: (result, folder) of the oracle's episode of ``task`` at seed 0 (the proofs'
    seed), played once per session. Several modules check the oracle's episodes of the whole main suite (its
    outcome, its CCE); each episode is the same, so it is played for the first that asks. For tests that only
    read the result and the folder."""
    from agentworld.core.play.episode import run_episode
    from agentworld.core.play.policies import PolicyTeam, make_policy

    root = tmp_path_factory.mktemp("oracle_episodes")
    played = {}

    async def play(task):
        key = (task.id, str(task.path))
        if key not in played:
            folder = root / f"{task.id}-{len(played)}"
            result = await run_episode(task, PolicyTeam(make_policy("oracle", 0, task)), seed=0, out_dir=folder,
                                       framework="oracle")
            played[key] = (result, folder)
        return played[key]

    return play
