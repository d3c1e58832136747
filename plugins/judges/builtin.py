"""Built-in CCE judges: ``openai`` (any OpenAI-compatible endpoint), ``grounded`` (engine effects, an LLM or a
fixed rule for chat) and ``scripted`` (rule- or label-driven, for tests and offline studies).

A judge factory takes keyword options (the CLI passes ``--model``, ``--base-url``, ``--api-key-env`` and any
``-o key=value``) and returns an object with ``name``, ``model``, ``method`` and ``answer(messages, schema,
question)``; see ``core/cce/judges.py``. Third-party judges register the same way from their own plugin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentworld.core.hookspecs import hookimpl

_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _float(options: dict[str, Any], key: str, default: float) -> float:
    from agentworld.core.cce.judges import JudgeConfigError

    try:
        return float(options.pop(key, default))
    except (TypeError, ValueError) as exc:
        raise JudgeConfigError(f"judge option {key} must be a number") from exc


def make_openai(model: str | None = None, base_url: str | None = None, api_key_env: str | None = None,
                **options: Any) -> OpenAIJudge:
    """The paper's judge setup: an LLM answers step 1 and every round of the backward sweep.

    Options (``-o KEY=VALUE``): ``timeout_s`` (seconds per request; default 120, 600 for a local base URL),
    ``max_tokens`` (per answer; default 2048), ``retries``, ``backoff_s``, ``json_mode``. A local base URL
    needs no API key."""
    from agentworld.core.cce.judges import JudgeConfigError, OpenAIJudge

    if not model:
        raise JudgeConfigError("the openai judge needs --model (e.g. --model gpt-4.1)")
    retries = int(_float(options, "retries", 3))
    backoff = _float(options, "backoff_s", 1.0)
    timeout = _float(options, "timeout_s", 0.0) or None  # None: the judge's default for its base URL
    max_tokens = int(_float(options, "max_tokens", 2048))
    json_mode = str(options.pop("json_mode", "true")).lower() not in ("0", "false", "no")
    if options:
        raise JudgeConfigError(f"unknown openai judge option(s) {', '.join(sorted(options))}; "
                               f"known: timeout_s, max_tokens, retries, backoff_s, json_mode")
    return OpenAIJudge(model, base_url=base_url or _DEFAULT_BASE_URL,
                       api_key_env=api_key_env if api_key_env is not None else "OPENAI_API_KEY",
                       retries=retries, backoff_s=backoff, timeout_s=timeout, max_tokens=max_tokens,
                       json_mode=json_mode)


def make_scripted(model: str | None = None, rule: str | None = None, labels: str | None = None,
                  method: str = "paper", **options: Any) -> ScriptedJudge:
    """A judge that answers by a named rule (``effects``, ``inclusive``, ``malformed``) or from a labels file.

    labels: a JSON file ``{"success": [ids], "contributing": [ids], "chat_links": {message id: [ids]}}``.
    """
    from agentworld.core.cce.judges import JudgeConfigError, ScriptedJudge

    for unused in ("base_url", "api_key_env"):  # endpoint options mean nothing to a scripted judge
        options.pop(unused, None)
    if options:
        raise JudgeConfigError(f"unknown scripted judge option(s) {', '.join(sorted(options))}; known: rule, labels")
    if labels:
        path = Path(labels)
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise JudgeConfigError(f"scripted judge labels {path}: cannot read JSON ({exc})") from exc
        return ScriptedJudge.from_labels(spec.get("success", []), spec.get("contributing", []),
                                         spec.get("chat_links", {}), method=method)
    return ScriptedJudge.from_rule(rule or model or "effects", method=method)


def make_grounded(model: str | None = None, base_url: str | None = None, api_key_env: str | None = None,
                  chat_judge: Any = None, chat_window: Any = 3, **options: Any) -> GroundedJudge:
    """Edges from effects. Chat: an OpenAI-compatible LLM when --model is given, ``-o chat_judge=scripted:RULE``
    for a scripted one, else the deterministic rule."""
    from agentworld.core.cce.grounded import GroundedJudge
    from agentworld.core.cce.judges import JudgeConfigError

    if isinstance(chat_judge, str):
        kind, _, rule = chat_judge.partition(":")
        if kind != "scripted":
            raise JudgeConfigError(f"chat_judge={chat_judge!r}: use scripted:RULE, or --model for an LLM")
        chat_judge = make_scripted(rule=rule or "effects")
    elif chat_judge is None and model:
        chat_judge = make_openai(model, base_url, api_key_env, **options)
        options = {}
    if options:
        raise JudgeConfigError(f"unknown grounded judge option(s) {', '.join(sorted(options))}; "
                               f"known: chat_judge, chat_window")
    try:
        window = int(chat_window)
    except (TypeError, ValueError) as exc:
        raise JudgeConfigError("grounded judge option chat_window must be an integer (rounds)") from exc
    return GroundedJudge(chat_judge, chat_window=window)


@hookimpl
def register_judges(register):
    register("openai", make_openai, description="Paper method; any OpenAI-compatible endpoint (--model, --base-url, --api-key-env)")
    register("grounded", make_grounded, description="Edges from engine effects; LLM (--model) or a fixed rule for chat")
    register("scripted", make_scripted, description="Rule- or label-driven answers (tests, offline studies)")
