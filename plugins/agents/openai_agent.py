"""Registers the ``openai`` framework: the paper's own agent, one Chat Completions request per turn.

The team is in ``openai_team.py`` (with ``common.py``); it is imported when a team is made or checked, so the
runs that never use ``openai`` (every command imports the plugin host) do not import it, nor the ``openai`` SDK.
"""

from __future__ import annotations

from ...core.hookspecs import hookimpl, lazy

make_team = lazy("agentworld.plugins.agents.openai_team:make_team")


@hookimpl
def register_frameworks(register):
    register("openai", make_team, description="Plain OpenAI-compatible Chat Completions agent (the paper's agent)")
