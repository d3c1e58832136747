"""Judge prompts (Jinja2) and the question data that goes with them.

Every question is built twice from the same facts: as chat messages for an LLM (rendered here) and as a
``question`` dict for scripted judges. The answer formats are the paper's: ``{"success_action_ids": [...]}``
and ``{"contributing_ids": [...], "not_contributing_ids": [...]}``; we additionally accept optional
``enables`` (candidate id -> the later action ids it enabled) and ``reasons`` (id -> one sentence), which
become the edges and reasons stored in ``cce.json``.
"""

from __future__ import annotations

from typing import Any

import jinja2

from ..play.records import TurnEvent

SYSTEM = """\
You are the judge of a multi-agent collaboration benchmark played in a turn-based 2D RPG world. Agents act \
one tool call per turn; a round gives every active agent one turn, in a fixed order. You decide which \
actions causally contributed to the team's success. Answer with one JSON object and nothing else."""

# A failed episode judged anyway (``--judge-failed``): the same questions, told the truth about the outcome.
SYSTEM_FAILED = """You are the judge of a multi-agent collaboration benchmark played in a turn-based 2D RPG world. Agents act one tool call per turn; a round gives every active agent one turn, in a fixed order. This episode FAILED: the team did not complete its task. You decide which actions causally contributed to the progress the team made toward the objective. Answer with one JSON object and nothing else."""



def action_line(a: dict[str, Any]) -> str:
    """One action as the judge reads it: ``[id] round R, agent (username): action -> ok: result``
    (``action_facts`` works it out once and keeps it as ``line``)."""
    if "line" in a:
        return a["line"]
    who = f"{a['agent']} ({a['username']})" if a["username"] and a["username"] != a["agent"] else f"{a['agent']}"
    line = f"[{a['id']}] round {a['round']}, {who}: {a['action']} -> {'ok' if a['ok'] else 'FAILED'}"
    return f"{line}: {a['result']}" if a["result"] else line


def action_lines(actions: list[dict[str, Any]], indent: str = "") -> str:
    """The lines of many actions, each ending in a newline. Joined in Python, not looped in the template: a
    sweep question can list thousands of already-contributing actions, and this keeps CCE linear in them."""
    return "".join(f"{indent}{action_line(a)}\n" for a in actions)


TEMPLATES = {
    "success.j2": """
{{ task }}

{% if failed %}The task was NOT completed: the episode failed (not every check of the verifier passed). It is \
judged anyway, to see how the team's actions led to the progress it made. Below are the team's actions (id, \
round, agent, action, outcome).

{{ candidates|action_lines }}
Step 1 of the causal analysis: which actions came closest to achieving the objective? These are the final \
actions that produced, delivered or completed part of what the verifier checks (typically in the last \
rounds). List only those, not the earlier preparation; list none if no action made any progress.
{% else %}The task was completed successfully. Below are the team's actions (id, round, agent, action, outcome).

{{ candidates|action_lines }}
Step 1 of the causal analysis: which actions directly achieved the objective? These are the final actions \
that produced, delivered or completed what the verifier checks (typically in the last rounds). List only \
those, not the earlier preparation.
{% endif %}
Answer as JSON: {"success_action_ids": ["<id>", ...], "reasons": {"<id>": "<one sentence>"}}""",

    "round.j2": """
{{ task }}

Already known to contribute to the {{ 'progress made' if failed else 'success' }} (later actions):
{{ targets|action_lines }}
Actions of round{{ 's' if rounds|length > 1 else '' }} {{ rounds|join(', ') }} to judge:
{{ candidates|action_lines }}
Which of these actions causally enabled any of the already-contributing actions listed above, or another \
action of this round that you mark as contributing (an action can only enable actions that come after it)? \
Be inclusive: an action counts if it was even somewhat \
helpful for a contributing action (gathering, crafting, moving into position, handing over items, a \
message that led a teammate to act). Put every judged id in exactly one of the two lists.

Answer as JSON: {"contributing_ids": ["<id>", ...], "not_contributing_ids": ["<id>", ...], \
"enables": {"<contributing id>": ["<later id it enabled>", ...]}, "reasons": {"<id>": "<one sentence>"}}""",

    "chat.j2": """
{{ task }}

Each chat message below is followed by later actions of its recipients that are known to contribute to \
the {{ 'progress made (the episode failed)' if failed else 'success' }}. For each message, which of its listed actions did the message lead to (the recipient acted \
on what the message said: a request, a plan, a location, an item)? List none if the action would have \
happened anyway.

{% for m in messages %}Message [{{ m.id }}] round {{ m.round }}, {{ m.agent }} -> {{ m.recipients|join(', ') }}: \
{{ m.message }}
{{ m.targets|action_lines('  ') }}
{% endfor %}
Answer as JSON: {"links": [{"message_id": "<id>", "action_ids": ["<id>", ...], "reason": "<one sentence>"}]}""",
}

_env = jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=False, undefined=jinja2.StrictUndefined,
                          trim_blocks=False, keep_trailing_newline=False)
_env.filters["action_lines"] = action_lines

ID_LIST = {"type": "array", "items": {"type": "string"}}
REASONS = {"type": "object", "additionalProperties": {"type": "string"}}
SUCCESS_SCHEMA = {"type": "object", "required": ["success_action_ids"],
                  "properties": {"success_action_ids": ID_LIST, "reasons": REASONS}}
ROUND_SCHEMA = {"type": "object", "required": ["contributing_ids"],
                "properties": {"contributing_ids": ID_LIST, "not_contributing_ids": ID_LIST,
                               "enables": {"type": "object", "additionalProperties": ID_LIST}, "reasons": REASONS}}
CHAT_SCHEMA = {"type": "object", "required": ["links"],
               "properties": {"links": {"type": "array", "items": {
                   "type": "object", "required": ["message_id", "action_ids"],
                   "properties": {"message_id": {"type": "string"}, "action_ids": ID_LIST,
                                  "reason": {"type": "string"}}}}}}


def items_touched(turn: TurnEvent) -> list[str]:
    """Item keys (and mob types killed) an action's effects involve, for judges that match on names."""
    e = turn.effects
    keys = {d.item for d in (*e.gained, *e.lost)} | {t.item for t in e.transfers} | {c.item for c in e.crafted}
    keys |= {k.mob for k in e.kills}
    for h in e.harvests:
        keys |= set(h.items)
    return sorted(keys)


def action_facts(turn: TurnEvent, node_id: str, action: str, result: str) -> dict[str, Any]:
    """One action as a question shows it (LLM line and scripted data alike)."""
    facts: dict[str, Any] = {
        "id": node_id, "step": turn.step, "round": turn.round, "agent": turn.agent, "username": turn.username,
        "tool": turn.tool, "arguments": dict(turn.arguments or {}), "ok": turn.ok, "action": action,
        "result": result, "items": items_touched(turn), "target": turn.effects.target,
    }
    if turn.effects.chat is not None:
        facts["recipients"] = list(turn.effects.chat.recipients)
        facts["message"] = turn.effects.chat.message
    facts["names"] = action_names(facts)
    facts["line"] = action_line(facts)
    return facts


def action_names(facts: dict[str, Any]) -> list[str]:
    """Item keys, instance ids and usernames an action names (its items, string arguments and target),
    lower-cased: what a judge that matches on names compares, worked out once per action."""
    words = set(facts.get("items", []))
    for v in (facts.get("arguments") or {}).values():
        if isinstance(v, str):
            words.add(v.lower())
    if facts.get("target"):
        words.add(str(facts["target"]).lower())
    return sorted(w for w in words if w)


def render(template: str, *, failed: bool = False, **ctx: Any) -> list[dict[str, str]]:
    """System + user messages for one question; ``failed``: the episode failed and is judged anyway, and the
    prompts say so (a successful episode's prompts are unchanged, so cached answers stay valid)."""
    return [{"role": "system", "content": SYSTEM_FAILED if failed else SYSTEM},
            {"role": "user", "content": _env.get_template(template).render(failed=failed, **ctx).strip()}]
