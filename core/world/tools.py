"""The 13 tools: the one definition from which every other form is derived.

Each :class:`ToolSpec` holds the paper's tool name, a pydantic argument model with the paper's parameter
names (camelCase aliases; snake_case is accepted too), a description written for a model, and an executor
that calls the matching :class:`~agentworld.core.world.api.World` method. The OpenAI function schema, the MCP
tools and each framework's tool objects are all generated from these specs.

Where the paper's tool was awkward we accept more, never less: ``equip_item`` takes ``index`` or
``itemKey``; ``craft_item`` takes the skill in any case and ``count`` from 1 to 50; ``sleep`` needs no
argument (``seconds`` is accepted and, turns not being timed, ignored by the embedded world).

Three tools use the turn but not the action budget (:attr:`ToolSpec.free`): the two chat tools and ``sleep``,
the way to wait.
"""

import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .effects import ToolResult
from .api import World


# Every string argument has a maximum length, enforced by the argument model's validation (a model or an
# external client can send megabytes); json_schema() states it in the description, not as maxLength.
KEY_MAX = 100  # item keys, usernames
ID_MAX = 200  # instance ids ("oak_tree#412")
EXCERPT = 60  # characters of a bad value shown back in an error


class ToolArgs(BaseModel):
    # built on a tool's first call (or schema): an episode calls a few of the 13 tools
    # frozen: the validated arguments of one set of values are shared by every call that sends them (ToolSpec.call)
    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_strip_whitespace=True, defer_build=True,
                              frozen=True)


class MoveArgs(ToolArgs):
    x: int = Field(description="Target tile x coordinate.")
    y: int = Field(description="Target tile y coordinate.")


class SendChatArgs(ToolArgs):
    message: str = Field(min_length=1, max_length=1000, description="What to say.")
    global_: bool = Field(False, alias="global", description="True: every teammate hears it; false: only players within chat radius.")


class NoArgs(ToolArgs):
    pass


class EquipArgs(ToolArgs):
    index: int | None = Field(None, ge=0, description="Inventory slot index, as shown in [brackets] in your latest observation "
                                 "(a slot emptied is filled by the next new item: itemKey is safer).")
    item_key: str | None = Field(None, alias="itemKey", max_length=KEY_MAX,
                                 description="Item key, as an alternative to index.")

    @model_validator(mode="after")
    def _one_of(self) -> "EquipArgs":
        if self.index is None and not self.item_key:
            raise ValueError("give either index (inventory slot number) or itemKey (item key)")
        return self


class TargetArgs(ToolArgs):
    target_instance: str = Field(alias="targetInstance", min_length=1, max_length=ID_MAX,
                                 description="Instance id: from your Nearby list, or one you were told.")

    @field_validator("target_instance", mode="before")
    @classmethod
    def _as_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


class SleepArgs(ToolArgs):
    # optional and unbounded: the paper's sleep took seconds, a turn-based world has no use for them, and a
    # wait must never be refused for its argument (the turn would be lost)
    seconds: float | None = Field(None, description="Optional and ignored: a wait always lasts one turn.")

    @field_validator("seconds", mode="before")
    @classmethod
    def _any_number(cls, v: Any) -> Any:
        """Whatever came as seconds ("5", 0, -3, "a while"): a value it cannot read is dropped, not refused."""
        try:
            f = float(v)
        except (TypeError, ValueError):
            return None
        return f if math.isfinite(f) else None

    def wait_seconds(self) -> int:
        """What a world whose time is real (the paper's server) waits: the seconds asked, 1 to 60 (default 1)."""
        return 1 if self.seconds is None else max(1, min(60, int(self.seconds)))


CraftSkill = Literal["Crafting", "Smithing", "Fletching", "Cooking", "Smelting"]


class CraftArgs(ToolArgs):
    skill: CraftSkill = Field(description="Production skill of the recipe.")
    item_key: str = Field(alias="itemKey", min_length=1, max_length=KEY_MAX, description="Key of the item to make.")
    count: int = Field(1, ge=1, le=50, description="How many crafts (times the recipe is made; one craft may make several items, "
                                   "e.g. 10 arrows). The paper used 1, 5 or 10.")

    @field_validator("skill", mode="before")
    @classmethod
    def _title_case(cls, v: Any) -> Any:
        return v.strip().capitalize() if isinstance(v, str) else v


class CompleteArgs(ToolArgs):
    response: str = Field("", max_length=2000, description="A short summary of what you did.")


class ChatArgs(ToolArgs):
    message: str = Field(min_length=1, max_length=1000, description="Message to the whole team.")


class TransferArgs(ToolArgs):
    target_player: str = Field(alias="targetPlayer", min_length=1, max_length=KEY_MAX, description="Teammate's username.")
    item_key: str = Field(alias="itemKey", min_length=1, max_length=KEY_MAX, description="Key of the item to give.")
    count: int = Field(1, ge=1, description="How many to give.")


Executor = Callable[[World, str, Any], ToolResult]


@dataclass(frozen=True)
class ToolSpec:
    """One of the 13 tools: its name, description, argument model, executor and an example call."""

    name: str
    description: str
    args: type[ToolArgs]
    run: Executor
    example: str
    is_chat: bool = False  # chat does not count toward max_action_steps and is removed under no-communication
    is_wait: bool = False  # sleep: passes the turn; does not count toward max_action_steps

    @property
    def free(self) -> bool:
        """Whether a call uses the turn but not the action budget (chat and sleep)."""
        return self.is_chat or self.is_wait

    def parse(self, raw: dict[str, Any] | None) -> ToolArgs:
        """Validate raw arguments; raises ``ToolArgsError`` with a message that says how to fix them."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise ToolArgsError(f"{self.name}: arguments must be a JSON object, got {type(raw).__name__}. Example: {self.example}")
        try:
            return self.args.model_validate(raw)
        except ValidationError as exc:
            raise ToolArgsError(self._explain(exc)) from None

    def execute(self, world: World, agent_id: str, raw: dict[str, Any] | None) -> ToolResult:
        return self.call(world, agent_id, raw)[0]

    def call(self, world: World, agent_id: str, raw: dict[str, Any] | None) -> tuple[ToolResult, dict[str, Any] | None]:
        """Validate and execute; the result and the validated arguments (paper names, JSON values: what the
        world acted on, e.g. ``{"x": 449}`` for a raw ``"449"``), or None when validation refused them.

        Arguments of strings, ints, bools and nulls only (nearly every call) are validated once per argument
        model and exact values, types included (validation is a pure function of them): a team repeats its
        calls, and validating and dumping them again took ~20 of a call's ~30 us here. The validated
        arguments are only read by the executors; each call gets its own dump."""
        key = _args_key(self.args, raw)
        hit = _VALIDATED.get(key) if key is not None else None
        if hit is None:
            try:
                args = self.parse(raw)
            except ToolArgsError as exc:
                return ToolResult.fail("bad_args", str(exc)), None
            hit = (args, args.model_dump(mode="json", by_alias=True))
            if key is not None:
                if len(_VALIDATED) >= VALIDATED_KEEP:
                    _VALIDATED.clear()
                _VALIDATED[key] = hit
        return self.run(world, agent_id, hit[0]), dict(hit[1])

    def _explain(self, exc: ValidationError) -> str:
        parts = []
        for err in exc.errors()[:5]:
            loc = _excerpt(".".join(str(p) for p in err["loc"]) or "arguments", bare=True)
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(self.parameter_names()) or "none"
                parts.append(f"unknown argument '{loc}' (allowed: {allowed})")
            elif err["type"] == "missing":
                parts.append(f"missing argument '{loc}'")
            else:
                got = err.get("input")
                got_s = f" (got {_excerpt(got)})" if not isinstance(got, (dict, list)) else ""
                if isinstance(got, str) and len(got) > EXCERPT:
                    got_s = f" (got {len(got):,} characters: {_excerpt(got)})"
                parts.append(f"argument '{loc}': {err['msg']}{got_s}")
        return f"{self.name}: " + "; ".join(parts) + f". Example: {self.example}"

    def parameter_names(self) -> list[str]:
        return [f.alias or n for n, f in self.args.model_fields.items()]

    def json_schema(self) -> dict[str, Any]:
        """The model-facing JSON schema of the arguments, with the paper's parameter names (no $refs).

        Every form a model sees (OpenAI function schemas, the MCP tools, each framework's tool objects) is
        derived from this one. It carries no upper repetition bounds (``maxLength``, ``maxItems``):
        grammar-constrained servers (llama.cpp's JSON-schema grammars) expand them into one rule per
        repetition and give up on a limit like 2000 (the server segfaulted). The limit is said in the
        description instead and enforced by :meth:`parse`, whose message the model reads."""
        schema = self.args.model_json_schema(by_alias=True)
        schema.pop("title", None)
        props = schema.get("properties", {})
        for prop in props.values():
            prop.pop("title", None)
            if prop.get("default", 0) is None:
                prop.pop("default")
            # `int | None` renders as anyOf; models handle a plain optional type better
            if "anyOf" in prop:
                kinds = [a for a in prop.pop("anyOf") if a.get("type") != "null"]
                if len(kinds) == 1:
                    prop.update(kinds[0])
            for bound, unit in (("maxLength", "characters"), ("maxItems", "items")):
                if bound in prop:
                    limit = prop.pop(bound)
                    prop["description"] = f"{prop.get('description', '').rstrip()} At most {limit} {unit}.".strip()
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema

    def openai_schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.json_schema()}}


VALIDATED_KEEP = 4096  # argument sets kept with their validation (cleared when full)
_VALIDATED: dict[tuple[Any, ...], tuple["ToolArgs", dict[str, Any]]] = {}
_KEY_TYPES = frozenset({str, int, bool, type(None)})  # values whose type and equality say all validation reads


def _args_key(model: type[ToolArgs], raw: Any) -> tuple[Any, ...] | None:
    """What validating ``raw`` against ``model`` depends on, or None when it is not a plain object of such values
    (floats are left out: 0.0 and -0.0 are equal but a float field would keep the sign)."""
    if type(raw) is not dict:
        return None
    key: list[Any] = [model]
    for k, v in raw.items():
        if type(k) is not str or type(v) not in _KEY_TYPES:
            return None
        key += (k, type(v), v)
    return tuple(key)


def _excerpt(value: Any, bare: bool = False) -> str:
    """A short form of a bad value for an error text: the model (or client) gets the point, not its megabyte back."""
    text = str(value) if bare else repr(value)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 3] + "..."


class ToolArgsError(ValueError):
    """Raised by ``ToolSpec.parse``; its message names the argument and the fix."""


TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in [
        ToolSpec(
            "move_character",
            "Walk toward tile (x, y) along the shortest path. One call covers at most the move range "
            "(the result says where you stopped); call again to continue. A target you cannot stand on (a "
            "resource node's own tile, water, a wall) takes you to the nearest walkable tile beside it.",
            MoveArgs, lambda w, a, p: w.move_character(a, p.x, p.y), "move_character(x=412, y=230)"),
        ToolSpec(
            "send_chat_message",
            "Say something to players within chat radius, or to the whole team with global=true. "
            "Uses your turn but not your action budget.",
            SendChatArgs, lambda w, a, p: w.send_chat_message(a, p.message, p.global_),
            "send_chat_message(message='I have 5 logs', global=true)", is_chat=True),
        ToolSpec(
            "enter_portal",
            "Use the portal (door, cave, dungeon entrance, boat) you stand on or next to. Nearby portals "
            "are listed with their destination.",
            NoArgs, lambda w, a, p: w.enter_portal(a), "enter_portal()"),
        ToolSpec(
            "stop_action",
            "Stop what you are doing. Actions finish within your turn in this world, so this only passes the "
            "turn, and it counts as an action; to wait without using an action, call sleep().",
            NoArgs, lambda w, a, p: w.stop_action(a), "stop_action()"),
        ToolSpec(
            "equip_item",
            "Equip a weapon, armour piece or tool from your inventory, by slot index or item key. Using it "
            "on food or a potion eats or drinks it (restores HP).",
            EquipArgs, lambda w, a, p: w.equip_item(a, p.index, p.item_key), "equip_item(index=2)"),
        ToolSpec(
            "harvest_resource",
            "Gather a tree, rock, fishing spot or plant by its id (from Nearby, or one you were told): one "
            "call makes the node's gathers, a few items (a better tool sometimes gives one more per gather), "
            "unless your bags fill first. A node that regrows is then depleted for a while; one that never "
            "regrows may take several calls (Nearby shows how many items it has left). You walk next to it "
            "first if it is within reach. Needs the right tool (axe, pickaxe, fishing rod) in "
            "your inventory or equipped and the skill level shown. Items go to your inventory.",
            TargetArgs, lambda w, a, p: w.harvest_resource(a, p.target_instance),
            "harvest_resource(targetInstance='oak_tree#412')"),
        ToolSpec(
            "pickup_resource",
            "Pick up an item lying on the ground (listed as ground_item in Nearby). You walk to it first if it is within reach.",
            TargetArgs, lambda w, a, p: w.pickup_resource(a, p.target_instance),
            "pickup_resource(targetInstance='ground#17')"),
        ToolSpec(
            "attack_entity",
            "Walk to a mob by its id (from Nearby, or one you were told) and fight it until it or you die "
            "(you eat food automatically when low on HP). Its loot goes to your inventory. You can die: check its level first.",
            TargetArgs, lambda w, a, p: w.attack_entity(a, p.target_instance),
            "attack_entity(targetInstance='goblin#3')"),
        ToolSpec(
            "sleep",
            "Wait: pass your turn. A wait uses the turn but not your action budget. Call sleep() with no "
            "arguments whenever you are waiting for a teammate or for something to happen; HP regenerates at "
            "the end of every round.",
            SleepArgs, lambda w, a, p: w.sleep(a, p.wait_seconds()), "sleep()", is_wait=True),
        ToolSpec(
            "craft_item",
            "Make an item from materials in your inventory with a production skill (Crafting, Smithing, "
            "Fletching, Cooking, Smelting). Some recipes need a station nearby (furnace, anvil, fire, "
            "workbench, loom) or a tool (hammer, knife, needle). Makes as many crafts as you can, up to count "
            "(count counts crafts, not items: the result says what one craft makes).",
            CraftArgs, lambda w, a, p: w.craft_item(a, p.skill.lower(), p.item_key, p.count),
            "craft_item(skill='Fletching', itemKey='stick', count=5)"),
        ToolSpec(
            "complete",
            "Declare your part of the task done and leave the episode. You cannot act afterwards.",
            CompleteArgs, lambda w, a, p: w.complete(a, p.response), "complete(response='Delivered the staff')"),
        ToolSpec(
            "chat",
            "Send a message to the whole team. Uses your turn but not your action budget.",
            ChatArgs, lambda w, a, p: w.chat(a, p.message), "chat(message='Meet at the forge')", is_chat=True),
        ToolSpec(
            "transfer_items",
            "Give items from your inventory to a teammate standing within transfer range (see the rules in your "
            "brief), one item kind per call (several kinds take several turns). The teammate need do nothing to "
            "receive them: they are in its inventory at once, and its next observation says who gave what.",
            TransferArgs, lambda w, a, p: w.transfer_items(a, p.target_player, p.item_key, p.count),
            "transfer_items(targetPlayer='woodworker', itemKey='logs', count=5)"),
    ]
}

TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
CHAT_TOOLS: frozenset[str] = frozenset(n for n, t in TOOLS.items() if t.is_chat)
WAIT_TOOLS: frozenset[str] = frozenset(n for n, t in TOOLS.items() if t.is_wait)
FREE_TOOLS: frozenset[str] = CHAT_TOOLS | WAIT_TOOLS  # use the turn, not the action budget


def openai_tools(names: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The OpenAI function-calling schemas of the given tools (default: all 13, in the paper's order)."""
    return [TOOLS[n].openai_schema() for n in (names or TOOL_NAMES)]


def format_call(name: str, arguments: dict[str, Any] | None) -> str:
    """``tool(k=v, ...)``, the paper's action string."""
    args = ", ".join(f"{k}={v}" for k, v in (arguments or {}).items())
    return f"{name}({args})"
