"""An example third-party framework plugin for AgentWorld.

Install it (``pip install -e docs/example_plugin``) and ``agentworld plugins`` lists the framework
``nearest``; ``agentworld run --task ID --framework nearest`` plays it. Nothing in AgentWorld changes:
the entry point in ``pyproject.toml`` names this module, and the hook below registers the framework.

The team is rule-based (no model) to keep the example short: each agent harvests the nearest resource,
picks up the nearest ground item, or attacks the nearest mob it can beat, and otherwise waits. A real
plugin would build its framework's agents in ``make_team`` and call the model in ``act``; the contract is
the same: call ``turn.port.call(tool, args)`` once, return a ``TurnOutcome``.
"""

from __future__ import annotations

from agentworld.core.hookspecs import hookimpl
from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome


class NearestTeam(Team):
    def __init__(self, spec: TeamSpec):
        self.spec = spec

    def choose(self, turn: Turn) -> tuple[str, dict]:
        obs = turn.observation
        by_distance = sorted(obs.nearby, key=lambda e: (e.distance, e.id))
        for e in by_distance:
            if e.kind == "resource" and "depleted" not in e.note:
                return "harvest_resource", {"targetInstance": e.id}
            if e.kind == "ground_item":
                return "pickup_resource", {"targetInstance": e.id}
            if e.kind == "mob" and (e.level or 1) <= obs.combat_level:
                return "attack_entity", {"targetInstance": e.id}
        return "sleep", {"seconds": 1}

    async def act(self, turn: Turn) -> TurnOutcome:
        tool, args = self.choose(turn)
        result = await turn.port.call(tool, args)
        return TurnOutcome(thinking=f"nearest: {tool} -> {'ok' if result.ok else result.error}")


def make_team(spec: TeamSpec) -> Team:
    return NearestTeam(spec)


@hookimpl
def register_frameworks(register):
    register("nearest", make_team, description="example plugin: works on the nearest resource, item or mob")
