"""The MCP side of the turn gate: serialising each seat's calls into its turns.

MCP clients call whenever they like; the episode's :class:`~agentworld.core.play.episode.TurnGate` decides.
The tracker makes a call that arrives early wait for its agent's turn (bounded, with MCP progress
notifications while it waits), makes sure a waiting call whose client has gone away never claims the
turn, and lets an external seat's result wait for that seat's next turn so that the result carries the
very observation an in-process agent's prompt would (docs/mcp.md, "What a result carries").

Rules, in the order they are applied to a call of agent A:

1. The episode is over: answered at once with how it ended; not executed.
2. A's open turn was already taken by a call: refused as a second call (the gate records it).
3. The call arrived before A's previous call had finished, or while that call's result still waits for A's
   next turn (an external seat's result is sent when that turn opens): it was sent without that call's
   result, so it belongs to that turn and is refused as a second call. (A result whose client has gone
   away waits for nobody: the wait ends, and the next call is a call of its own.)
4. Another call of A is still waiting for A's turn: that older call is abandoned (its client timed out, or
   sent a newer call instead); it is answered "not executed" and the new call waits in its place.
5. Otherwise the call waits until A's turn opens, then claims it, unless its client disconnected or
   cancelled the request first (then it is dropped, never executed).
6. A has left the episode (``complete``, death, out of action steps) while it still runs: the call waits
   for the end (bounded like any wait) and is answered ``not_active`` with how the episode ended, so a
   seat that left learns the outcome by calling again; never executed.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from ..core.play.records import EpisodeOutcome, RefusedCall
from ..core.world.effects import ToolResult

Progress = Callable[[float, str], Awaitable[None]]  # (seconds waited, what is awaited) -> notification sent
PROGRESS_EVERY_S = 5.0  # how often a waiting call reports progress (clients may reset their timeout on it)


class Flag:
    """Set once, never cleared; setting it resolves the futures that watch it. One waiting call watches
    several flags (its agent's state changed, a newer call replaced it, its client left) through one future
    of its own: an ``asyncio.Event`` per flag would need a task per flag and ``asyncio.wait`` around them,
    on every turn of the chain of calls."""

    __slots__ = ("_set", "_watchers")

    def __init__(self) -> None:
        self._set = False
        self._watchers: list[asyncio.Future] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if not self._set:
            self._set = True
            watchers, self._watchers = self._watchers, []
            for fut in watchers:
                if not fut.done():
                    fut.set_result(True)

    def watch(self, fut: asyncio.Future) -> None:
        self._watchers.append(fut)

    def unwatch(self, fut: asyncio.Future) -> None:
        if fut in self._watchers:
            self._watchers.remove(fut)


def _time_up(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(False)


@dataclass
class OpenTurn:
    agent_id: str
    round: int
    serial: int  # how many turns this agent has had, this one included
    claimed: bool = False  # a call has taken this turn
    executed: asyncio.Event = field(default_factory=asyncio.Event)  # the claiming call has returned
    result: ToolResult | None = None


@dataclass
class Waiting:
    """One call waiting for its agent's turn."""

    abandoned: Flag = field(default_factory=Flag)  # a newer call of the agent replaced it


class TurnTracker:
    """Follows the episode's gate and serialises MCP calls into turns."""

    def __init__(self, episode: Any, *, wait_timeout: float = 300.0, progress_every: float = PROGRESS_EVERY_S):
        self.episode = episode
        self.gate = episode.gate
        self.wait_timeout = wait_timeout  # longest a call waits for its agent's turn
        self.progress_every = progress_every
        self.current: OpenTurn | None = None
        self.current_round = 0
        self.serials: dict[str, int] = {a: 0 for a in episode.agent_ids}
        self.lost: dict[str, int] = {a: 0 for a in episode.agent_ids}  # turns lost since the last call
        self.claimed: dict[str, int] = {a: 0 for a in episode.agent_ids}  # serial of the last turn a call took
        self.waiting: dict[str, Waiting] = {}  # the call of each agent now waiting for its turn
        self.executing: dict[str, int] = {}  # calls of each agent now executing
        self.answering: dict[str, int] = {}  # executed calls of each agent whose result waits for its next turn
        self.done_at: dict[str, float] = {}  # monotonic time each agent's last executed call finished
        self.finished: str | None = None  # why the episode ended, once it has
        self.outcome: EpisodeOutcome | None = None
        # one wake-up flag per agent: a waiting call wakes only when its own agent's state changes
        # (its turn opens or closes, it leaves, or the episode ends), not on every turn of a 100-agent episode
        self._changed: dict[str, Flag] = {}
        self._usernames: dict[str, str] | None = None  # agent id -> username, read on first need
        self._hook_gate()

    @property
    def turns(self) -> dict[str, Any]:
        """The latest Turn the episode handed each agent (its observation and prompts)."""
        return self.gate.turns

    # -- following the gate ----------------------------------------------------------------------
    def _hook_gate(self) -> None:
        gate, tracker = self.gate, self
        open_, close, finish = gate.open, gate.close, gate.finish

        def opened(agent_id: str, round: int, *a: Any, **kw: Any) -> Any:
            out = open_(agent_id, round, *a, **kw)
            tracker.on_open(agent_id, round)
            return out

        def closed(*a: Any, **kw: Any) -> Any:
            tracker.on_close()
            return close(*a, **kw)

        def finished(outcome: EpisodeOutcome | None = None) -> Any:
            out = finish(outcome)
            tracker.finish("the episode has ended", outcome)
            return out

        gate.open, gate.close, gate.finish = opened, closed, finished

    def on_open(self, agent_id: str, round: int) -> None:
        self.serials[agent_id] = self.serials.get(agent_id, 0) + 1
        new_round = self.current_round != round
        self.current_round = round
        self.current = OpenTurn(agent_id, round, self.serials[agent_id])
        if new_round:  # waiting calls of agents retired at the tick (death) learn it now
            self._notify_left()
        self._notify(agent_id)

    def on_close(self) -> None:
        cur = self.current
        if cur is not None and not cur.claimed:
            self.lost[cur.agent_id] = self.lost.get(cur.agent_id, 0) + 1
        self.current = None
        if cur is not None:
            self._notify(cur.agent_id)

    def on_turn(self, turn: Any) -> OpenTurn:
        """Called by the seat teams with the Turn the episode built; returns the open turn record."""
        cur = self.current
        if cur is None or cur.agent_id != turn.agent_id:  # a gate without open(): follow the team instead
            self.gate.turns[turn.agent_id] = turn
            self.on_open(turn.agent_id, turn.round)
            cur = self.current
        assert cur is not None
        return cur

    def finish(self, reason: str, outcome: EpisodeOutcome | None = None) -> None:
        if self.finished is None:
            self.finished = reason
        self.outcome = outcome or self.outcome
        self.current = None
        self._notify()

    def _notify(self, agent_id: str | None = None) -> None:
        """Wake the calls waiting for ``agent_id`` (all waiting calls when None)."""
        if agent_id is None:
            flags, self._changed = list(self._changed.values()), {}
        else:
            flag = self._changed.pop(agent_id, None)
            flags = [flag] if flag is not None else []
        for flag in flags:
            flag.set()

    def _notify_left(self) -> None:
        """Wake the waiting calls of agents that are out of play now (not every waiting call: a round of a
        100-agent episode would wake 100 calls that go back to sleep)."""
        try:
            left = self.episode.world.out_of_play(list(self._changed))
        except Exception:  # a world that cannot say: wake everyone, they check for themselves
            self._notify()
            return
        for agent_id in left:
            self._notify(agent_id)

    def _flag(self, agent_id: str) -> Flag:
        flag = self._changed.get(agent_id)
        if flag is None:
            flag = self._changed[agent_id] = Flag()
        return flag

    async def _wait_change(self, agent_id: str, until: float, extra: list[Flag],
                           progress: Progress | None, started: float, what: Callable[[], str]) -> None:
        """Sleep until ``agent_id``'s state changes, a flag in ``extra`` is set, or ``until`` (monotonic);
        report progress every ``progress_every`` seconds meanwhile."""
        flags = [self._flag(agent_id), *extra]
        loop = asyncio.get_running_loop()
        while True:
            now = time.monotonic()
            step = min(until - now, self.progress_every) if progress is not None else until - now
            if step <= 0 or any(f.is_set() for f in flags):
                return
            fut = loop.create_future()  # True: a flag was set; False: the step's time is up
            for f in flags:
                f.watch(fut)
            timer = loop.call_later(step, _time_up, fut)
            try:
                woken = await fut
            finally:
                timer.cancel()
                for f in flags:
                    f.unwatch(fut)
            if woken or time.monotonic() >= until:
                return
            if progress is not None:
                await progress(time.monotonic() - started, what())

    # -- calls -----------------------------------------------------------------------------------
    async def call(self, agent_id: str, tool: str, arguments: Any, wait_timeout: float | None = None,
                   arrived: float | None = None, gone: Flag | None = None,
                   progress: Progress | None = None) -> tuple[ToolResult, int, OpenTurn | None]:
        """Wait for ``agent_id``'s turn, execute through the gate; ``(result, turns lost before it, the turn it
        took or None when it was not executed)``. ``arrived`` is ``time.monotonic()`` when the request reached
        the server, ``gone`` is set when its client disconnects. Never raises for the caller's mistakes:
        refusals and timeouts come back as failed results."""
        limit = self.wait_timeout if wait_timeout is None else wait_timeout
        if self.finished:
            return self.over(), 0, None
        cur = self.current
        if cur is not None and cur.agent_id == agent_id and cur.claimed:
            return await self._second_call(cur, tool, arguments), 0, None
        if self.executing.get(agent_id, 0):  # its other call is executing this very turn
            self._record_stray(agent_id, tool, arguments, "sent while another call of this agent was executing")
            return self._refuse_second(None), 0, None
        if self.answering.get(agent_id, 0):  # its last call's result has not been sent yet
            self._record_stray(agent_id, tool, arguments, "sent before the result of the call that took the turn")
            return self._refuse_second(None), 0, None
        if arrived is not None and arrived < self.done_at.get(agent_id, float("-inf")):
            self._record_stray(agent_id, tool, arguments, "sent together with the call that took the turn")
            return self._refuse_second(None), 0, None
        older = self.waiting.get(agent_id)
        if older is not None:  # rule 4: the newer call replaces a call its client gave up on
            older.abandoned.set()
        me = self.waiting[agent_id] = Waiting()
        try:
            return await self._wait_and_call(agent_id, tool, arguments, limit, me, gone, progress)
        finally:
            if self.waiting.get(agent_id) is me:
                del self.waiting[agent_id]

    async def _wait_and_call(self, agent_id: str, tool: str, arguments: Any, limit: float, me: Waiting,
                             gone: Flag | None, progress: Progress | None
                             ) -> tuple[ToolResult, int, OpenTurn | None]:
        cur = self.current
        target = cur.serial if cur is not None and cur.agent_id == agent_id else self.serials.get(agent_id, 0) + 1
        started = time.monotonic()
        deadline = started + limit
        extra = [me.abandoned] + ([gone] if gone is not None else [])
        while True:
            if self.finished:
                return self.over(), 0, None
            if me.abandoned.is_set():
                return self._not_executed("a newer call of yours replaced it (a client that gives up on a call "
                                          "should not expect it to run)"), 0, None
            if gone is not None and gone.is_set():
                return self._not_executed("your client disconnected"), 0, None
            cur = self.current
            if cur is not None and cur.agent_id == agent_id and cur.serial >= target:
                break
            if not self.is_active(agent_id):  # rule 6: wait for the end, to tell how the episode ended
                if time.monotonic() >= deadline:
                    return ToolResult.fail("not_active", self.left_text(agent_id)), 0, None
                await self._wait_change(agent_id, deadline, extra, progress, started,
                                        lambda: "you have left the episode: waiting for it to end")
                continue
            if self.serials.get(agent_id, 0) > target:  # our turn went by before this task woke up
                target = self.serials[agent_id] + 1
            if time.monotonic() >= deadline:
                return ToolResult.fail("timeout", self._still_waiting(agent_id, limit)), 0, None
            await self._wait_change(agent_id, deadline, extra, progress, started,
                                    lambda: self._waiting_text(agent_id))
        cur.claimed = True  # claimed before the first await below: no other call can take this turn
        self.claimed[agent_id] = cur.serial
        lost, self.lost[agent_id] = self.lost.get(agent_id, 0), 0
        self.executing[agent_id] = self.executing.get(agent_id, 0) + 1
        try:
            result = await self.gate.call(agent_id, tool, arguments)
        finally:
            self.executing[agent_id] -= 1
            self.done_at[agent_id] = time.monotonic()
            cur.executed.set()
        cur.result = result
        return result, lost, cur

    async def next_turn(self, agent_id: str, after: OpenTurn, timeout: float, progress: Progress | None = None,
                        gone: Flag | None = None) -> Any:
        """After ``after`` (a turn this agent's call took): wait until the agent's next turn opens and return
        its Turn (the observation the episode built for it), or None when the agent left, the episode ended,
        ``timeout`` passed or the client went away (``gone``: nobody waits for the result) first."""
        started = time.monotonic()
        deadline = started + timeout
        self.answering[agent_id] = self.answering.get(agent_id, 0) + 1
        try:
            while True:
                cur = self.current
                if self.finished or not self.is_active(agent_id):
                    return None
                if cur is not None and cur.agent_id == agent_id and cur.serial > after.serial:
                    return self.turns.get(agent_id)
                if time.monotonic() >= deadline or (gone is not None and gone.is_set()):
                    return None
                await self._wait_change(agent_id, deadline, [gone] if gone is not None else [], progress, started,
                                        lambda: self._waiting_text(agent_id, next_turn=True))
        finally:
            self.answering[agent_id] -= 1

    def over(self) -> ToolResult:
        how = f" ({self.outcome.text()})" if self.outcome is not None else ""
        return ToolResult.fail("refused", f"The episode is over{how}; no more actions. Your call was not executed.")

    def left_text(self, agent_id: str, call: bool = True) -> str:
        """What an agent that has left is told while the episode still runs (by a call: ``call``, or a read)."""
        cur = self.current
        now = f"it is {self.username(cur.agent_id)}'s turn, round {cur.round}" if cur else "between turns"
        why = (getattr(self.episode, "left", None) or {}).get(agent_id)  # known once the episode has retired it
        text = (f"You have left the episode ({why or 'completed, dead or out of action steps'}); "
                f"you cannot act any more. The episode is still running ({now}).")
        if call:
            return text + " Your call was not executed; call again (it waits for the end) to learn how it ends."
        return text + " Read agentworld://turn, or call any tool (it waits for the end), to learn how it ends."

    @staticmethod
    def _not_executed(why: str) -> ToolResult:
        return ToolResult.fail("refused", f"Not executed: {why}.")

    def _record_stray(self, agent_id: str, tool: str, arguments: Any, reason: str) -> None:
        """A refused call the gate never saw: hand it to the gate's record of refused calls, which the
        episode writes with the agent's next turn."""
        from ..core.play import calls

        value, problem, emitted = calls.resolve(arguments)
        stored = calls.sanitize(value if problem is None else emitted)
        self.gate.stray.setdefault(agent_id, []).append(RefusedCall(
            tool=calls.sanitize(str(tool)), reason=reason,
            arguments=stored if isinstance(stored, dict) and problem is None else {calls.RAW_ARGUMENTS: stored}))

    async def _second_call(self, cur: OpenTurn, tool: str, arguments: Any) -> ToolResult:
        if self.current is cur:  # the gate is still open and has executed the first call: it refuses and records
            result = await self.gate.call(cur.agent_id, tool, arguments)
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

    def _waiting_text(self, agent_id: str, next_turn: bool = False) -> str:
        cur = self.current
        now = f"it is {self.username(cur.agent_id)}'s turn (round {cur.round})" if cur else "between turns"
        return f"waiting for your {'next ' if next_turn else ''}turn: {now}"

    def _still_waiting(self, agent_id: str, waited: float) -> str:
        cur = self.current
        now = (f"it is {self.username(cur.agent_id)}'s turn (round {cur.round})" if cur else
               "no turn is open right now")
        return (f"Timed out waiting for your turn: waited {waited:g} s and {now}. Your call was not executed; "
                "call again to keep waiting.")

    def is_active(self, agent_id: str) -> bool:
        try:  # asked several times per call: out_of_play reads the flags without building the agent's state
            return not self.episode.world.out_of_play([agent_id])
        except Exception:  # a world that does not know the agent yet: treat as active
            return True

    # -- reading ---------------------------------------------------------------------------------
    def username(self, agent_id: str) -> str:
        names = self._usernames
        if names is None:  # every result names whose turn it is: not a scan of the task's agents each time
            names = self._usernames = {a.agent_id: a.username for a in getattr(self.episode.task, "agents", []) or []}
        return names.get(agent_id, agent_id)

    def whose_turn(self) -> dict[str, Any]:
        cur = self.current
        if self.finished:
            out: dict[str, Any] = {"episode_over": True, "reason": self.finished}
            if self.outcome is not None:
                out["outcome"] = self.outcome.model_dump(mode="json")
            return out
        if cur is None:
            return {"episode_over": False, "agent_id": None, "username": None, "round": None}
        return {"episode_over": False, "agent_id": cur.agent_id, "username": self.username(cur.agent_id),
                "round": cur.round, "call_made": cur.claimed}
