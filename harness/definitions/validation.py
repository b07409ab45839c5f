"""Validation of files against JSON Schemas: the harness's own (``schemas/``, installed as
``harness.schemas``) and those plugins ship through the ``harness_schemas`` hook.

Every file the harness writes is validated before it is written, and every file it reads from a
user (results, leaderboards, prediction files) can be checked with ``harness validate``. Errors
name the file, the record and the field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from harness.definitions.registry import Registry as PluginRegistry
from harness.definitions.specs import SCHEMA_SUFFIX
from harness.errors import HarnessError, InputError, did_you_mean


def _read_schema(path: Path) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


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
            known = sorted([*schemas, *plugin.entries])
            raise HarnessError(f"unknown schema '{name}'{did_you_mean(name, known)} (known: {', '.join(known)})")
        schemas[name] = _read_schema(plugin.get(name)[0].path)  # get() refuses a name two plugins ship
    registry: Registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    schema = schemas[name]
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, schema: str, *, file: str | os.PathLike[str] | None, record: object | None = None) -> None:
    """Raise :class:`InputError` (file, record, field) if ``instance`` breaks ``schema``; an
    unknown schema name is a one-line :class:`HarnessError` naming the known ones."""
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(instance))
    if error is None:
        return
    field = ".".join(str(part) for part in error.absolute_path) or None
    message = error.message if len(error.message) < 200 else error.message[:197] + "..."
    raise InputError(f"does not match schema {schema}: {message}", file=file, record=record, field=field)


@dataclass(frozen=True)
class InferredSchema:
    """The schema a file was found to be (see :func:`infer_schema`)."""

    name: str
    #: Other schemas the record fits as well (the same shape: ``{id: answer}`` is span-QA,
    #: XOR-Full and XOR-EnglishSpan predictions alike), or, when it fits none, that are as close.
    alike: tuple[str, ...] = ()
    fits: bool = True


def _plugin_schema_names() -> list[str]:
    return sorted(PluginRegistry.discover().schemas.entries)


def _required(name: str) -> int:
    """How many top-level keys the schema requires: the more, the more specific it is."""
    return len(_validator(name).schema.get("required", []))


def infer_schema(first: Any) -> InferredSchema:
    """The schema of a file whose first record (the document, or a JSON-lines file's first line)
    is ``first``: of the schemas it is valid under (the harness's own first, the plugins' only if
    none fits), the one requiring the most keys, so a result is a run-result and a predictions
    file a predictions schema. When it fits none, the closest one (of the right type at the top,
    then the most of its required keys there, then the fewest errors), for :func:`validate` to say
    what is wrong, with those as close."""
    for names in (sorted(_core_schemas()), _plugin_schema_names()):
        valid = [name for name in names if _validator(name).is_valid(first)]
        if valid:
            most = max(map(_required, valid))
            best = [name for name in valid if _required(name) == most]
            return InferredSchema(best[0], tuple(best[1:]))

    def closeness(name: str) -> tuple[bool, int, int]:
        errors = list(_validator(name).iter_errors(first))
        shaped = not any(not error.absolute_path and error.validator in ("type", "anyOf", "oneOf") for error in errors)
        required = _validator(name).schema.get("required", [])
        present = sum(key in first for key in required) if isinstance(first, dict) else 0
        return shaped, present, -len(errors)

    scored = {name: closeness(name) for name in [*sorted(_core_schemas()), *_plugin_schema_names()]}
    closest = [name for name, score in scored.items() if score == max(scored.values())]
    return InferredSchema(closest[0], tuple(closest[1:]), fits=False)
