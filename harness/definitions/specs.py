"""What a plugin declares: the specs of its tasks, models, suites and schemas, checked as it loads.

A spec names what a plugin provides (``package.module:Class``) so the registry lists it without
importing it. Each declaration, and each field of a task's metadata, is checked when the plugin
loads (:func:`check_fields`, :func:`check_name`), so a mistake is one line naming the plugin, the
declaration and the field rather than a traceback mid-run. This module imports neither the task
base nor the registry, so both can import it (:mod:`harness.definitions`).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from harness.errors import RegistryError, did_you_mean

SCHEMA_SUFFIX = ".schema.json"
#: The file name of a plugin's data manifest, beside the plugin's tasks (:class:`BenchmarkRef`).
MANIFEST_FILE = "data.json"
#: What a task, model or suite may be called: it is typed on the command line (``name:key=value``,
#: comma-separated lists, ``@file``) and becomes a folder name, so no ``:``, ``,``, ``=``, ``@``,
#: space or slash.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: ``package.module:Class`` (or ``:Class.attribute``): what :meth:`_Spec.load` can import.
TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def check_fields(record: Any, owner: str) -> None:
    """Raise a :class:`RegistryError` naming ``owner`` and the field when a field of the dataclass
    ``record`` does not hold its declared type (``languages="en"`` for a tuple of languages): what
    a plugin declares is checked as the plugin loads, so the mistake is reported in one line before
    any run, rather than as a traceback in the middle of one. Forms this check does not know (a
    protocol, a callable) and names imported only for type checkers are left unchecked."""
    namespace = vars(sys.modules[type(record).__module__])
    for item in dataclasses.fields(record):
        try:  # the annotation's text, as typing.get_type_hints evaluates it, but one field at a time
            annotation = eval(item.type, namespace) if isinstance(item.type, str) else item.type
        except NameError:
            continue
        value = getattr(record, item.name)
        if not _conforms(value, annotation):
            raise declaration_error(owner, item.name, f"must be {_shown(annotation)}, not {type(value).__name__}")


def declaration_error(owner: str, field_name: str, problem: str) -> RegistryError:
    """The one line a wrong declaration is reported in: ``task 'x': field 'needs': problem``."""
    return RegistryError(f"{owner}: field '{field_name}': {problem}")


def check_name(name: str, owner: str) -> None:
    """Refuse a name that could not be typed on the command line or be a folder's name."""
    if not NAME.fullmatch(name):
        raise declaration_error(
            owner, "name", f"'{name}' is not a name: letters, digits, '.', '_' and '-', starting with a letter or digit"
        )


def _conforms(value: Any, annotation: Any) -> bool:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in args)
    if origin is Literal:
        return value in args
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_conforms(item, args[0]) for item in value)
        return len(value) == len(args) and all(map(_conforms, value, args))
    if annotation is type or origin is type:
        return isinstance(value, type)
    if annotation is None or annotation is type(None):
        return value is None
    checked = origin if isinstance(origin, type) else annotation
    if not isinstance(checked, type) or getattr(checked, "_is_protocol", False):
        return True  # Any, a protocol, a type variable...: not checked here
    return isinstance(value, checked)


def _shown(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


@dataclass(frozen=True)
class PluginInfo:
    """Where a spec came from: the entry-point name and its distribution."""

    name: str
    distribution: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        if self.distribution:
            return f"plugin '{self.name}' ({self.distribution} {self.version})"
        return f"plugin '{self.name}'"


@dataclass(frozen=True)
class _Spec:
    """A named object a plugin provides, imported only when used."""

    #: What the spec names, in messages ("task", "model").
    kind: ClassVar[str]

    name: str
    target: str
    summary: str = ""

    def __post_init__(self) -> None:
        owner = f"{self.kind} '{self.name}'"
        check_fields(self, owner)
        check_name(self.name, owner)
        if not TARGET.fullmatch(self.target):
            raise declaration_error(owner, "target", f"'{self.target}' is not an importable 'package.module:Class'")

    def load(self) -> Any:
        """Import ``module:attribute`` and return the attribute."""
        module_name, _, attribute = self.target.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else []:
            obj = getattr(obj, part)
        return obj


@dataclass(frozen=True)
class TaskSpec(_Spec):
    """A task: ``target`` names a :class:`harness.definitions.task.Task` subclass."""

    kind = "task"

    languages: tuple[str, ...] = ()
    editions: tuple[Edition, ...] = ()


@dataclass(frozen=True)
class Edition:
    """A benchmark edition's list of a task's languages (XTREME's 36 Tatoeba languages within the
    41 of XTREME-R): a run on exactly these is whole, not a subset, and the leaderboard says whose."""

    name: str
    languages: tuple[str, ...]


@dataclass(frozen=True)
class ModelSpec(_Spec):
    """A model adapter: ``target`` names a :class:`harness.definitions.model.Model` subclass."""

    kind = "model"


@dataclass(frozen=True)
class SuiteSpec:
    """A named list of tasks (with options, ``task:key=value``) run together with one model."""

    name: str
    tasks: tuple[str, ...]
    summary: str = ""
    #: A task (``name:key=value,...``) that scores the folder of the suite's runs as one
    #: submission when the suite is run with a model family (XTREME's ``evaluate.py``).
    scored_by: str | None = None

    def __post_init__(self) -> None:
        owner = f"suite '{self.name}'"
        check_fields(self, owner)
        check_name(self.name, owner)
        if not self.tasks:
            raise declaration_error(owner, "tasks", "names no task")


@dataclass(frozen=True)
class SchemaSpec:
    """A JSON Schema file; its name is the file name without ``.schema.json``."""

    name: str
    path: Path

    @classmethod
    def from_path(cls, path: Path) -> SchemaSpec:
        """The spec of a schema file, refusing a file that does not follow the naming convention."""
        path = Path(path)
        if not path.name.endswith(SCHEMA_SUFFIX):
            raise ValueError(f"schema file {path} is not named NAME{SCHEMA_SUFFIX}")
        if not path.is_file():
            raise ValueError(f"schema file {path} does not exist")
        return cls(path.name.removesuffix(SCHEMA_SUFFIX), path)


SpecT = TypeVar("SpecT", TaskSpec, ModelSpec, SuiteSpec, SchemaSpec)


@dataclass
class Namespace(Generic[SpecT]):
    kind: str
    entries: dict[str, tuple[SpecT, PluginInfo]] = field(default_factory=dict)
    conflicts: dict[str, list[PluginInfo]] = field(default_factory=dict)

    def add(self, spec: SpecT, plugin: PluginInfo) -> None:
        if spec.name in self.conflicts:
            self.conflicts[spec.name].append(plugin)
        elif spec.name in self.entries:
            first = self.entries.pop(spec.name)[1]
            self.conflicts[spec.name] = [first, plugin]
        else:
            self.entries[spec.name] = (spec, plugin)

    def get(self, name: str) -> tuple[SpecT, PluginInfo]:
        if name in self.conflicts:
            owners = " and ".join(str(p) for p in self.conflicts[name])
            raise RegistryError(f"{self.kind} '{name}' is defined by both {owners}; uninstall one of them")
        if name not in self.entries:
            known = ", ".join(sorted(self.entries)) or "none"
            raise RegistryError(f"unknown {self.kind} '{name}'{did_you_mean(name, self.entries)} (known: {known})")
        return self.entries[name]


class ModelFinder(Protocol):
    """Where a run finds models by name: what a composite model asks of the run's plugins.

    The run's :class:`~harness.definitions.registry.Registry` is one. A protocol, so that a model's
    :class:`~harness.definitions.model.Runtime` (which every task sees) names the registry's face
    without importing the registry, which imports the task base.
    """

    @property
    def models(self) -> Namespace[ModelSpec]: ...

    def model(self, name: str) -> tuple[ModelSpec, PluginInfo]: ...


@dataclass(frozen=True)
class BenchmarkRef:
    """Where a task's files are declared: a plugin's data manifest and the benchmark's name in it."""

    manifest: Path
    name: str

    @classmethod
    def beside(cls, module_file: str, name: str) -> BenchmarkRef:
        """Benchmark ``name`` of the ``data.json`` beside ``module_file`` (a plugin's ``__file__``)."""
        return cls(Path(module_file).with_name(MANIFEST_FILE), name)
