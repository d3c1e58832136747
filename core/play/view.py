"""What a team is given: a read-only view of the episode with exactly what its agents may know.

A team (any framework, any plugin) is built from a :class:`~agentworld.core.play.protocol.TeamSpec` whose
``view`` is a :class:`TeamView`, and ``Team.start(view)`` receives the same view (then with the MCP seats
when the team's tools go over MCP). The view holds, per agent the team plays: its id, username and role,
its brief (the rendered system prompt), the tools it may call and the rules its brief states. It holds no
world, no task object, no reference solution, no verifier or checkpoints, no other agent's state, and no
turn gate: each turn brings the agent's own observation (``Turn``), and the turn's port offers ``call`` only.
``tests/test_team_view.py`` walks everything a team is handed and checks that nothing else is reachable.

The one privileged baseline is the scripted oracle (``--framework oracle`` or a ``scripted:oracle`` model):
it plays the task's reference solution, so the runner hands that team, and no other, the plan as
``TeamSpec.reference_plan`` (:func:`privileged_grants`) and records the grant in the episode's ``start``
event (``grants: ["reference_plan"]``).

In process this is a contract about references, not a sandbox: Python code can import the harness and
read its memory. The hard boundary is a process boundary, ``--tools mcp`` or an external MCP seat.
"""

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from ..world.tools import ToolSpec

if TYPE_CHECKING:  # pragma: no cover
    from ..tasks.task import Task
    from ..world.models import Rules

REFERENCE_PLAN = "reference_plan"  # the name of the oracle's grant, as recorded in the start event


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class BriefRules(_Frozen):
    """The rules an agent's brief states (``core/play/templates/system.j2``), as numbers: one object per team,
    held by its briefs (``prompts.BriefTeam.rules``) and handed to the team in each ``AgentView``."""

    move_range: int
    view_radius: int
    chat_radius: int
    transfer_range: int
    station_range: int
    max_action_steps: int
    max_rounds: int
    can_chat: bool
    interact_range: int = 60  # harvest, attack and pickup walk to a target this far away first
    # the task's mechanics a brief states only when they hold for it (the template says nothing otherwise)
    carry_limit: int = 0  # most item pieces an agent carries (0: no limit)
    aggro: bool = True  # aggressive mobs strike the players in their range at the end of a round
    walk_aggro: bool = True  # and stop a walk that enters their range
    finite_nodes: bool = False  # some resource nodes give a fixed number of items and never regrow
    death_out: bool = True  # a player who dies is out of the episode and what it carries is lost (else: respawns)

    @classmethod
    def of(cls, rules: "Rules", task: "Task", can_chat: bool) -> "BriefRules":
        return cls(move_range=rules.move_range, view_radius=rules.view_radius, chat_radius=rules.chat_radius,
                   transfer_range=rules.transfer_range, station_range=rules.station_range,
                   max_action_steps=task.max_action_steps, max_rounds=task.rounds, can_chat=can_chat,
                   interact_range=rules.interact_range, carry_limit=rules.carry_limit, aggro=rules.aggro,
                   walk_aggro=rules.aggro and rules.walk_aggro, finite_nodes=bool(getattr(task, "nodes", None)),
                   death_out=getattr(rules, "death", "out") == "out")


class McpSeat(_Frozen):
    """Where an agent's tools are served over MCP, and its seat's bearer token (``--tools mcp``)."""

    url: str
    token: str


class AgentView(_Frozen):
    """One agent as its team may know it."""

    agent_id: str
    username: str
    role: str
    brief_source: Any  # prompts.Brief: what the brief says, as plain values (rendered by ``brief``)
    tools: tuple[ToolSpec, ...]  # the tools this agent may call (the variant may have removed chat)
    rules: BriefRules
    mcp: McpSeat | None = None  # set in the view Team.start receives when the tools go over MCP

    @property
    def brief(self) -> str:
        """The rendered system prompt, constant over the episode (the same text each Turn carries); rendered
        when read, so that a large team's view does not hold every agent's list of every teammate."""
        return self.brief_source.render()


class TeamView(_Frozen):
    """The read-only view of one episode a team is built from and started with."""

    task_id: str
    task_name: str
    objective: str  # the team objective, as the briefs state it
    rounds: int  # the round budget
    variant: str
    agents: tuple[AgentView, ...]  # the agents this team plays, in turn order

    @property
    def agent_ids(self) -> list[str]:
        return [a.agent_id for a in self.agents]

    def agent(self, agent_id: str) -> AgentView:
        for a in self.agents:
            if a.agent_id == agent_id:
                return a
        raise KeyError(f"{agent_id} is not in this team's view; agents: {', '.join(self.agent_ids)}")

    def only(self, agent_ids: Iterable[str]) -> "TeamView":
        """The view of a sub-team that plays ``agent_ids`` (it learns nothing of the other seats)."""
        keep = set(agent_ids)
        return self.model_copy(update={"agents": tuple(a for a in self.agents if a.agent_id in keep)})

    def with_seats(self, seats: Mapping[str, tuple[str, str]]) -> "TeamView":
        """The same view with each agent's MCP seat ``(url, token)`` (agents without a seat keep none)."""
        agents = tuple(a.model_copy(update={"mcp": McpSeat(url=seats[a.agent_id][0], token=seats[a.agent_id][1])})
                       if a.agent_id in seats else a for a in self.agents)
        return self.model_copy(update={"agents": agents})


@dataclass(frozen=True)
class ReferencePlan:
    """The task's reference solution as the oracle plays it: per agent, the tool calls in order (read-only)."""

    task_id: str
    steps: Mapping[str, tuple[tuple[str, Mapping[str, Any]], ...]]
    # the task's mechanics, when its hidden things are drawn from the seed: the steps name them by placeholder
    # ({hidden.ID}, core/world/events.py), which the oracle fills in for its episode's seed
    mechanics: Any = None

    @classmethod
    def of(cls, task: "Task") -> "ReferencePlan":
        if not task.reference_solution:
            raise ValueError(f"task {task.id} has no reference_solution; the oracle team plays that plan, "
                             "so add one to the task file (see tasks/main/ for examples)")
        steps = {agent: tuple((s.tool, MappingProxyType(dict(s.args))) for s in plan)
                 for agent, plan in task.reference_solution.items()}
        drawn = task.mechanics if task.mechanics and task.mechanics.hidden else None
        return cls(task_id=task.id, steps=MappingProxyType(steps), mechanics=drawn)


def is_oracle(framework: str | None, model: str | None) -> bool:
    """Whether a team is the scripted oracle baseline (the one team that may read the reference plan): the
    ``oracle`` framework, or a framework team whose model is ``scripted:oracle`` (the model-less ``random``
    and ``idle`` teams ignore their model)."""
    from .teams import SCRIPTED_POLICIES

    if framework in SCRIPTED_POLICIES:
        return framework == "oracle"
    return (model or "").strip().lower() == "scripted:oracle"


def privileged_grants(task: "Task", framework: str | None, model: str | None) -> tuple[ReferencePlan | None, tuple[str, ...]]:
    """``(reference_plan, grants)`` for a team: the plan and ``("reference_plan",)`` for the oracle baseline
    of a task that has one, else ``(None, ())``. The runner, ``agentworld serve`` and bench callers use this,
    so that no other team can read the plan."""
    if is_oracle(framework, model) and task.reference_solution:
        return ReferencePlan.of(task), (REFERENCE_PLAN,)
    return None, ()
