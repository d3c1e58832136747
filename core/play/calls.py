"""A tool call as it reaches the turn gate: its raw arguments decoded, and everything in it made safe to store.

The gate sees a call exactly as the model (or an external client) emitted it: the arguments may be a JSON
object, JSON text (valid or not), or any other JSON value. Transports that can only carry an object (MCP's
``tools/call``, a framework that parses arguments itself) send what is not one as
``{"_raw_arguments": <the text or value as emitted>}``; the gate unwraps it, so every path reaches the same
decision (docs/protocol.md, "The turn contract").

Nothing a model sends may end an episode: :func:`sanitize` replaces invalid unicode (lone surrogates cannot
be written as UTF-8) and bounds depth, length and item counts before anything is executed or stored.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

RAW_ARGUMENTS = "_raw_arguments"  # the wire form of arguments that are not a JSON object
MAX_DEPTH = 10  # containers nested deeper are cut (JSON of depth 256 cannot even be re-encoded by some writers)
MAX_TEXT = 4000  # characters kept of any one string (tool arguments are short: a chat message is at most 1000)
MAX_ITEMS = 100  # items kept of any one list or object
_SURROGATES = re.compile("[\ud800-\udfff]")


def wire_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as a JSON object for a transport that carries only objects: an object (or JSON text of one)
    as it is; anything else wrapped, so the gate can tell the model exactly what was wrong with it."""
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            return decoded
    return {RAW_ARGUMENTS: arguments}


def is_wrapped(arguments: Any) -> bool:
    return isinstance(arguments, dict) and len(arguments) == 1 and RAW_ARGUMENTS in arguments


def decode(arguments: Any) -> tuple[Any, str | None]:
    """(value, problem): JSON text decoded (blank text is ``{}``); ``problem`` says why text is not JSON."""
    if not isinstance(arguments, str):
        return arguments, None
    if not arguments.strip():
        return {}, None
    try:
        return json.loads(arguments), None
    except json.JSONDecodeError as exc:
        return arguments, f"{exc.msg} at character {exc.pos}"
    except RecursionError:
        return arguments, "nested too deeply"


def resolve(arguments: Any) -> tuple[Any, str | None, Any]:
    """``(value, problem, emitted)``: the arguments decoded (JSON text, the wire form unwrapped), why they
    could not be (or None), and what was emitted (the text or value inside the wire form)."""
    emitted = arguments
    value, problem = decode(arguments)
    if problem is None and is_wrapped(value):
        emitted = value[RAW_ARGUMENTS]
        value, problem = decode(emitted)
    return value, problem, emitted


def as_emitted(arguments: Any) -> Any:
    """How a call's arguments are recorded: decoded when they are JSON, else as emitted; sanitised."""
    value, problem, emitted = resolve(arguments)
    return sanitize(value if problem is None else emitted)


def sanitize(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy: lone surrogates replaced by U+FFFD, strings, lists and objects bounded, nesting
    cut at :data:`MAX_DEPTH`, non-finite floats and foreign objects written as text."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2 ** 63 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        if type(value) is str and len(value) <= MAX_TEXT and value.isascii():  # nothing to replace or cut
            return value
        text = _SURROGATES.sub("\ufffd", value)
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + f"...[{len(text) - MAX_TEXT} more characters cut]"
        return text
    if depth >= MAX_DEPTH:
        return f"[cut: nested deeper than {MAX_DEPTH}]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i == MAX_ITEMS:
                out["..."] = f"{len(value) - MAX_ITEMS} more keys cut"
                break
            out[sanitize(str(k))] = sanitize(v, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [sanitize(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"... {len(value) - MAX_ITEMS} more items cut")
        return items
    return sanitize(repr(value))
