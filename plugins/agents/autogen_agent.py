"""Registers the ``autogen`` framework: one AutoGen AgentChat ``AssistantAgent`` per character.

The team is in ``autogen_team.py`` (with ``common.py``); it is imported when a team is made or checked, so the
runs that never use ``autogen`` (every command imports the plugin host) do not import it, nor AutoGen.
"""

from __future__ import annotations

from ...core.hookspecs import hookimpl, lazy

make_team = lazy("agentworld.plugins.agents.autogen_team:make_team")


@hookimpl
def register_frameworks(register):
    register("autogen", make_team, description="AutoGen AgentChat: one AssistantAgent per character")
