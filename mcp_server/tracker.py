"""Turn bookkeeping for MCP seats: waiting for one's turn, one call per turn, lost turns.

The episode's turn gate is the one place that executes and records calls. An MCP client, though, may call
at any moment, so this module adds what a remote caller needs on top of the gate:

- a call made before the agent's turn *waits* for it (bounded), instead of being refused;
- the first call of a turn claims it; any other call for the same turn (a framework that runs two tool
  calls in parallel) is refused and, while the gate is still open, recorded by the gate as a refused call;
- a turn that the seat's client does not use within the turn timeout is lost (the episode records it),
  and the client is told so with its next result.

The tracker learns which turn is open by wrapping the gate's ``open``/``close`` (a thin wrapper: the gate
contract has no listener API). The teams that
use it are in :mod:`agentworld.mcp_server.turns`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ..core.world.effects import ToolResult
from ..core.play.protocol import Turn


@dataclass
class OpenTurn:
    agent_id: str
    round: int
    serial: int  # how many turns this agent has had, this one included
    claimed: bool = False  # a call has taken this turn
    executed: asyncio.Event = field(default_factory=asyncio.Event)  # the claiming call has returned
    result: ToolResult | None = None


class TurnTracker:
    """Follows the episode's gate and serialises MCP calls into turns."""

    def __init__(self, episode: Any, *, wait_timeout: float = 300.0):
        self.episode = episode
        self.gate = episode.gate
        self.wait_timeout = wait_timeout  # longest a call waits for its agent's turn
        self.current: OpenTurn | None = None
        self.current_round = 0
        self.serials: dict[str, int] = {a: 0 for a in episode.agent_ids}
        self.lost: dict[str, int] = {a: 0 for a in episode.agent_ids}  # turns lost since the last call
        self.claimed: dict[str, int] = {a: 0 for a in episode.agent_ids}  # serial of the last turn a call took
        self.inflight: dict[str, int] = {}  # calls of each agent now waiting or executing
        self.done_at: dict[str, float] = {}  # monotonic time each agent's last executed call finished
        self.turns: dict[str, Turn] = {}  # the latest Turn handed to each agent (observation, prompts)
        self.finished: str | None = None  # why the episode ended, once it has
        # one wake-up event per agent: a waiting call wakes only when its own agent's state changes
        # (its turn opens or closes, or the episode ends), not on every turn of a 100-agent episode
        self._changed: dict[str, asyncio.Event] = {}
        self._hook_gate()

    # -- following the gate ----------------------------------------------------------------------
    def _hook_gate(self) -> None:
        gate, tracker = self.gate, self
        open_, close = gate.open, gate.close

        def opened(agent_id: str, round: int, *a: Any, **kw: Any) -> Any:
            out = open_(agent_id, round, *a, **kw)
            tracker.on_open(agent_id, round)
            return out

        def closed(*a: Any, **kw: Any) -> Any:
            tracker.on_close()
            return close(*a, **kw)

        gate.open, gate.close = opened, closed
        finish = getattr(gate, "finish", None)
        if callable(finish):
            def finished(*a: Any, **kw: Any) -> Any:
                out = finish(*a, **kw)
                tracker.finish("the episode has ended")
                return out
            gate.finish = finished

    def on_open(self, agent_id: str, round: int) -> None:
        self.serials[agent_id] = self.serials.get(agent_id, 0) + 1
        new_round = self.current_round != round
        self.current_round = round
        self.current = OpenTurn(agent_id, round, self.serials[agent_id])
        # once per round wake everyone: waiting calls of agents retired at the tick (death) learn it now
        self._notify(None if new_round else agent_id)

    def on_close(self) -> None:
        cur = self.current
        if cur is not None and not cur.claimed:
            self.lost[cur.agent_id] = self.lost.get(cur.agent_id, 0) + 1
        self.current = None
        if cur is not None:
            self._notify(cur.agent_id)

    def on_turn(self, turn: Turn) -> OpenTurn:
        """Called by the seat teams with the Turn the episode built; returns the open turn record."""
        self.turns[turn.agent_id] = turn
        cur = self.current
        if cur is None or cur.agent_id != turn.agent_id:  # a gate without open(): follow the team instead
            self.on_open(turn.agent_id, turn.round)
            cur = self.current
        assert cur is not None
        return cur

    def finish(self, reason: str) -> None:
        self.finished = reason
        self.current = None
        self._notify()

    def _notify(self, agent_id: str | None = None) -> None:
        """Wake the calls waiting for ``agent_id`` (all waiting calls when None)."""
        if agent_id is None:
            events, self._changed = list(self._changed.values()), {}
        else:
            ev = self._changed.pop(agent_id, None)
            events = [ev] if ev is not None else []
        for ev in events:
            ev.set()

    def _event(self, agent_id: str) -> asyncio.Event:
        ev = self._changed.get(agent_id)
        if ev is None:
            ev = self._changed[agent_id] = asyncio.Event()
        return ev

    # -- calls -----------------------------------------------------------------------------------
    async def call(self, agent_id: str, tool: str, arguments: dict[str, Any] | None,
                   wait_timeout: float | None = None, arrived: float | None = None) -> tuple[ToolResult, int]:
        """Wait for ``agent_id``'s turn, execute through the gate, return (result, turns lost before it).

        ``arrived`` (``time.monotonic()`` when the request reached the server) tells parallel calls from a
        client's next call: a call that arrived before this agent's previous call had even finished was sent
        without its result, so it belongs to the same turn and is refused; a call sent after the result
        waits for the agent's next turn. Never raises for the caller's mistakes: refusals and timeouts come
        back as failed results."""
        limit = self.wait_timeout if wait_timeout is None else wait_timeout
        if self.finished:
            return self._over(), 0
        cur = self.current
        if cur is not None and cur.agent_id == agent_id and cur.claimed:
            return await self._second_call(cur, tool, arguments), 0
        if self.inflight.get(agent_id, 0):  # parallel calls: the other one is waiting for or taking this turn
            self._record_stray(agent_id, tool, arguments, "another call of this agent was already in progress")
            return self._refuse_second(None), 0
        if arrived is not None and arrived < self.done_at.get(agent_id, float("-inf")):
            self._record_stray(agent_id, tool, arguments, "sent together with the call that took the turn")
            return self._refuse_second(None), 0
        self.inflight[agent_id] = self.inflight.get(agent_id, 0) + 1
        try:
            return await self._wait_and_call(agent_id, tool, arguments, limit)
        finally:
            self.inflight[agent_id] -= 1

    async def _wait_and_call(self, agent_id: str, tool: str, arguments: dict[str, Any] | None,
                             limit: float) -> tuple[ToolResult, int]:
        cur = self.current
        target = cur.serial if cur is not None and cur.agent_id == agent_id else self.serials.get(agent_id, 0) + 1
        deadline = time.monotonic() + limit
        while True:
            if self.finished:
                return self._over(), 0
            cur = self.current
            if cur is not None and cur.agent_id == agent_id and cur.serial >= target:
                break
            if not self._is_active(agent_id):
                return ToolResult.fail("not_active", "You have left the episode (completed, dead or out of "
                                                     "action steps); you cannot act any more."), 0
            if self.serials.get(agent_id, 0) > target:  # our turn went by before this task woke up
                if self.claimed.get(agent_id, 0) >= target:  # a parallel call of ours took it
                    return self._refuse_second(None), 0
                target = self.serials[agent_id] + 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return ToolResult.fail("timeout", self._still_waiting(agent_id, limit)), 0
            changed = self._event(agent_id)
            try:
                async with asyncio.timeout(remaining):
                    await changed.wait()
            except TimeoutError:
                pass
        if cur.claimed:  # cannot happen while calls of one agent are serialised; kept as a guard
            return await self._second_call(cur, tool, arguments), 0
        cur.claimed = True
        self.claimed[agent_id] = cur.serial
        lost, self.lost[agent_id] = self.lost.get(agent_id, 0), 0
        try:
            result = await self.gate.call(agent_id, tool, arguments or {})
        finally:
            self.done_at[agent_id] = time.monotonic()
            cur.executed.set()
        cur.result = result
        return result, lost

    def _over(self) -> ToolResult:
        return ToolResult.fail("refused", "The episode is over; no more actions. Your call was not executed.")

    def _record_stray(self, agent_id: str, tool: str, arguments: Any, reason: str) -> None:
        """A refused call the gate never saw: hand it to the gate's record of refused calls, which the
        episode writes with the agent's next turn."""
        stray = getattr(self.gate, "stray", None)
        if isinstance(stray, dict):
            from ..core.play.records import RefusedCall

            stray.setdefault(agent_id, []).append(RefusedCall(
                tool=str(tool), arguments=arguments if isinstance(arguments, dict) else None, reason=reason))

    async def _second_call(self, cur: OpenTurn, tool: str, arguments: dict[str, Any] | None) -> ToolResult:
        if self.current is cur:  # the gate is still open and has executed the first call: it refuses and records
            result = await self.gate.call(cur.agent_id, tool, arguments or {})
            if not result.ok:
                return result
        else:
            self._record_stray(cur.agent_id, tool, arguments, "a second call in one turn")
        return self._refuse_second(cur.round)

    @staticmethod
    def _refuse_second(round: int | None) -> ToolResult:
        when = f" (round {round})" if round is not None else ""
        return ToolResult.fail("refused", f"Refused: you already made your one call this turn{when}. "
                                          "This call was not executed; call again to act on your next turn.")

    def _still_waiting(self, agent_id: str, waited: float) -> str:
        cur = self.current
        now = (f"it is {self.username(cur.agent_id)}'s turn (round {cur.round})" if cur else
               "no turn is open right now")
        return (f"Timed out waiting for your turn: waited {waited:g} s and {now}. Your call was not executed; "
                "call again to keep waiting.")

    def _is_active(self, agent_id: str) -> bool:
        try:
            return bool(self.episode.world.player_state(agent_id).active)
        except Exception:  # a world that does not know the agent yet: treat as active
            return True

    # -- reading ---------------------------------------------------------------------------------
    def username(self, agent_id: str) -> str:
        for a in getattr(self.episode.task, "agents", []) or []:
            if a.agent_id == agent_id:
                return a.username
        return agent_id

    def whose_turn(self) -> dict[str, Any]:
        cur = self.current
        if self.finished:
            return {"episode_over": True, "reason": self.finished}
        if cur is None:
            return {"episode_over": False, "agent_id": None, "username": None, "round": None}
        return {"episode_over": False, "agent_id": cur.agent_id, "username": self.username(cur.agent_id),
                "round": cur.round, "call_made": cur.claimed}
