"""Evaluating a task's verifier: named checks (one checkpoint each) plus an optional custom Python verifier.

Checks read engine state (``World.player_state``: inventories, equipment, kills, crafted counts, position,
alive) and the effects history of the episode (transfers, for ``delivered``). Nothing here parses the
text a model saw. The named checks live in ``plugins/verifiers/checks.py`` and are registered through
the ``register_verifiers`` hook, so a plugin can add its own (a :class:`Check`) or a whole custom
verifier (any callable ``fn(ctx, **python_args)`` returning a Checkpoint, a list of them, or a bool).
"""

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from pydantic import BaseModel

from ..world.effects import Effects

if TYPE_CHECKING:  # pragma: no cover
    from .task import Task, WorldIndex
    from ..world.api import PlayerState, World


class Checkpoint(BaseModel):
    name: str  # e.g. "staff with wizard"
    check: str  # verifier check kind, e.g. "item_count"
    value: float
    target: float
    achieved: bool
    guard: bool = False  # a constraint (e.g. everyone alive): breaking it fails the task; keeping it is not progress


@dataclass
class VerifyContext:
    """What a check may read: the task, the world's state, and every action's effects so far."""

    task: "Task"
    world: "World"
    history: list[tuple[str, Effects]] = field(default_factory=list)  # (agent id or "" for a tick, effects)
    _states: dict[str, "PlayerState"] = field(default_factory=dict)

    def state(self, agent_ref: str) -> "PlayerState":
        """The agent's state now (read-only: the embedded world hands the same object out again while the
        player does not change)."""
        agent_id = self.task.resolve_agent(agent_ref) or agent_ref
        st = self._states.get(agent_id)
        if st is None:
            st = self._states[agent_id] = self.world.player_state(agent_id)
        return st

    def agents(self, ref: str | None = None, refs: Iterable[str] | None = None) -> list[str]:
        """Agent ids named by ``ref`` / ``refs`` (ids or usernames); every agent when neither is given."""
        if ref:
            return [self.task.resolve_agent(ref) or ref]
        if refs:
            return [self.task.resolve_agent(r) or r for r in refs]
        return self.task.agent_ids

    def username(self, agent_id: str) -> str:
        try:
            return self.task.agent(agent_id).username
        except KeyError:
            return agent_id


RefProblem = tuple[str, str, str]  # (parameter field, message, fix)


@dataclass(frozen=True)
class Check:
    """A named verifier check. ``evaluate`` returns (value, target); achieved when value >= target, or, when
    ``exact`` says the parameters ask for an exact amount, when value == target."""

    name: str
    params: type[BaseModel]
    evaluate: Callable[[VerifyContext, Any], tuple[float, float]]
    label: Callable[[Any, "Task"], str]  # default checkpoint name from the parameters
    refs: Callable[[Any, "Task", "WorldIndex"], list[RefProblem]] | None = None
    style: Literal["count", "yesno"] = "count"  # how the one-line message shows it: "1/1" or "yes"
    items: Callable[[Any], list[str]] | None = None  # items the objective needs (static reachability check)
    # (x, y, radius) where the check wants agents to stand, for checks about places (the proof's solo analysis)
    place: Callable[[Any], tuple[int, int, int] | None] | None = None
    guard: bool = False  # a constraint by default (all_alive): can fail the task, never counts as progress
    exact: Callable[[Any], bool] | None = None  # whether the parameters ask for exactly the target (exact: true)

    def is_exact(self, params: Any) -> bool:
        return bool(self.exact and self.exact(params))

    def validate_refs(self, params: Any, task: "Task", w: "WorldIndex") -> list[RefProblem]:
        return self.refs(params, task, w) if self.refs else []


class VerifyResult(BaseModel):
    verifiable: bool
    success: bool
    psr: float
    checkpoints: list[Checkpoint]
    message: str


def _registered() -> dict[str, Any]:
    """Checks and custom verifiers by name, from the plugin host's registry (built-ins are a default plugin)."""
    from .. import plugins

    return {n: r.obj for n, r in plugins.verifiers().items()}


def lookup(name: str) -> Any | None:
    """A verifier check or custom verifier by name."""
    return _registered().get(name)


def known_names(kind: str = "check") -> list[str]:
    """Names of registered checks (``kind="check"``) or of every registered verifier (``kind="any"``)."""
    return sorted(n for n, v in _registered().items() if kind == "any" or isinstance(v, Check))


def checkpoint_text(cp: Checkpoint, style: str, exact: bool = False) -> str:
    if style == "yesno":
        return f"{cp.name}: {'yes' if cp.achieved else 'no'}"
    fmt = lambda v: str(int(v)) if float(v).is_integer() else f"{v:g}"  # noqa: E731
    text = f"{cp.name}: {fmt(cp.value)}/{fmt(cp.target)}"
    if exact and cp.value > cp.target:  # an exact amount overshot: say so, it is why the check is not met
        text += f" (over by {fmt(cp.value - cp.target)}: exactly {fmt(cp.target)} asked)"
    return text


def is_guard(spec: Any) -> bool:
    """Whether a check spec is a guard: its own ``guard:`` field, else the check's default."""
    if spec.guard is not None:
        return bool(spec.guard)
    return bool(getattr(lookup(spec.check), "guard", False))


def verify(task: "Task", world: "World", history: list[tuple[str, Effects]] | None = None) -> VerifyResult:
    """Run every check of the task's verifier against the world now.

    Success is every checkpoint achieved at once. PSR is the share of *progress* checkpoints achieved:
    guards (constraints such as everyone alive) can fail a task but never count as progress, so a team
    that does nothing scores 0."""
    if not task.verifiable:
        return VerifyResult(verifiable=False, success=False, psr=0.0, checkpoints=[],
                            message="unverifiable: the task has no verifier")
    assert task.verifier is not None
    # the episode's own list, not a copy: checks only read it, and copying it every round grew with the episode
    ctx = VerifyContext(task=task, world=world, history=history if history is not None else [])
    checkpoints: list[Checkpoint] = []
    parts: list[str] = []
    changed = _changed_checks(task, world)
    for i, (spec, check, params, name, guard) in enumerate(_checks(task)):
        if changed and i in changed:
            params = changed[i]
        value, target = check.evaluate(ctx, params)
        exact = check.is_exact(params)
        cp = Checkpoint(name=name, check=spec.check, value=float(value), target=float(target),
                        achieved=value == target if exact else value >= target, guard=guard)
        checkpoints.append(cp)
        parts.append(checkpoint_text(cp, check.style, exact))
    if task.verifier.python:
        fn = lookup(task.verifier.python)
        if fn is None:
            raise KeyError(f"task {task.id}: no verifier {task.verifier.python!r} registered")
        out = fn(ctx, **task.verifier.python_args)
        extra = _as_checkpoints(out, task.verifier.python)
        checkpoints += extra
        parts += [checkpoint_text(cp, "count") for cp in extra]
    progress = [cp for cp in checkpoints if not cp.guard]
    psr = sum(cp.achieved for cp in progress) / len(progress) if progress else 0.0
    success = bool(progress) and all(cp.achieved for cp in checkpoints)
    return VerifyResult(verifiable=True, success=success, psr=psr, checkpoints=checkpoints, message=", ".join(parts))


# task id() -> (a weak reference to the task, the verifier registry, its checks resolved): an episode
# verifies its task every round; an entry goes with its task
_RESOLVED: dict[int, tuple[Any, Any, list[tuple[Any, Check, Any, str, bool]]]] = {}


def _checks(task: "Task") -> list[tuple[Any, Check, Any, str, bool]]:
    """(spec, check, validated parameters, checkpoint name, guard) for each check of the task's verifier,
    worked out once per task object and verifier registry rather than at every verification."""
    from .. import plugins

    registry = plugins.verifiers()
    hit = _RESOLVED.get(id(task))
    if hit is not None and hit[0]() is task and hit[1] is registry:
        return hit[2]
    assert task.verifier is not None
    out = []
    for spec in task.verifier.checks:
        check = lookup(spec.check)
        if not isinstance(check, Check):
            raise KeyError(f"task {task.id}: unknown verifier check {spec.check!r} (validate the task first)")
        params = check.params.model_validate(spec.params)
        out.append((spec, check, params, spec.name or check.label(params, task), is_guard(spec)))
    key = id(task)
    _RESOLVED[key] = (weakref.ref(task, lambda _ref: _RESOLVED.pop(key, None)), registry, out)
    return out


def check_index(task: "Task", ref: int | str | None) -> int | None:
    """The verifier check an event names (its index, or the ``name`` it was given), or None."""
    checks = task.verifier.checks if task.verifier else []
    if isinstance(ref, int):
        return ref if 0 <= ref < len(checks) else None
    for i, spec in enumerate(checks):
        if spec.name == ref:
            return i
    return None


def _changed_checks(task: "Task", world: "World") -> dict[int, Any] | None:
    """check index -> its parameters as the task's ``change_objective`` events left them so far in this world
    (core/world/events.py), validated; None when no event changed a check (the common case: one attribute read)."""
    mech = getattr(world, "mech", None)
    overrides = mech.check_overrides if mech is not None else None
    if not overrides:
        return None
    merged: dict[int, dict[str, Any]] = {}
    for ref, new in overrides.items():  # in the order the events fired: one check may be named two ways
        i = check_index(task, ref)
        if i is not None:
            merged[i] = {**merged.get(i, task.verifier.checks[i].params), **new}  # type: ignore[union-attr]
    return {i: lookup(task.verifier.checks[i].check).params.model_validate(params)  # type: ignore[union-attr]
            for i, params in merged.items()}


def _as_checkpoints(out: Any, name: str) -> list[Checkpoint]:
    if isinstance(out, Checkpoint):
        return [out]
    if isinstance(out, bool):
        return [Checkpoint(name=name, check=name, value=float(out), target=1.0, achieved=out)]
    if isinstance(out, list) and all(isinstance(c, Checkpoint) for c in out):
        return list(out)
    raise TypeError(f"custom verifier {name!r} returned {type(out).__name__}; return a Checkpoint, a list of them, or a bool")


def objective_items(task: "Task") -> list[tuple[int, str]]:
    """(check index, item key) for every item the verifier requires someone to end up with."""
    if task.verifier is None:
        return []
    out = []
    for i, spec in enumerate(task.verifier.checks):
        check = lookup(spec.check)
        if isinstance(check, Check) and check.items:
            try:
                params = check.params.model_validate(spec.params)
            except Exception:  # noqa: BLE001 - already reported by the parameter check
                continue
            out += [(i, item) for item in check.items(params)]
    return out
