"""The paper-faithful CCE method: success actions first, then a backward sweep one round per judge call.

Step 1 shows the judge every action (or the last ``success_window`` rounds) and asks for the success
actions. Step 2 walks the rounds from the last to the first; for round R it shows the actions already known
to contribute that come after R's first action, and asks which actions of R enabled any of them (inclusive
policy). A round with no contributing action after it is skipped without a call. Marked actions get an edge
to the later action(s) the judge says they enabled (``enables``); when the judge names none, the edge goes
to the nearest later contributing action of the same agent, else the nearest later one at all (kind
"inferred"), which keeps C = S plus ancestors exact.

"Later" means later in turn order, so a transfer early in round R can enable a craft later in round R. The
prompt also lets an action enable another action of the same round marked in the same answer, so a chain
inside one round (a -> b -> contributing, all in R) is found with the paper's single call per round.
"""

from __future__ import annotations

import bisect
from typing import Any

from .graph import CausalGraph, EpisodeData, action_id
from .judges import Asker
from .prompts import ROUND_SCHEMA, SUCCESS_SCHEMA, action_facts, render


def paper_method(ep: EpisodeData, asker: Asker, *, rounds_per_call: int = 1, success_window: int | None = None,
                 target_window: int | None = None) -> tuple[CausalGraph, list[int]]:
    """Returns the graph and the rounds skipped. ``target_window`` (rounds) limits the already-contributing
    actions shown per question to those within that many rounds after the judged round (long episodes:
    keeps prompts bounded; None shows all, as the paper does)."""
    if rounds_per_call < 1:
        raise ValueError("rounds_per_call must be at least 1")
    graph = CausalGraph.from_episode(ep)
    facts = {}
    for turn in ep.turns:
        node = graph.nodes[action_id(turn.round, turn.agent)]
        facts[node.id] = action_facts(turn, node.id, node.action, node.result)
    task = ep.task_text()
    ordered = graph.ordered()
    if not ordered:
        return graph, []

    # Step 1: success actions.
    last_round = ordered[-1].round
    shown = [facts[n.id] for n in ordered
             if success_window is None or n.round > last_round - success_window]
    data = asker.ask("success", sorted({a["round"] for a in shown}), render("success.j2", failed=not ep.success, task=task, candidates=shown),
                     SUCCESS_SCHEMA, {"kind": "success", "task": task, "candidates": shown})
    if data is None:
        graph.notes.append("success question failed after retries: no success actions, CCE 0")
        return graph, []
    reasons = data.get("reasons", {})
    shown_ids = {a["id"] for a in shown}
    for sid in data["success_action_ids"]:
        if sid in shown_ids:
            graph.mark_success(sid, reasons.get(sid, ""))
        else:
            graph.notes.append(f"success id {sid!r} names no action shown; ignored")

    # Step 2: backward sweep.
    marked = Marked(graph.nodes[i] for i in graph.success)
    by_round: dict[int, list] = {}
    for n in ordered:
        by_round.setdefault(n.round, []).append(n)
    rounds = sorted(by_round, reverse=True)
    skipped: list[int] = []
    for i in range(0, len(rounds), rounds_per_call):
        batch = sorted(rounds[i:i + rounds_per_call])
        candidates = sorted((n for r in batch for n in by_round[r] if n.id not in marked), key=lambda n: n.step)
        if not candidates:
            skipped.extend(batch)
            continue
        window_end = None if target_window is None else batch[-1] + target_window
        targets = [n for n in marked.after(candidates[0].step) if window_end is None or n.round <= window_end]
        if not targets:
            skipped.extend(batch)
            continue
        cand_facts = [facts[n.id] for n in candidates]
        target_facts = [facts[n.id] for n in targets]
        data = asker.ask("round", batch,
                         render("round.j2", failed=not ep.success, task=task, rounds=batch, candidates=cand_facts, targets=target_facts),
                         ROUND_SCHEMA, {"kind": "round", "task": task, "rounds": batch,
                                        "candidates": cand_facts, "targets": target_facts})
        if data is None:
            graph.notes.append(f"round {batch} question failed after retries: its actions count as not contributing")
            continue
        _apply_round_answer(graph, data, candidates, marked, window_end)
    return graph, skipped


def _apply_round_answer(graph: CausalGraph, data: dict[str, Any], candidates: list, marked: "Marked",
                        window_end: int | None) -> None:
    cand = {n.id: n for n in candidates}
    for cid in data["contributing_ids"]:
        if cid not in cand:
            graph.notes.append(f"contributing id {cid!r} is not an action of the rounds judged; ignored")
    newly = sorted((cand[c] for c in set(data["contributing_ids"]) if c in cand), key=lambda n: n.step)
    enables = data.get("enables", {})
    reasons = data.get("reasons", {})
    # Latest first: an action marked in this answer joins ``marked`` once linked, so an earlier action of the
    # same round can then enable it (a same-round chain a -> b -> target is linked from its end backwards).
    for node in reversed(newly):
        reason = reasons.get(node.id, "")
        linked = False
        for tid in enables.get(node.id, []):
            if tid in marked:
                linked |= graph.add_edge(node.id, tid, "judge", reason)
        if not linked:
            # the nearest later contributing action the question showed (of the same agent if there is one)
            nearest = [t for t in (marked.first_after(node.step, node.agent), marked.first_after(node.step))
                       if t is not None and (window_end is None or t.round <= window_end)]
            if not nearest:
                graph.notes.append(f"{node.id} marked contributing but no contributing action follows it; ignored")
                continue
            graph.add_edge(node.id, nearest[0].id, "inferred", reason or "marked contributing; judge named no target")
        marked.add(node)
        if reason:
            graph.mark_reasons[node.id] = reason


class Marked:
    """The actions known to contribute so far, in step order, overall and per agent. A question's targets
    are a tail of it and the nearest later one is found by bisection, so the sweep never rescans every
    action per round: its own work grows linearly with the episode (the prompts still list every target)."""

    def __init__(self, nodes: Any = ()):
        self.ids: set[str] = set()
        self._lists: dict[str | None, tuple[list[int], list]] = {None: ([], [])}
        for n in nodes:
            self.add(n)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.ids

    def add(self, node: Any) -> None:
        if node.id in self.ids:
            return
        self.ids.add(node.id)
        for key in (None, node.agent):
            steps, nodes = self._lists.setdefault(key, ([], []))
            at = bisect.bisect_right(steps, node.step)
            steps.insert(at, node.step)
            nodes.insert(at, node)

    def after(self, step: int) -> list:
        """Every marked action after ``step``, in step order."""
        steps, nodes = self._lists[None]
        return nodes[bisect.bisect_right(steps, step):]

    def first_after(self, step: int, agent: str | None = None) -> Any | None:
        """The first marked action after ``step`` (of ``agent`` when given)."""
        steps, nodes = self._lists.get(agent, ((), ()))
        at = bisect.bisect_right(steps, step)
        return nodes[at] if at < len(nodes) else None
