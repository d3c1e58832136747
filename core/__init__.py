"""The engine room, one folder per part. Imports point only down this list (checked by tests/test_architecture.py):

- ``world``: the embedded game and the vocabulary everything above uses (effects, observations, the 13 tools);
- ``tasks``: task schema and loader, verification, protocol variants;
- ``play``: the episode loop and turn gate, the team protocol, trajectories and records, prompts, model specs,
  the scripted policies;
- ``cce``: causal graphs, the paper method, the grounded method, judges, comparison, drawing;
- ``runs``: runner and executors, run specs, reports, exporters, task proofs, benchmarks;
- ``cli``: the ``agentworld`` commands, thin.

Beside them, the plugin host (``hookspecs.py``, ``plugins.py``) and one shared helper (``yamlio.py``). Core
never imports ``agentworld.plugins`` or ``agentworld.mcp_server``: it reaches frameworks, judges, verifier
checks and world backends only through the host's registries. See docs/architecture.md.
"""
