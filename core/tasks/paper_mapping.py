"""The mapping of the paper's item, skill and place names to ours (data: ``tasks/data/paper_mapping.yaml``).

One table, read by ``agentworld tasks port`` (which rewrites a paper task) and by task validation (whose
hint for an unknown item key names the mapped item: the paper's ``flask`` is our ``healing_potion``, not
``flax``, the closest spelling).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from ..yamlio import load_yaml


class PlaceRules(BaseModel):
    default: str
    max_offset: int = 12
    words: dict[str, str] = Field(default_factory=dict)  # a place word in the task's text -> our landmark
    skills: dict[str, str] = Field(default_factory=dict)  # the first agent's strongest skill -> our landmark


class PaperMapping(BaseModel):
    items: dict[str, str | None]  # paper key -> our key, or None: no counterpart
    skills: dict[str, str | None]
    places: PlaceRules

    def item_hint(self, key: str) -> str | None:
        """The fix for an unknown item key that is one of the paper's, or None when it is not."""
        if key not in self.items:
            return None
        ours = self.items[key]
        if ours is None:
            return (f"'{key}' is an item of the paper's game with no counterpart here: remove it "
                    "(`agentworld tasks port FILE` does, and lists it)")
        return f"the paper's '{key}' is our '{ours}' (`agentworld tasks port FILE` rewrites the paper's keys)"


@lru_cache(maxsize=1)
def paper_mapping() -> PaperMapping:
    text = (resources.files("agentworld.core.tasks") / "data" / "paper_mapping.yaml").read_text(encoding="utf-8")
    data: Any = load_yaml(text)
    return PaperMapping.model_validate(data)
