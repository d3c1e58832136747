"""Causal Collaboration Effectiveness (CCE): the causal action graph of one episode and its metrics.

The paper's definition (docs/paper.md, docs/cce.md): every tool call and chat message is an
action (a node); an edge ``x -> y`` says "x causally enabled y"; the success actions S achieved the objective;
the contributing set C is S plus all its ancestors; CCE = |C| / |T| and PAC_i = |C ∩ T_i| / |T_i|. A failed
task has CCE = 0 (``raw_cce`` keeps the graph's own ratio when a failed episode is judged anyway).

This module holds the data (nodes, edges, judge calls), loading an episode folder, the metrics, and
``cce.json`` reading/writing. How edges are found is a *method*: the paper's backward sweep
(:mod:`agentworld.core.cce.paper`) or engine facts (:mod:`agentworld.core.cce.grounded`). Judges (LLM or
scripted) answer the questions those methods ask (:mod:`agentworld.core.cce.judges`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field, model_validator

from ..play.records import EndEvent, EpisodeResult, StartEvent, TickEvent, TurnEvent, parse_event
from ..world.factories import empty_list
from ..world.tools import CHAT_TOOLS, WAIT_TOOLS, format_call

CCE_FILE = "cce.json"
CCE_DIR = "cce"  # one file per judge label, so several judges can be compared on the same run
SCHEMA_VERSION = 1

EdgeKind = Literal["judge", "inferred", "items", "tool", "move", "receiver_move", "equip", "chat_rule", "chat_judge",
                   "counterfactual"]


# ---------------------------------------------------------------------------------------------------------------
# Episode input


def action_id(round_: int, agent: str) -> str:
    """Node id of an agent's action in a round (one tool call per agent per turn, so this is unique)."""
    return f"r{round_}.{agent}"


class EpisodeError(ValueError):
    """An episode folder that cannot be judged (the message names the file and the fix)."""


@dataclass
class EpisodeData:
    """What CCE reads from an episode folder."""

    path: Path
    start: StartEvent | None
    turns: list[TurnEvent]  # every turn with a tool call, in step order
    ticks: list[TickEvent]
    end: EndEvent | None
    result: EpisodeResult | None
    final_state: dict[str, Any] | None = None
    task: Any = None  # the loaded Task when the task id resolves (description, verifier), else None

    @property
    def episode_id(self) -> str:
        if self.result:
            return self.result.episode_id
        return self.start.episode_id if self.start else self.path.name

    @property
    def task_id(self) -> str:
        if self.result:
            return self.result.task_id
        return self.start.task_id if self.start else ""

    @property
    def success(self) -> bool:
        return bool(self.result and self.result.success)

    @cached_property
    def agents(self) -> list[str]:
        """Agent ids in turn order (from the start event; else in order of first action)."""
        if self.start:
            return [a["agent_id"] for a in self.start.agents]
        seen: dict[str, None] = {}
        for t in self.turns:
            seen.setdefault(t.agent, None)
        return list(seen)

    @cached_property
    def usernames(self) -> dict[str, str]:
        names = {a["agent_id"]: a.get("username", a["agent_id"]) for a in self.start.agents} if self.start else {}
        for t in self.turns:
            names.setdefault(t.agent, t.username)
        return names

    def task_text(self) -> str:
        """The task as a judge should read it: description and objectives when the task is known."""
        parts = [f"Task {self.task_id}"]
        task = self.task
        if task is not None:
            for attr in ("name", "description", "objectives", "success_criteria"):
                value = getattr(task, attr, None)
                if hasattr(value, "model_dump"):
                    value = value.model_dump(exclude_defaults=True)
                if value:
                    parts.append(f"{attr}: {value if isinstance(value, str) else json.dumps(value, default=str)}")
        if self.result and self.result.message:
            parts.append(f"verifier: {self.result.message}")
        return "\n".join(parts)


def _read_events(path: Path) -> list[Any]:
    events = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(parse_event(line))
        except ValueError as exc:
            if i == len(lines):  # a killed run may leave a half-written last line: keep the readable prefix
                break
            raise EpisodeError(f"{path}:{i}: not a trajectory event ({str(exc).splitlines()[0]}); "
                               f"the file must hold one JSON event per line as written by the episode") from exc
    return events


def _load_task(folder: Path, task_id: str) -> Any:
    """The Task as run: the episode's own ``task.json`` when present, else the suite's task of that id.

    CCE works without it (the judge then sees the id and the verifier message; grounded falls back to the
    checkpoint names), so any failure here is silent by design.
    """
    from ..tasks import task as task_module  # lazily: task loading pulls in the world data pack

    snapshot = folder / "task.json"
    if snapshot.is_file():
        try:
            raw = json.loads(snapshot.read_text(encoding="utf-8"))
            return task_module.parse_task(raw, str(snapshot), task_id)
        except Exception:
            pass
    try:
        return task_module.find_task(task_id)
    except Exception:  # unknown id, invalid YAML
        return None


def load_episode(path: str | Path, *, with_task: bool = True) -> EpisodeData:
    """Read ``trajectory.jsonl`` (required), ``result.json`` and ``final_state.json`` (optional) of one folder."""
    folder = Path(path)
    traj = folder / "trajectory.jsonl"
    if not traj.is_file():
        raise EpisodeError(f"{folder}: no trajectory.jsonl; pass an episode folder (or a run folder holding them)")
    start, end, turns, ticks = None, None, [], []
    for ev in _read_events(traj):
        if isinstance(ev, StartEvent):
            start = ev
        elif isinstance(ev, TurnEvent):
            # a turn without a tool call is no action (the paper counts calls and messages), nor is a wait
            # (sleep passes the turn on purpose: counting it would make waiting for a teammate lower CCE)
            if ev.tool and not (ev.ok and ev.tool in WAIT_TOOLS):
                turns.append(ev)
        elif isinstance(ev, TickEvent):
            ticks.append(ev)
        elif isinstance(ev, EndEvent):
            end = ev
    turns.sort(key=lambda t: t.step)
    result = None
    rpath = folder / "result.json"
    if rpath.is_file():
        try:
            result = EpisodeResult.model_validate_json(rpath.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise EpisodeError(f"{rpath}: not a valid result.json ({str(exc).splitlines()[0]})") from exc
    final_state = None
    fpath = folder / "final_state.json"
    if fpath.is_file():
        try:
            final_state = json.loads(fpath.read_text(encoding="utf-8"))
        except ValueError:
            final_state = None
    ep = EpisodeData(folder, start, turns, ticks, end, result, final_state)
    if with_task and ep.task_id:
        ep.task = _load_task(folder, ep.task_id)
    return ep


def find_episode_dirs(root: str | Path) -> list[Path]:
    """Episode folders under ``root`` (``root`` itself when it holds ``trajectory.jsonl``), sorted."""
    root = Path(root)
    if not root.exists():
        raise EpisodeError(f"{root}: no such folder; pass a run folder or an episode folder")
    if (root / "trajectory.jsonl").is_file():
        return [root]
    found = sorted({p.parent for p in root.rglob("trajectory.jsonl")})
    if not found:
        raise EpisodeError(f"{root}: no episode folders (none holds trajectory.jsonl); run `agentworld run` first")
    return found


# ---------------------------------------------------------------------------------------------------------------
# The graph


class ActionNode(BaseModel):
    id: str
    step: int
    round: int
    agent: str
    username: str = ""
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    action: str  # the paper's action string, tool(k=v, ...)
    ok: bool = False
    error: str | None = None
    result: str = ""  # the text the agent saw, shortened
    is_chat: bool = False
    success: bool = False
    contributing: bool = False
    reason: str = ""  # why it is a success action / why it was marked contributing


class CausalEdge(BaseModel):
    source: str  # the enabling action
    target: str  # the enabled action
    kind: EdgeKind
    reason: str = ""


class JudgeCall(BaseModel):
    """One question to the judge (asked or answered from the cache)."""

    kind: Literal["success", "round", "chat", "comms"]  # comms: message classes (core/cce/comms.py)
    rounds: list[int] = Field(default_factory=empty_list)
    key: str = ""  # cache key (judge name + model + prompt hash)
    cached: bool = False
    ok: bool = True
    attempts: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None
    answer: dict[str, Any] | None = None  # the parsed JSON answer, for re-inspection


class CCEReport(BaseModel):
    """The content of ``cce.json``."""

    version: int = SCHEMA_VERSION
    episode_id: str
    task_id: str
    episode_dir: str = ""
    task_success: bool
    judge: str
    model: str = ""
    method: str  # "paper" | "grounded" | a plugin's own
    judged: bool = True  # False: a failed task was not judged (CCE = 0 without calls)
    label: str = ""  # the name it is stored under, cce/<label>.json (set when written)
    # False when judge calls failed: the graph misses what those calls would have marked, so there is no
    # CCE (null, never 0) and partial_cce keeps the graph's value, a lower bound
    complete: bool = True
    cce: float | None  # 0 for a failed task; None for an incomplete judging
    partial_cce: float | None = None
    raw_cce: float | None = None  # |C| / |T| of the graph, also for a failed task judged anyway
    pac: dict[str, float | None] = Field(default_factory=dict)  # agent -> PAC (None: the agent took no action)
    n_actions: int
    n_contributing: int
    success_actions: list[str] = Field(default_factory=empty_list)
    nodes: list[ActionNode] = Field(default_factory=empty_list)
    edges: list[CausalEdge] = Field(default_factory=empty_list)
    calls: list[JudgeCall] = Field(default_factory=empty_list)
    judge_calls: int = 0  # questions actually sent to the judge (not answered from the cache)
    cached_calls: int = 0
    failed_calls: int = 0
    tokens_in: int = 0  # tokens of the calls actually sent
    tokens_out: int = 0
    skipped_rounds: list[int] = Field(default_factory=empty_list)  # paper sweep: rounds with nothing later to enable
    notes: list[str] = Field(default_factory=empty_list)  # judge ids that named no action, dropped edges, failures
    created: str = ""
    # the counterfactual method's replays: count, seconds, per unit, the cap, and each test (core/cce/counterfactual.py)
    counterfactual: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _incomplete_before_it_was_recorded(cls, data: Any) -> Any:
        """Files written before ``complete`` existed stored a judging with failed calls as a real CCE."""
        if isinstance(data, dict) and "complete" not in data and data.get("failed_calls"):
            data = {**data, "complete": False, "partial_cce": data.get("cce"), "cce": None}
        return data

    def pac_spread(self) -> tuple[float, float] | None:
        values = [v for v in self.pac.values() if v is not None]
        return (min(values), max(values)) if values else None

    def contributing_ids(self) -> set[str]:
        return {n.id for n in self.nodes if n.contributing}


def result_preview(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_from_turn(turn: TurnEvent) -> ActionNode:
    return ActionNode(
        id=action_id(turn.round, turn.agent), step=turn.step, round=turn.round, agent=turn.agent,
        username=turn.username, tool=turn.tool or "", arguments=dict(turn.arguments or {}),
        action=format_call(turn.tool or "", turn.arguments), ok=turn.ok, error=turn.error,
        result=result_preview(turn.result), is_chat=(turn.tool in CHAT_TOOLS))


class CausalGraph:
    """Actions as nodes, "x enabled y" as edges (networkx DiGraph), plus the success actions."""

    def __init__(self, nodes: Iterable[ActionNode]):
        import networkx as nx  # here, not at the top: reports and runs read this module's records, not graphs

        self.g = nx.DiGraph()
        self.nodes: dict[str, ActionNode] = {}
        for n in nodes:
            if n.id in self.nodes:
                raise EpisodeError(f"two actions share the id {n.id} (one tool call per agent per round expected)")
            self.nodes[n.id] = n
            self.g.add_node(n.id)
        self.success: dict[str, str] = {}  # id -> reason
        self.mark_reasons: dict[str, str] = {}  # id -> why a judge marked it contributing
        self.notes: list[str] = []
        self.extra: dict[str, Any] = {}  # a method's own record for the report (e.g. "counterfactual": replays)

    @classmethod
    def from_episode(cls, ep: EpisodeData) -> "CausalGraph":
        return cls(node_from_turn(t) for t in ep.turns)

    def ordered(self) -> list[ActionNode]:
        return sorted(self.nodes.values(), key=lambda n: n.step)

    def add_edge(self, source: str, target: str, kind: EdgeKind, reason: str = "") -> bool:
        """Add "source enabled target"; refuses unknown ids and edges that go back in time (noted)."""
        if source not in self.nodes or target not in self.nodes:
            self.notes.append(f"edge {source} -> {target} dropped: unknown action id")
            return False
        if self.nodes[source].step >= self.nodes[target].step:
            self.notes.append(f"edge {source} -> {target} dropped: {source} does not come before {target}")
            return False
        if self.g.has_edge(source, target):
            data = self.g.edges[source, target]
            if reason and reason not in data["reason"]:
                data["reason"] = f"{data['reason']}; {reason}" if data["reason"] else reason
            return True
        self.g.add_edge(source, target, kind=kind, reason=reason)
        return True

    def mark_success(self, node_id: str, reason: str = "") -> None:
        if node_id not in self.nodes:
            self.notes.append(f"success action {node_id} dropped: unknown action id")
            return
        self.success[node_id] = reason

    def contributing(self) -> set[str]:
        """S plus all ancestors of S."""
        import networkx as nx

        out: set[str] = set()
        for s in self.success:
            if s not in out:
                out.add(s)
                out |= nx.ancestors(self.g, s)
        return out

    def edges(self) -> list[CausalEdge]:
        return [CausalEdge(source=u, target=v, kind=d["kind"], reason=d.get("reason", ""))
                for u, v, d in sorted(self.g.edges(data=True), key=lambda e: (self.nodes[e[0]].step,
                                                                               self.nodes[e[1]].step))]


# ---------------------------------------------------------------------------------------------------------------
# Metrics


@dataclass
class Metrics:
    cce: float
    pac: dict[str, float | None]
    n_actions: int
    n_contributing: int


def compute_metrics(nodes: list[ActionNode], contributing: set[str], agents: list[str]) -> Metrics:
    """CCE = |C| / |T|; PAC_i = |C ∩ T_i| / |T_i| (None for an agent without actions)."""
    n = len(nodes)
    c = sum(1 for x in nodes if x.id in contributing)
    pac: dict[str, float | None] = {}
    for agent in agents or sorted({x.agent for x in nodes}):
        mine = [x for x in nodes if x.agent == agent]
        pac[agent] = (sum(1 for x in mine if x.id in contributing) / len(mine)) if mine else None
    return Metrics(cce=(c / n) if n else 0.0, pac=pac, n_actions=n, n_contributing=c)


def build_report(ep: EpisodeData, graph: CausalGraph | None, *, judge: str, model: str, method: str,
                 calls: list[JudgeCall], skipped_rounds: list[int] | None = None,
                 notes: list[str] | None = None) -> CCEReport:
    """Assemble ``cce.json``: marks nodes, computes the metrics (CCE = 0 when the task failed; no CCE, only
    ``partial_cce``, when judge calls failed)."""
    judged = graph is not None
    if graph is None:  # a failed task, not judged: no success action, so every action is non-contributing
        graph = CausalGraph.from_episode(ep)
    contributing = graph.contributing()
    for node in graph.nodes.values():
        node.success = node.id in graph.success
        node.contributing = node.id in contributing
        if node.success:
            node.reason = graph.success[node.id] or "success action"
        elif node.contributing:
            node.reason = graph.mark_reasons.get(node.id) or _reason_from_edges(graph, node.id, contributing)
    nodes = graph.ordered()
    m = compute_metrics(nodes, contributing, ep.agents)
    fresh = [c for c in calls if not c.cached]
    failed = sum(1 for c in calls if not c.ok)
    value = m.cce if ep.success else 0.0
    return CCEReport(
        episode_id=ep.episode_id, task_id=ep.task_id, episode_dir=str(ep.path), task_success=ep.success,
        judge=judge, model=model, method=method, judged=judged, complete=failed == 0,
        cce=value if failed == 0 else None, partial_cce=value if failed else None,
        raw_cce=m.cce if judged else None,
        pac=m.pac if ep.success else {a: (0.0 if v is not None else None) for a, v in m.pac.items()},
        n_actions=m.n_actions, n_contributing=m.n_contributing,
        success_actions=[n.id for n in nodes if n.success], nodes=nodes, edges=graph.edges(), calls=calls,
        judge_calls=len(fresh), cached_calls=len(calls) - len(fresh),
        failed_calls=failed,
        tokens_in=sum(c.tokens_in for c in fresh), tokens_out=sum(c.tokens_out for c in fresh),
        skipped_rounds=sorted(skipped_rounds or []), notes=[*graph.notes, *(notes or [])],
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"), **graph.extra)


def _reason_from_edges(graph: CausalGraph, node_id: str, contributing: set[str]) -> str:
    for _, target, data in graph.g.out_edges(node_id, data=True):
        if target in contributing:
            return f"enabled {target}" + (f": {data['reason']}" if data.get("reason") else "")
    return "ancestor of a success action"


# ---------------------------------------------------------------------------------------------------------------
# cce.json


def file_safe(text: str) -> str:
    """``text`` usable as a file name: every character but letters, digits and ``-_.`` becomes ``-``."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)
