"""The engine's records (core/world/record.py): plain slotted dataclasses inside the engine, pydantic at the
boundary. They must validate, write and describe themselves exactly as the pydantic models they replaced
(``tests/data/record_schemas.json`` holds those models' JSON schemas, written by 0.2's classes), while a
constructor only stores what it is given."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from agentworld.core.play import records
from agentworld.core.play.records import AgentStatus, RawCall, RefusedCall, TurnEvent, parse_event
from agentworld.core.world import api, effects, observation
from agentworld.core.world.effects import Effects, ItemDelta, Move, ToolResult
from agentworld.core.world.observation import ChatMessage, Entity, InvItem, Observation
from agentworld.core.world.record import Record, record, to_json

SCHEMAS = json.loads((Path(__file__).parent / "data" / "record_schemas.json").read_text(encoding="utf-8"))
MODULES = {"core.world.effects": effects, "core.world.observation": observation, "core.world.api": api,
           "core.play.records": records}
RECORDS = [getattr(MODULES[name.rsplit(".", 1)[0]], name.rsplit(".", 1)[1]) for name in SCHEMAS
           if dataclasses.is_dataclass(getattr(MODULES[name.rsplit(".", 1)[0]], name.rsplit(".", 1)[1]))]


def test_every_hot_record_is_a_slotted_keyword_only_dataclass():
    assert len(RECORDS) == 21
    for cls in RECORDS:
        assert issubclass(cls, Record) and not issubclass(cls, BaseModel), cls
        assert "__slots__" in cls.__dict__ and not hasattr(cls(**_minimal(cls)), "__dict__"), cls
        assert all(f.kw_only for f in dataclasses.fields(cls)), cls


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_json_schemas_are_the_02_models_byte_for_byte(name):
    """Records, and the pydantic models holding them (the turn and tick events): validation and serialization
    schemas as the 0.2 pydantic models wrote them (docstrings as descriptions only where the model had one)."""
    module, cls = name.rsplit(".", 1)
    adapter = TypeAdapter(getattr(MODULES[module], cls))
    for mode in ("validation", "serialization"):
        assert json.dumps(adapter.json_schema(mode=mode)) == SCHEMAS[name][mode], (name, mode)


def test_a_constructor_stores_what_it_is_given_and_validation_converts_or_refuses():
    row = Entity(kind="mob", id="rat#1", name="Rat", x=1, y=2, distance=3, level="4")  # type: ignore[arg-type]
    assert row.level == "4"  # not checked: the engine passes its own values
    assert Entity.model_validate({"kind": "mob", "id": "rat#1", "name": "Rat", "x": 1, "y": 2, "distance": 3,
                                  "level": "4"}).level == 4
    with pytest.raises(ValidationError, match="kind"):
        Entity.model_validate({"kind": "dragon", "id": "x", "name": "X", "x": 1, "y": 2, "distance": 3})
    with pytest.raises(TypeError):
        Entity("mob", "rat#1", "Rat", 1, 2, 3)  # type: ignore[misc]  # keyword-only, as a model's constructor
    nested = Effects.model_validate({"gained": [{"agent": "agent_1", "item": "logs", "count": "2"}]})
    assert nested.gained == [ItemDelta(agent="agent_1", item="logs", count=2)]


def test_frozen_records_refuse_edits_and_copies_take_updates():
    row = InvItem(index=0, key="logs", name="Logs", count=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.count = 3  # type: ignore[misc]
    assert row.model_copy(update={"count": 3}) == InvItem(index=0, key="logs", name="Logs", count=3)
    eff = Effects(gained=[ItemDelta(agent="a", item="logs", count=1)])
    deep = eff.model_copy(deep=True)
    assert deep == eff and deep.gained is not eff.gained
    shallow = eff.model_copy()
    assert shallow == eff and shallow is not eff and shallow.gained is eff.gained
    assert Effects().is_empty() and not eff.is_empty()


def test_dumps_are_the_models_dumps():
    obs = Observation(agent_id="agent_1", username="ann", x=3, y=4, biome="forest", hp=9, max_hp=10,
                      inventory=[InvItem(index=0, key="logs", name="Logs", count=2)],
                      chat=[ChatMessage(round=1, sender="bob", text="hi", scope="team")])
    assert obs.model_dump()["inventory"] == [{"index": 0, "key": "logs", "name": "Logs", "count": 2, "slots": None}]
    assert to_json(obs) == obs.model_dump_json().encode()
    text = obs.render("json")
    assert '"place"' not in text and json.loads(text)["chat"][0]["sender"] == "bob"  # exclude_none
    assert Observation.model_validate_json(obs.model_dump_json()) == obs
    assert ToolResult.fail("bad_args", "x").model_dump(mode="json")["effects"]["gained"] == []


def test_a_turn_event_takes_records_as_they_are_and_reads_them_back_equal():
    eff = Effects(move=Move(start=(1, 2), end=(3, 4), path_length=4, reached=True), target="3,4")
    status = AgentStatus(hp=5, max_hp=10, x=3, y=4, level=2, alive=True, inventory=[])
    raw = RawCall(name="move_character", arguments={"x": 3, "y": 4})
    ev = TurnEvent(step=0, round=1, agent="agent_1", username="ann", tool="move_character", ok=True, effects=eff,
                   status=status, raw_calls=[raw], refused=[RefusedCall(tool="chat", reason="one call a turn")])
    assert ev.effects is eff and ev.status is status and ev.raw_calls[0] is raw  # not validated again
    back = parse_event(ev.model_dump_json())
    assert back == ev and type(back.effects) is Effects and back.effects.move.start == (1, 2)


def test_a_record_class_needs_the_base_and_its_docstring_is_the_schema_description():
    with pytest.raises(TypeError, match="must subclass Record"):
        record(type("Plain", (), {"__doc__": "x"}))

    @record
    class Described(Record):
        """What it is."""

        n: int

    @record(schema_doc=False)
    class Quiet(Record):
        """For readers of the code only."""

        n: int

    assert Described.model_json_schema()["description"] == "What it is."
    assert "description" not in Quiet.model_json_schema()


def _minimal(cls: type) -> dict:
    """The required fields of a record with values of their types (for the slots check)."""
    values = {"int": 0, "str": "", "bool": False, "dict[str, int]": {}, "dict[str, str]": {}, "list[str]": [],
              "list[InventorySlot]": [], "list[dict[str, Any]]": [], "tuple[int, int]": (0, 0),
              "Literal['global', 'local', 'team']": "team", "EntityKind": "mob"}
    return {f.name: values.get(str(f.type), None) for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
