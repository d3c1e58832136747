"""Protocol variants (the paper's baselines and ablations). Each changes exactly one thing.

A variant is named on the command line as ``NAME`` or ``NAME:PARAM`` (``short_horizon:15``). Some variants
rewrite the task before the episode starts (who plays, with which skills, items, spawns, documents, round
budget); the others change what the episode shows or allows at run time (chat tools, chat delivery, the
shared plan, teammates' HP).

Every variant either applies to a task, and then ``apply_variant`` returns the task as played *with its
reference plan adapted* (so the oracle team can play it and ``tasks prove --variants`` can prove it), or it
does not, and ``apply_variant`` raises :class:`NotApplicable` with the reason (``not_applicable`` returns
it). Runs refuse such a cell at planning time and reports show it as n/a with the reason, never as a 0.

Choices where the paper is not explicit:

- ``single_agent``: see ``core/tasks/solo.py`` (one agent with every role's skills and items at agent_1's
  spawn, checks mapped to it so that an idle agent cannot pass, the team's plan done by that agent).
- ``no_roles``: role asymmetry removed: every agent gets the team's best level of every skill, role names
  and role guideline documents are removed (the shared relevant_game_context stays). Starting items stay
  with their holders: what an agent carries is its situation, not its role, and keeping it leaves the
  team's plan playable, so the ablation isolates the roles.
- ``no_communication`` (and ``shared_plan_no_communication``): the plan's chat steps become ``sleep`` (so
  every other step keeps its round), or are dropped where that would exceed ``max_action_steps``. The
  plan still passes the verifier; on a task that needs communication a team must find the facts another way.
- ``oracle_communication``: agent_1 (the first agent) is the coordinator and hub of all talk: it receives
  every chat message, whatever its scope and the chat radius. Another agent's message reaches the
  coordinator and, as ``send_chat_message`` without ``global``, the teammates within the chat radius; only
  the coordinator's team chat reaches everyone. So the coordinator is the one agent that reads every message.
- ``random_spawn``: each agent spawns on a seeded random walkable tile within 25 tiles (each axis) of the
  team's original spawn centroid, in the same connected area as its own original spawn. The plan walks
  every agent back to its original spawn first (agents that arrive sooner wait).
- ``short_horizon``: the round budget is set to PARAM (default 10, the paper's). Not applicable where the
  reference plan needs more rounds than that (the report says how many it needs).
- ``shared_plan``, ``shared_plan_no_communication``: not applicable to a task without a ``shared_plan``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .plans import rounds_needed, with_walk_back, without_chat
from .solo import NotApplicable, single_agent_task
from .task import Task, did_you_mean, team_skills, world_index

RANDOM_SPAWN_RADIUS = 25
DEFAULT_SHORT_HORIZON = 10

Transform = Callable[[Task, int, "str | None"], Task]


@dataclass(frozen=True)
class Variant:
    """A protocol variant (baseline or ablation): what it changes in the task, the tools and the prompts."""

    name: str
    description: str
    remove_chat: bool = False  # chat tools are not offered; calling them is an unknown tool
    oracle_communication: bool = False  # the coordinator (agent_1) is the hub that receives every message
    show_shared_plan: bool = False  # task.shared_plan goes into every agent's system prompt
    party_status: bool = False  # observations list teammates' HP
    transforms: tuple[Transform, ...] = field(default_factory=tuple)
    plan: str = "the reference plan as written"  # how the reference plan is adapted (shown by the proofs)
    param: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}:{self.param}" if self.param else self.name


# -- task transforms (each returns a new Task or raises NotApplicable) ---------------------------------
def _copy(task: Task, **update: Any) -> Task:
    return task.model_copy(deep=True, update=update)


def _single_agent(task: Task, seed: int, param: str | None) -> Task:
    return single_agent_task(task, seed)


def _no_roles(task: Task, seed: int, param: str | None) -> Task:
    skills = team_skills(task)
    agents = [a.model_copy(update={"skills": dict(skills), "role": "", "guideline": ""}) for a in task.agents]
    return _copy(task, agents=agents, verifier=_roles_as_agents(task))


def _roles_as_agents(task: Task) -> Any:
    """The verifier with each check that names a role naming that role's agents instead: the names go, the
    objective stays the same (the same agents must do the same work)."""
    if task.verifier is None:
        return None
    checks = []
    for spec in task.verifier.checks:
        role = spec.params.get("role")
        if role:
            data = spec.model_dump(by_alias=True, exclude_none=True)
            data.pop("role")
            data["agents"] = [a.agent_id for a in task.agents if a.role == role]
            spec = spec.model_validate(data)
        checks.append(spec)
    return task.verifier.model_copy(update={"checks": checks})


def short_horizon_rounds(param: str | None) -> int:
    try:
        rounds = int(param) if param else DEFAULT_SHORT_HORIZON
    except ValueError:
        raise ValueError(f"short_horizon takes a round count, e.g. short_horizon:10 (got {param!r})") from None
    if rounds < 1:
        raise ValueError(f"short_horizon needs at least 1 round (got {rounds})")
    return rounds


def _short_horizon(task: Task, seed: int, param: str | None) -> Task:
    rounds = short_horizon_rounds(param)
    need = rounds_needed(task.reference_solution)
    if need > rounds:
        raise NotApplicable(task.id, f"short_horizon:{rounds}",
                            f"the reference plan needs {need} rounds; {rounds} rounds leave no known solution "
                            f"(try short_horizon:{need})")
    return _copy(task, rounds=rounds)


def _no_documentation(task: Task, seed: int, param: str | None) -> Task:
    agents = [a.model_copy(update={"guideline": ""}) for a in task.agents]
    return _copy(task, agents=agents, relevant_game_context="")


def _random_spawn(task: Task, seed: int, param: str | None) -> Task:
    gmap = world_index().loaded.map
    rng = random.Random(f"random_spawn:{task.id}:{seed}")
    cx = round(sum(a.x for a in task.agents) / len(task.agents))
    cy = round(sum(a.y for a in task.agents) / len(task.agents))
    r = RANDOM_SPAWN_RADIUS
    agents = []
    for a in task.agents:
        candidates = [(x, y) for y in range(max(0, cy - r), min(gmap.height, cy + r + 1))
                      for x in range(max(0, cx - r), min(gmap.width, cx + r + 1))
                      if gmap.walkable(x, y) and gmap.connected((x, y), (a.x, a.y))]
        x, y = rng.choice(candidates) if candidates else (a.x, a.y)
        agents.append(a.model_copy(update={"x": x, "y": y}))
    moved = _copy(task, agents=agents)
    plan = with_walk_back(moved, {a.agent_id: (a.x, a.y) for a in task.agents})
    if plan is not None and rounds_needed(plan) > task.rounds:
        raise NotApplicable(task.id, "random_spawn", f"walking back to the planned spawns takes the plan to "
                                                     f"{rounds_needed(plan)} rounds, past the budget {task.rounds}")
    return moved.model_copy(update={"reference_solution": plan})


def _needs_shared_plan(task: Task, seed: int, param: str | None) -> Task:
    if not (task.shared_plan or "").strip():
        raise NotApplicable(task.id, "shared_plan", "the task file has no shared_plan to show")
    return task


def _chat_removed(task: Task, seed: int, param: str | None) -> Task:
    """No chat: the plan's messages become waits, and every sentence of the brief that talks of telling,
    asking or chatting goes (it would be untrue), with one line that says there is no chat."""
    agents = [a.model_copy(update={"guideline": without_talk(a.guideline)}) if a.guideline.strip() else a
              for a in task.agents]
    update: dict[str, Any] = {"reference_solution": without_chat(task), "agents": agents,
                              "description": without_talk(task.description),
                              "relevant_game_context": without_talk(task.relevant_game_context)}
    if task.shared_plan:
        update["shared_plan"] = without_talk(task.shared_plan)
    return _copy(task, **update)


# words of a clause that promises or asks for a message (a clause with one is untrue without chat). "told"
# only as a promise ("until told", "you will be told"): "A fisher told you where it lies" is a fact the agent
# has, and dropping it would take the fact away (a no-communication pilot of task_521 lost it).
_TALK = re.compile(r"\b(?:tell|tells|(?:be|been|being|until|are|is|get|gets) told|telling|ask|asks|asked|chat|chats|"
                   r"say|says|said|message|messages|"
                   r"announce|announces|report|reports|let (?:\w+ )?know|lets (?:\w+ )?know|send_chat_message)\b",
                   re.IGNORECASE)
_CLAUSE_END = re.compile(r"(?<=[.;!?])\s+")


def without_talk(text: str) -> str:
    """``text`` without its clauses (ended by . ; ! or ? before a space) that speak of messages; unchanged if
    it has none."""
    if not text or not _TALK.search(text):
        return text
    kept: list[str] = []
    for c in _CLAUSE_END.split(text.strip()):
        c = " ".join(c.split())
        if not c or _TALK.search(c):
            continue
        starts = not kept or kept[-1][-1] in ".!?"  # it now starts a sentence (what came before it went)
        word = c.split()[0]
        if starts and c[0].islower() and not any(ch in word for ch in "_(=`'"):  # not a tool call or key
            c = c[0].upper() + c[1:]
        kept.append(c)
    out = " ".join(kept)
    return out[:-1] + "." if out.endswith(";") else out


VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("vanilla", "the task as written"),
    Variant("no_communication", "chat tools removed", remove_chat=True, transforms=(_chat_removed,),
            plan="chat steps become sleep"),
    Variant("oracle_communication", "agent_1 (coordinator) receives every chat message; only it reaches everyone",
            oracle_communication=True),
    Variant("single_agent", "one agent holds every role's skills and items", transforms=(_single_agent,),
            plan="the team's plan done by one agent"),
    Variant("shared_plan", "the task's shared plan is shown to every agent", show_shared_plan=True,
            transforms=(_needs_shared_plan,)),
    Variant("shared_plan_no_communication", "shared plan shown, chat tools removed", remove_chat=True,
            show_shared_plan=True, transforms=(_needs_shared_plan, _chat_removed), plan="chat steps become sleep"),
    Variant("no_roles", "every skill at the team's best for everyone; role documents removed",
            transforms=(_no_roles,)),
    Variant("short_horizon", f"round budget overridden (default {DEFAULT_SHORT_HORIZON})",
            transforms=(_short_horizon,)),
    Variant("random_spawn", "seeded random walkable spawns near the original region", transforms=(_random_spawn,),
            plan="every agent walks back to its planned spawn first"),
    Variant("no_documentation", "guideline documents and relevant_game_context removed",
            transforms=(_no_documentation,)),
    Variant("party_status", "teammates' HP shown in observations", party_status=True),
]}

# The variants `tasks prove --variants` proves per task (vanilla is the task's own proof).
PROVEN_VARIANTS = tuple(n for n in VARIANTS if n != "vanilla")


def get_variant(spec: str | Variant) -> Variant:
    """``"name"`` or ``"name:param"`` -> Variant."""
    if isinstance(spec, Variant):
        return spec
    name, _, param = spec.partition(":")
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; {did_you_mean(name, VARIANTS, 'variant')}")
    base = VARIANTS[name]
    if param and name != "short_horizon":
        raise ValueError(f"variant {name!r} takes no parameter (got {spec!r})")
    if name == "short_horizon":
        short_horizon_rounds(param or None)  # a bad round count is refused here, at planning time
    return Variant(**{**base.__dict__, "param": param or None})


_CACHE: dict[tuple[str, str, int], Task | NotApplicable] = {}


def _key(task: Task, label: str, seed: int) -> tuple[str, str, int]:
    body = task.model_dump_json(exclude={"raw", "path"})
    return (f"{task.id}:{hash(body)}", label, seed)


def apply_variant(task: Task, variant: str | Variant, seed: int = 0) -> Task:
    """The task as played under the variant, with its reference plan adapted; raises NotApplicable."""
    v = get_variant(variant)
    if not v.transforms:
        return task
    key = _key(task, v.label, seed)
    hit = _CACHE.get(key)
    if hit is None:
        try:
            out = task
            for transform in v.transforms:
                out = transform(out, seed, v.param)
            hit = out
        except NotApplicable as e:
            hit = NotApplicable(task.id, v.label, e.reason)
        _CACHE[key] = hit
    if isinstance(hit, NotApplicable):
        raise hit
    return hit.model_copy(deep=True)


def not_applicable(task: Task, variant: str | Variant, seed: int = 0) -> str | None:
    """Why the variant does not apply to the task (None: it applies)."""
    try:
        apply_variant(task, variant, seed)
    except NotApplicable as e:
        return e.reason
    return None


__all__ = ["Variant", "VARIANTS", "PROVEN_VARIANTS", "NotApplicable", "get_variant", "apply_variant",
           "not_applicable"]
