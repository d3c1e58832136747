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

Keep the registering module tiny, as simonw/llm's plugins do: every command imports the plugin host, so a
plugin module is imported by runs that never use it. :func:`lazy` registers a factory by path, imported on
its first call::

    register("myframe", lazy("myframe_agentworld.team:make_team"), description="My framework")
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("agentworld")
hookimpl = pluggy.HookimplMarker("agentworld")

Register = Callable[..., None]


def lazy(target: str) -> Callable[..., Any]:
    """A factory standing for ``"package.module:function"``, imported on its first call. Attributes of the
    function (a framework's ``check_installed``) are reached through it the same way."""
    module, _, name = target.partition(":")
    if not module or not name:
        raise ValueError(f"lazy({target!r}): give the factory as 'package.module:function'")

    def load() -> Callable[..., Any]:
        return getattr(importlib.import_module(module), name)

    def factory(*args: Any, **kwargs: Any) -> Any:
        return load()(*args, **kwargs)

    def check_installed() -> None:
        check = getattr(load(), "check_installed", None)
        if check is not None:
            check()

    factory.check_installed = check_installed  # type: ignore[attr-defined]
    factory.__name__ = name
    factory.__qualname__ = name
    factory.__module__ = module
    factory.__doc__ = f"{target}, imported on first use."
    return factory


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
