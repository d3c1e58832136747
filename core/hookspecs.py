"""Plugin hooks. Each hook hands the plugin a ``register`` callback (the way simonw/llm does).

A plugin is a module (or object) with functions decorated by ``@hookimpl``::

    from agentworld.core.hookspecs import hookimpl

    @hookimpl
    def register_frameworks(register):
        register("myframe", make_team, description="My framework")

Built-in plugins are loaded by module path (``core/plugins.py``); third-party plugins by the
``agentworld`` entry-point group in their ``pyproject.toml``::

    [project.entry-points.agentworld]
    myframe = "myframe_agentworld"
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("agentworld")
hookimpl = pluggy.HookimplMarker("agentworld")

Register = Callable[..., None]


@hookspec
def register_frameworks(register: Register) -> None:
    """``register(name, factory, description="")``: factory(TeamSpec) -> Team. Import heavy libraries inside the factory."""


@hookspec
def register_judges(register: Register) -> None:
    """``register(name, factory, description="")``: factory(**options) -> CCE judge."""


@hookspec
def register_verifiers(register: Register) -> None:
    """``register(name, check, description="")``: a named verifier check (one checkpoint each)."""


@hookspec
def register_worlds(register: Register) -> None:
    """``register(name, factory, description="")``: factory(rules_overrides: dict) -> World."""


@hookspec
def register_tool_servers(register: Register) -> None:
    """``register(name, start, description="")``: ``await start(episode) -> ToolServer`` serves an episode's
    tools to a team whose ``Team.tool_server`` is ``name`` (``"mcp"``: ``--tools mcp``). The episode calls it
    before ``Team.start``; the result has ``seats`` (agent_id -> ``(url, token)`` of the team's agents, put in
    the team's view) and ``await aclose()`` (called after ``Team.aclose``). See core/play/protocol.ToolServer."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add click commands or groups to the ``agentworld`` CLI group ``cli``."""
