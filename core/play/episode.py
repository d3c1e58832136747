"""The round-robin episode (DESIGN section 6) and the turn gate that enforces it.

The episode owns the loop, like PettingZoo's agent-environment cycle: for each round, for each active agent
in the task's order, it builds the agent's observation and prompts, opens the gate for that agent, awaits
``team.act(turn)`` (the team calls ``turn.port.call`` once), closes the gate and records a ``turn`` event.
After the last turn of a round the world ticks (``tick`` event) and the verifier is checked; the episode
ends on a passing verifier, when no agent is active, or at the round budget. Everything is written to
``trajectory.jsonl`` as it happens (one flushed line per event), then ``result.json`` and
``final_state.json``.

The :class:`TurnGate` is the one place of the turn contract (docs/protocol.md): the first call of the agent
whose turn it is is the turn's action, valid or not (a malformed call is an agent tool error that uses the
turn); any other call (out of turn, a second call in the turn, an agent that left) is refused with a
:class:`ToolResult` the model can read (error ``refused``); an engine exception is a ``harness_error``, not
the agent's. The episode tells a model-service failure (``infra``) from the agent's own timeout by the
turn's trace. External seats (MCP) use ``wait_turn`` to block until their turn and ``wait_first_call`` to
learn that the turn's action happened.
"""

from __future__ import annotations

import asyncio
import json
import time
import itertools
import traceback
import weakref
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..world.effects import Effects, ToolResult
from ..world.observation import ChatMessage, PartyMember
from .prompts import Brief, render_user, team_briefs, turn_order_text
from . import calls, fingerprint
from .calls import sanitize
from .protocol import Team, Turn, TurnOutcome
from .view import AgentView, TeamView
from .records import (AgentStatus, EndEvent, EndReason, EpisodeOutcome, EpisodeResult, ForkOrigin, ModelAttempt,
                      RawCall, RefusedCall, StartEvent, TickEvent, TurnEvent)
from ..tasks.task import Task
from ..world.tools import TOOLS, ToolSpec
from .notes import note_filter
from .trajectory import TRAJECTORY_FILE, TrajectoryWriter, read_events
from ..tasks.variants import Variant, apply_variant, get_variant
from .coordinator import brief_note, hub_tools
from ..tasks.verify import VerifyResult, verify
from ..world.api import PlayerState, World, WorldUnavailable

Progress = Callable[[Any], Any]  # called with every event; a returned text asks the episode to stop (budget)


_SECOND: list[Any] = [None, ""]  # the last whole second a timestamp was made in, and its text
# how a teammate who has left reads in everyone's turn line (Episode._retire's reasons)
LEFT_WORDS = {"completed": ("declared its part done", "you declared your part done"), "dead": ("died", "you died"),
              "max_action_steps": ("used all its actions", "you used all your actions"), "left": ("left", "you left")}
_MILLIS = tuple(f".{ms:03d}+00:00" for ms in range(1000))  # a timestamp's tail after its second, per millisecond


def _now() -> str:
    """UTC now, ISO 8601 to the millisecond (``datetime.isoformat(timespec="milliseconds")``'s text); the
    date and time of day are formatted once a second (every event is stamped), the milliseconds looked up."""
    t = time.time()
    second = int(t)
    if second != _SECOND[0]:
        _SECOND[:] = [second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")]
    return _SECOND[1] + _MILLIS[int((t - second) * 1000)]


# ---------------------------------------------------------------------------------------------------
# The turn gate
# ---------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class GateRecord:
    """What happened at the gate during one turn."""

    agent_id: str
    round: int
    tool: str | None = None
    arguments: dict[str, Any] | None = None  # sanitised; {"_raw_arguments": ...} when not a JSON object
    result: ToolResult | None = None
    refused: list[RefusedCall] = field(default_factory=list)
    calls: list[RawCall] = field(default_factory=list)  # every call of this agent that reached the gate this turn
    harness_error: str | None = None  # traceback of an exception raised while executing the call
    tool_s: float = 0.0  # time the world spent executing the call
    parsed: dict[str, Any] | None = None  # the arguments as validated (what the world acted on)


class GatePort:
    """A :class:`~agentworld.core.play.protocol.ToolPort` bound to one agent: ``call`` is all it offers. It holds
    no reference to the gate (nor does ``call``'s closure): only an opaque key into this module's registry
    of open gates, so nothing a team is handed leads to the world (tests/test_team_view.py walks it)."""

    __slots__ = ("agent_id", "call")

    def __init__(self, gate: "TurnGate", agent_id: str):
        self.agent_id = agent_id
        key = gate.key

        async def call(tool: str, arguments: Any = None) -> ToolResult:
            found = _GATES.get(key)
            if found is None:
                return ToolResult.fail("refused", "Refused: the episode is over.")
            return await found.call(agent_id, tool, arguments)

        self.call = call


# The gates of the episodes alive in this process, by an opaque key (ports find their gate here).
_GATES: "weakref.WeakValueDictionary[int, TurnGate]" = weakref.WeakValueDictionary()
_gate_keys = itertools.count(1)


class TurnGate:
    """Lets exactly one call through per turn, for the agent whose turn it is, and decides what it was.

    This is the one place of the turn contract (docs/protocol.md): every path (in-process frameworks, their
    ``--tools mcp`` clients, external MCP seats, scripted teams) hands the call here as emitted."""

    def __init__(self, world: World, tools: dict[str, ToolSpec], is_active: Callable[[str], bool],
                 posts: dict[tuple[int, int], tuple[str, str]] | None = None):
        self.world = world
        self.tools = tools  # the tools this episode offers (the variant may have removed chat)
        self.posts = posts or {}  # tile -> (agent id, username) whose objective names it as its post
        self.is_active = is_active
        self.current: str | None = None
        self.round = 0
        self.finished = False
        self.outcome: EpisodeOutcome | None = None  # how the episode ended, once it has
        self.turns: dict[str, Turn] = {}  # the latest Turn each agent was handed (observation, prompts)
        self._record: GateRecord | None = None
        # waking waiters: events made only when someone waits (an in-process team never does, and three new
        # events a turn were a cost of every turn); a waiter takes the event, the next change sets and drops it
        self._changed: asyncio.Event | None = None
        self._first_call: asyncio.Event | None = None
        self._called = False  # the open turn's call has executed, or that turn or the episode ended
        self.stray: dict[str, list[RefusedCall]] = {}  # out-of-turn calls, reported on the caller's next turn
        self.world_error: WorldUnavailable | None = None  # the world went away during a call: the episode ends
        self.key = next(_gate_keys)
        self._ports: dict[str, GatePort] = {}
        _GATES[self.key] = self

    # -- the episode's side ------------------------------------------------------------------------
    def open(self, agent_id: str, round: int, turn: Turn | None = None) -> None:
        if self._record is not None:
            raise RuntimeError(f"turn gate: open({agent_id}) while {self._record.agent_id}'s turn is open")
        self.current, self.round = agent_id, round
        if turn is not None:
            self.turns[agent_id] = turn
        self._record = GateRecord(agent_id, round)
        self._first_call, self._called = None, False
        self._notify()

    def close(self) -> GateRecord:
        if self._record is None:
            raise RuntimeError("turn gate: close() without an open turn")
        record, self._record, self.current = self._record, None, None
        self._set_called()  # wake anyone waiting on this turn: it is over either way
        self._notify()
        return record

    def finish(self, outcome: EpisodeOutcome | None = None) -> None:
        """The episode is over: wake every waiter; every later call is refused (and told ``outcome``)."""
        self.finished = True
        self.outcome = outcome
        self._set_called()
        self._notify()

    def _notify(self) -> None:
        ev, self._changed = self._changed, None
        if ev is not None:
            ev.set()

    def _set_called(self) -> None:
        self._called = True
        ev = self._first_call
        if ev is not None:
            ev.set()

    # -- the agents' side ---------------------------------------------------------------------------
    def port(self, agent_id: str) -> GatePort:
        """The agent's port (one per agent, handed out turn after turn: it holds only the agent id and a key)."""
        port = self._ports.get(agent_id)
        if port is None:
            port = self._ports[agent_id] = GatePort(self, agent_id)
        return port

    def _refusal(self, agent_id: str, rec: GateRecord | None) -> str | None:
        if self.finished:
            return "the episode is over" + (f" ({self.outcome.text()})" if self.outcome else "")
        if not self.is_active(agent_id):
            return "you have left the episode (completed, dead or out of action steps); you cannot act any more"
        if rec is None or rec.agent_id != agent_id:
            whose = f"it is {rec.agent_id}'s turn" if rec else "no turn is open"
            return f"it is not your turn ({whose}); wait for your turn"
        if rec.tool is not None:
            return (f"you already acted this turn ({rec.tool}); one tool call per turn. "
                    "Your next turn comes in the next round")
        return None

    async def call(self, agent_id: str, tool: Any, arguments: Any = None) -> ToolResult:
        """Decide one call as it was emitted: ``arguments`` may be an object, JSON text (valid or not), any other
        JSON value, or the wire form ``{"_raw_arguments": ...}``. Never raises: every outcome is a result."""
        rec = self._record
        name = sanitize(str(tool))
        value, problem, emitted = calls.resolve(arguments)
        stored = sanitize(value if problem is None else emitted)
        as_object = stored if isinstance(stored, dict) and problem is None else {calls.RAW_ARGUMENTS: stored}
        reason = self._refusal(agent_id, rec)
        if rec is not None and rec.agent_id == agent_id:  # records of the gate's own values, not validated again
            rec.calls.append(RawCall(name=name, arguments=stored))
        if reason is not None:
            refused = RefusedCall(tool=name, arguments=as_object, reason=reason)
            if rec is not None and rec.agent_id == agent_id:
                rec.refused.append(refused)
            else:
                self.stray.setdefault(agent_id, []).append(refused)
            return ToolResult.fail("refused", f"Refused: {reason}.")
        assert rec is not None
        rec.tool, rec.arguments = name, as_object
        t0 = time.perf_counter()
        spec = self.tools.get(name)
        if spec is None:
            known = ", ".join(self.tools)
            removed = " (chat is disabled in this game)" if name in TOOLS else ""
            result = ToolResult.fail("unknown_tool", f"Unknown tool '{name}'{removed}. Tools: {known}.")
        elif problem is not None:
            result = ToolResult.fail("bad_args", f"{name}: the arguments are not valid JSON ({problem}). Send one "
                                                 f"JSON object. Example: {spec.example}")
        else:
            try:
                result, rec.parsed = spec.call(self.world, agent_id, stored)
            except WorldUnavailable as exc:  # not the agent's doing; the episode ends after this turn
                self.world_error = exc
                result = ToolResult.fail("infra", f"The game world is unavailable: {exc}")
            except Exception as exc:  # noqa: BLE001 - an engine bug must not be the agent's failure, nor end the episode
                rec.harness_error = traceback.format_exc()
                result = ToolResult.fail("harness_error", f"No action: the game engine failed while running {name} "
                                                          f"({type(exc).__name__}); this turn is not held against you.")
        if self.posts and result.ok and result.effects.move is not None:
            result = self._post_said(agent_id, result)
        rec.tool_s = time.perf_counter() - t0
        rec.result = result
        self._set_called()
        return result

    def _post_said(self, agent_id: str, result: ToolResult) -> ToolResult:
        """A walk that ends on a tile some player's objective names as its post says whose post it is (a
        player one tile short of its own post, on a teammate's, would not know otherwise)."""
        end = tuple(result.effects.move.end)
        owner = self.posts.get(end)  # type: ignore[arg-type]
        if owner is None:
            return result
        whose = "your own post" if owner[0] == agent_id else f"{owner[1]}'s post"
        return result.model_copy(update={"text": f"{result.text} ({end[0]},{end[1]}) is {whose}."})

    async def wait_turn(self, agent_id: str, timeout: float | None = None) -> bool:
        """Block until it is ``agent_id``'s turn and it has not acted yet. False on timeout, end, or retirement."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            rec = self._record
            if rec is not None and rec.agent_id == agent_id and rec.tool is None and not self.finished:
                return True
            if self.finished or not self.is_active(agent_id):
                return False
            ev = self._changed
            if ev is None:
                ev = self._changed = asyncio.Event()
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            try:
                await asyncio.wait_for(ev.wait(), remaining)
            except (asyncio.TimeoutError, TimeoutError):
                return False

    async def wait_first_call(self, timeout: float | None = None) -> bool:
        """Wait until the open turn's call has executed (or the turn/episode ended). False on timeout."""
        if self._called:
            return True
        ev = self._first_call
        if ev is None:
            ev = self._first_call = asyncio.Event()
        try:
            await asyncio.wait_for(ev.wait(), timeout)
        except (asyncio.TimeoutError, TimeoutError):
            return False
        return True

    @property
    def acted(self) -> bool:
        """Whether the open turn's call has executed."""
        return self._record is not None and self._record.tool is not None

    @property
    def open_record(self) -> GateRecord | None:
        """The open turn's record (read-only use: the MCP server counts the action of the open turn)."""
        return self._record


# ---------------------------------------------------------------------------------------------------
# The episode
# ---------------------------------------------------------------------------------------------------
def make_world(task: Task, seed: int, backend: str = "embedded", options: dict[str, Any] | None = None) -> World:
    """The task's world with its rule overrides: the embedded engine (built in, no plugin host needed), or
    another backend from the ``register_worlds`` registry with its options (``server_url``, ...)."""
    if backend == "embedded" and not options:
        from ..world.datapack import load_world
        from ..tasks.mobs import world_options as task_world_options
        from ..world.engine import EmbeddedWorld

        return EmbeddedWorld(load_world(), seed=seed, rules=dict(task.world_rules), mechanics=task.mechanics,
                             **task_world_options(task))
    from .. import plugins

    if task.mechanics and backend != "embedded":
        raise ValueError(f"task {task.id} uses events, joint actions or hidden information, which only the embedded "
                         f"world runs; play it with --world embedded")
    if task.mechanics:
        options = {**(options or {}), "mechanics": task.mechanics}

    return plugins.get("world", backend)(dict(task.world_rules), seed=seed, **(options or {}))


def posts_of(task: Task) -> dict[tuple[int, int], tuple[str, str]]:
    """tile -> (agent id, username) of every post the task's objective names: an ``at_location`` check of one
    agent at an (x, y)."""
    posts: dict[tuple[int, int], tuple[str, str]] = {}
    for spec in task.verifier.checks if task.verifier is not None else ():
        p = spec.params
        if spec.check == "at_location" and isinstance(p.get("agent"), str) and isinstance(p.get("x"), int) \
                and isinstance(p.get("y"), int):
            agent_id = task.resolve_agent(p["agent"])
            if agent_id is not None:
                posts.setdefault((p["x"], p["y"]), (agent_id, task.agent(agent_id).username))
    return posts


def agent_status(world: World, agent_id: str, st: "PlayerState | None" = None,
                 inventory: list[dict[str, Any]] | None = None) -> AgentStatus:
    """The turn event's picture of an agent (from ``st`` when the caller already has the agent's state;
    ``inventory``: its inventory rows, when the caller has them from a status of the same inventory)."""
    st = st if st is not None else world.player_state(agent_id)
    return AgentStatus(**{
        "hp": st.hp, "max_hp": st.max_hp, "x": st.x, "y": st.y, "level": st.combat_level, "alive": st.alive,
        "inventory": inventory if inventory is not None else [{"key": s.item, "name": s.name, "count": s.count}
                                                              for s in st.inventory],
        "xp": sum(st.xp.values()), "equipment": dict(st.equipment)})


def turn_event(values: dict[str, Any]) -> TurnEvent:
    """The turn event holding ``values`` (every field but its type, in the class's order), validated."""
    v = values
    del v["type"]
    return TurnEvent(**v)


class _TurnTexts:
    """A turn's observation text and user prompt, rendered when a team first reads them (scripted policies never
    do), the observation once for both. It holds the agent's own observation, not the Turn: a Turn in a
    reference cycle would outlive its turn until a full garbage collection (with everything in it)."""

    __slots__ = ("obs", "fmt", "username", "round", "rounds", "text")

    def __init__(self, obs: Any, fmt: str, username: str, round: int, rounds: int):
        self.obs, self.fmt, self.username, self.round, self.rounds = obs, fmt, username, round, rounds
        self.text: str | None = None

    def observation(self) -> str:
        if self.text is None:
            self.text = self.obs.render(self.fmt)
        return self.text

    def user_prompt(self) -> str:
        return render_user(self.observation(), username=self.username, round=self.round, max_rounds=self.rounds)


class SystemPrompts(Mapping[str, str]):
    """agent id -> its system prompt, rendered from its :class:`Brief` when asked for, the last few kept.

    Each prompt lists every teammate, so keeping all of them costs memory in the square of the team size
    (10,000 agents: gigabytes); a team that reads its prompts gets the same text, rendered again."""

    KEEP = 16

    def __init__(self, briefs: dict[str, Brief]):
        self._briefs = briefs
        self._kept: dict[str, str] = {}

    def __getitem__(self, agent_id: str) -> str:
        text = self._kept.get(agent_id)
        if text is None:
            text = self._briefs[agent_id].render()  # KeyError for an agent not in the task
            if len(self._kept) >= self.KEEP:
                del self._kept[next(iter(self._kept))]
            self._kept[agent_id] = text
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self._briefs)

    def __len__(self) -> int:
        return len(self._briefs)


class Episode:
    """One task played by one team. ``await Episode(...).run()`` -> EpisodeResult."""

    def __init__(self, task: Task, team: Team | None = None, *, seed: int = 0, variant: str | Variant = "vanilla",
                 out_dir: str | Path | None = None, framework: str = "", model: str = "",
                 obs_format: str = "text", turn_timeout: float | None = None, progress: Progress | None = None,
                 world: World | None = None, episode_id: str | None = None, played_task: Task | None = None,
                 world_backend: str = "embedded", world_options: dict[str, Any] | None = None,
                 build_team: Callable[[TeamView], Team] | None = None, grants: Sequence[str] = (),
                 fork: ForkOrigin | None = None):
        """``task`` is the task as written; the episode plays ``apply_variant(task, variant, seed)``. A caller
        that already made that transformed task passes it as ``played_task``. Without ``world`` the episode
        makes one (``make_world``: backend and options) and closes it at the end.

        The team is ``team``, or ``build_team(view)`` called with the episode's :class:`TeamView` (what the
        runner does: a team is built from the view, never from the episode). ``grants`` names what the team
        was handed beyond its view (``["reference_plan"]`` for the oracle baseline); the start event records it,
        and ``fork``, in a fork's record, its parent episode and the round it took over (``core/play/fork.py``)."""
        if (team is None) == (build_team is None):
            raise ValueError("Episode: give exactly one of team= or build_team= (a function of the TeamView)")
        if obs_format not in ("text", "json"):
            raise ValueError(f"obs_format must be 'text' or 'json', got {obs_format!r}")
        self.variant = get_variant(variant)
        self.base_task = task
        self.task = played_task if played_task is not None else apply_variant(task, self.variant, seed)
        self.team: Team = team  # type: ignore[assignment]  # set from build_team below when not given
        self.grants = list(grants)
        self.fork = fork
        self.seed = seed
        self.framework, self.model = framework, model
        self.obs_format = obs_format
        self.turn_timeout = turn_timeout
        self.progress = progress
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.episode_id = episode_id or f"{task.id}-{self.variant.label}-s{seed}"
        self.agent_ids = self.task.agent_ids
        self.usernames = {a.agent_id: a.username for a in self.task.agents}
        self._owns_world = world is None
        self.world_backend = world_backend
        self.world = world if world is not None else make_world(self.task, seed, world_backend, world_options)
        try:
            for a in self.task.agents:
                self.world.add_player(a.player_spec())
        except BaseException:
            if self._owns_world:
                self.world.close()
            raise
        self.tools: dict[str, ToolSpec] = {n: t for n, t in TOOLS.items()
                                           if not (self.variant.remove_chat and t.is_chat)}
        self.coordinator = self.agent_ids[0]
        if self.variant.oracle_communication:  # the coordinator is the hub of all talk (play/coordinator.py)
            self.tools = hub_tools(self.tools, self.coordinator, self.usernames[self.coordinator])
        self.active: set[str] = set(self.agent_ids)
        self.left: dict[str, str] = {}  # agent id -> why and when it left, as told to it: "you died in round 20"
        self._gone: list[str] = []  # the same for the turn line, in the order they left: "prospector (died in round 20)"
        self._order: list[str] = []  # the usernames in this round's turn order, and agent id -> place in it
        self._order_at: dict[str, int] = {}
        self.gate = TurnGate(self.world, self.tools, lambda a: a in self.active, posts_of(self.task))
        self._notes = note_filter(self.task)
        self.actions_used = {a: 0 for a in self.agent_ids}
        self.last_result: dict[str, ToolResult] = {}
        self._statuses: dict[str, tuple[PlayerState, AgentStatus]] = {}  # per agent: its last state and status
        self.history: list[tuple[str, Effects]] = []
        # events go to trajectory.jsonl as they happen; only an episode with no out_dir keeps them in memory
        self._events: list[Any] = []
        self.round = 0
        self._coordinator_inbox: list[ChatMessage] = []
        self.briefs = team_briefs(self.task, self.world.rules, can_chat=not self.variant.remove_chat,
                                  shared_plan=self.task.shared_plan if self.variant.show_shared_plan else None)
        if self.variant.oracle_communication:
            c = self.coordinator
            self.briefs = {a: replace(b, note=brief_note(a, c, self.usernames[c], self.world.rules.chat_radius))
                           for a, b in self.briefs.items()}
        self.system_prompts = SystemPrompts(self.briefs)
        self._writer: TrajectoryWriter | None = None
        self._step = 0
        self._counts = {"actions": 0, "chats": 0, "waits": 0, "tool_errors": 0, "no_calls": 0, "refused": 0,
                        "infra": 0, "harness": 0, "tokens_in": 0, "tokens_out": 0}
        self.stop_reason: str | None = None  # set when the run asks the episode to stop (its budget)
        self.harness_s = 0.0
        self.record_s = 0.0  # time spent writing turn events (part of harness_s, outside each event's own figure)
        self.verification: VerifyResult | None = None
        self.result: EpisodeResult | None = None
        self._view: TeamView | None = None
        if build_team is not None:
            try:
                self.team = build_team(self.view())
            except BaseException:
                if self._owns_world:
                    self.world.close()
                raise

    # -- what a team may know ---------------------------------------------------------------------------
    def view(self) -> TeamView:
        """The read-only view a team is built from and started with (``core/play/view.py``): per agent its
        brief, tools and the rules its brief states. Nothing here leads back to the world or the task."""
        if self._view is None:
            tools = tuple(self.tools.values())
            agents = tuple(AgentView(agent_id=a.agent_id, username=a.username, role=a.role,
                                     brief_source=self.briefs[a.agent_id], tools=tools,
                                     rules=self.briefs[a.agent_id].team.rules)
                           for a in self.task.agents)
            self._view = TeamView(task_id=self.task.id, task_name=self.task.name,
                                  objective=self.task.objectives.primary.strip(), rounds=self.task.rounds,
                                  variant=self.variant.label, agents=agents)
        return self._view

    async def _start_team(self) -> Any:
        """Start the team's tool server when it needs one (``Team.tool_server``, e.g. "mcp"), through the
        plugin host, then ``team.start(view)`` with the agents' seats in the view. Returns the server."""
        view = self.view()
        server = None
        name = getattr(self.team, "tool_server", None)
        if name:
            from .. import plugins

            server = await plugins.get("tool_server", name)(self)
            view = view.with_seats(server.seats)
        try:
            await self.team.start(view)
        except BaseException:
            if server is not None:
                await server.aclose()
            raise
        return server

    # -- recording ----------------------------------------------------------------------------------
    @property
    def events(self) -> list[Any]:
        """Every event so far: read back from ``trajectory.jsonl`` (memory stays flat over a long episode),
        or kept in memory when the episode writes no files."""
        if self.out_dir is not None and (self.out_dir / TRAJECTORY_FILE).exists():
            return read_events(self.out_dir / TRAJECTORY_FILE)
        return list(self._events)

    def _emit(self, event: Any) -> None:
        if self._writer is not None:
            self._writer.write(event)
        else:
            self._events.append(event)
        if self.progress is not None:
            stop = self.progress(event)
            if isinstance(stop, str) and stop and self.stop_reason is None:
                self.stop_reason = stop  # e.g. the run's budget: the episode ends before the next turn

    # -- the loop -------------------------------------------------------------------------------------
    async def run(self) -> EpisodeResult:
        wall0 = time.perf_counter()
        if self.out_dir is not None:
            self._writer = TrajectoryWriter(self.out_dir / TRAJECTORY_FILE)
            # the task definition as written, for exporters (the paper's task_definition field)
            (self.out_dir / "task.json").write_text(json.dumps(self.base_task.raw, indent=1, default=str) + "\n",
                                                    encoding="utf-8")
        self._emit(StartEvent(
            episode_id=self.episode_id, task_id=self.task.id, seed=self.seed, variant=self.variant.label,
            framework=self.framework, model=self.model, world_version=self.world.version,
            agents=[{"agent_id": a.agent_id, "username": a.username, "x": a.x, "y": a.y} for a in self.task.agents],
            max_rounds=self.task.rounds, max_action_steps=self.task.max_action_steps, timestamp=_now(),
            grants=self.grants, harness_version=fingerprint.harness_version(), **fingerprint.task_facts(self.base_task),
            world_pins=fingerprint.world_pins(self.world), world_backend=self.world_backend,
            turn_timeout=self.turn_timeout, fork=self.fork))
        reason: EndReason = "round_budget"
        server = None
        try:
            server = await self._start_team()
            for rnd in range(1, self.task.rounds + 1):
                self.round = rnd
                order = [a for a in self.agent_ids if a in self.active]  # this round's turn order
                self._order = [self.task.agent(a).username for a in order]
                self._order_at = {a: i for i, a in enumerate(order)}
                for agent_id in self.agent_ids:
                    if self.stop_reason is not None:
                        break
                    if agent_id in self.active:
                        await self._turn(agent_id, rnd)
                if self.stop_reason is not None:
                    reason = "budget_stop"
                    break
                if self._tick(rnd):
                    reason = "verifier_passed"
                    break
                if not self.active:
                    reason = "no_active_agents"
                    break
        except (asyncio.CancelledError, KeyboardInterrupt):
            reason = "aborted"
            raise
        except WorldUnavailable:  # an infrastructure error: recorded as one; a resumed run reruns the episode
            reason = "error"
            self._counts["infra"] += 1
            raise
        except Exception:
            reason = "error"
            raise
        finally:
            self.gate.finish(self._settle(reason))
            try:
                try:
                    await self.team.aclose()
                finally:
                    if server is not None:
                        await server.aclose()
            finally:
                try:
                    self._finish(reason, time.perf_counter() - wall0)
                finally:
                    if self._owns_world:
                        self.world.close()
        assert self.result is not None
        return self.result

    async def _act(self, turn: Turn) -> tuple[TurnOutcome, str | None]:
        """Run the team's turn: ``(outcome, None)``, or ``(outcome, failure)`` where failure is ``"timeout"``
        (the agent did not act in time), ``"infra"`` (its model service did not answer in time) or
        ``"harness"`` (the team's code raised: a harness error, not the agent's)."""
        try:
            if self.turn_timeout is not None:
                outcome = await asyncio.wait_for(self.team.act(turn), self.turn_timeout)
            else:
                outcome = await self.team.act(turn)
            if outcome is None:  # nothing to report beyond the call (if any) the gate already recorded
                return TurnOutcome(), None
            if not isinstance(outcome, TurnOutcome):  # the team broke the contract: its bug, not the agent's
                turn.trace.harness_error = (f"Team.act returned {type(outcome).__name__}, not a TurnOutcome "
                                            f"(or None): {sanitize(repr(outcome))[:200]}")
                return TurnOutcome(), f"harness:Team.act returned {type(outcome).__name__}, not a TurnOutcome"
            return outcome, None
        except (asyncio.TimeoutError, TimeoutError):
            if turn.trace.model_pending:  # waiting for the model service: not the agent's timeout
                turn.trace.attempts.append(ModelAttempt(
                    ok=False, error=f"no answer within the {self.turn_timeout:g} s turn timeout",
                    latency_s=round(time.perf_counter() - turn.trace.pending_since, 6)))
                return TurnOutcome(infra_error=f"the model service did not answer within the "
                                               f"{self.turn_timeout:g} s turn timeout"), "infra"
            return TurnOutcome(), "timeout"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crashing team must not take the benchmark down: record it apart
            turn.trace.harness_error = traceback.format_exc()
            return TurnOutcome(thinking=""), f"harness:{type(exc).__name__}: {str(exc)[:200]}"

    def _observe(self, agent_id: str, rnd: int):
        obs = self.world.observe(agent_id)
        obs.round, obs.max_rounds = rnd, self.task.rounds
        obs.actions_left = self.task.max_action_steps - self.actions_used[agent_id]
        pos = self._order_at.get(agent_id)
        if pos is not None:  # (a player alone, or one whose turn is not in this round's order: no line)
            obs.turn = turn_order_text(self._order, pos, self._gone)
        if obs.last_result is None and agent_id in self.last_result:
            obs.last_result = self.last_result[agent_id].text
        if obs.notes and self._notes is not None:  # only NPC lines about the task (core/play/notes.py)
            obs.notes = [n for n in obs.notes if self._notes.keep(n)]
        if self.variant.party_status:
            party = []
            for other in self.agent_ids:
                if other != agent_id:
                    st = self.world.player_state(other)
                    party.append(PartyMember(username=st.username, hp=st.hp, max_hp=st.max_hp, alive=st.alive))
            obs.party = party
        if self.variant.oracle_communication and agent_id == self.coordinator and self._coordinator_inbox:
            obs.chat = sorted(obs.chat + self._coordinator_inbox, key=lambda m: m.round)
            self._coordinator_inbox = []
        return obs

    async def _turn(self, agent_id: str, rnd: int) -> None:
        t0 = time.perf_counter()
        obs = self._observe(agent_id, rnd)
        seen = fingerprint.observation_sha256(obs)  # before the team holds it (a team may change its copy)
        agent = self.task.agent(agent_id)
        username = agent.username
        texts = _TurnTexts(obs, self.obs_format, username, rnd, self.task.rounds)
        turn = Turn(
            agent_id=agent_id, username=username, round=rnd, observation=obs,
            observation_text=texts.observation, system_prompt=self.briefs[agent_id].render,
            user_prompt=texts.user_prompt,
            tools=list(self.tools.values()), port=self.gate.port(agent_id), last_result=self.last_result.get(agent_id),
            extra={"variant": self.variant.label, "role": agent.role, "actions_left": obs.actions_left,
                   "shared_plan": self.task.shared_plan if self.variant.show_shared_plan else None})
        self.gate.open(agent_id, rnd, turn)
        pre = time.perf_counter() - t0
        outcome, failure = await self._act(turn)
        t1 = time.perf_counter()
        rec = self.gate.close()
        trace = turn.trace
        result = rec.result
        harness_error = rec.harness_error or trace.harness_error
        if result is None:  # no call reached the gate this turn
            if failure == "timeout":
                result = ToolResult.fail("timeout", f"No action: you did not act within {self.turn_timeout}s.")
            elif failure and failure.startswith("harness:"):
                result = ToolResult.fail("harness_error", f"No action: the harness failed ({failure[8:]}); this turn "
                                                          "is not held against you.")
            elif outcome.infra_error:
                result = ToolResult.fail("infra", f"No action: the model service failed ({outcome.infra_error}).")
            else:
                result = ToolResult.fail("no_call", "No action: your reply contained no tool call. Call exactly one tool.")
        error = result.error
        spec = self.tools.get(rec.tool) if rec.tool is not None else None
        free = spec is not None and spec.free  # a tool this episode offers that uses the turn, not the budget
        # chat and sleep are free; so is a turn the model service lost or the harness spoiled (neither is the
        # agent's). A chat tool the episode does not offer (no_communication) is an unknown tool: an action.
        counts = not free and error not in ("harness_error",) and not (rec.tool is None and error == "infra")
        self._count(rec, result, outcome, spec, harness_error)
        if counts:
            self.actions_used[agent_id] += 1
        self.last_result[agent_id] = result
        self.history.append((agent_id, result.effects))
        if self.variant.oracle_communication:
            self._forward_to_coordinator(agent_id, rnd, result.effects)
        refused = self.gate.stray.pop(agent_id, []) + rec.refused
        self._counts["refused"] += len(refused)
        st = self.world.player_state(agent_id)  # the one state read of this turn
        status = self._status(agent_id, st)
        self._retire_if_done(agent_id, rec, result, st)
        harness = pre + rec.tool_s + (time.perf_counter() - t1)
        raw_calls = list(trace.raw_calls) or [RawCall(name=sanitize(str(c.get("name"))),
                                                      arguments=calls.as_emitted(c.get("arguments")))
                                              for c in outcome.raw_calls] or list(rec.calls)
        tokens_in = outcome.tokens_in or sum(a.tokens_in for a in trace.attempts)
        tokens_out = outcome.tokens_out or sum(a.tokens_out for a in trace.attempts)
        self._counts["tokens_in"] += tokens_in
        self._counts["tokens_out"] += tokens_out
        event = turn_event({
            "type": "turn", "step": self._step, "round": rnd, "agent": agent_id, "username": agent.username,
            "tool": rec.tool, "arguments": rec.arguments, "parsed_arguments": rec.parsed, "ok": result.ok,
            "result": result.text, "error": error, "effects": result.effects, "refused": refused,
            "counts_as_action": counts, "status": status, "thinking": sanitize(outcome.thinking),
            "tokens_in": tokens_in, "tokens_out": tokens_out, "model_latency_s": outcome.model_latency_s,
            "harness_s": harness, "infra_error": outcome.infra_error, "harness_error": harness_error,
            "raw_calls": raw_calls, "attempts": list(trace.attempts), "context_trimmed": outcome.context_trimmed,
            "timestamp": _now(), "observation_sha256": seen})
        self._step += 1
        t2 = time.perf_counter()
        self._emit(event)
        record = time.perf_counter() - t2  # writing the event itself (not in its own harness_s: it is inside it)
        self.record_s += record
        self.harness_s += harness + record
        if self.gate.world_error is not None:
            raise self.gate.world_error

    def _status(self, agent_id: str, st: PlayerState) -> Any:
        """The turn event's picture of the agent: the last one again when the world handed out the same state
        object (the embedded world does while nothing in it changed: a sleep, a chat, a refused action)."""
        kept = self._statuses.get(agent_id)
        if kept is not None and kept[0] is st:
            return kept[1]
        same = kept is not None and kept[0].inventory is st.inventory  # the world shared an unchanged inventory
        status = agent_status(self.world, agent_id, st, kept[1].inventory if same else None)
        self._statuses[agent_id] = (st, status)
        return status

    def _count(self, rec: GateRecord, result: ToolResult, outcome: TurnOutcome, spec: ToolSpec | None,
               harness_error: str | None) -> None:
        """result.json's counts: ``chats`` are messages delivered, ``waits`` sleeps that passed the turn, and
        ``actions`` the calls that use the action budget; a failed chat or sleep is a tool error only."""
        c = self._counts
        if outcome.infra_error:
            c["infra"] += 1
        if harness_error or result.error == "harness_error":
            c["harness"] += 1
            if rec.tool is None or result.error == "harness_error":
                return  # the call never happened as far as the agent is concerned
        if rec.tool is None:
            if result.error in ("no_call", "timeout"):
                c["no_calls"] += 1
            return
        if spec is None or not spec.free:
            c["actions"] += 1
        elif result.ok and spec.is_chat and result.effects.chat is not None:
            c["chats"] += 1
        elif result.ok and spec.is_wait:
            c["waits"] += 1
        if not result.ok:
            c["tool_errors"] += 1

    def _forward_to_coordinator(self, sender: str, rnd: int, effects: Effects) -> None:
        chat = effects.chat
        if chat is None or sender == self.coordinator or self.coordinator in chat.recipients:
            return
        self._coordinator_inbox.append(ChatMessage(round=rnd, sender=self.usernames[sender], text=chat.message,
                                                   scope=chat.scope))

    def _retire(self, agent_id: str, reason: str, st: "PlayerState | None" = None) -> None:
        if agent_id not in self.active:
            return
        self.active.discard(agent_id)
        theirs, yours = LEFT_WORDS.get(reason, (reason, f"you left ({reason})"))
        self.left[agent_id] = f"{yours} in round {self.round}"
        self._gone.append(f"{self.task.agent(agent_id).username} ({theirs} in round {self.round})")
        if (st if st is not None else self.world.player_state(agent_id)).active:
            self.world.remove_player(agent_id, reason)

    def _retire_if_done(self, agent_id: str, rec: GateRecord, result: ToolResult, st: "PlayerState") -> None:
        if result.effects.completed or (rec.tool == "complete" and result.ok):
            self._retire(agent_id, "completed", st)
        elif not st.alive or not st.active:
            self._retire(agent_id, "dead" if not st.alive else "left", st)
        elif self.actions_used[agent_id] >= self.task.max_action_steps:
            self._retire(agent_id, "max_action_steps", st)

    def _tick(self, rnd: int) -> bool:
        report = self.world.end_round(rnd)
        self.history.append(("", report.effects))
        for agent_id in self.world.out_of_play([a for a in self.agent_ids if a in self.active]):
            st = self.world.player_state(agent_id)
            if not st.alive or not st.active:
                self._retire(agent_id, "dead" if not st.alive else "left", st)
        passed = 0
        success = False
        events = report.events
        if self.task.verifiable:
            self.verification = verify(self.task, self.world, self.history)
            passed = sum(cp.achieved for cp in self.verification.checkpoints)
            success = self.verification.success
            mech = getattr(self.world, "mech", None)  # the task's events waiting for a checkpoint (world/events.py)
            if mech is not None and not success:
                reached = {r for i, cp in enumerate(self.verification.checkpoints) if cp.achieved for r in (i, cp.name)}
                events = events + mech.after_verify(reached)
        self._emit(TickEvent(round=rnd, effects=report.effects, lines=report.lines, events=events,
                             checkpoints_passed=passed,
                             timestamp=_now()))
        return success

    def _settle(self, reason: EndReason) -> EpisodeOutcome:
        """The final verification, and the outcome the players are told (before the team is closed)."""
        try:
            vr = verify(self.task, self.world, self.history)
        except Exception as exc:  # noqa: BLE001 - a world the episode left broken may not be verifiable
            vr = VerifyResult(verifiable=self.task.verifiable, success=False, psr=0.0, checkpoints=[],
                              message=f"not verified: the verifier raised {type(exc).__name__}: {exc}")
        self.verification = vr
        return EpisodeOutcome(success=vr.success, end_reason=reason, rounds=self.round,
                              checkpoints_passed=sum(cp.achieved for cp in vr.checkpoints),
                              checkpoints_total=len(vr.checkpoints), psr=vr.psr, message=vr.message)

    def _finish(self, reason: EndReason, wall_s: float) -> None:
        vr = self.verification
        if vr is None or not self.gate.finished:
            self._settle(reason)
            vr = self.verification
        assert vr is not None
        unreported = {a: calls for a, calls in self.gate.stray.items() if calls}
        self.gate.stray.clear()
        self._counts["refused"] += sum(len(calls) for calls in unreported.values())
        self._emit(EndEvent(reason=reason, rounds=self.round, refused=unreported, timestamp=_now()))
        c = self._counts
        self.result = EpisodeResult(
            episode_id=self.episode_id, task_id=self.task.id, category=self.task.category,
            n_agents=len(self.agent_ids), seed=self.seed, variant=self.variant.label, framework=self.framework,
            model=self.model, verifiable=vr.verifiable, success=vr.success, psr=vr.psr, checkpoints=vr.checkpoints,
            message=vr.message, end_reason=reason, rounds=self.round, max_rounds=self.task.rounds,
            actions=c["actions"], chats=c["chats"], waits=c["waits"], tool_errors=c["tool_errors"],
            no_calls=c["no_calls"],
            refused_calls=c["refused"], infra_errors=c["infra"], harness_errors=c["harness"], turns=self._step,
            tokens_in=c["tokens_in"],
            tokens_out=c["tokens_out"], wall_s=wall_s, harness_s=self.harness_s)
        if self._writer is not None:
            self._writer.close()
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            (self.out_dir / "result.json").write_text(self.result.model_dump_json(indent=2) + "\n", encoding="utf-8")
            state = {"episode_id": self.episode_id, "task_id": self.task.id, "round": self.round,
                     "active": [a for a in self.agent_ids if a in self.active],
                     "players": {a: self.world.player_state(a).model_dump() for a in self.agent_ids},
                     "world": self.world.snapshot()}
            (self.out_dir / "final_state.json").write_text(json.dumps(state, indent=1, default=str) + "\n",
                                                           encoding="utf-8")


async def run_episode(task: Task, team: Team, **kwargs: Any) -> EpisodeResult:
    """Construct an :class:`Episode` and run it (same keyword arguments)."""
    return await Episode(task, team, **kwargs).run()
