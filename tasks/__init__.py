"""The shipped task suites (``main/``, ``augmented/``) as package data.

``SUITE_VERSION`` names what the shipped tasks are: bump it whenever a shipped task changes in a way that can
change an episode or its score (a brief, a spawn, a check, a task added or removed), so that two results
with the same suite version were played on the same tasks. ``agentworld --version`` prints it and every
run's manifest records it. 1.0 is the suite as shipped with agentworld 0.3.0, the first with a version (suite
v2); 2.0 is suite v3 (new designs, budgets from the fastest known solution; CHANGELOG.md).
"""

SUITE_VERSION = "2.0"
