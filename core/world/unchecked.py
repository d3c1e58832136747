"""Model instances made from values the engine built itself, without pydantic's validation.

The embedded engine builds its records (a player's state, an observation and its rows) thousands of times a
round at 1,000 agents, from its own state: the values already have the field types (ints, strs, bools, new
dicts and lists, model instances), so validating them again only copies them (a fifth of an observation's
cost, most of a player state's). ``model_construct`` would skip validation too, but with pydantic 2.12 it is
slower than validating (it walks every field in Python).

The caller passes every field, each already of its field's type, in new containers (never a list or dict it
keeps changing: the instance holds what it is given). Anything that comes from outside the engine (a tool's
arguments, a team's outcome) is validated as before. ``tests/test_unchecked.py`` plays episodes and checks that
every record so made equals, field by field and type by type, the one validation makes from the same values.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
# BaseModel's own slots (its __dict__ and the three it declares), set through their descriptors: a fifth
# faster than object.__setattr__, which looks each name up on the class first
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


_ready: set[type] = set()  # classes whose validator and serializer are built


def unchecked(cls: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """An instance of ``cls`` holding ``values`` (every field of ``cls``, already valid) as they are.

    ``fields_set`` is what validation would have recorded as set (``exclude_unset`` reads it): the fields the
    caller named, when the others are their defaults; by default every field."""
    if cls not in _ready:
        _build(cls)
    m = _new(cls)
    _set_dict(m, values)
    _set_fields_set(m, set(values) if fields_set is None else fields_set)
    _set_extra(m, None)
    _set_private(m, None)
    return m


def _build(cls: type[BaseModel]) -> None:
    """Build a class left to be built on first use (``defer_build``). Validation would have built it; an
    instance of a class never built serialises when asked directly but not through ``Any``
    (``to_jsonable_python``, ``TypeAdapter(Any)``, an ``Any`` field: pydantic's "MockValSer" error)."""
    if not cls.__pydantic_complete__ or type(cls.__pydantic_serializer__).__name__ == "MockValSer":
        cls.model_rebuild(force=True)
    _ready.add(cls)
