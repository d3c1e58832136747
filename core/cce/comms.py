"""Communication analysis: how much a team talks, to whom, whether anyone acts on it, and what goes wrong.

The counterpart of the paper's section 4.5, computed from ``trajectory.jsonl`` (docs/analysis.md):

- per episode: chat messages (calls of a chat tool, delivered or not), the round of the first one, the
  share of all tool calls that were chat, who sent how many messages to whom (from each delivery's
  recipients), and the messages that no recipient followed up: no recipient's later action within
  ``window`` rounds is related to the message by the grounded CCE method's chat rule (a transfer to the
  sender; an action naming an item, instance or player the message names; a move to coordinates or a
  landmark it gives). Replies by chat do not count as acting on a message.
- aggregated per task and overall, with the chat share over failed episodes on its own (the paper's "share
  of actions spent chatting on failed tasks").
- an LLM-judged classification of every message into a taxonomy of communication errors
  (:data:`DEFAULT_TAXONOMY`, or your own YAML/JSON file), asked through the CCE judge plugins and their
  cache. Each question carries facts computed from the trajectory (an earlier identical message, items
  the sender claims to hold but does not, teammates the message names but does not reach); the scripted
  judge's ``effects`` rule classifies from those facts alone, so the pipeline runs offline.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import jinja2
from pydantic import BaseModel, Field

from ..play.records import TurnEvent
from ..world.factories import empty_list
from ..world.tools import CHAT_TOOLS
from .graph import EpisodeData, JudgeCall, action_id, file_safe
from .grounded import WorldFacts, _message_coords, _message_words, _rule_match
from .judges import Asker, message_class_rule  # noqa: F401 - the offline classifier, re-exported

COMMS_DIR = "comms"  # per episode: comms/<judge label>.json holds that judge's message classes
DEFAULT_WINDOW = 3
BATCH = 20  # messages per judge question
OK_CLASS = "ok"

DEFAULT_TAXONOMY: dict[str, str] = {
    OK_CLASS: "No error: the message is correct, timely and reaches who needs it.",
    "stale_or_redundant": "Repeats what was already said or already known to the recipients, or is out of "
                          "date (the situation it describes has changed).",
    "false_self_claim": "Claims something about the sender's own state (items held, position, progress, "
                        "what it did) that the sender's state contradicts.",
    "wrong_or_missing_recipient": "Meant for a teammate it did not reach (local chat out of range, a "
                                  "different teammate addressed), or sent to nobody who needed it.",
    "missing_critical_information": "Asks for or announces something without what the recipient needs to "
                                    "act on it (which item, how many, where, to whom).",
    "contradicts_plan": "Contradicts the task's instructions, the team's agreed plan or an earlier "
                        "message of the sender.",
}


# ---------------------------------------------------------------------------------------------------------------
# Counting


@dataclass
class Message:
    id: str  # the CCE action id, r<round>.<agent>
    round: int
    step: int
    agent: str
    username: str
    text: str
    tool: str
    delivered: bool
    scope: str = ""
    recipients: list[str] = field(default_factory=list)  # agent ids that received it
    followed_by: list[str] = field(default_factory=list)  # ids of recipients' related actions
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class EpisodeComms:
    episode_id: str
    task_id: str
    success: bool
    config: str  # framework · model · variant
    agents: list[str]
    usernames: dict[str, str]
    tool_calls: int
    messages: list[Message]

    @property
    def chats(self) -> int:
        return len(self.messages)

    @property
    def first_chat_round(self) -> int | None:
        return min((m.round for m in self.messages), default=None)

    @property
    def chat_share(self) -> float | None:
        return self.chats / self.tool_calls if self.tool_calls else None

    @property
    def unfollowed(self) -> int:
        return sum(1 for m in self.messages if m.delivered and not m.followed_by)

    def pairs(self) -> Counter:
        """(sender username, recipient username) -> messages delivered."""
        out: Counter = Counter()
        for m in self.messages:
            for r in m.recipients:
                out[(self.usernames.get(m.agent, m.agent), self.usernames.get(r, r))] += 1
        return out


def _config(ep: EpisodeData) -> str:
    r = ep.result
    if r is None:
        return "(no result.json)"
    return " · ".join(x for x in (r.framework, r.model, r.variant) if x)


def _inventory_before(ep: EpisodeData, agent: str, step: int) -> dict[str, int] | None:
    """The agent's inventory after its last action before ``step`` (None: no status recorded yet)."""
    inv = None
    for t in ep.turns:
        if t.step >= step:
            break
        if t.agent == agent and t.status is not None:
            inv = {str(i.get("key", "")).lower(): int(i.get("count", 1)) for i in t.status.inventory}
    return inv


_CLAIM = re.compile(r"\bi(?:'ve| have|'m| am)?\s+(?:got|have|holding|carrying|hold|carry|now have)\s+"
                    r"(?:(\d+)\s*x?\s*)?(?:an?\s+|some\s+|the\s+)?([a-z][a-z _]{1,40})", re.I)


def _claimed_items(text: str, known: set[str]) -> list[tuple[str, int]]:
    """Item keys the sender says it holds ("I have 3 oak logs", "I've got the pickaxe")."""
    out = []
    for count, words in _CLAIM.findall(text):
        tokens = re.findall(r"[a-z]+", words.lower())
        for n in (3, 2, 1):  # the longest run of words naming an item key ("oak logs" -> oak_logs)
            hit = next(("_".join(tokens[i:i + n]) for i in range(0, max(0, len(tokens) - n + 1))
                        if "_".join(tokens[i:i + n]) in known or "".join(tokens[i:i + n]) in known), None)
            if hit:
                key = hit if hit in known else hit.replace("_", "")
                out.append((key, int(count) if count else 1))
                break
    return out


def _known_items() -> set[str]:
    try:
        from ..world.datapack import load_world

        return {k.lower() for k in load_world().items}
    except Exception:  # no data pack: claims are not checked (documented)
        return set()


_PLACES: list | None = None


def _places() -> list:
    """Landmarks as (names a message may use, x, y, radius), from the data pack (loaded once)."""
    global _PLACES
    if _PLACES is None:
        _PLACES = WorldFacts().places()
    return _PLACES


def analyze_episode(ep: EpisodeData, *, window: int = DEFAULT_WINDOW, known_items: set[str] | None = None) -> EpisodeComms:
    """Messages of one episode with their recipients, follow-ups and the facts a classifier is shown."""
    known = _known_items() if known_items is None else known_items
    names = ep.usernames
    by_name = {v.lower(): k for k, v in names.items()} | {k.lower(): k for k in names}
    messages: list[Message] = []
    seen_texts: dict[str, str] = {}  # normalised text -> id of its first message
    last_by_sender: dict[str, Message] = {}
    for t in ep.turns:
        if t.tool not in CHAT_TOOLS:
            continue
        args = t.arguments or {}
        delivery = t.effects.chat
        text = delivery.message if delivery else str(args.get("message", ""))
        m = Message(id=action_id(t.round, t.agent), round=t.round, step=t.step, agent=t.agent,
                    username=names.get(t.agent, t.agent), text=text, tool=t.tool or "", delivered=delivery is not None,
                    scope=delivery.scope if delivery else "", recipients=list(delivery.recipients) if delivery else [])
        m.followed_by = _follow_ups(ep, t, m, window)
        norm = " ".join(re.findall(r"[a-z0-9]+", text.lower()))
        facts: dict[str, Any] = {"delivered": m.delivered, "followed": bool(m.followed_by)}
        if norm in seen_texts:
            facts["repeats"] = seen_texts[norm]
        else:
            seen_texts[norm] = m.id
            prev = last_by_sender.get(t.agent)
            if prev and difflib.SequenceMatcher(None, prev.text.lower(), text.lower()).ratio() >= 0.9:
                facts["repeats"] = prev.id
        inv = _inventory_before(ep, t.agent, t.step)
        if inv is not None:
            facts["sender_inventory"] = inv
            wrong = [k for k, n in _claimed_items(text, known) if inv.get(k, 0) < n]
            if wrong:
                facts["claims_not_held"] = wrong
        named = {by_name[w] for w in re.findall(r"[a-z0-9_]+", text.lower()) if w in by_name} - {t.agent}
        unreached = sorted(named - set(m.recipients))
        if unreached:
            facts["names_unreached"] = [names.get(a, a) for a in unreached]
        m.facts = facts
        messages.append(m)
        last_by_sender[t.agent] = m
    return EpisodeComms(episode_id=ep.episode_id, task_id=ep.task_id, success=ep.success, config=_config(ep),
                        agents=list(ep.agents), usernames=dict(names), tool_calls=len(ep.turns), messages=messages)


def _follow_ups(ep: EpisodeData, chat: TurnEvent, m: Message, window: int) -> list[str]:
    if not m.delivered or not m.recipients:
        return []
    words, coords = _message_words(m.text), _message_coords(m.text)
    text = m.text.lower()
    # a landmark the message names counts as its coordinates (within the landmark's radius), as in grounded CCE
    coords += [(x, y, r) for names, x, y, r in _places() if any(n in words or n in text for n in names if n)]
    recipients = set(m.recipients)
    out = []
    for t in ep.turns:
        if t.step <= chat.step or t.round > chat.round + window:
            continue
        if t.agent in recipients and t.tool not in CHAT_TOOLS and t.ok and \
                _rule_match(t, chat, ep.usernames, words, coords):
            out.append(action_id(t.round, t.agent))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Aggregation


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def summarize(episodes: list[EpisodeComms]) -> dict[str, Any]:
    """The communication table's numbers for a set of episodes."""
    calls = sum(e.tool_calls for e in episodes)
    chats = sum(e.chats for e in episodes)
    failed = [e for e in episodes if not e.success]
    failed_calls = sum(e.tool_calls for e in failed)
    delivered = sum(1 for e in episodes for m in e.messages if m.delivered)
    return {
        "episodes": len(episodes), "success": sum(e.success for e in episodes),
        "chats": chats, "chats_per_episode": chats / len(episodes) if episodes else None,
        "first_chat_round": _mean(e.first_chat_round for e in episodes),
        "episodes_with_chat": sum(1 for e in episodes if e.chats),
        "chat_share": chats / calls if calls else None,
        "failed_episodes": len(failed),
        "chat_share_failed": sum(e.chats for e in failed) / failed_calls if failed_calls else None,
        "undelivered": chats - delivered,
        "unfollowed": sum(e.unfollowed for e in episodes),
        "unfollowed_share": sum(e.unfollowed for e in episodes) / delivered if delivered else None,
    }


def aggregate(episodes: list[EpisodeComms]) -> dict[str, Any]:
    """Per task (and configuration), overall, and the who-talks-to-whom graph of each task."""
    groups: dict[tuple[str, str], list[EpisodeComms]] = {}
    for e in episodes:
        groups.setdefault((e.task_id, e.config), []).append(e)
    talk: dict[str, Counter] = {}
    for e in episodes:
        talk.setdefault(e.task_id, Counter()).update(e.pairs())
    return {
        "per_task": [{"task": t, "config": c, **summarize(v)} for (t, c), v in sorted(groups.items())],
        "overall": summarize(episodes),
        "talk": {t: [{"from": a, "to": b, "messages": n} for (a, b), n in sorted(c.items(), key=lambda x: -x[1])]
                 for t, c in sorted(talk.items())},
    }


# ---------------------------------------------------------------------------------------------------------------
# Classification


class MessageLabel(BaseModel):
    message_id: str
    label: str
    reason: str = ""


class CommsLabels(BaseModel):
    """The content of ``comms/<label>.json``: one judge's classes for an episode's messages."""

    episode_id: str
    task_id: str
    judge: str
    model: str = ""
    taxonomy: dict[str, str]
    complete: bool  # False: some questions failed; their messages have no class (never a default class)
    labels: list[MessageLabel] = Field(default_factory=empty_list)
    unlabelled: list[str] = Field(default_factory=empty_list)
    calls: list[JudgeCall] = Field(default_factory=empty_list)
    failed_calls: int = 0
    notes: list[str] = Field(default_factory=empty_list)
    created: str = ""


LABEL_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["labels"],
    "properties": {"labels": {"type": "array", "items": {
        "type": "object", "required": ["message_id", "class"],
        "properties": {"message_id": {"type": "string"}, "class": {"type": "string"},
                       "reason": {"type": "string"}}}}}}

_SYSTEM = ("You review the team chat of a multi-agent collaboration benchmark played turn by turn in a 2D RPG "
           "world. You classify each message into exactly one class of a taxonomy of communication errors. "
           "Answer with one JSON object and nothing else.")
_PROMPT = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False).from_string("""\
{{ task }}

Classes (key: meaning):
{% for k, v in taxonomy.items() %}- {{ k }}: {{ v }}
{% endfor %}
Messages to classify. Each shows its id, round, sender, who received it, the text, and facts taken from the \
game log (the sender's inventory just before, an earlier message with the same text, teammates the message \
names who did not receive it, whether a recipient acted on it within a few rounds):
{% for m in messages %}
[{{ m.id }}] round {{ m.round }}, {{ m.username }} -> {{ m.recipients|join(', ') if m.recipients else 'nobody' }}: \
{{ m.message }}
  facts: {{ m.facts_text }}
{% endfor %}
Answer as JSON: {"labels": [{"message_id": "<id>", "class": "<one key above>", "reason": "<one sentence>"}, ...]} \
with one entry per message.""")


def load_taxonomy(path: str | Path | None) -> dict[str, str]:
    """The default taxonomy, or a YAML/JSON mapping ``class key: description`` (it must include ``ok``)."""
    if path is None:
        return dict(DEFAULT_TAXONOMY)
    p = Path(path)
    try:
        import yaml

        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read the taxonomy ({exc})") from exc
    if not isinstance(data, dict) or not data or not all(isinstance(k, str) and isinstance(v, str)
                                                         for k, v in data.items()):
        raise ValueError(f"{p}: a taxonomy is a mapping of class key to description, e.g. "
                         f"'stale_or_redundant: repeats what was said'")
    if OK_CLASS not in data:
        raise ValueError(f"{p}: the taxonomy needs an {OK_CLASS!r} class for messages without an error")
    return data


def _question_messages(ec: EpisodeComms, batch: list[Message]) -> list[dict[str, Any]]:
    out = []
    for m in batch:
        facts = dict(m.facts)
        facts_text = json.dumps({k: v for k, v in facts.items()}, ensure_ascii=False, sort_keys=True)
        out.append({"id": m.id, "round": m.round, "agent": m.agent, "username": m.username, "message": m.text,
                    "recipients": [ec.usernames.get(r, r) for r in m.recipients], "facts": facts,
                    "facts_text": facts_text})
    return out


def classify(ep: EpisodeData, ec: EpisodeComms, asker: Asker, taxonomy: dict[str, str], *,
             batch: int = BATCH) -> CommsLabels:
    """Ask the judge for a class per message, ``batch`` messages per question (through the cache)."""
    judge = asker.judge
    labels: dict[str, MessageLabel] = {}
    notes: list[str] = []
    task = ep.task_text()
    for i in range(0, len(ec.messages), batch):
        chunk = ec.messages[i:i + batch]
        qm = _question_messages(ec, chunk)
        messages = [{"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": _PROMPT.render(task=task, taxonomy=taxonomy, messages=qm).strip()}]
        data = asker.ask("comms", sorted({m.round for m in chunk}), messages, LABEL_SCHEMA,
                         {"kind": "comms", "task": task, "taxonomy": taxonomy, "messages": qm})
        if data is None:
            notes.append(f"question for messages {chunk[0].id}..{chunk[-1].id} failed: they stay unlabelled")
            continue
        asked = {m.id for m in chunk}
        for item in data["labels"]:
            mid, cls = item["message_id"], item["class"]
            if mid not in asked:
                notes.append(f"answer names {mid!r}, not a message asked about; ignored")
            elif cls not in taxonomy:
                notes.append(f"answer gives {mid} the class {cls!r}, not in the taxonomy; left unlabelled")
            else:
                labels[mid] = MessageLabel(message_id=mid, label=cls, reason=item.get("reason", ""))
    unlabelled = [m.id for m in ec.messages if m.id not in labels]
    failed = sum(1 for c in asker.calls if not c.ok)
    return CommsLabels(episode_id=ec.episode_id, task_id=ec.task_id, judge=getattr(judge, "name", "judge"),
                       model=getattr(judge, "model", ""), taxonomy=taxonomy, complete=failed == 0 and not unlabelled,
                       labels=[labels[m.id] for m in ec.messages if m.id in labels], unlabelled=unlabelled,
                       calls=asker.calls, failed_calls=failed, notes=notes,
                       created=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def write_labels(episode_dir: str | Path, labels: CommsLabels, label: str) -> Path:
    """``comms/<label>.json``; an incomplete result never replaces a complete one of the same label."""
    folder = Path(episode_dir) / COMMS_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{file_safe(label)}.json"
    if not labels.complete and path.is_file():
        try:
            if CommsLabels.model_validate_json(path.read_text(encoding="utf-8")).complete:
                path = folder / f"{file_safe(label)}.incomplete.json"
        except ValueError:
            pass
    path.write_text(labels.model_dump_json(indent=1), encoding="utf-8")
    return path


def read_labels(episode_dir: str | Path, label: str) -> CommsLabels | None:
    path = Path(episode_dir) / COMMS_DIR / f"{file_safe(label)}.json"
    if not path.is_file():
        return None
    return CommsLabels.model_validate_json(path.read_text(encoding="utf-8"))


def class_counts(results: Iterable[CommsLabels]) -> dict[str, Any]:
    """Messages per class over episodes, with shares of the labelled ones and the unlabelled count."""
    counts: Counter = Counter()
    unlabelled = incomplete = 0
    for r in results:
        counts.update(x.label for x in r.labels)
        unlabelled += len(r.unlabelled)
        incomplete += not r.complete
    total = sum(counts.values())
    errors = total - counts.get(OK_CLASS, 0)
    return {"labelled": total, "unlabelled": unlabelled, "incomplete_episodes": incomplete,
            "classes": {k: {"messages": n, "share": n / total if total else None,
                            "share_of_errors": (n / errors if errors else None) if k != OK_CLASS else None}
                        for k, n in counts.most_common()}}
