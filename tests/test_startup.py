"""Start-up stays light: building the command line imports no heavy library (no timings here: those are
`agentworld bench startup`'s), and the command plugins the CLI loads are exactly those with commands."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys

from agentworld.core import plugins

HEAVY = ("pydantic", "yaml", "rich", "jinja2", "numpy", "networkx", "asyncio", "httpx", "mcp", "PIL")


def test_the_command_line_imports_no_heavy_library():
    code = ("import json, sys; from agentworld.core.cli import _load_commands, cli; _load_commands(); "
            "print(json.dumps({'commands': sorted(cli.commands), 'modules': sorted(sys.modules)}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout)
    loaded = {m.split(".")[0] for m in got["modules"]}
    assert not loaded & set(HEAVY), f"imported at start-up: {sorted(loaded & set(HEAVY))}"
    assert {"run", "tasks", "world", "bench", "cce", "serve", "report"} <= set(got["commands"])


def _defines_register_commands(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    return any(isinstance(n, ast.FunctionDef) and n.name == "register_commands" for n in tree.body)


def test_command_plugins_are_exactly_the_builtins_with_commands_in_order():
    assert plugins.COMMAND_PLUGINS == tuple(p for p in plugins.DEFAULT_PLUGINS if _defines_register_commands(p))


def test_commands_come_from_the_full_host_once_it_exists():
    """After the full host is built (e.g. a plugin registered by hand), commands are taken from it."""
    import click

    plugins.get_plugin_manager()
    group = click.Group("agentworld")
    plugins.register_commands(group)
    assert {"run", "tasks", "bench", "serve"} <= set(group.commands)
