"""The ``counterfactual`` CCE judge: an action contributes when replaying the episode without it loses a
checkpoint (``core/cce/counterfactual.py``; docs/cce.md). No LLM: it plays the episode again, turn for turn,
with the action's turn slept, and reads the verifier.

Options (``-o KEY=VALUE``): ``group_size`` (consecutive non-chat actions of an agent tested together before
being split; default 4), ``max_replays`` (cap per episode; default 300), ``messages`` (test each message by
not delivering it; default true).
"""

from __future__ import annotations

from typing import Any

from agentworld.core.hookspecs import hookimpl


def make_counterfactual(model: str | None = None, group_size: Any = 4, max_replays: Any = 300, messages: Any = True,
                        **options: Any) -> Any:
    from agentworld.core.cce.counterfactual import CounterfactualJudge
    from agentworld.core.cce.judges import JudgeConfigError

    for unused in ("base_url", "api_key_env"):  # endpoint options mean nothing to a judge that asks no model
        options.pop(unused, None)
    if model:
        raise JudgeConfigError("the counterfactual judge asks no model (it replays the episode): drop --model")
    if options:
        raise JudgeConfigError(f"unknown counterfactual judge option(s) {', '.join(sorted(options))}; "
                               f"known: group_size, max_replays, messages")
    try:
        size, cap = int(group_size), int(max_replays)
    except (TypeError, ValueError) as exc:
        raise JudgeConfigError("counterfactual judge options group_size and max_replays must be integers") from exc
    if size < 1 or cap < 1:
        raise JudgeConfigError("counterfactual judge options group_size and max_replays must be at least 1")
    test_messages = str(messages).lower() not in ("0", "false", "no")
    return CounterfactualJudge(group_size=size, max_replays=cap, messages=test_messages)


@hookimpl
def register_judges(register):
    register("counterfactual", make_counterfactual,
             description="Replays the episode without an agent, an action group, an action or a message; "
                         "contributing = a checkpoint is lost without it (no LLM)")
