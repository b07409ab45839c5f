"""Finds plugins through entry points and resolves task and model names lazily.

The built-in plugins are found exactly like third-party ones: through the ``harness.plugins``
entry-point group. A plugin that fails to import is reported and skipped (every other plugin
keeps working, as in HELM); two plugins claiming one name make that name an error that names
both; an unknown name gets a "did you mean".
"""

from __future__ import annotations

import importlib
import warnings
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

import pluggy

from harness import hookspecs
from harness.errors import RegistryError

SCHEMA_SUFFIX = ".schema.json"
#: Comma-separated plugin modules to load although no installed distribution names them.
PLUGINS_ENV = "HARNESS_PLUGINS"
#: Comma-separated plugins (entry-point or module names) not to load.
DISABLE_PLUGINS_ENV = "HARNESS_DISABLE_PLUGINS"


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

    name: str
    target: str
    summary: str = ""

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

    languages: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelSpec(_Spec):
    """A model adapter: ``target`` names a :class:`harness.model.Model` subclass."""


@dataclass(frozen=True)
class SuiteSpec:
    """A named list of tasks (with options, ``task:key=value``) run together with one model."""

    name: str
    tasks: tuple[str, ...]
    summary: str = ""
    #: A task (``name:key=value,...``) that scores the folder of the suite's runs as one
    #: submission when the suite is run with a model family (XTREME's ``evaluate.py``).
    scored_by: str | None = None


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
            close = get_close_matches(name, list(self.entries), n=1, cutoff=0.5)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            known = ", ".join(sorted(self.entries)) or "none"
            raise RegistryError(f"unknown {self.kind} '{name}'{hint} (known: {known})")
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
    def discover(cls, group: str = hookspecs.ENTRY_POINT_GROUP, modules: Sequence[str] = ()) -> Registry:
        """Load every plugin module named in the entry-point ``group``, then the modules named in
        ``$HARNESS_PLUGINS`` and ``modules`` (installed or not: ``harness --plugin``), except the
        plugins (entry-point or module names) listed in ``$HARNESS_DISABLE_PLUGINS``."""
        registry = cls()
        disabled = set(_env_names(DISABLE_PLUGINS_ENV))
        for entry_point in sorted(entry_points(group=group), key=lambda ep: ep.name):
            if entry_point.name not in disabled:
                dist = getattr(entry_point, "dist", None)
                info = PluginInfo(entry_point.name, dist.name if dist else None, dist.version if dist else None)
                registry._load(info, entry_point.load)
        for module in dict.fromkeys([*_env_names(PLUGINS_ENV), *modules]):
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
            provided = {hook: self._call(hook, info) for hook in ("harness_tasks", "harness_models", "harness_suites")}
            schemas = [SchemaSpec.from_path(path) for path in self._call("harness_schemas", info)]
        except BaseException as exc:  # as in _load
            if self._manager.is_registered(plugin):
                self._manager.unregister(plugin)
            self._mark_broken(info, exc)
            return
        self.plugins.append(info)
        for namespace, hook in ((self.tasks, "harness_tasks"), (self.models, "harness_models"), (self.suites, "harness_suites")):
            for spec in provided[hook]:
                namespace.add(spec, info)
        for schema in schemas:
            self.schemas.add(schema, info)

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
            close = get_close_matches(unknown[0], known, n=1, cutoff=0.5)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"unknown hook '{unknown[0]}'{hint} (hooks: {', '.join(known)})") from None

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


def _env_names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


def _flatten(results: Iterable[Iterable[T] | None]) -> list[T]:
    return [spec for result in results if result for spec in result]
