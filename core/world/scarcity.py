"""Scarcity: finite resource nodes and the carrying limit.

- A **finite node** (a task's ``nodes:`` block: ``{total: N}`` under a node type key or an instance id) gives
  ``N`` items in all over the episode (every item of every yield counts, overflow dropped on the ground too) and
  never regrows: it does not deplete and respawn between harvests, and a harvest once its total is given is
  refused with ``depleted``. Its row in a Nearby list says how many items it has left.
- The **carrying limit** (``world_rules: {carry_limit: N}``, 0 = none) caps the item pieces one agent holds in
  its inventory (equipped items do not count): a harvest stops, a pickup takes what fits, a loot overflows to the
  ground, a transfer or a craft that would go over is refused (inventory.py enforces it; the texts below say it).
"""

from __future__ import annotations

from typing import Any


def finite_totals(loaded: Any, block: dict[str, dict] | None) -> dict[str, int]:
    """Node type key or instance id -> its total (the engine looks a node up by id, then by type)."""
    if not block:
        return {}
    return {key: int(spec["total"]) for key, spec in block.items() if spec.get("total") is not None}


def exhausted_text(name: str, node_id: str, kind: str) -> str:
    return (f"{name} {node_id} is exhausted: it has given every item this task allows and never regrows. "
            f"Find another {kind}, or ask a teammate who holds what you need.")


def finite_note(node: Any) -> str:
    """What a finite node's Nearby row adds to its type's note."""
    if node.total <= 0:
        return "; exhausted (finite, never regrows)"
    return f"; {node.total} item(s) left (finite, never regrows)"


def full_text(inv: Any, what: str) -> str:
    """Why nothing more of ``what`` fits: the carrying limit or the slots."""
    if inv.limit and inv.held() >= inv.limit:
        return (f"You carry {inv.held()} items, the most anyone can carry here (carry limit {inv.limit}): hand "
                f"items to a teammate with transfer_items or use some before taking {what}.")
    return (f"Your inventory is full ({inv.size} slots): hand items to a teammate with transfer_items or use "
            f"some before taking {what}.")
