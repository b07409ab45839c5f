"""Validation of files against JSON Schemas: the harness's own (``schemas/``, installed as
``harness.schemas``) and those plugins ship through the ``harness_schemas`` hook.

Every file the harness writes is validated before it is written, and every file it reads from a
user (results, leaderboards, prediction files) can be checked with ``harness validate``. Errors
name the file, the record and the field.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from harness.errors import HarnessError, InputError
from harness.registry import SCHEMA_SUFFIX
from harness.registry import Registry as PluginRegistry


def _read_schema(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _core_schemas() -> dict[str, dict[str, Any]]:
    """The harness's own schemas by name; read without looking at plugins, since the harness
    validates its results and leaderboard on every run."""
    out = {}
    for entry in files("harness.schemas").iterdir():
        if entry.name.endswith(SCHEMA_SUFFIX):
            with as_file(entry) as path:
                out[entry.name.removesuffix(SCHEMA_SUFFIX)] = _read_schema(path)
    return out


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schemas = dict(_core_schemas())
    if name not in schemas:
        # Plugins are asked only for a name that is not a core one, so a plugin cannot replace the
        # schema of the harness's own files, and checking a result or a leaderboard loads no plugin.
        plugin = PluginRegistry.discover().schemas
        if name not in plugin.entries and name not in plugin.conflicts:
            known = ", ".join(sorted([*schemas, *plugin.entries]))
            raise HarnessError(f"unknown schema '{name}' (known: {known})")
        schemas[name] = _read_schema(plugin.get(name)[0].path)  # get() refuses a name two plugins ship
    registry: Registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    schema = schemas[name]
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, schema: str, *, file: object, record: object | None = None) -> None:
    """Raise :class:`InputError` (file, record, field) if ``instance`` breaks ``schema``; an
    unknown schema name is a one-line :class:`HarnessError` naming the known ones."""
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(instance))
    if error is None:
        return
    field = ".".join(str(part) for part in error.absolute_path) or None
    message = error.message if len(error.message) < 200 else error.message[:197] + "..."
    raise InputError(f"does not match schema {schema}: {message}", file=file, record=record, field=field)
