"""The grounded CCE method: causal edges from engine effects, an LLM (or a fixed rule) only for chat.

Rules (docs/cce.md explains them with examples):

items   Inventories are tracked as lots, each remembering the action that put it there (harvest, loot, craft,
        pickup, transfer; items a agent started with have no producer). When an action removes items from an
        inventory (a craft consumes, a transfer gives, an equip wields), lots are taken first-in first-out and
        each lot's producer gets an edge to the action. A transfer's received items become a lot produced by
        the transfer, so harvest -> transfer -> craft chains form.
tool    With the world data pack loaded, a harvest whose node type needs a tool and a craft whose recipe needs
        one get an edge from the action that produced the held item of that tool type (equipped first).
equip   An ok equip_item is a parent of the agent's later ok attack, harvest and craft actions until the agent
        equips something else into the same slot.
move    A move (or portal) of agent A is an ancestor of A's next ok location-dependent action (harvest,
        pickup, attack, transfer, craft, portal): consecutive moves since A's previous location-dependent
        action form one walk, chained leg to leg m1 -> m2 -> ... -> action (so an at_location success
        counts the whole walk). A failed action leaves the walk pending.
receiver_move  For an ok transfer from A to B, B's pending moves also chain to the transfer (B walked to meet A).
chat    A message M of S (to recipients R, within ``chat_window`` rounds after it) is a parent of the first
        later contributing action of each recipient that is a transfer to S, or that names (by argument,
        target or item touched) an item key, instance id or player name M mentions, or a move to within 5
        tiles of coordinates M gives (a landmark M names counts as its coordinates, plus its radius).
        With an LLM judge configured, the judge decides instead, batched one call per round of messages, backwards.
success From the task's verifier checks: item_count -> the producers of the final lots of the item (with the
        named agent, or anyone), i.e. the craft, loot or transfer that left it where the verifier found it;
        crafted -> every craft of the item; kills -> every kill of the mob type; delivered -> the transfers of
        the item to the named agent; equipped -> the last equip of the item; at_location -> the last move of
        each agent concerned; all_alive and custom Python verifiers name no action (when the task has checks,
        that is all: a failed task may have no success action). Without a task or checks: item keys and
        mob types named by the checkpoint names of result.json; then the ok, state-changing actions of
        the rounds whose tick shows a checkpoint newly passed; then the ok non-chat actions of the last round.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

from .graph import CausalGraph, EpisodeData, action_id
from .judges import Asker
from .prompts import CHAT_SCHEMA, action_facts, items_touched, render
from ..play.records import TurnEvent
from ..world.tools import CHAT_TOOLS

LOCATION_TOOLS = frozenset({"harvest_resource", "pickup_resource", "attack_entity", "transfer_items",
                            "craft_item", "enter_portal"})
RELOCATING_TOOLS = frozenset({"move_character", "enter_portal"})
EQUIP_USERS = frozenset({"attack_entity", "harvest_resource", "craft_item"})


@dataclass
class Lot:
    count: int
    producer: str | None  # node id of the action that put these items here (None: starting inventory)


class Inventories:
    """Per agent, per item: FIFO lots with their producers."""

    def __init__(self) -> None:
        self.lots: dict[str, dict[str, deque[Lot]]] = defaultdict(lambda: defaultdict(deque))

    def add(self, agent: str, item: str, count: int, producer: str | None) -> None:
        if count > 0:
            self.lots[agent][item].append(Lot(count, producer))

    def take(self, agent: str, item: str, count: int) -> list[str]:
        """Remove ``count`` items first-in first-out; the producers of what was taken."""
        producers: list[str] = []
        q = self.lots[agent][item]
        while count > 0 and q:
            lot = q[0]
            used = min(lot.count, count)
            lot.count -= used
            count -= used
            if lot.producer and lot.producer not in producers:
                producers.append(lot.producer)
            if lot.count == 0:
                q.popleft()
        return producers

    def holders(self, item: str) -> list[tuple[str, Lot]]:
        return [(agent, lot) for agent, items in self.lots.items() for lot in items.get(item, ()) if lot.count > 0]

    def newest_producer(self, agent: str, item: str) -> str | None:
        for lot in reversed(self.lots[agent].get(item, ())):
            if lot.count > 0 and lot.producer:
                return lot.producer
        return None


class WorldFacts:
    """Tool requirements from the data pack, when it loads (the grounded method works without it)."""

    def __init__(self) -> None:
        self.loaded = None
        try:
            from ..world.datapack import load_world

            self.loaded = load_world()
        except Exception:  # no data pack yet / broken: tool edges are then skipped (documented)
            self.loaded = None

    def needed_tool(self, turn: TurnEvent) -> str | None:
        if self.loaded is None:
            return None
        try:
            for h in turn.effects.harvests:
                return self.loaded.node_type(h.node).tool
            for c in turn.effects.crafted:
                recipe = self.loaded.recipe_for(c.skill, c.item)
                return recipe.tool if recipe else None
        except Exception:
            return None
        return None

    def places(self) -> list[tuple[set[str], int, int, int]]:
        """Landmarks as (names a message may use, x, y, radius): key, name, and the name as a snake_case key."""
        if self.loaded is None:
            return []
        out = []
        for lm in getattr(self.loaded.data, "landmarks", []):
            name = lm.name.lower()
            out.append(({lm.key.lower(), name, "_".join(re.findall(r"[a-z0-9]+", name))}, lm.x, lm.y, lm.radius))
        return out

    def tool_type(self, item: str) -> str | None:
        if self.loaded is None:
            return None
        try:
            return self.loaded.item(item).tool_type
        except Exception:
            return None


def _strings(obj: Any) -> set[str]:
    """Every string inside a (pydantic / dict / list) structure, keys included."""
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump()
    out: set[str] = set()
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.add(str(k))
            out |= _strings(v)
    elif isinstance(obj, (list, tuple, set)):
        for v in obj:
            out |= _strings(v)
    return out


def objective_keys(ep: EpisodeData) -> set[str]:
    """Strings the task's verifier and success criteria name (item keys and mob types among them), and the
    words of the checkpoint names in ``result.json`` ("staff with crafter" names the item ``staff``)."""
    names: set[str] = set()
    if ep.task is not None:
        for attr in ("verifier", "success_criteria"):
            names |= _strings(getattr(ep.task, attr, None))
    if ep.result is not None:
        names |= {c.name for c in ep.result.checkpoints}
    # words inside free-text criteria ("3 oak_logs with agent_2") count too
    return names | {w for s in list(names) for w in re.findall(r"[a-z][a-z0-9_]+", s.lower())}


class GroundedJudge:
    """Builds the causal graph from effects; ``chat_judge`` (an LLM judge) only answers questions about chat."""

    method = "grounded"

    def __init__(self, chat_judge: Any = None, *, chat_window: int = 3, name: str = "grounded"):
        self.chat_judge = chat_judge
        self.chat_window = chat_window
        self.name = name
        self.model = getattr(chat_judge, "model", "") if chat_judge is not None else "rules"

    def answer(self, messages, schema, question):  # the Asker talks to the chat judge through this
        if self.chat_judge is None:
            raise RuntimeError("grounded judge without an LLM answers no questions")
        return self.chat_judge.answer(messages, schema, question)

    def build_graph(self, ep: EpisodeData, asker: Asker) -> CausalGraph:
        graph = CausalGraph.from_episode(ep)
        world = WorldFacts()
        inv = self._effect_edges(ep, graph, world)
        self._success(ep, graph, inv)
        if self.chat_judge is not None:
            self._chat_by_judge(ep, graph, asker)
        else:
            self._chat_by_rule(ep, graph, world)
        return graph

    # -- effects ------------------------------------------------------------------------------------------------

    def _effect_edges(self, ep: EpisodeData, graph: CausalGraph, world: WorldFacts) -> Inventories:
        inv = Inventories()
        for a in getattr(ep.task, "agents", None) or []:  # starting inventories: lots without a producer
            for stack in getattr(a, "inventory", []) or []:
                inv.add(a.agent_id, stack.item, stack.count, None)
        usernames = {v: k for k, v in ep.usernames.items()}
        pending_moves: dict[str, list[str]] = defaultdict(list)
        # agent -> slot -> (equip action id, producer of the wielded item, item key)
        equipped: dict[str, dict[str, tuple[str, str | None, str]]] = defaultdict(dict)
        ticks = {t.round: t for t in ep.ticks}
        last_round = None
        for turn in ep.turns:
            if last_round is not None and turn.round != last_round and last_round in ticks:
                self._apply_tick(inv, ticks[last_round])
            last_round = turn.round
            nid = action_id(turn.round, turn.agent)
            e = turn.effects
            taken: dict[str, list[str]] = {}
            for d in e.lost:
                producers = inv.take(d.agent, d.item, d.count)
                taken[d.item] = producers
                for p in producers:
                    graph.add_edge(p, nid, "items", f"{d.item} produced by {p} {_verb(turn.tool)}")
            for d in e.gained:
                inv.add(d.agent, d.item, d.count, nid)
            if not turn.ok:
                continue
            agent = turn.agent
            # equip: the wielded item's producer enables the equip; the equip enables later uses
            if e.equipped is not None:
                producer = (taken.get(e.equipped.item) or [None])[0] or inv.newest_producer(agent, e.equipped.item)
                if producer:
                    graph.add_edge(producer, nid, "items", f"{e.equipped.item} produced by {producer} equipped")
                equipped[agent][e.equipped.slot] = (nid, producer, e.equipped.item)
            if turn.tool in EQUIP_USERS:
                for slot, (eq_id, _, _) in equipped[agent].items():
                    graph.add_edge(eq_id, nid, "equip", f"{slot} equipped for {turn.tool}")
                needed = world.needed_tool(turn)
                if needed:
                    producer = self._tool_producer(inv, world, agent, needed, equipped[agent])
                    if producer:
                        graph.add_edge(producer, nid, "tool", f"provided the {needed} it needs")
            # moves: a chain of relocations ends at the next location-dependent action
            if turn.tool in LOCATION_TOOLS:
                self._close_chain(graph, pending_moves[agent], nid, "move", "walked into position")
                pending_moves[agent] = []
                if turn.tool == "transfer_items" and e.transfers:
                    receiver = e.transfers[0].to_agent
                    receiver = usernames.get(receiver, receiver)
                    self._close_chain(graph, pending_moves[receiver], nid, "receiver_move",
                                      "receiver walked to meet the giver")
                    pending_moves[receiver] = []
            if turn.tool in RELOCATING_TOOLS and (e.move is None or e.move.start != e.move.end or e.portal):
                if pending_moves[agent] and turn.tool not in LOCATION_TOOLS:
                    # a walk continued: the earlier leg is an ancestor of this one (and so of whatever the
                    # walk serves: the next location-dependent action or an at_location objective)
                    graph.add_edge(pending_moves[agent][-1], nid, "move", "continued the walk")
                pending_moves[agent].append(nid)
        return inv

    @staticmethod
    def _apply_tick(inv: Inventories, tick: Any) -> None:
        for d in tick.effects.lost:
            inv.take(d.agent, d.item, d.count)
        for d in tick.effects.gained:
            inv.add(d.agent, d.item, d.count, None)

    @staticmethod
    def _close_chain(graph: CausalGraph, moves: list[str], nid: str, kind: str, reason: str) -> None:
        """The last leg of a pending walk enables the action (earlier legs are already chained to it)."""
        if moves:
            graph.add_edge(moves[-1], nid, kind, reason)

    @staticmethod
    def _tool_producer(inv: Inventories, world: WorldFacts, agent: str, tool: str,
                       equipped: dict[str, tuple[str, str | None, str]]) -> str | None:
        """The producer of the item of tool type ``tool`` the agent holds (equipped first, then inventory)."""
        for _, producer, item in equipped.values():
            if producer and world.tool_type(item) == tool:
                return producer
        for item in list(inv.lots[agent]):
            if world.tool_type(item) == tool:
                producer = inv.newest_producer(agent, item)
                if producer:
                    return producer
        return None

    # -- success ------------------------------------------------------------------------------------------------

    def _success(self, ep: EpisodeData, graph: CausalGraph, inv: Inventories) -> None:
        checks = list(getattr(getattr(ep.task, "verifier", None), "checks", None) or [])
        changed = _changed_params(ep, checks)
        for i, check in enumerate(checks):
            self._success_from_check(ep, graph, inv, check, changed.get(i))
        if checks:
            # The verifier is known: when its checks name no action, nothing was achieved (a failed task
            # judged with --judge-failed); guessing from checkpoints would credit unrelated actions.
            return
        # no task or no check we understand: item keys and mob types named by the verifier or checkpoints
        keys = objective_keys(ep)
        items_seen = {i for t in ep.turns for i in items_touched(t)}
        for item in sorted(keys & items_seen):
            self._final_holders(ep, graph, inv, item, None, "objective item")
        for turn in ep.turns:
            for k in turn.effects.kills:
                if k.mob in keys:
                    graph.mark_success(action_id(turn.round, turn.agent), f"killed {k.instance} (objective mob)")
        if graph.success:
            return
        # no objective named or none of it produced by an action: the rounds where checkpoints were passed
        passed_before = 0
        for tick in sorted(ep.ticks, key=lambda t: t.round):
            if tick.checkpoints_passed > passed_before:
                for turn in ep.turns:
                    if turn.round == tick.round and turn.ok and _changes_state(turn):
                        graph.mark_success(action_id(turn.round, turn.agent),
                                           f"state change in round {tick.round}, where a checkpoint was passed")
            passed_before = max(passed_before, tick.checkpoints_passed)
        if graph.success or not ep.turns:
            return
        last = max(t.round for t in ep.turns)
        for turn in ep.turns:
            if turn.round == last and turn.ok and turn.tool not in CHAT_TOOLS:
                graph.mark_success(action_id(turn.round, turn.agent), "ok action of the final round (no objective known)")

    def _final_holders(self, ep: EpisodeData, graph: CausalGraph, inv: Inventories, item: str, agent: str | None,
                       why: str) -> None:
        """The producers of the final lots of ``item`` (held by ``agent`` or anyone); if none survive, the last
        action that gained or equipped it."""
        found = False
        for holder, lot in inv.holders(item):
            if lot.producer and (agent is None or holder == agent):
                graph.mark_success(lot.producer, f"left {lot.count} {item} with {holder} ({why})")
                found = True
        if found:
            return
        for turn in reversed(ep.turns):
            e = turn.effects
            if turn.ok and (any(d.item == item and (agent is None or d.agent == agent) for d in e.gained)
                            or (e.equipped is not None and e.equipped.item == item
                                and (agent is None or turn.agent == agent))):
                graph.mark_success(action_id(turn.round, turn.agent), f"last to gain or equip {item} ({why})")
                return

    def _success_from_check(self, ep: EpisodeData, graph: CausalGraph, inv: Inventories, check: Any,
                            changed: dict[str, Any] | None = None) -> None:
        """Success actions for one verifier check (see the module doc), with the parameters a change_objective
        event gave it (``changed``); unknown checks add nothing."""
        kind = getattr(check, "check", "")
        p = {**dict(getattr(check, "params", None) or {}), **(changed or {})}
        resolve = getattr(ep.task, "resolve_agent", lambda ref: ref)
        agent = resolve(p["agent"]) if p.get("agent") else None
        why = f"verifier check {kind}"
        if kind == "item_count" and p.get("item"):
            self._final_holders(ep, graph, inv, p["item"], agent, why)
        elif kind == "equipped" and p.get("item"):
            for turn in reversed(ep.turns):
                eq = turn.effects.equipped
                if turn.ok and eq is not None and eq.item == p["item"] and agent in (None, turn.agent):
                    graph.mark_success(action_id(turn.round, turn.agent), f"equipped {eq.item} ({why})")
                    break
        elif kind == "crafted" and p.get("item"):
            for turn in ep.turns:
                if turn.ok and agent in (None, turn.agent) and any(c.item == p["item"] for c in turn.effects.crafted):
                    graph.mark_success(action_id(turn.round, turn.agent), f"crafted {p['item']} ({why})")
        elif kind == "kills" and p.get("mob"):
            for turn in ep.turns:
                if agent in (None, turn.agent) and any(k.mob == p["mob"] for k in turn.effects.kills):
                    graph.mark_success(action_id(turn.round, turn.agent), f"killed a {p['mob']} ({why})")
        elif kind == "delivered" and p.get("item") and p.get("to"):
            to = resolve(p["to"])
            sender = resolve(p["from"]) if p.get("from") else None
            for turn in ep.turns:
                if turn.ok and any(t.item == p["item"] and t.to_agent == to and sender in (None, t.from_agent)
                                   for t in turn.effects.transfers):
                    graph.mark_success(action_id(turn.round, turn.agent), f"delivered {p['item']} ({why})")
        elif kind == "at_location":
            wanted = [resolve(a) for a in ([p["agent"]] if p.get("agent") else p.get("agents") or ep.agents)]
            for who in wanted:
                last = next((t for t in reversed(ep.turns) if t.agent == who and t.ok
                             and t.tool in RELOCATING_TOOLS), None)
                if last is not None:
                    graph.mark_success(action_id(last.round, last.agent), f"last move of {who} ({why})")

    # -- chat ---------------------------------------------------------------------------------------------------

    def _chats(self, ep: EpisodeData) -> list[TurnEvent]:
        return [t for t in ep.turns if t.ok and t.effects.chat is not None]

    def _chat_targets(self, ep: EpisodeData, by_round: dict[int, list[TurnEvent]], contributing: set[str],
                      chat: TurnEvent) -> list[TurnEvent]:
        """Later contributing actions of the message's recipients within ``chat_window`` rounds."""
        recipients = set(chat.effects.chat.recipients) if chat.effects.chat else set()
        recipients |= {ep.usernames.get(r, r) for r in list(recipients)}
        out = []
        for rnd in range(chat.round, chat.round + self.chat_window + 1):
            for t in by_round.get(rnd, ()):
                if (t.step > chat.step and t.agent != chat.agent and t.agent in recipients
                        and action_id(t.round, t.agent) in contributing):
                    out.append(t)
        return out

    @staticmethod
    def _by_round(ep: EpisodeData) -> dict[int, list[TurnEvent]]:
        out: dict[int, list[TurnEvent]] = defaultdict(list)
        for t in ep.turns:
            out[t.round].append(t)
        return out

    def _chat_by_rule(self, ep: EpisodeData, graph: CausalGraph, world: WorldFacts) -> None:
        names = ep.usernames
        by_round = self._by_round(ep)
        # Only chat nodes can join C from here on (chat edges start at messages), and messages are decided
        # last to first, so C grows by exactly the messages linked: no need to recompute ancestors.
        contributing = graph.contributing()
        places = world.places()
        for chat in reversed(self._chats(ep)):  # backwards: a reply decided first can make its trigger count
            mid = action_id(chat.round, chat.agent)
            words = _message_words(chat.effects.chat.message)
            coords = _message_coords(chat.effects.chat.message)
            text = chat.effects.chat.message.lower()
            # a landmark the message names counts as its coordinates (within the landmark's radius)
            coords += [(x, y, r) for names_, x, y, r in places if any(n in words or n in text for n in names_ if n)]
            linked: set[str] = set()
            for t in self._chat_targets(ep, by_round, contributing, chat):
                if t.agent in linked:
                    continue
                why = _rule_match(t, chat, names, words, coords)
                if why and graph.add_edge(mid, action_id(t.round, t.agent), "chat_rule", why):
                    linked.add(t.agent)
                    contributing.add(mid)

    def _chat_by_judge(self, ep: EpisodeData, graph: CausalGraph, asker: Asker) -> None:
        chats_by_round: dict[int, list[TurnEvent]] = defaultdict(list)
        for chat in self._chats(ep):
            chats_by_round[chat.round].append(chat)
        by_round = self._by_round(ep)
        contributing = graph.contributing()  # grows by the messages linked (see _chat_by_rule)
        task = ep.task_text()
        for rnd in sorted(chats_by_round, reverse=True):
            messages = []
            for chat in chats_by_round[rnd]:
                targets = self._chat_targets(ep, by_round, contributing, chat)
                if not targets:
                    continue
                nodes = [graph.nodes[action_id(t.round, t.agent)] for t in targets]
                messages.append({
                    "id": action_id(chat.round, chat.agent), "round": chat.round, "agent": chat.agent,
                    "message": chat.effects.chat.message, "recipients": list(chat.effects.chat.recipients),
                    "targets": [action_facts(t, n.id, n.action, n.result) for t, n in zip(targets, nodes)]})
            if not messages:
                continue
            data = asker.ask("chat", [rnd], render("chat.j2", failed=not ep.success, task=task, messages=messages), CHAT_SCHEMA,
                             {"kind": "chat", "task": task, "rounds": [rnd], "messages": messages})
            if data is None:
                graph.notes.append(f"chat question for round {rnd} failed after retries: its messages count as not contributing")
                continue
            asked = {m["id"]: {t["id"] for t in m["targets"]} for m in messages}
            for link in data["links"]:
                mid = link["message_id"]
                if mid not in asked:
                    graph.notes.append(f"chat answer names {mid!r}, not a message asked about; ignored")
                    continue
                for tid in link["action_ids"]:
                    if tid in asked[mid]:
                        if graph.add_edge(mid, tid, "chat_judge", link.get("reason", "")):
                            contributing.add(mid)
                    else:
                        graph.notes.append(f"chat answer links {mid} to {tid!r}, not one of its targets; ignored")


def _verb(tool: str | None) -> str:
    return {"craft_item": "consumed by the craft", "transfer_items": "handed over",
            "equip_item": "equipped"}.get(tool or "", "used")


def _changes_state(turn: TurnEvent) -> bool:
    e = turn.effects
    return bool(e.gained or e.lost or e.transfers or e.crafted or e.kills or e.harvests or e.completed
                or (e.move and e.move.start != e.move.end) or e.portal)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_#]+")
_COORD = re.compile(r"\(?\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)?")


def _message_words(message: str) -> set[str]:
    words = {w.lower() for w in _WORD.findall(message)}
    # "oak logs" in prose names the item key oak_logs
    tokens = [w.lower() for w in re.findall(r"[A-Za-z]+", message)]
    words |= {f"{a}_{b}" for a, b in zip(tokens, tokens[1:])}
    return words


def _message_coords(message: str) -> list[tuple[int, int, int]]:
    """Coordinates written in the message, as (x, y, extra radius 0)."""
    return [(int(x), int(y), 0) for x, y in _COORD.findall(message)]


def _rule_match(t: TurnEvent, chat: TurnEvent, names: dict[str, str], words: set[str],
                coords: list[tuple[int, int, int]]) -> str:
    sender = {chat.agent, names.get(chat.agent, chat.agent)}
    if t.tool == "transfer_items":
        if any(tr.to_agent in sender for tr in t.effects.transfers) or \
                str((t.arguments or {}).get("targetPlayer", (t.arguments or {}).get("target_player", ""))) in sender:
            return "recipient handed items to the sender"
    named = {str(v).lower() for v in (t.arguments or {}).values() if isinstance(v, str)}
    named |= set(items_touched(t))
    if t.effects.target:
        named.add(str(t.effects.target).lower())
    hit = sorted(w for w in named if len(w) > 2 and w in words)
    if hit:
        return f"recipient acted on {', '.join(hit)} named in the message"
    if t.tool == "move_character" and coords:
        args = t.arguments or {}
        try:
            x, y = int(args.get("x")), int(args.get("y"))
        except (TypeError, ValueError):
            return ""
        if any(abs(x - cx) + abs(y - cy) <= 5 + r for cx, cy, r in coords):
            return f"recipient walked to ({x}, {y}), the place the message named"
    return ""


def _changed_params(ep: EpisodeData, checks: list[Any]) -> dict[int, dict[str, Any]]:
    """check index -> the parameters the task's ``change_objective`` events set, as the episode's final state
    records them (``world.mechanics.check_overrides``, by check name or index, in the order they fired): the
    verifier judged the changed order, so success is read from it too (an order changed from iron to steel is
    met by the steel craft)."""
    from ..tasks.verify import check_index

    world = (ep.final_state or {}).get("world") or {}
    overrides = (world.get("mechanics") or {}).get("check_overrides") or {}
    out: dict[int, dict[str, Any]] = {}
    if not overrides or ep.task is None:
        return out
    for ref, params in overrides.items():  # the record's keys are strings; an index was an int when it fired
        i = check_index(ep.task, int(ref) if str(ref).isdigit() else ref)
        if i is not None and i < len(checks) and isinstance(params, dict):
            out[i] = {**out.get(i, {}), **params}
    return out
