"""Comparing CCE judges: action-level agreement, Cohen's kappa, per-task CCE differences, rank stability."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Hashable, Sequence

from .graph import CCEReport


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters over the same items: (p_o - p_e) / (1 - p_e).

    When both raters give one and the same label to everything (p_e = 1) agreement is perfect: kappa = 1.
    """
    if len(a) != len(b):
        raise ValueError(f"kappa needs two label lists of equal length, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        raise ValueError("kappa needs at least one labelled item")
    p_o = sum(1 for x, y in zip(a, b) if x == y) / n
    count_a: dict[Hashable, int] = defaultdict(int)
    count_b: dict[Hashable, int] = defaultdict(int)
    for x in a:
        count_a[x] += 1
    for y in b:
        count_b[y] += 1
    p_e = sum(count_a[k] * count_b.get(k, 0) for k in count_a) / (n * n)
    if p_e == 1.0:
        return 1.0
    return (p_o - p_e) / (1 - p_e)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b between two score lists over the same items (1: same order, -1: reversed)."""
    if len(x) != len(y):
        raise ValueError("kendall_tau needs two lists of equal length")
    conc = disc = tie_x = tie_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tie_x += 1
        elif dy == 0:
            tie_y += 1
        elif (dx > 0) == (dy > 0):
            conc += 1
        else:
            disc += 1
    denom = ((conc + disc + tie_x) * (conc + disc + tie_y)) ** 0.5
    return (conc - disc) / denom if denom else 1.0


def ranking(scores: dict[str, float]) -> list[str]:
    """Keys from best to worst (ties broken by name, so the order is deterministic)."""
    return sorted(scores, key=lambda k: (-round(scores[k], 9), k))


@dataclass
class PairAgreement:
    a: str
    b: str
    n_actions: int
    agreement: float  # share of actions both judges label alike (contributing or not)
    kappa: float
    n_episodes: int


@dataclass
class Comparison:
    judges: list[str]
    pairs: list[PairAgreement]
    task_cce: dict[str, dict[str, float]]  # judge -> task -> mean CCE over its episodes
    group_cce: dict[str, dict[str, float]]  # judge -> run (parent folder) -> mean CCE
    same_task_ranking: bool
    same_group_ranking: bool
    task_tau: dict[tuple[str, str], float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # "episode: judge" lacking a report
    # (judge A, judge B) -> agents ranked by PAC within each episode both judged: the mean Kendall tau over
    # episodes with two or more agents that acted, and the share of them ranked the same
    agent_tau: dict[tuple[str, str], tuple[float, float, int]] = field(default_factory=dict)
    # judge -> what its judgings cost when it replays episodes (the counterfactual judge): replays, seconds
    replays: dict[str, dict[str, float]] = field(default_factory=dict)
    # (judge A, judge B) -> tool -> [actions only A marks contributing, actions only B marks]: where they differ
    differ: dict[tuple[str, str], dict[str, list[int]]] = field(default_factory=dict)


def compare_reports(reports: dict[str, dict[str, CCEReport]], groups: dict[str, str] | None = None) -> Comparison:
    """``reports[judge][episode_key]``: judge every episode the same way, then compare.

    Agreement and kappa pool the actions of all episodes both judges scored (failed tasks not judged by
    either count as all not contributing, as CCE = 0 treats them). ``groups`` maps an episode key to its run
    (for rank stability across runs).
    """
    judges = list(reports)
    episodes = sorted({e for r in reports.values() for e in r})
    missing = [f"{e}: {j}" for j in judges for e in episodes if e not in reports[j]]
    pairs = []
    differ: dict[tuple[str, str], dict[str, list[int]]] = {}
    for a, b in combinations(judges, 2):
        la, lb, n_ep = [], [], 0
        by_tool = differ.setdefault((a, b), {})
        for e in episodes:
            ra, rb = reports[a].get(e), reports[b].get(e)
            if ra is None or rb is None:
                continue
            ca, cb = ra.contributing_ids(), rb.contributing_ids()
            ids = [n.id for n in ra.nodes]
            if {n.id for n in rb.nodes} != set(ids):
                raise ValueError(f"episode {e}: the two reports list different actions; re-score both judges")
            la += [i in ca for i in ids]
            lb += [i in cb for i in ids]
            n_ep += 1
            for n in ra.nodes:
                if (n.id in ca) != (n.id in cb):
                    by_tool.setdefault("chat" if n.is_chat else n.tool, [0, 0])[0 if n.id in ca else 1] += 1
        if la:
            agree = sum(1 for x, y in zip(la, lb) if x == y) / len(la)
            pairs.append(PairAgreement(a, b, len(la), agree, cohen_kappa(la, lb), n_ep))
        else:
            pairs.append(PairAgreement(a, b, 0, float("nan"), float("nan"), 0))
    task_cce: dict[str, dict[str, float]] = {}
    group_cce: dict[str, dict[str, float]] = {}
    for j in judges:
        by_task: dict[str, list[float]] = defaultdict(list)
        by_group: dict[str, list[float]] = defaultdict(list)
        for e, r in reports[j].items():
            if r.cce is None:  # an incomplete judging has no CCE (the command leaves them out)
                continue
            by_task[r.task_id].append(r.cce)
            by_group[(groups or {}).get(e, "run")].append(r.cce)
        task_cce[j] = {t: sum(v) / len(v) for t, v in by_task.items()}
        group_cce[j] = {g: sum(v) / len(v) for g, v in by_group.items()}
    tau = {}
    for a, b in combinations(judges, 2):
        common = sorted(set(task_cce[a]) & set(task_cce[b]))
        if len(common) >= 2:
            tau[(a, b)] = kendall_tau([task_cce[a][t] for t in common], [task_cce[b][t] for t in common])
    same_task = len({tuple(ranking(task_cce[j])) for j in judges}) <= 1
    same_group = len({tuple(ranking(group_cce[j])) for j in judges}) <= 1
    agents = {(a, b): agent_rank_agreement(reports[a], reports[b]) for a, b in combinations(judges, 2)}
    replays = {}
    for j in judges:
        costs = [r.counterfactual for r in reports[j].values() if r.counterfactual]
        if costs:
            replays[j] = {"episodes": len(costs), "replays": sum(c["replays"] for c in costs),
                          "seconds": sum(c["seconds"] for c in costs),
                          "max_replays": max(c["replays"] for c in costs)}
    return Comparison(judges, pairs, task_cce, group_cce, same_task, same_group, tau, missing,
                      {k: v for k, v in agents.items() if v is not None}, replays,
                      {k: dict(sorted(v.items(), key=lambda kv: -sum(kv[1]))) for k, v in differ.items() if v})


def agent_rank_agreement(a: dict[str, CCEReport], b: dict[str, CCEReport]) -> tuple[float, float, int] | None:
    """How alike two judges rank an episode's agents by PAC (their share of contributing actions): the mean
    Kendall tau over the episodes both judged in which two or more agents acted, the share of those episodes
    in which no two agents are ordered the other way round (a tie under one judge reverses nothing), and their
    number (None when there are none)."""
    taus, same = [], 0
    for e in sorted(set(a) & set(b)):
        pa, pb = a[e].pac, b[e].pac
        agents = sorted(k for k in pa if pa.get(k) is not None and pb.get(k) is not None)
        if len(agents) < 2:
            continue
        xa, xb = [pa[k] for k in agents], [pb[k] for k in agents]
        taus.append(kendall_tau(xa, xb))
        same += not any((xa[i] - xa[j]) * (xb[i] - xb[j]) < 0 for i, j in combinations(range(len(agents)), 2))
    if not taus:
        return None
    return sum(taus) / len(taus), same / len(taus), len(taus)
