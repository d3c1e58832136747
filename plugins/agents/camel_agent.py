"""Registers the ``camel`` framework: one CAMEL ``ChatAgent`` per character.

The team is in ``camel_team.py`` (with ``common.py``); it is imported when a team is made or checked, so the
runs that never use ``camel`` (every command imports the plugin host) do not import it, nor CAMEL.
"""

from __future__ import annotations

from ...core.hookspecs import hookimpl, lazy

make_team = lazy("agentworld.plugins.agents.camel_team:make_team")


@hookimpl
def register_frameworks(register):
    register("camel", make_team, description="CAMEL-AI: one ChatAgent per character (astep, max_iteration=1)")
