"""Registers the ``langgraph`` framework: one compiled LangGraph graph per character.

The team is in ``langgraph_team.py`` (with ``common.py``); it is imported when a team is made or checked, so the
runs that never use ``langgraph`` (every command imports the plugin host) do not import it, nor LangGraph.
"""

from __future__ import annotations

from ...core.hookspecs import hookimpl, lazy

make_team = lazy("agentworld.plugins.agents.langgraph_team:make_team")


@hookimpl
def register_frameworks(register):
    register("langgraph", make_team, description="LangGraph: one agent→tools graph per character, checkpointed")
