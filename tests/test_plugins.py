"""The plugin host: built-in frameworks, a plugin registered at runtime, and a third-party package installed
with an ``agentworld`` entry point (docs/example_plugin) — none of them needing a change to our code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core import plugins
from agentworld.core.cli import cli
from agentworld.core.hookspecs import hookimpl
from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "example_plugin"
BUILTIN_FRAMEWORKS = {"openai", "autogen", "camel", "langgraph"}


def test_plugins_command_lists_builtin_frameworks():
    out = CliRunner().invoke(cli, ["plugins", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    registered = {name: r for r in rows for name in r.get("frameworks", [])}
    assert BUILTIN_FRAMEWORKS <= set(registered)
    for name in BUILTIN_FRAMEWORKS:
        assert registered[name]["source"] == "builtin"
        assert registered[name]["name"] == f"agentworld.plugins.agents.{name}_agent"
    table = CliRunner().invoke(cli, ["plugins"])
    assert table.exit_code == 0 and "langgraph" in table.output


def test_framework_plugins_import_no_framework_library():
    """Listing plugins must not import AutoGen, CAMEL or LangGraph: that happens in the factory, on use."""
    code = ("import sys; from agentworld.core import plugins; plugins.frameworks(); "
            "heavy = ('autogen_agentchat', 'autogen_core', 'camel.agents', 'langgraph.graph', 'langchain_core.language_models'); "
            "print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


class EchoTeam(Team):
    """A team from a plugin that is not ours: always waits one second."""

    async def act(self, turn: Turn) -> TurnOutcome:
        result = await turn.port.call("sleep", {"seconds": 1})
        return TurnOutcome(thinking=f"echo: {result.text}")


def test_plugin_registered_at_runtime():
    plugin = types.ModuleType("echo_test_plugin")  # a module, as a plugin usually is (pluggy needs hashable)

    @hookimpl
    def register_frameworks(register):
        register("echo-test", lambda spec: EchoTeam(), description="test plugin")

    plugin.register_frameworks = register_frameworks
    plugins.register_plugin(plugin, name="echo-test-plugin")
    try:
        factory = plugins.get("framework", "echo-test")
        assert isinstance(factory(TeamSpec(view=None, model="scripted:oracle")), EchoTeam)
        reg = plugins.frameworks()["echo-test"]
        assert (reg.plugin, reg.source, reg.description) == ("echo-test-plugin", "manual", "test plugin")
        rows = json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)
        assert any(r["name"] == "echo-test-plugin" and r.get("frameworks") == ["echo-test"] for r in rows)
    finally:
        plugins.unregister_plugin("echo-test-plugin")
    with pytest.raises(KeyError, match="unknown framework 'echo-test'"):
        plugins.get("framework", "echo-test")


def test_duplicate_framework_name_is_an_error():
    plugin = types.ModuleType("dup_plugin")
    plugin.register_frameworks = hookimpl(lambda register: register("openai", object))
    plugins.register_plugin(plugin, name="dup-plugin")
    try:
        with pytest.raises(ValueError, match="registered twice"):
            plugins.frameworks()
    finally:
        plugins.unregister_plugin("dup-plugin")


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory) -> Path:
    """Install docs/example_plugin (package + entry point) into a private directory put on PYTHONPATH.

    A real, offline ``pip install --no-build-isolation`` (the test extra brings setuptools and wheel)."""
    tmp = tmp_path_factory.mktemp("example_plugin")
    src = tmp / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(src)],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(target.glob("agentworld_nearest_team-*.dist-info"))
    return target


def _with_path(target: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_entry_point_plugin_is_listed(installed_example):
    agentworld = Path(sys.executable).with_name("agentworld")
    out = subprocess.run([str(agentworld), "plugins", "--json"], capture_output=True, text=True, timeout=120,
                         env=_with_path(installed_example))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    row = next(r for r in rows if "nearest" in r.get("frameworks", []))
    assert row["source"] == "entrypoint:agentworld-nearest-team"


def test_entry_point_plugin_plays_a_turn(installed_example):
    """The installed plugin's team, found through the plugin host, acts through the port like ours do."""
    code = r"""
import asyncio, json
from agentworld.core import plugins
from agentworld.core.world.effects import ToolResult
from agentworld.core.world.observation import Entity, Observation
from agentworld.core.play.protocol import TeamSpec, Turn

calls = []
class Port:
    agent_id = "agent_1"
    async def call(self, tool, arguments=None):
        calls.append([tool, arguments])
        return ToolResult(ok=True, text="done")

obs = Observation(agent_id="agent_1", username="ann", x=5, y=5, biome="forest", hp=10, max_hp=10, nearby=[
    Entity(kind="resource", id="oak_tree#2", name="Oak", x=9, y=5, distance=4),
    Entity(kind="resource", id="oak_tree#1", name="Oak", x=6, y=5, distance=1)])
turn = Turn(agent_id="agent_1", username="ann", round=1, observation=obs, observation_text="", system_prompt="",
            user_prompt="", tools=[], port=Port())
team = plugins.get("framework", "nearest")(TeamSpec(view=None, model="none:none"))
outcome = asyncio.run(team.act(turn))
print(json.dumps({"calls": calls, "thinking": outcome.thinking, "source": plugins.frameworks()["nearest"].source}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=_with_path(installed_example))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["calls"] == [["harvest_resource", {"targetInstance": "oak_tree#1"}]]
    assert data["source"] == "entrypoint:agentworld-nearest-team" and data["thinking"].startswith("nearest:")


def test_a_framework_whose_packages_are_missing_is_refused_before_the_run(monkeypatch, tmp_path):
    """Framework packages are extras: without them `run` stops at once naming the extra, instead of
    recording a whole episode of infrastructure errors."""
    import importlib.util

    from click.testing import CliRunner

    from agentworld.core import cli as cli_mod
    from agentworld.plugins.agents import autogen_agent
    from agentworld.plugins.agents.common import FrameworkNotInstalled

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "autogen_agentchat" else real_find_spec(name, *a))
    with pytest.raises(FrameworkNotInstalled, match=r"pip install 'agentworld\[autogen\]'"):
        autogen_agent.make_team(None)
    cli_mod._load_commands()
    out = CliRunner().invoke(cli_mod.cli, ["run", "--task", STAFF, "--framework", "autogen",
                                           "--model", "scripted:oracle", "--out", str(tmp_path / "run")])
    assert out.exit_code != 0
    assert "needs autogen_agentchat, which is not installed" in out.output
    assert not (tmp_path / "run" / "episodes").exists()
