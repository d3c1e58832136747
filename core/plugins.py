"""The plugin host: one pluggy ``PluginManager("agentworld")`` and the registries it fills.

Built-in plugins are registered by module path, third-party ones from the ``agentworld`` entry-point group.
Registries are built lazily on first use and cached; ``reset()`` rebuilds them (tests use it after
registering a plugin object by hand).

Every command that reads a registry imports every plugin module, so start-up is kept cheap in three ways:
the registering modules are small and name their implementations lazily (``hookspecs.lazy``: the framework
plugins import their teams on first use); a plugin is searched for hook implementations by the hook names
only (pluggy would otherwise inspect every attribute of every module); and the entry points are read from
the installed distributions once per process.
"""

from __future__ import annotations

import importlib
import weakref
from dataclasses import dataclass
from typing import Any, Iterable

import pluggy

from . import hookspecs

# Built-in plugins, by module path (relative to the installed package `agentworld`).
DEFAULT_PLUGINS: tuple[str, ...] = (
    "agentworld.core.world.plugin",
    "agentworld.plugins.worlds.paper_server",
    "agentworld.core.cli.world",
    "agentworld.core.runs.bench",
    "agentworld.core.cli.tasks",
    "agentworld.plugins.verifiers.checks",
    "agentworld.plugins.agents.scripted",
    "agentworld.plugins.agents.openai_agent",
    "agentworld.plugins.agents.autogen_agent",
    "agentworld.plugins.agents.camel_agent",
    "agentworld.plugins.agents.langgraph_agent",
    "agentworld.mcp_server.plugin",
    "agentworld.plugins.judges.builtin",
    "agentworld.plugins.judges.counterfactual",
    "agentworld.core.cli.cce",
    "agentworld.core.cli.runs",
    "agentworld.core.cli.prove",
    "agentworld.core.cli.analyze",
    "agentworld.core.cli.tables",
    "agentworld.core.cli.augment",
    "agentworld.core.cli.replay",
    "agentworld.core.cli.seat",
    "agentworld.core.cli.fork",
)


# The built-in plugins that add commands, in the order above, each with the top-level commands it adds or
# adds to (core/cli/prove.py and augment.py add subcommands to `tasks`, mcp_server/plugin.py `mcp-load` to
# `bench`). The command line builds its commands from these and from entry points alone, so `agentworld
# --help` imports no framework, judge or verifier; a command that needs the registries reaches the full host
# when it runs. `agentworld COMMAND` imports only the plugins that add or extend COMMAND (register_commands'
# lazy mode). tests/test_startup.py checks that this lists exactly the built-in plugins with a
# register_commands hook, and the commands each one adds or extends.
COMMAND_PLUGINS: dict[str, tuple[str, ...]] = {
    "agentworld.core.cli.world": ("world", "tools"),
    "agentworld.core.runs.bench": ("bench",),
    "agentworld.core.cli.tasks": ("tasks", "export"),
    "agentworld.mcp_server.plugin": ("serve", "mcp-stdio", "bench"),
    "agentworld.core.cli.cce": ("cce",),
    "agentworld.core.cli.runs": ("run", "report"),
    "agentworld.core.cli.prove": ("tasks",),
    "agentworld.core.cli.analyze": ("analyze",),
    "agentworld.core.cli.tables": ("baselines", "ablations"),
    "agentworld.core.cli.augment": ("tasks",),
    "agentworld.core.cli.replay": ("replay", "bundle", "verify-bundle"),
    "agentworld.core.cli.seat": ("seat",),
    "agentworld.core.cli.fork": ("fork",),
}


# The command plugins with no other hook. The host of the registries (frameworks, judges, verifiers, worlds,
# tool servers) registers them only when it is asked for commands or for the list of plugins, so a command
# that reads a registry (`run`) does not import every other command's module. (tests/test_startup.py checks
# that each of these has register_commands as its only hook.)
COMMANDS_ONLY: frozenset[str] = frozenset(COMMAND_PLUGINS) - {"agentworld.mcp_server.plugin"}


@dataclass(frozen=True)
class Registered:
    """One entry of a registry: what a plugin registered under a name."""

    kind: str  # "framework" | "judge" | "verifier" | "world" | "tool_server"
    name: str
    obj: Any  # the factory or check
    description: str
    plugin: str  # name of the plugin that registered it
    source: str  # "builtin" or "entrypoint:<dist>" or "manual"


_pm: pluggy.PluginManager | None = None
_registries: dict[str, dict[str, Registered]] | None = None
_sources: dict[str, str] = {}
# the entry-point plugins as first loaded in this process: (name, plugin, distribution name)
_entrypoints: list[tuple[str, Any, str]] | None = None
# the hooks of hookspecs.py: the only names a plugin is searched for
HOOK_NAMES = frozenset(n for n, f in vars(hookspecs).items() if hasattr(f, "agentworld_spec"))


class _Host(pluggy.PluginManager):
    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if name not in HOOK_NAMES:  # imports, classes, helpers: never a hook (pluggy would inspect each one)
            return None
        return super().parse_hookimpl_opts(plugin, name)


def _new_manager() -> pluggy.PluginManager:
    pm = _Host("agentworld")
    pm.add_hookspecs(hookspecs)
    return pm


def get_plugin_manager() -> pluggy.PluginManager:
    """The host: every built-in plugin but the command-only ones (:func:`_with_commands` adds them), then the
    entry points', then those registered by hand."""
    global _pm
    if _pm is None:
        pm = _new_manager()
        for path in DEFAULT_PLUGINS:
            if path not in COMMANDS_ONLY:
                pm.register(importlib.import_module(path), name=path)
            _sources[path] = "builtin"
        for name, dist in _load_entrypoints(pm):
            _sources[name] = f"entrypoint:{dist}"
        _pm = pm
    return _pm


def _with_commands() -> pluggy.PluginManager:
    """The host with the command-only built-ins registered too (for the list of plugins)."""
    pm = get_plugin_manager()
    for path in DEFAULT_PLUGINS:
        if path in COMMANDS_ONLY and not pm.has_plugin(path) and not pm.is_blocked(path):
            pm.register(importlib.import_module(path), name=path)
    return pm


def _host_commands(cli: Any) -> None:
    """Every plugin's commands once the host exists, called in the order a host of all of them in its
    registration order would call them: the built-in command plugins, then the others (entry points, by
    hand); pluggy calls the last registered first."""
    pm = _new_manager()
    for path in COMMAND_PLUGINS:
        pm.register(importlib.import_module(path), name=path)
    for plugin in get_plugin_manager().get_plugins():
        name = get_plugin_manager().get_name(plugin)
        if _sources.get(name) != "builtin":
            pm.register(plugin, name=name)
    pm.hook.register_commands(cli=cli)


def register_commands(cli: Any, lazy: bool = False) -> None:
    """Let every command plugin (built-in command modules, entry points, plugins registered by hand) add
    its commands to ``cli``. Uses the full host once it exists; before that, a manager of the command
    plugins only, which keeps start-up light.

    ``lazy`` (the ``agentworld`` program): the built-in command modules are imported when ``cli`` is asked
    for one of their commands (:func:`load_commands`, called by the command line's group), so a command
    imports only its own module. Not when an entry-point plugin adds commands: it may add to a built-in
    group, so everything is registered at once, as without ``lazy``."""
    if _pm is not None:
        _host_commands(cli)
        return
    pm = _new_manager()
    if lazy:
        _load_entrypoints(pm)
        if not pm.hook.register_commands.get_hookimpls():
            _lazy_groups[cli] = set()
            return
        pm = _new_manager()  # registered after the built-ins, as below
    for path in COMMAND_PLUGINS:
        pm.register(importlib.import_module(path), name=path)
    _load_entrypoints(pm)
    pm.hook.register_commands(cli=cli)


# command groups whose built-in commands are registered on demand -> the command plugins already registered
_lazy_groups: "weakref.WeakKeyDictionary[Any, set[str]]" = weakref.WeakKeyDictionary()


def load_commands(cli: Any, names: Iterable[str] | None = None) -> None:
    """For a group ``register_commands(cli, lazy=True)`` left to fill on demand: register the built-in command
    plugins that add or extend any of ``names`` (None: all of them), each once, those of one call together
    (so that a ``trylast`` hook runs after the group it extends). Nothing for any other group."""
    done = _lazy_groups.get(cli)
    if done is None:
        return
    wanted = None if names is None else set(names)
    paths = [p for p, commands in COMMAND_PLUGINS.items()
             if p not in done and (wanted is None or wanted.intersection(commands))]
    if not paths:
        return
    pm = _new_manager()
    for path in paths:
        pm.register(importlib.import_module(path), name=path)
    done.update(paths)
    pm.hook.register_commands(cli=cli)


def _load_entrypoints(pm: pluggy.PluginManager) -> list[tuple[str, str]]:
    """Register the ``agentworld`` entry points' plugins with ``pm``: (name, distribution) of each. The
    installed distributions are read once per process (as pluggy's ``load_setuptools_entrypoints`` reads
    them, in the same order); a second manager gets the same plugin objects."""
    global _entrypoints
    if _entrypoints is None:
        import importlib.metadata

        found: list[tuple[str, Any, str]] = []
        for dist in list(importlib.metadata.distributions()):
            for ep in dist.entry_points:
                if ep.group != "agentworld" or pm.has_plugin(ep.name) or pm.is_blocked(ep.name):
                    continue
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
                found.append((ep.name, plugin, dist.metadata["name"]))
        _entrypoints = found
    else:
        for name, plugin, _ in _entrypoints:
            if not pm.has_plugin(name) and not pm.is_blocked(name):
                pm.register(plugin, name=name)
    return [(name, dist) for name, _, dist in _entrypoints if pm.has_plugin(name)]


def register_plugin(obj: Any, name: str | None = None) -> None:
    """Register a plugin object by hand (for tests and notebooks); registries are rebuilt."""
    pm = get_plugin_manager()
    pm.register(obj, name=name)
    _sources[pm.get_name(obj) or repr(obj)] = "manual"
    reset()


def unregister_plugin(name: str) -> None:
    get_plugin_manager().unregister(name=name)
    reset()


def reset() -> None:
    global _registries
    _registries = None


def _collect() -> dict[str, dict[str, Registered]]:
    global _registries
    if _registries is not None:
        return _registries
    pm = get_plugin_manager()
    regs: dict[str, dict[str, Registered]] = {"framework": {}, "judge": {}, "verifier": {}, "world": {},
                                              "tool_server": {}}
    hooks = {"framework": "register_frameworks", "judge": "register_judges",
             "verifier": "register_verifiers", "world": "register_worlds", "tool_server": "register_tool_servers"}
    for kind, hook_name in hooks.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            plugin_name = impl.plugin_name

            def register(name: str, obj: Any, description: str = "", _kind=kind, _plugin=plugin_name) -> None:
                if name in regs[_kind]:
                    prev = regs[_kind][name]
                    raise ValueError(f"{_kind} {name!r} registered twice: by {prev.plugin} and by {_plugin}; rename one")
                regs[_kind][name] = Registered(_kind, name, obj, description, _plugin, _sources.get(_plugin, "manual"))

            impl.function(register=register)
    _registries = regs
    return regs


def registry(kind: str) -> dict[str, Registered]:
    return _collect()[kind]


def get(kind: str, name: str) -> Any:
    reg = registry(kind)
    if name not in reg:
        known = ", ".join(sorted(reg)) or "none"
        raise KeyError(f"unknown {kind} {name!r}; known: {known}. Third-party {kind}s are installed as plugins "
                       f"(entry-point group 'agentworld'); `agentworld plugins` lists what is loaded.")
    return reg[name].obj


def frameworks() -> dict[str, Registered]:
    return registry("framework")


def judges() -> dict[str, Registered]:
    return registry("judge")


def verifiers() -> dict[str, Registered]:
    return registry("verifier")


def worlds() -> dict[str, Registered]:
    return registry("world")


def plugin_table() -> list[dict[str, Any]]:
    """One row per loaded plugin: name, source, and what it registered."""
    pm = _with_commands()
    rows = []
    regs = _collect()
    for plugin in pm.get_plugins():
        name = pm.get_name(plugin) or repr(plugin)
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        provided = {k: sorted(r.name for r in reg.values() if r.plugin == name) for k, reg in regs.items()}
        rows.append({"name": name, "source": _sources.get(name, "manual"), "hooks": hooks,
                     **{k + "s": v for k, v in provided.items() if v}})
    return sorted(rows, key=lambda r: (r["source"] != "builtin", r["name"]))
