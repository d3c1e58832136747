"""``--world NAME --server-url URL --world-option KEY=VALUE``: choosing the world backend on the command line
(``run``, ``serve`` and ``tasks validate`` share these options)."""

from __future__ import annotations

from typing import Any, Callable

import click

EMBEDDED = "embedded"


def world_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``world``, ``server_url`` and ``world_option`` parameters to a click command."""
    fn = click.option("--world-option", "world_option", multiple=True, metavar="KEY=VALUE",
                      help="A world backend option, e.g. poll_s=0.2 (repeatable; docs/paper-server.md).")(fn)
    fn = click.option("--server-url", help="Address of the game server (--world paper-server).")(fn)
    fn = click.option("--world", "world", default=None,
                      help="World backend: embedded (default) or paper-server (`agentworld plugins` lists them).")(fn)
    return fn


def parse_world(world: str | None, server_url: str | None, pairs: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """(backend name, its options); a bad name, pair or a missing server URL is a click error naming the fix."""
    import yaml

    from .. import plugins

    name = world or EMBEDDED
    known = plugins.worlds()
    if name not in known:
        raise click.BadParameter(f"unknown world {name!r}; known: {', '.join(sorted(known))}", param_hint="--world")
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} must look like KEY=VALUE, e.g. poll_s=0.2", param_hint="--world-option")
        options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
    if server_url:
        options["server_url"] = server_url
    if name != EMBEDDED and "server_url" not in options:
        raise click.BadParameter(f"the {name} world needs --server-url http://HOST:PORT", param_hint="--server-url")
    if name == EMBEDDED and options:
        raise click.BadParameter("--server-url and --world-option are for a server world (--world paper-server)",
                                 param_hint="--world")
    return name, options
