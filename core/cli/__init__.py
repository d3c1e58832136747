"""The ``agentworld`` command line: the click group and ``main``. Every command comes from a plugin's
``register_commands`` hook, the built-in ones included (``world.py``, ``tasks.py``, ``prove.py``, ``runs.py``,
``cce.py`` here, and ``bench`` from ``core.runs.bench``). Commands stay thin: they parse options, call the
parts below and print.

May import every part of core.
"""

from __future__ import annotations

import json

import click

from .. import plugins


class _Commands(click.Group):
    """The ``agentworld`` group. After ``register_commands(cli, lazy=True)`` (``main``), a built-in command's
    plugin module is imported when the command is looked up, and all of them when commands are listed
    (``--help``, shell completion); otherwise a plain group."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        plugins.load_commands(self, [cmd_name])
        command = super().get_command(ctx, cmd_name)
        if command is None:  # not a built-in command's name: load them all (third-party ones, and click's
            plugins.load_commands(self)  # "Did you mean" suggestion reads the loaded commands)
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        plugins.load_commands(self)
        return super().list_commands(ctx)


def _print_versions(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ..runs.versions import version_text  # read when asked, not at every start

    click.echo(version_text())
    ctx.exit()


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_versions,
              help="Print the harness, world and suite versions and exit.")
def cli() -> None:
    """AgentWorld: benchmark long-horizon collaboration of LLM agent teams."""


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins_cmd(as_json: bool) -> None:
    """List loaded plugins, where they come from and what they register."""
    rows = plugins.plugin_table()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    from ..console import make_console

    table = Table("plugin", "source", "registers")
    for r in rows:
        regs = "; ".join(f"{k}: {', '.join(v)}" for k, v in r.items() if k not in ("name", "source", "hooks"))
        table.add_row(r["name"], r["source"], regs or ", ".join(r["hooks"]))
    make_console().print(table)


def _load_commands() -> None:
    plugins.register_commands(cli)


def main() -> None:
    """The ``agentworld`` program: its collector settings (``collector.py``), then the command."""
    from .collector import for_program

    plugins.register_commands(cli, lazy=True)  # a command's module is imported when it runs
    with for_program():
        cli()
