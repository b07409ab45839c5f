"""Finds plugins through entry points and resolves task and model names lazily.

The built-in plugins are found exactly like third-party ones: through the ``harness.plugins``
entry-point group. A plugin that fails to import is reported and skipped (every other plugin
keeps working, as in HELM); so is a plugin that declares something wrong (a task name with a
space, task metadata whose ``needs`` is no capability...), in one line naming the plugin, the
declaration and the field, when it loads rather than in the middle of a run. Two plugins
claiming one name make that name an error that names both; an unknown name gets a "did you mean".
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Generic, Literal, TypeVar

import pluggy

from harness import hookspecs
from harness.errors import RegistryError, did_you_mean
from harness.task import Task, TaskMetadata

SCHEMA_SUFFIX = ".schema.json"
#: Comma-separated plugin modules to load although no installed distribution names them.
PLUGINS_ENV = "HARNESS_PLUGINS"
#: Comma-separated plugins (entry-point or module names) not to load.
DISABLE_PLUGINS_ENV = "HARNESS_DISABLE_PLUGINS"
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
        raise declaration_error(owner, "name", f"'{name}' is not a name: letters, digits, '.', '_' and '-', "
                                               "starting with a letter or digit")


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
    """A task: ``target`` names a :class:`harness.task.Task` subclass."""

    kind = "task"

    languages: tuple[str, ...] = ()

    @classmethod
    def of(cls, task: type[Task]) -> TaskSpec:
        """The spec of a task class, from its own metadata: a plugin module that holds the class
        returns the class from ``harness_tasks`` and declares nothing twice."""
        metadata = getattr(task, "metadata", None)
        if not isinstance(metadata, TaskMetadata):
            raise declaration_error(f"task class {task.__qualname__}", "metadata",
                                    f"must be a TaskMetadata, not {type(metadata).__name__}")
        return metadata.spec(f"{task.__module__}:{task.__qualname__}")


@dataclass(frozen=True)
class ModelSpec(_Spec):
    """A model adapter: ``target`` names a :class:`harness.model.Model` subclass."""

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
T = TypeVar("T")


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


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that could not be loaded, with the reason shown to the user."""

    plugin: PluginInfo
    reason: str


class Registry:
    """All tasks, models, suites and schemas the installed plugins provide."""

    def __init__(self) -> None:
        self.tasks: Namespace[TaskSpec] = Namespace("task")
        self.models: Namespace[ModelSpec] = Namespace("model")
        self.suites: Namespace[SuiteSpec] = Namespace("suite")
        self.schemas: Namespace[SchemaSpec] = Namespace("schema")
        self.broken: list[BrokenPlugin] = []
        self.plugins: list[PluginInfo] = []
        self._manager = pluggy.PluginManager(hookspecs.PROJECT)
        self._manager.add_hookspecs(hookspecs)

    @classmethod
    def discover(cls, group: str = hookspecs.ENTRY_POINT_GROUP) -> Registry:
        """Load every plugin module named in the entry-point ``group``, then the modules named in
        ``$HARNESS_PLUGINS`` (installed or not, as ``harness --plugin`` does), except the plugins
        (entry-point or module names) listed in ``$HARNESS_DISABLE_PLUGINS``."""
        registry = cls()
        disabled = set(_env_names(DISABLE_PLUGINS_ENV))
        for entry_point in sorted(entry_points(group=group), key=lambda ep: ep.name):
            if entry_point.name not in disabled:
                dist = getattr(entry_point, "dist", None)
                info = PluginInfo(entry_point.name, dist.name if dist else None, dist.version if dist else None)
                registry._load(info, entry_point.load)
        for module in _env_names(PLUGINS_ENV):
            if module not in disabled:
                registry._load(PluginInfo(module), lambda module=module: importlib.import_module(module))
        return registry

    def _load(self, info: PluginInfo, load: Callable[[], Any]) -> None:
        try:
            module = load()
        except BaseException as exc:  # a plugin's sys.exit or KeyboardInterrupt at import is contained too
            self._mark_broken(info, exc)
            return
        self.add_plugin(module, info)

    def add_plugin(self, plugin: ModuleType | object, info: PluginInfo) -> None:
        """Register one plugin object (a module or instance with ``@hookimpl`` functions).

        Each hook is called per plugin, so a plugin whose hook raises is skipped alone and every
        spec is known to come from exactly one plugin. A hook implementation with no hook of that
        name (``harness_task`` for ``harness_tasks``) makes the plugin broken, as pluggy's
        ``check_pending`` says, instead of silently providing nothing.
        """
        try:
            self._manager.register(plugin, name=info.name)
            self._check_hook_names(plugin)
            tasks = [_task_spec(item) for item in self._call("harness_tasks", info)]
            models = [_expect(item, ModelSpec, "harness_models") for item in self._call("harness_models", info)]
            suites = [_expect(item, SuiteSpec, "harness_suites") for item in self._call("harness_suites", info)]
            schemas = [SchemaSpec.from_path(path) for path in self._call("harness_schemas", info)]
        except BaseException as exc:  # as in _load
            if self._manager.is_registered(plugin):
                self._manager.unregister(plugin)
            self._mark_broken(info, exc)
            return
        self.plugins.append(info)
        for namespace, specs in ((self.tasks, tasks), (self.models, models), (self.suites, suites), (self.schemas, schemas)):
            for spec in specs:
                namespace.add(spec, info)

    def _call(self, hook: str, info: PluginInfo) -> list[Any]:
        """What this one plugin's implementation of ``hook`` returns, flattened."""
        return _flatten(impl.function() for impl in getattr(self._manager.hook, hook).get_hookimpls()
                        if impl.plugin_name == info.name)

    def _check_hook_names(self, plugin: object) -> None:
        """Raise, naming the hook and the nearest real one, if ``plugin`` implements an unknown hook
        (every plugin registered before passed, so only this one can fail)."""
        try:
            self._manager.check_pending()
        except pluggy.PluginValidationError:
            known = sorted(name for name in vars(hookspecs) if name.startswith(f"{hookspecs.PROJECT}_"))
            unknown = sorted(caller.name for caller in self._manager.get_hookcallers(plugin) or []
                             if not caller.has_spec())
            raise ValueError(f"unknown hook '{unknown[0]}'{did_you_mean(unknown[0], known)} "
                             f"(hooks: {', '.join(known)})") from None

    def _mark_broken(self, info: PluginInfo, exc: BaseException) -> None:
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        self.broken.append(BrokenPlugin(info, reason))
        warnings.warn(f"{info} failed to load and is skipped: {reason}", RuntimeWarning, stacklevel=3)

    def conflicts(self) -> list[str]:
        """One line per name claimed by more than one plugin."""
        lines = []
        for namespace in (self.tasks, self.models, self.suites, self.schemas):
            for name, owners in namespace.conflicts.items():
                lines.append(f"{namespace.kind} '{name}' is defined by both {' and '.join(map(str, owners))}")
        return lines

    def task(self, name: str) -> tuple[TaskSpec, PluginInfo]:
        return self.tasks.get(name)

    def model(self, name: str) -> tuple[ModelSpec, PluginInfo]:
        return self.models.get(name)

    def suite(self, name: str) -> tuple[SuiteSpec, PluginInfo]:
        return self.suites.get(name)


def load_target(spec: TaskSpec | ModelSpec, plugin: PluginInfo, kind: str) -> Any:
    """Import what a spec names; a plugin that fails here is reported in one line, naming it."""
    try:
        return spec.load()
    except Exception as exc:
        raise RegistryError(f"{kind} '{spec.name}' from {plugin} failed to import: {type(exc).__name__}: {exc}") from exc


def _task_spec(item: object) -> TaskSpec:
    """What ``harness_tasks`` returned, as a spec: a :class:`TaskSpec`, or a Task class (its metadata
    says the rest)."""
    if isinstance(item, type) and issubclass(item, Task):
        return TaskSpec.of(item)
    return _expect(item, TaskSpec, "harness_tasks", "or a Task class")


def _expect(item: object, kind: type[T], hook: str, alternative: str = "") -> T:
    if not isinstance(item, kind):
        raise TypeError(f"{hook} returned {item!r:.60}, not a {kind.__name__}{' ' + alternative if alternative else ''}")
    return item


def _env_names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


def _flatten(results: Iterable[Iterable[T] | None]) -> list[T]:
    return [spec for result in results if result for spec in result]
