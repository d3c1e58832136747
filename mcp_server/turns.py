"""The teams of MCP seats: :class:`ExternalSeatsTeam`, whose ``act`` just waits for the seat's client to call
through the gate, and :class:`MixedTeam`, which routes each agent to its own sub-team (external or in-process).
How a remote call waits for and claims its turn is :mod:`agentworld.mcp_server.tracker`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..core.play.protocol import Team, Turn, TurnOutcome


from .tracker import TurnTracker


class ExternalSeatsTeam(Team):
    """The agents whose calls arrive over MCP: ``act`` waits until the seat's client has made its call
    through the gate, or the turn timeout passes (the turn is then lost; the episode records it)."""

    def __init__(self, turn_timeout: float = 120.0, agent_ids: list[str] | None = None):
        self.turn_timeout = turn_timeout
        self.agent_ids = agent_ids  # the seats this team stands for (None: every agent it is asked about)
        self.tracker: TurnTracker | None = None
        self.episode_times_out = False

    def bind(self, tracker: TurnTracker) -> None:
        self.tracker = tracker
        self.episode_times_out = getattr(tracker.episode, "turn_timeout", None) is not None

    tool_server = "mcp"  # the episode starts (or joins) its MCP server for these seats and binds the tracker

    def seat_players(self, agent_ids: list[str], framework: str) -> dict[str, str]:
        """Who plays each seat: every one an external MCP client."""
        return dict.fromkeys(agent_ids, "external")

    async def start(self, view: Any) -> None:
        if self.tracker is None:
            raise RuntimeError("ExternalSeatsTeam has no MCP server: run it in an Episode, which starts the MCP "
                               "server for it (tool_server 'mcp'), or use `agentworld serve`")
        if self.agent_ids is None:
            self.agent_ids = list(view.agent_ids)

    async def act(self, turn: Turn) -> TurnOutcome:
        if self.tracker is None:
            raise RuntimeError("ExternalSeatsTeam has no MCP server: run it in an Episode (which starts the MCP "
                               "server for it) or use `agentworld serve`")
        cur = self.tracker.on_turn(turn)
        # When the episode has a turn timeout it cancels this wait and records the turn as timed out;
        # otherwise this wait is the bound, and the turn is recorded as having no call.
        limit = None if self.episode_times_out else self.turn_timeout
        try:
            await asyncio.wait_for(cur.executed.wait(), limit)
        except asyncio.TimeoutError:
            return TurnOutcome(thinking=f"(no call from the MCP client within the {self.turn_timeout:g} s turn timeout)")
        return TurnOutcome()


class MixedTeam(Team):
    """Routes each agent to the team that plays it (external MCP seats and in-process teams side by side)."""

    def __init__(self, routes: dict[str, Team]):
        self.routes = routes
        self.tracker: TurnTracker | None = None

    def bind(self, tracker: TurnTracker) -> None:
        self.tracker = tracker
        for team in self._teams():
            if isinstance(team, (ExternalSeatsTeam, MixedTeam)):
                team.bind(tracker)

    def _teams(self) -> list[Team]:
        seen: list[Team] = []
        for t in self.routes.values():
            if all(t is not s for s in seen):
                seen.append(t)
        return seen

    def seat_players(self, agent_ids: list[str], framework: str) -> dict[str, str]:
        """Who plays each seat: "external" for the external seats' team, else ``framework``."""
        return {a: "external" if isinstance(self.routes.get(a), ExternalSeatsTeam) else framework for a in agent_ids}

    @property
    def tool_server(self) -> str | None:  # type: ignore[override]
        """"mcp" when a sub-team needs the episode's MCP server (external seats, --tools mcp)."""
        return next((t.tool_server for t in self._teams() if getattr(t, "tool_server", None)), None)

    async def start(self, view: Any) -> None:
        """Each sub-team starts with the view of its own agents only (and their seats)."""
        for team in self._teams():
            ids = [a for a, t in self.routes.items() if t is team]
            await team.start(view.only(ids))

    async def act(self, turn: Turn) -> TurnOutcome:
        team = self.routes.get(turn.agent_id)
        if team is None:
            raise KeyError(f"no team plays {turn.agent_id}; routes: {', '.join(self.routes)}")
        if self.tracker is not None:
            self.tracker.turns[turn.agent_id] = turn
        return await team.act(turn)

    async def aclose(self) -> None:
        for team in self._teams():
            await team.aclose()
