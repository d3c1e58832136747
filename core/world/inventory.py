"""A player's inventory: a fixed number of slots with stable indices.

Slot indices never shift (removing an item empties its slot), so the index an agent read in its
observation stays valid for ``equip_item(index=...)``. Stackable items share one slot per item key;
non-stackable items (equipment) take one slot each. New items go to the lowest free slot, and items leave
from the highest slot holding them: the row an agent is shown for an item (at its first slot) keeps its
index for as long as any of the item is held.

A carrying limit (``rules.carry_limit``, 0 = none) caps the pieces held in all (every piece counts one, a stack
of 10 logs ten): what does not fit under it does not fit, as with a full inventory.
"""

from __future__ import annotations

from typing import Callable


class Inventory:
    __slots__ = ("size", "slots", "_stackable", "limit")

    def __init__(self, size: int, stackable: Callable[[str], bool], limit: int = 0):
        self.size = size
        self.slots: list[list | None] = [None] * size  # each slot: [item_key, count]
        self._stackable = stackable
        self.limit = limit  # most pieces held in all (0: no limit)

    # -- reading ----------------------------------------------------------------------------------
    def count(self, item: str) -> int:
        return sum(s[1] for s in self.slots if s is not None and s[0] == item)

    def held(self) -> int:
        """Pieces held in all (what the carrying limit counts)."""
        return sum(s[1] for s in self.slots if s is not None)

    def carry_room(self) -> int | None:
        """Pieces that can still be taken under the carrying limit (None: no limit)."""
        return max(0, self.limit - self.held()) if self.limit else None

    def free_slots(self) -> int:
        return sum(1 for s in self.slots if s is None)

    def filled(self) -> list[tuple[int, str, int]]:
        return [(i, s[0], s[1]) for i, s in enumerate(self.slots) if s is not None]

    def rows(self) -> list[tuple[int, str, int, int]]:
        """What an agent is shown: one row per item key, at its first slot, with the count of every slot
        holding it and how many slots that is (two staffs in slots 0 and 3 are "[0] staff x2", 2 slots;
        equip_item(index=0) takes one of them). The slots stay as they are: indices never shift, so an index
        shown stays valid."""
        first: dict[str, list[int]] = {}
        for i, s in enumerate(self.slots):
            if s is not None:
                row = first.get(s[0])
                if row is None:
                    first[s[0]] = [i, s[1], 1]
                else:
                    row[1] += s[1]
                    row[2] += 1
        return [(row[0], key, row[1], row[2]) for key, row in first.items()]

    def first_slot(self, item: str) -> int | None:
        for i, s in enumerate(self.slots):
            if s is not None and s[0] == item:
                return i
        return None

    def last_slot(self, item: str) -> int | None:
        """The highest slot holding ``item``: where one of it leaves from (its shown row keeps its index)."""
        for i in range(self.size - 1, -1, -1):
            s = self.slots[i]
            if s is not None and s[0] == item:
                return i
        return None

    def room_for(self, item: str, count: int) -> int:
        """How many of ``item`` would fit now."""
        if count <= 0:
            return 0
        if self.limit:
            count = min(count, self.limit - self.held())
            if count <= 0:
                return 0
        if self._stackable(item):
            if self.first_slot(item) is not None or self.free_slots() > 0:
                return count
            return 0
        return min(count, self.free_slots())

    def fits(self, items: dict[str, int]) -> bool:
        """Whether all of ``items`` fit at once (slots needed are counted together)."""
        if self.limit and self.held() + sum(n for n in items.values() if n > 0) > self.limit:
            return False
        need = 0
        for item, n in items.items():
            if n <= 0:
                continue
            if self._stackable(item):
                need += 0 if self.first_slot(item) is not None else 1
            else:
                need += n
        return need <= self.free_slots()

    # -- changing ---------------------------------------------------------------------------------
    def add(self, item: str, count: int) -> int:
        """Add up to ``count``; returns how many were added (the rest did not fit)."""
        if self.limit:
            count = min(count, self.limit - self.held())
        if count <= 0:
            return 0
        if self._stackable(item):
            i = self.first_slot(item)
            if i is None:
                i = self._free_index()
                if i is None:
                    return 0
                self.slots[i] = [item, 0]
            self.slots[i][1] += count
            return count
        added = 0
        while added < count:
            i = self._free_index()
            if i is None:
                break
            self.slots[i] = [item, 1]
            added += 1
        return added

    def remove(self, item: str, count: int) -> int:
        """Remove up to ``count`` (from the highest slots first: the row shown at the first slot stays there
        while any is left); returns how many were removed."""
        removed = 0
        for i in range(self.size - 1, -1, -1):
            s = self.slots[i]
            if removed >= count:
                break
            if s is None or s[0] != item:
                continue
            take = min(s[1], count - removed)
            s[1] -= take
            removed += take
            if s[1] == 0:
                self.slots[i] = None
        return removed

    def take_slot(self, index: int, count: int = 1) -> tuple[str, int] | None:
        s = self.slots[index]
        if s is None:
            return None
        take = min(count, s[1])
        s[1] -= take
        if s[1] == 0:
            self.slots[index] = None
        return s[0], take

    def clear(self) -> list[tuple[str, int]]:
        out = [(s[0], s[1]) for s in self.slots if s is not None]
        self.slots = [None] * self.size
        return out

    def _free_index(self) -> int | None:
        for i, s in enumerate(self.slots):
            if s is None:
                return i
        return None
