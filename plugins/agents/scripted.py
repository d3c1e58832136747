"""The scripted teams as frameworks: ``oracle``, ``random`` and ``idle`` (no model).

The policies themselves live in :mod:`agentworld.core.play.policies` (the task proofs play them too);
this plugin only registers a team factory for each.
"""

from __future__ import annotations

from agentworld.core.hookspecs import hookimpl
from agentworld.core.play.policies import PolicyTeam, make_policy
from agentworld.core.play.protocol import Team, TeamSpec


def _factory(name: str):
    def make_team(spec: TeamSpec) -> Team:
        # only the oracle is handed the reference plan (TeamSpec.reference_plan); random and idle need none
        return PolicyTeam(make_policy(name, spec.seed, spec.reference_plan))

    make_team.__name__ = f"make_{name}_team"
    return make_team


@hookimpl
def register_frameworks(register):
    register("oracle", _factory("oracle"), description="plays the task's reference solution (no model)")
    register("random", _factory("random"), description="uniform over sensible actions (no model; a floor)")
    register("idle", _factory("idle"), description="sleeps every turn (no model; every task must fail)")
