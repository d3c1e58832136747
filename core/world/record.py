"""The engine's records: plain slotted dataclasses, with pydantic at the boundary.

The embedded engine makes its records (tool results and their effects, observations and their rows, player
states, a turn's agent status and raw calls) thousands of times a round at 1,000 agents, from values it built
itself. As pydantic models every one was validated again on creation, a fifth of an agent-turn's work; as
dataclasses they are made as any Python object is (``__init__`` stores the fields, nothing is checked).

Pydantic still does what it is for, at the boundary, from the same single definition: ``TypeAdapter`` over the
dataclass validates what comes from outside (a trajectory read back, a plugin's dict), writes what goes out
(trajectory events, ``final_state.json``, MCP results, an observation as JSON) and makes the JSON schema, the
same bytes as the pydantic model each record was before (its docstring is the schema's ``description`` as a
model's was). A record used as a field of a pydantic model (``TurnEvent.effects``) is validated and written
through the model, and an instance is taken as it is.

A record keeps the methods of ``BaseModel`` that code reading it calls (``model_dump``, ``model_dump_json``,
``model_copy``, ``model_validate``, ``model_validate_json``, ``model_json_schema``), with the same meaning, so
that plugins and exporters written for the 0.2 models keep working; what a record does not do is validate
on construction: a world backend that builds one from untrusted values validates them (``model_validate``).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Any, Callable, ClassVar, TypeVar, overload

from pydantic import TypeAdapter

R = TypeVar("R", bound="Record")

_ADAPTERS: dict[type, TypeAdapter[Any]] = {}  # per record class, built on its first boundary use


def adapter(cls: type[R]) -> TypeAdapter[R]:
    """The ``TypeAdapter`` of a record class (built on first use: a scripted run that writes no observation
    never builds the observation's)."""
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def to_json(value: Record) -> bytes:
    """The record as UTF-8 JSON, every field, in the class's order (what ``model_dump_json`` gives, as bytes)."""
    return adapter(type(value)).serializer.to_json(value)  # the adapter's SchemaSerializer: no keyword handling


@overload
def record(cls: type[R], /) -> type[R]: ...
@overload
def record(*, frozen: bool = False, schema_doc: bool = True) -> Callable[[type[R]], type[R]]: ...


def record(cls: Any = None, /, *, frozen: bool = False, schema_doc: bool = True) -> Any:
    """Make a :class:`Record` subclass a slotted, keyword-only dataclass (``frozen``: its instances cannot be
    changed, for the rows the engine hands to every reader alike). The class's docstring is its JSON schema's
    ``description``, as a model's (pydantic leaves a plain dataclass's out, since ``dataclasses`` writes one
    from the signature when there is none); ``schema_doc=False`` keeps it out of the schema, for a record whose
    model had no docstring (every record has one: ``dataclasses`` would otherwise build one at import)."""

    def make(c: type[R]) -> type[R]:
        if not issubclass(c, Record):
            raise TypeError(f"@record: {c.__name__} must subclass Record")
        doc = c.__dict__.get("__doc__")
        # keyword-only, as a model's constructor: fields with defaults come before required ones (in the order the
        # model wrote them, which is the order of its JSON and of its schema)
        out = dataclasses.dataclass(slots=True, frozen=frozen, kw_only=True)(c)
        out._schema_description = inspect.cleandoc(doc) if doc and schema_doc else None  # type: ignore[attr-defined]
        return out

    return make if cls is None else make(cls)


class Record:
    """Base of the engine's records (see the module's docstring); subclasses are made with :func:`record`."""

    __slots__ = ()
    _schema_description: ClassVar[str | None] = None

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        # pydantic's public hook for a type's JSON schema: the class's docstring as its description, as a model's
        json_schema = handler(core_schema)
        if cls._schema_description:
            handler.resolve_ref_schema(json_schema)["description"] = cls._schema_description
        return json_schema

    # -- the BaseModel methods code reading a record calls, through the record's TypeAdapter ------------------
    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The record as a dict (``TypeAdapter.dump_python``; the options of ``BaseModel.model_dump``)."""
        return adapter(type(self)).dump_python(self, **options)

    def model_dump_json(self, *, indent: int | None = None, **options: Any) -> str:
        """The record as JSON text (``TypeAdapter.dump_json``; the options of ``BaseModel.model_dump_json``)."""
        return adapter(type(self)).dump_json(self, indent=indent, **options).decode()

    def model_copy(self: R, *, update: dict[str, Any] | None = None, deep: bool = False) -> R:
        """A copy with ``update``'s fields replaced (not validated, as ``BaseModel.model_copy``)."""
        if deep:
            self = copy.deepcopy(self)
            if not update:
                return self
        return dataclasses.replace(self, **(update or {}))

    @classmethod
    def model_validate(cls: type[R], obj: Any) -> R:
        """A record from a dict or an instance, validated (converting and refusing as the model did)."""
        return adapter(cls).validate_python(obj)

    @classmethod
    def model_validate_json(cls: type[R], data: str | bytes) -> R:
        return adapter(cls).validate_json(data)

    @classmethod
    def model_json_schema(cls, mode: Any = "validation") -> dict[str, Any]:
        return adapter(cls).json_schema(mode=mode)
