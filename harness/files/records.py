"""Typed records to and from the JSON values of the harness's files, through pydantic.

The records (results, leaderboard entries, per-question records) stay plain frozen dataclasses:
built positionally, compared and ``dataclasses.replace``-d as before. pydantic reads their
fields' types to turn a file's values into them (lists into tuples, objects into nested records)
and to write them back as JSON values (tuples as lists), and gives their JSON Schema; no record
spells its keys out twice. Why pydantic, measured against the hand-written code it replaced and
against msgspec and cattrs: ``benchmarks/bench_result_io.py``.

What a file lays out otherwise than the record's fields is said on the field or the record:
:data:`OMITTED_IF_NONE` and :data:`OMITTED_IF_EMPTY` on a field written only where it is set, a
``model_serializer`` / ``model_validator(mode="before")`` on a record whose file orders or nests
its keys otherwise (:func:`in_order`), with a ``__get_pydantic_json_schema__`` where the file
nests them otherwise (:func:`flatten_schema`), so that :func:`json_schema` describes the file.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from typing import Any, Self, TypeVar

from pydantic import ConfigDict, Field, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue

#: How a record's values are written: a NaN or an infinity stays a float (the JSON writer refuses
#: it, as it refused it before), never quietly null.
_JSON_VALUES = ConfigDict(ser_json_inf_nan="constants")

T = TypeVar("T")


def _is_none(value: object) -> bool:
    return value is None


def _is_empty(value: object) -> bool:
    return not value


#: A field absent from the file where it is None (an optional key).
OMITTED_IF_NONE: Any = Field(exclude_if=_is_none)
#: A field absent from the file where it is empty (``()``, ``{}``): an optional list or object.
OMITTED_IF_EMPTY: Any = Field(exclude_if=_is_empty)


#: Each record class's adapters (of one record, of many), built on first use (building reads
#: every field's type: milliseconds).
_ADAPTERS: dict[tuple[type, bool], TypeAdapter[Any]] = {}


def _adapter(kind: type, many: bool = False) -> TypeAdapter[Any]:
    """The adapter of a tuple of ``kind`` records (of one record unless ``many``): pydantic takes
    the JSON settings of a dataclass's adapter only from a container around it."""
    adapter = _ADAPTERS.get((kind, many))
    if adapter is None:
        items: Any = types.GenericAlias(tuple, (kind, ...) if many else (kind,))  # kind known at run time only
        adapter = _ADAPTERS[kind, many] = TypeAdapter(items, config=_JSON_VALUES)
    return adapter


def to_json_value(record: object) -> dict[str, Any]:
    """``record`` as its file lays it out: a dict of JSON values."""
    out: dict[str, Any] = _adapter(type(record)).dump_python((record,), mode="json")[0]
    return out


def to_json_values(kind: type[T], records: Iterable[T]) -> list[dict[str, Any]]:
    """Many ``kind`` records as their file lays them out, in one call: the per-question files
    (0.6 of the time of :func:`to_json_value` one by one, ``benchmarks/bench_result_io.py``)."""
    out: list[dict[str, Any]] = _adapter(kind, many=True).dump_python(tuple(records), mode="json")
    return out


def from_json_value(kind: type[T], raw: Mapping[str, Any]) -> T:
    """The ``kind`` record of a file's dict (checked against its schema first where a user gave it)."""
    record: T = _adapter(kind).validate_python((raw,))[0]
    return record


def json_schema(kind: type) -> dict[str, Any]:
    """The JSON Schema pydantic derives from ``kind``'s fields (what a file of it may hold)."""
    return TypeAdapter(kind).json_schema()


def flatten_schema(schema: JsonSchemaValue, field: str, handler: GetJsonSchemaHandler) -> None:
    """Put the properties of ``schema``'s record-valued ``field`` in ``schema`` itself, first (what
    a record whose file flattens that field says in its ``__get_pydantic_json_schema__``)."""
    inner = handler.resolve_ref_schema(schema["properties"].pop(field))
    schema["properties"] = {**inner["properties"], **schema["properties"]}
    schema["required"] = [*inner.get("required", ()), *(name for name in schema["required"] if name != field)]


def in_order(out: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``out``'s keys in the order ``keys`` names them (those it has)."""
    return {key: out[key] for key in keys if key in out}


class JsonRecord:
    """A record read from and written to a file through its fields' types: :meth:`to_dict`, :meth:`from_dict`."""

    def to_dict(self) -> dict[str, Any]:
        """The record as its file lays it out."""
        return to_json_value(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        """The record of a file's dict (checked against its schema first where a user gave it)."""
        return from_json_value(cls, raw)
