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

    async def start(self, episode: Any) -> None:
        """Join the episode's MCP server (``agentworld serve`` starts it first), or start one."""
        from .server import EpisodeMcpServer

        players = {a: "external" for a in (self.agent_ids or episode.agent_ids)}
        server = await EpisodeMcpServer.join_or_start(episode, players=players, turn_timeout=self.turn_timeout)
        self.bind(server.tracker)
        self.episode_times_out = getattr(episode, "turn_timeout", None) is not None

    async def act(self, turn: Turn) -> TurnOutcome:
        if self.tracker is None:
            raise RuntimeError("ExternalSeatsTeam has no MCP server: run it in an Episode (its start() joins or "
                               "starts the episode's MCP server) or use `agentworld serve`")
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

    async def start(self, episode: Any) -> None:
        for team in self._teams():
            await team.start(episode)

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
