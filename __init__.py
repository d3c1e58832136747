"""AgentWorld: a benchmark harness for long-horizon collaboration of LLM agent teams.

Installed, this repository's top level is the package ``agentworld``: ``core/`` is ``agentworld.core``,
``plugins/`` is ``agentworld.plugins``, ``mcp_server/`` is ``agentworld.mcp_server`` and ``tasks/`` ships
as package data ``agentworld.tasks``.
"""

__version__ = "0.3.0"  # the harness; semantic versioning (CHANGELOG.md). The one place it is written
