"""Options for tasks and models, written ``name:key=value,key=value`` or given as JSON.

A plugin declares its options simply as keyword arguments of its constructor, with type hints
and defaults; this module checks the names and turns command-line strings into those types, so
no plugin parses strings itself and every plugin reports a wrong option the same way.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from harness.errors import HarnessError, did_you_mean
from harness.files.io import DuplicateKeyError, parse_json

#: Keyword arguments the harness itself passes to every model; never user options.
RESERVED = frozenset({"runtime"})

#: The type of a composite model's option that names an inner model: text as on the command line
#: (``hf-encoder:path=...``), or, from Python, a model object (see :func:`harness.models.compose.load_model`).
ModelOption = Annotated[Any, "model"]


@dataclass(frozen=True)
class NamedSpec:
    """A plugin name with its options, as parsed from ``name:key=value,...``."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)


def parse_named(text: str, extra_json: str | Mapping[str, Any] | None = None) -> NamedSpec:
    """Parse ``name:key=value,...``; ``extra_json`` (a JSON object, or from Python a mapping)
    adds or overrides options."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise HarnessError(f"'{text}': a name is missing before ':'")
    options: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise HarnessError(f"'{text}': option '{item}' is not of the form key=value")
            if key.strip() in options:  # which value was meant cannot be guessed
                raise HarnessError(f"'{text}': option '{key.strip()}' is given twice")
            options[key.strip()] = value.strip()
    if isinstance(extra_json, Mapping):
        options.update(extra_json)
    elif extra_json:
        try:
            extra = parse_json(extra_json, unique_keys=True, allow_nan=False)
        except DuplicateKeyError as exc:
            raise HarnessError(f"--model-args: option '{exc.key}' is given twice") from None
        except ValueError as exc:
            raise HarnessError(f"--model-args is not valid JSON: {getattr(exc, 'msg', exc)}") from None
        if not isinstance(extra, dict):
            raise HarnessError("--model-args must be a JSON object of options")
        options.update(extra)
    return NamedSpec(name, options)


def format_named(name: str, options: Mapping[str, Any]) -> str:
    """``name:key=value,...``: what :func:`parse_named` reads back as ``name`` and ``options``."""
    return name + "".join(f"{':' if i == 0 else ','}{key}={value}" for i, (key, value) in enumerate(options.items()))


def _coerce(value: Any, annotation: Any, owner: str, key: str) -> Any:
    """Turn a command-line string (or JSON value) into the declared type."""
    if annotation == ModelOption:
        return value  # a model's text is parsed, and an object wrapped, where the model is loaded
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union or (origin is not None and type(None) in args):
        if value is None or (isinstance(value, str) and value.lower() in {"none", "null"}):
            return None
        inner = [arg for arg in args if arg is not type(None)]
        return _coerce(value, inner[0], owner, key)
    if origin is typing.Literal:
        if value not in args:
            raise HarnessError(f"{owner}: option '{key}' must be one of {', '.join(map(str, args))}, got '{value}'")
        return value
    try:
        if annotation is bool:
            if isinstance(value, bool):
                return value
            lowered = str(value).lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(value)
        if annotation in (int, float):
            if isinstance(value, bool):
                raise ValueError(value)
            number = annotation(value)
            if not math.isfinite(number):  # NaN or infinity would reach the result file, which JSON cannot hold
                raise HarnessError(f"{owner}: option '{key}' must be a finite number, got '{value}'")
            return number
        if annotation is Path:
            return Path(value).expanduser()
        if annotation is str:
            return str(value)
    except (TypeError, ValueError, OverflowError):
        raise HarnessError(
            f"{owner}: option '{key}' must be {getattr(annotation, '__name__', annotation)}, got '{value}'"
        ) from None
    return value


def bind_options(factory: Callable[..., Any], options: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Check ``options`` against ``factory``'s keyword parameters and convert their values."""
    signature = inspect.signature(factory)
    hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory, include_extras=True)
    accepted = {
        name: param
        for name, param in signature.parameters.items()
        if name not in RESERVED and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)
    }
    bound: dict[str, Any] = {}
    for key, value in options.items():
        if key not in accepted:
            valid = ", ".join(sorted(accepted)) or "none"
            raise HarnessError(
                f"{owner}: unknown option '{key}'{did_you_mean(key, accepted, cutoff=0.6)} (options: {valid})"
            )
        bound[key] = _coerce(value, hints.get(key, str), owner, key)
    missing = [
        name for name, param in accepted.items() if param.default is inspect.Parameter.empty and name not in bound
    ]
    if missing:
        raise HarnessError(
            f"{owner}: required option(s) missing: {', '.join(missing)} (write {owner}:{missing[0]}=...)"
        )
    return bound


def path_options(factory: Callable[..., Any]) -> frozenset[str]:
    """The names of ``factory``'s options declared as paths (``Path`` or ``Path | None``): a file
    that names models relative to itself (a model family) resolves exactly these."""
    hints = typing.get_type_hints(factory.__init__ if inspect.isclass(factory) else factory)
    return frozenset(name for name, hint in hints.items() if hint is Path or Path in typing.get_args(hint))
