"""Validation of files against the JSON Schemas in ``schemas/`` (installed as ``harness.schemas``).

Every file the harness writes is validated before it is written, and every file it reads from a
user (results, leaderboards, prediction files) can be checked with ``harness validate``. Errors
name the file, the record and the field.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry, Resource

from harness.errors import InputError


@cache
def _registry() -> tuple[Registry, dict[str, str]]:
    registry: Registry = Registry()
    ids: dict[str, str] = {}
    for entry in files("harness.schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            schema = json.loads(entry.read_text(encoding="utf-8"))
            registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
            ids[entry.name.removesuffix(".schema.json")] = schema["$id"]
    return registry, ids


def schema_names() -> list[str]:
    """Names of the installed schemas (file names without ``.schema.json``)."""
    return sorted(_registry()[1])


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    registry, ids = _registry()
    if name not in ids:
        raise KeyError(f"no schema named '{name}' (known: {', '.join(sorted(ids))})")
    schema = registry.contents(ids[name])
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, schema: str, *, file: object, record: object | None = None) -> None:
    """Raise :class:`InputError` (file, record, field) if ``instance`` breaks ``schema``."""
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(instance))
    if error is None:
        return
    field = ".".join(str(part) for part in error.absolute_path) or None
    message = error.message if len(error.message) < 200 else error.message[:197] + "..."
    raise InputError(f"does not match schema {schema}: {message}", file=file, record=record, field=field)
