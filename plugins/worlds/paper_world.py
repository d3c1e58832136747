"""The ``paper-server`` world: a :class:`World` over a running paper game server's ``/ai/*`` API.

One instance drives one episode. Every agent gets its own character, named with a per-episode prefix
(``aw1f3c9_lumberjack_agent``) so that runs never share characters or chat, set up from the task's agent
block with the setup endpoints (position, skills, inventory, equipment, full HP). The server's world is
real-time; our turn contract is not: every action is resolved within its turn by bounded polling of
``observe`` (``PaperOptions``), and its effects are read from the differences between the observations
before and after it. Chat is scoped to the episode: the server's global log is filtered to the episode's
characters and to messages sent after the episode started. The actions themselves are in
``paper_actions.py``.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentworld.core.world.api import PlayerSpec, PlayerState, TickReport, World, WorldUnavailable
from agentworld.core.world.effects import Effects, HpChange
from agentworld.core.world.engine import make_rules
from agentworld.core.world.models import Rules
from agentworld.core.world.observation import ChatMessage, Observation

from . import paper_view as view
from .paper_actions import PaperActions
from .paper_client import PaperAuthError, PaperClient, PaperRefusal

# the paper's world differs from ours: its client capped one move at 120 tiles and showed a wide radius
PAPER_RULES = {"move_range": 120, "view_radius": 20, "inventory_slots": view.INVENTORY_SLOTS, "station_range": 2}


class PaperOptions(BaseModel):
    """How the backend talks to the server and how long it waits for the real-time world (seconds)."""

    model_config = ConfigDict(extra="forbid")

    server_url: str = Field(description="Base URL of the paper's game server, e.g. http://localhost:7031")
    prefix: str | None = Field(None, description="Username prefix of this episode's characters (default: random)")
    radius: int = Field(64, ge=1, description="Radius asked of /ai/observe")
    poll_s: float = Field(0.5, gt=0, description="Interval between observations while waiting for an action")
    move_timeout_s: float = Field(30.0, gt=0)
    harvest_timeout_s: float = Field(30.0, gt=0)
    combat_timeout_s: float = Field(120.0, gt=0)
    pickup_timeout_s: float = Field(5.0, gt=0)
    stall_s: float = Field(3.0, gt=0, description="An action whose effects stopped changing this long is over")
    sleep_cap_s: float = Field(60.0, ge=0, description="sleep(seconds) waits min(seconds, this) real seconds")
    request_timeout_s: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0, description="Retries of a 5xx or connection error (never of a 4xx)")
    backoff_s: float = Field(1.0, ge=0, description="Backoff between retries (grows linearly)")


class Character:
    """One agent's character on the server and what the backend knows about it."""

    def __init__(self, spec: PlayerSpec, name: str, password: str, order: int):
        self.agent_id = spec.agent_id
        self.username = spec.username  # the task's name (what teammates use)
        self.name = name  # the server's name (prefixed)
        self.password = password
        self.order = order
        self.token = ""
        self.active = True
        self.dead = False
        self.left_reason = ""
        self.raw: dict[str, Any] = {}  # last observation
        self.fresh = False  # ``raw`` is current (nothing happened since it was read)
        self.mailbox: list[ChatMessage] = []
        self.notes: list[str] = []
        self.kills: Counter[str] = Counter()
        self.crafted: Counter[str] = Counter()


class PaperServerWorld(PaperActions, World):
    def __init__(self, options: PaperOptions, rules: dict | None = None, *, client: PaperClient | None = None):
        self.options = options
        self.rules: Rules = make_rules(Rules(**{**Rules().model_dump(), **PAPER_RULES}), rules)
        self.client = client or PaperClient(options.server_url, timeout_s=options.request_timeout_s,
                                            retries=options.retries, backoff_s=options.backoff_s)
        self.prefix = options.prefix if options.prefix is not None else f"aw{secrets.token_hex(3)}_"
        self.version = "paper-server"
        self.round = 1
        self.chars: dict[str, Character] = {}
        self.by_name: dict[str, str] = {}  # server name and task username -> agent id
        self._chat_seen: Counter[tuple[Any, ...]] | None = None  # log entries already handled (None: no baseline)
        self._sent: list[tuple[str, str, str, list[str]]] = []  # (agent, text, scope, recipients) not yet seen
        self._closed = False

    # ============================================================================================ setup
    def add_player(self, spec: PlayerSpec) -> None:
        if spec.agent_id in self.chars:
            raise ValueError(f"player {spec.agent_id}: agent id already in the world")
        c = Character(spec, f"{self.prefix}{spec.username}", secrets.token_urlsafe(12), len(self.chars))
        self.stale()  # a new character shows in the others' views
        self._session(c)
        self.chars[c.agent_id] = c
        self.by_name[c.name] = self.by_name[c.username] = c.agent_id
        if self._chat_seen is None:
            self._chat_seen = Counter(self._chat_key(m) for m in self._chat_log(c))
        problems = self._setup(c, spec)
        if problems:
            raise ValueError(f"player {spec.agent_id}: the server refused its setup: " + "; ".join(problems))

    def _session(self, c: Character) -> None:
        """Create the character (or log in to it if it exists: a resumed episode) and keep its token."""
        try:
            c.token = self.client.post("/ai/create", {"username": c.name, "password": c.password})["token"]
        except PaperRefusal as exc:
            if "exist" not in exc.message.lower():
                raise ValueError(f"player {c.agent_id}: the server refused to create {c.name!r}: {exc.message}") from None
            c.token = self._login(c)

    def _login(self, c: Character) -> str:
        try:
            return self.client.post("/ai/login", {"username": c.name, "password": c.password})["token"]
        except PaperRefusal as exc:
            if "already" not in exc.message.lower():
                raise ValueError(f"player {c.agent_id}: cannot log in as {c.name!r}: {exc.message}") from None
            return self.client.post("/ai/login", {"username": c.name, "password": c.password, "force": True})["token"]

    def _setup(self, c: Character, spec: PlayerSpec) -> list[str]:
        """Realise the agent block with the setup endpoints; returns what the server refused."""
        problems: list[str] = []
        try:
            self.call(c, "/ai/teleport", {"x": spec.x, "y": spec.y, "withAnimation": False})
        except PaperRefusal as exc:
            problems.append(f"spawn ({spec.x},{spec.y}): {exc.message}")
        for skill, level in sorted(spec.skills.items()):
            name = view.SKILL_BY_KEY.get(skill.lower())
            if name is None:
                problems.append(f"unknown skill {skill!r} (the server's skills: {', '.join(view.SKILL_BY_KEY)})")
                continue
            try:
                self.call(c, "/ai/setSkillLevel", {"skill": name, "level": level})
            except PaperRefusal as exc:
                problems.append(f"skill {skill} level {level}: {exc.message}")
        stacks = [*spec.inventory, *spec.equipment]
        for s in stacks:
            if s.enchant:  # the API takes enchantments, but the reference does not say in which form
                problems.append(f"item {s.item!r} enchant {s.enchant}: this backend cannot set enchantments "
                                f"(their form in /ai/setInventory is not documented); use enchant 0")
        body = {"items": [{"key": s.item, "count": s.count} for s in stacks], "clearFirst": True}
        answer = self.call(c, "/ai/setInventory", body)
        for f in (answer.get("results") or {}).get("failedItems") or []:
            problems.append(f"item {f.get('key')!r}: {f.get('reason', 'refused')}")
        for s in spec.equipment:  # equipped through the inventory, so that the server picks the slot
            raw = self.observe_raw(c)
            slot = next((i for i in view.items(raw) if i.get("key") == s.item), None)
            if slot is None:
                continue  # already reported by setInventory
            try:
                self.call(c, "/ai/equip", {"index": slot.get("index")})
            except PaperRefusal as exc:
                problems.append(f"equipping {s.item!r}: {exc.message}")
        raw = self.observe_raw(c)
        self.call(c, "/ai/setPlayerStatus", {"hitPoints": view.hp(raw)[1]})
        self.call(c, "/ai/stop", {})
        raw = self.observe_raw(c)
        if {"x": spec.x, "y": spec.y} in raw.get("collisions") or []:
            problems.append(f"spawn ({spec.x},{spec.y}) is a collision tile on the server's map")
        m = raw.get("map") or {}
        self.version = f"paper-server:{m.get('name', 'map')}@{m.get('version', '?')}"
        return problems

    def remove_player(self, agent_id: str, reason: str) -> None:
        c = self._char(agent_id)
        c.active, c.left_reason = False, c.left_reason or reason
        try:
            self.call(c, "/ai/stop", {})
        except (PaperRefusal, WorldUnavailable):
            pass  # leaving must not fail: the character is out of play either way

    def close(self) -> None:
        """Log every character out and release the connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for c in self.chars.values():
            try:
                self.client.post("/ai/logout", {"token": c.token}, retries=0)  # a dead server: do not wait
            except (PaperRefusal, WorldUnavailable):
                pass
        self.client.close()

    # =========================================================================================== calls
    def call(self, c: Character, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST as ``c``; a 401 is answered by logging in again once (tokens can expire)."""
        c.fresh = False  # any call may change the world
        try:
            return self.client.post(path, {**body, "token": c.token})
        except PaperAuthError:
            c.token = self._relogin(c)
            return self.client.post(path, {**body, "token": c.token})

    def _relogin(self, c: Character) -> str:
        try:
            return self._login(c)
        except (ValueError, PaperRefusal) as exc:
            raise WorldUnavailable(f"paper server: the token of {c.name} was refused (401) and logging in again "
                                   f"failed: {exc}") from None

    def observe_raw(self, c: Character) -> dict[str, Any]:
        try:
            raw = self.client.get("/ai/observe", {"token": c.token, "radius": self.options.radius})
        except PaperAuthError:
            c.token = self._relogin(c)
            raw = self.client.get("/ai/observe", {"token": c.token, "radius": self.options.radius})
        c.raw, c.fresh = raw, True
        if view.hp(raw)[0] <= 0 and view.hp(raw)[1] > 0:
            c.dead = True
        return raw

    def current(self, c: Character) -> dict[str, Any]:
        return c.raw if c.fresh and c.raw else self.observe_raw(c)

    def stale(self) -> None:
        for c in self.chars.values():
            c.fresh = False

    def _char(self, agent_id: str) -> Character:
        c = self.chars.get(agent_id)
        if c is None:
            raise KeyError(f"unknown agent {agent_id!r}; known: {', '.join(self.chars) or 'none'}")
        return c

    def resolve(self, name: str) -> Character | None:
        """A teammate by task username, server name or agent id (case-insensitive)."""
        key = (name or "").strip()
        aid = self.by_name.get(key) or (key if key in self.chars else None)
        if aid is None:
            low = {k.lower(): v for k, v in self.by_name.items()}
            aid = low.get(key.lower())
        return self.chars.get(aid) if aid else None

    # ============================================================================================= chat
    @staticmethod
    def _chat_key(m: dict[str, Any]) -> tuple[Any, ...]:
        return (m.get("timestamp"), m.get("player"), m.get("message"))

    def _chat_log(self, c: Character) -> list[dict[str, Any]]:
        try:
            return list(self.client.get("/ai/chat", {"token": c.token}).get("messages") or [])
        except PaperAuthError:
            c.token = self._relogin(c)
            return list(self.client.get("/ai/chat", {"token": c.token}).get("messages") or [])

    def sync_chat(self, c: Character) -> None:
        """Deliver the log's new messages from this episode's characters to their recipients' mailboxes."""
        if self._chat_seen is None:
            return
        seen_now: Counter[tuple[Any, ...]] = Counter()
        for m in self._chat_log(c):
            key = self._chat_key(m)
            seen_now[key] += 1
            if seen_now[key] <= self._chat_seen[key]:
                continue  # handled before (or older than the episode)
            self._chat_seen[key] += 1
            sender = self.by_name.get(str(m.get("player")))
            if sender is None or self.chars[sender].name != m.get("player"):
                continue  # another run's or another player's message: not part of this episode
            text = str(m.get("message", ""))
            sent = next((s for s in self._sent if s[0] == sender and s[1] == text), None)
            if sent is not None:
                self._sent.remove(sent)
            scope, recipients = (sent[2], sent[3]) if sent else ("global", [a for a in self.chars if a != sender])
            msg = ChatMessage(round=self.round, sender=self.chars[sender].username, text=text, scope=scope)  # type: ignore[arg-type]
            for aid in recipients:
                self.chars[aid].mailbox.append(msg)

    # ========================================================================================= reading
    def _label(self, name: str) -> tuple[str, str] | None:
        aid = self.by_name.get(name)
        if aid is None or self.chars[aid].name != name:
            return None
        return self.chars[aid].username, "teammate"

    def _view(self, agent_id: str, take: bool) -> Observation:
        c = self._char(agent_id)
        raw = self.observe_raw(c)  # a turn starts from what the server shows now
        self.sync_chat(c)
        obs = view.condense(raw, agent_id=c.agent_id, username=c.username, view_radius=self.rules.view_radius,
                            max_nearby=self.rules.max_nearby, player_label=self._label)
        obs.alive = not c.dead
        obs.chat = list(c.mailbox)
        obs.notes = list(c.notes)
        if take:
            c.mailbox, c.notes = [], []
        return obs

    def observe(self, agent_id: str) -> Observation:
        return self._view(agent_id, take=True)

    def peek(self, agent_id: str) -> Observation:
        return self._view(agent_id, take=False)

    def player_state(self, agent_id: str) -> PlayerState:
        c = self._char(agent_id)
        try:
            raw = self.current(c)
        except WorldUnavailable:
            raw = c.raw  # the last known state: verifiers and final_state.json still get an answer
        x, y = view.position(raw)
        cur, mx = view.hp(raw)
        levels, xp = view.skills(raw)
        st = raw.get("playerStatus") or {}
        return PlayerState.model_validate(dict(  # validated: the values come from the server's JSON
            agent_id=c.agent_id, username=c.username, x=x, y=y, hp=cur, max_hp=mx, alive=not c.dead,
            active=c.active and not c.dead, skills=levels, xp=xp, inventory=view.inventory_slots(raw),
            equipment=view.equipped(raw), kills=dict(sorted(c.kills.items())), crafted=dict(sorted(c.crafted.items())),
            combat_level=int(st.get("level", 1) or 1)))

    def end_round(self, round: int) -> TickReport:
        """The world went on in real time during the round: read what it did to every active agent."""
        eff = Effects()
        lines: list[str] = []
        for c in sorted(self.chars.values(), key=lambda c: c.order):
            if not c.active or c.dead:
                continue
            before = view.hp(c.raw)[0] if c.raw else None
            c.fresh = False
            raw = self.observe_raw(c)
            after = view.hp(raw)[0]
            if before is not None and after != before:
                eff.hp.append(HpChange(agent=c.agent_id, before=before, after=after, cause="world"))
                if after < before:
                    c.notes.append(f"You lost {before - after} HP since your last action (now {after}).")
                    lines.append(f"{c.username} lost {before - after} HP")
            if c.dead:
                eff.deaths.append(c.agent_id)
                lines.append(f"{c.username} died")
        self.round = round + 1
        return TickReport(round=round, effects=eff, lines=lines)

    def snapshot(self) -> dict[str, Any]:
        return {"backend": "paper-server", "server_url": self.options.server_url, "version": self.version,
                "prefix": self.prefix, "round": self.round, "rules": self.rules.model_dump(),
                "characters": {c.agent_id: c.name for c in self.chars.values()},
                "players": {a: {**self.player_state(a).model_dump(), "left_reason": c.left_reason}
                            for a, c in self.chars.items()},
                "http_retries": self.client.retried}

    # -- waiting for the real-time world --------------------------------------------------------------
    def wait(self, c: Character, done, timeout_s: float) -> tuple[dict[str, Any], bool]:
        """Poll ``observe`` until ``done(raw)`` or the timeout; (last observation, whether done)."""
        deadline = time.monotonic() + timeout_s
        while True:
            raw = self.observe_raw(c)
            if done(raw) or c.dead:
                return raw, done(raw)
            if time.monotonic() >= deadline:
                return raw, False
            time.sleep(self.options.poll_s)
