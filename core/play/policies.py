"""Teams without a model: the oracle (plays the task's reference solution), random, and idle.

A :class:`Policy` maps a turn to one tool call (or None for no call). :class:`PolicyTeam` plays a policy
through the turn's port, one call per turn, exactly like a model-backed team would. The frameworks plugins
wrap the same policies inside AutoGen/LangChain/CAMEL model interfaces (``scripted:oracle``).

- ``oracle``: each agent plays its list in ``reference_solution`` in order, one step per turn of that
  agent; when the list is exhausted it calls ``complete``. Proves a task solvable.
- ``random``: uniform over the actions that make sense from the observation (harvest, attack or pick up
  what is nearby, walk a short way, equip or use an inventory slot, craft a recipe whose inputs are held,
  give an item to a nearby teammate, chat, sleep). Seeded per agent. A floor to compare against.
- ``idle``: sleeps every turn (the "does nothing" team every shipped task must fail with).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from .protocol import Team, Turn, TurnOutcome

if TYPE_CHECKING:  # pragma: no cover
    from .history import TeamHistory
    from .view import ReferencePlan

Decision = tuple[str, dict[str, Any]] | None


class Policy(ABC):
    name = "policy"

    @abstractmethod
    def decide(self, turn: Turn) -> Decision:
        """The one tool call for this turn, as (tool name, arguments), or None for no call."""

    def prime(self, history: "TeamHistory") -> None:  # noqa: B027 - optional
        """Take over mid-episode (a fork): the agents' earlier turns. Policies that read only the current
        observation need nothing from them."""


class OraclePolicy(Policy):
    """Plays a :class:`~agentworld.core.play.view.ReferencePlan` (or a task's, for harness callers such as the
    proofs). The one privileged baseline: the runner hands the plan to the oracle team alone."""

    name = "oracle"

    def __init__(self, plan: "ReferencePlan | Any", seed: int = 0):
        from .view import ReferencePlan

        if not isinstance(plan, ReferencePlan):
            plan = ReferencePlan.of(plan)  # a Task: the harness's own callers (proofs, benchmarks, tests)
        self.steps = {agent: [(tool, dict(args)) for tool, args in steps] for agent, steps in plan.steps.items()}
        if plan.mechanics is not None:  # steps that name a hidden thing drawn from the seed: this episode's
            from ..world.datapack import load_world
            from ..world.events import hidden_values, resolve_args

            values = hidden_values(plan.mechanics, seed, load_world())
            self.steps = {agent: [(tool, resolve_args(args, values)) for tool, args in steps]
                          for agent, steps in self.steps.items()}
        self.index: dict[str, int] = {}

    def decide(self, turn: Turn) -> Decision:
        i = self.index.get(turn.agent_id, 0)
        self.index[turn.agent_id] = i + 1
        steps = self.steps.get(turn.agent_id, [])
        if i < len(steps):
            tool, args = steps[i]
            return tool, dict(args)
        return "complete", {"response": "my part of the plan is done"}

    def prime(self, history: "TeamHistory") -> None:
        """Each agent has played one plan step per earlier turn: it goes on from the step after them."""
        for agent_id, turns in history.items():
            self.index[agent_id] = len(turns)


class IdlePolicy(Policy):
    name = "idle"

    def decide(self, turn: Turn) -> Decision:
        return "sleep", {"seconds": 1}


_CHAT_LINES = ("I am on my way.", "What do you need?", "I have some items.", "Where are you?", "Let's meet up.")


class RandomPolicy(Policy):
    name = "random"

    def __init__(self, seed: int = 0, task: Any = None):
        """``task`` is not used (kept for old callers): the policy reads only the turn's observation and tools,
        and the game's static data (recipes, walkable tiles: what the documentation publishes)."""
        self.seed = seed
        self._rngs: dict[str, random.Random] = {}
        self._recipes: list[Any] | None = None
        self._by_input: dict[str, list[int]] | None = None  # item key -> indices of recipes using it
        self._map: Any = None
        self._walk_cache: dict[tuple[int, int], list[tuple[str, dict[str, Any]]]] = {}
        self._inventory_cache: dict[tuple, list[tuple[str, dict[str, Any]]]] = {}
        # the same, by the identity of the inventory's rows (the embedded world reuses its immutable rows): the
        # rows are kept with their calls, so no id is reused while its entry lasts
        self._inventory_rows: dict[tuple[int, ...], tuple[tuple[Any, ...], list[tuple[str, dict[str, Any]]]]] = {}
        self._target_calls: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}  # (kind, id) -> its call
        self._allowed_kept: tuple[list[Any], frozenset[str], bool] | None = None

    def _rng(self, agent_id: str) -> random.Random:
        rng = self._rngs.get(agent_id)
        if rng is None:
            rng = self._rngs[agent_id] = random.Random(f"random-policy:{self.seed}:{agent_id}")
        return rng

    def recipes(self) -> list[Any]:
        if self._recipes is None:
            from ..tasks.task import world_index

            self._recipes = list(world_index().recipes)
        return self._recipes

    def _craftable(self, held: dict[str, int]) -> list[Any]:
        """Recipes whose inputs are all held, in recipe order: only recipes using a held item are looked at
        (the full list has hundreds; an inventory touches a few)."""
        if self._by_input is None:
            self._by_input = {}
            for i, r in enumerate(self.recipes()):
                for k in r.inputs or ("",):  # "" lists the recipes without inputs, always candidates
                    self._by_input.setdefault(k, []).append(i)
        recipes = self.recipes()
        idx = set(self._by_input.get("", ()))
        for k in held:
            idx.update(self._by_input.get(k, ()))
        return [recipes[i] for i in sorted(idx)
                if all(held.get(k, 0) >= n for k, n in recipes[i].inputs.items())]

    def walkable(self, x: int, y: int) -> bool:
        if self._map is None:
            from ..tasks.task import world_index

            self._map = world_index().loaded.map
        return self._map.walkable(x, y)

    def candidates(self, turn: Turn) -> list[tuple[str, dict[str, Any]]]:
        """Every sensible call this turn, in a fixed order (nearby things, walks, the inventory's equips and
        crafts, chat, sleep), filtered to the turn's tools. The arguments are shared between turns: the
        caller copies the one it makes (:meth:`decide`)."""
        obs = turn.observation
        out: list[tuple[str, dict[str, Any]]] = []
        inventory = obs.inventory
        targets = self._target_calls
        for e in obs.nearby:
            kind = e.kind
            if kind in _TARGET_TOOLS:
                call = targets.get((kind, e.id))
                if call is None:
                    if len(targets) >= self._KEEP:
                        targets.clear()
                    call = targets[(kind, e.id)] = (_TARGET_TOOLS[kind], {"targetInstance": e.id})
                out.append(call)
            elif kind == "portal" and e.distance <= 1:
                out.append(("enter_portal", {}))
            elif kind == "player" and inventory:
                slot = inventory[len(out) % len(inventory)]
                out.append(("transfer_items", {"targetPlayer": e.id, "itemKey": slot.key, "count": 1}))
        out += self._walks(obs.x, obs.y)
        out += self._inventory_calls(inventory)
        allowed, every = self._allowed(turn.tools)
        if "chat" in allowed:
            out.append(("chat", self._CHATS[len(out) % len(_CHAT_LINES)]))
        out.append(_SLEEP)
        return out if every else [c for c in out if c[0] in allowed]

    def _allowed(self, tools: list[Any]) -> tuple[frozenset[str], bool]:
        """The turn's tool names, and whether every tool this policy calls is among them (then nothing is
        filtered): the same for every turn of an episode, so worked out once per list of tools."""
        hit = self._allowed_kept
        if hit is None or hit[0] != tools:  # the same tools (compared by identity first: a new list each turn)
            allowed = frozenset(t.name for t in tools)
            hit = self._allowed_kept = (list(tools), allowed, _POLICY_TOOLS <= allowed)
        return hit[1], hit[2]

    _CHATS = tuple({"message": line} for line in _CHAT_LINES)
    _KEEP = 4096  # entries each of the caches below keeps (a long episode visits ever new tiles and inventories)

    def _walks(self, x: int, y: int) -> list[tuple[str, dict[str, Any]]]:
        """The short walks from (x, y) that end on a walkable tile (the map never changes: kept per tile)."""
        walks = self._walk_cache.get((x, y))
        if walks is None:
            walks = [("move_character", {"x": x + dx, "y": y + dy})
                     for dx, dy in ((12, 0), (-12, 0), (0, 12), (0, -12)) if self.walkable(x + dx, y + dy)]
            if len(self._walk_cache) >= self._KEEP:
                self._walk_cache.clear()
            self._walk_cache[(x, y)] = walks
        return walks

    def _inventory_calls(self, inventory: list[Any]) -> list[tuple[str, dict[str, Any]]]:
        """Equip each slot, craft each recipe whose inputs are held: a function of the inventory alone, and a
        team's inventories repeat (kept per inventory)."""
        rows = tuple(inventory)
        ids = tuple(map(id, rows))
        seen = self._inventory_rows.get(ids)
        if seen is not None:
            return seen[1]
        key = tuple((s.index, s.key, s.count) for s in rows)
        calls = self._inventory_cache.get(key)
        if calls is None:
            calls = [("equip_item", {"index": index}) for index, _, _ in key]
            held = {k: n for _, k, n in key}
            calls += [("craft_item", {"skill": r.skill.capitalize(), "itemKey": next(iter(r.outputs)), "count": 1})
                      for r in self._craftable(held)]
            if len(self._inventory_cache) >= self._KEEP:
                self._inventory_cache.clear()
            self._inventory_cache[key] = calls
        if len(self._inventory_rows) >= self._KEEP:
            self._inventory_rows.clear()
        self._inventory_rows[ids] = (rows, calls)
        return calls

    def decide(self, turn: Turn) -> Decision:
        options = self.candidates(turn)
        if not options:
            return None
        tool, args = self._rng(turn.agent_id).choice(options)
        return tool, dict(args)


_SLEEP = ("sleep", {"seconds": 1})
_TARGET_TOOLS = {"resource": "harvest_resource", "mob": "attack_entity", "ground_item": "pickup_resource"}
_POLICY_TOOLS = frozenset({*_TARGET_TOOLS.values(), "enter_portal", "transfer_items", "move_character", "equip_item",
                           "craft_item", "chat", "sleep"})  # every tool the random policy may call


def make_policy(name: str, seed: int = 0, reference_plan: Any = None) -> Policy:
    """The scripted policy ``name``; the oracle needs ``reference_plan`` (a ReferencePlan, or a Task for the
    harness's own callers), which only the oracle baseline is handed (``TeamSpec.reference_plan``)."""
    if name == "oracle":
        if reference_plan is None:
            raise ValueError("the oracle plays the task's reference plan, and none was given: the runner grants it "
                             "to the scripted oracle only (TeamSpec.reference_plan; see core/play/view.py)")
        return OraclePolicy(reference_plan, seed)
    if name == "random":
        return RandomPolicy(seed)
    if name == "idle":
        return IdlePolicy()
    raise ValueError(f"unknown scripted policy {name!r}; use oracle, random or idle")


class PolicyTeam(Team):
    """Plays a policy: one port call per turn (none when the policy returns None)."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self._outcomes: dict[str | None, TurnOutcome] = {}  # per tool: the episode only reads outcomes

    async def act(self, turn: Turn) -> TurnOutcome:
        decision = self.policy.decide(turn)
        if decision is None:
            return self._outcome(None)
        tool, args = decision
        await turn.port.call(tool, args)
        return self._outcome(tool)

    def prime(self, history: "TeamHistory") -> bool:
        self.policy.prime(history)
        return True

    def _outcome(self, tool: str | None) -> TurnOutcome:
        outcome = self._outcomes.get(tool)
        if outcome is None:
            outcome = self._outcomes[tool] = TurnOutcome(
                thinking=f"{self.policy.name}: {'no action' if tool is None else tool}")
        return outcome
