"""Finds plugins through entry points and resolves task and model names lazily.

The built-in plugins are found exactly like third-party ones: through the ``harness.plugins``
entry-point group. A plugin that fails to import is reported and skipped (every other plugin
keeps working, as in HELM); so is a plugin that declares something wrong (a task name with a
space, task metadata whose ``needs`` is no capability...), in one line naming the plugin, the
declaration and the field, when it loads rather than in the middle of a run. Two plugins
claiming one name make that name an error that names both; an unknown name gets a "did you mean".
"""

from __future__ import annotations

import functools
import importlib
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, TypeVar

import pluggy

from harness.definitions import hookspecs
from harness.definitions.specs import (
    ModelSpec,
    Namespace,
    PluginInfo,
    SchemaSpec,
    SuiteSpec,
    TaskSpec,
    declaration_error,
)
from harness.definitions.task import Task, TaskMetadata
from harness.errors import RegistryError, did_you_mean

#: Comma-separated plugin modules to load although no installed distribution names them.
PLUGINS_ENV = "HARNESS_PLUGINS"
#: Comma-separated plugins (entry-point or module names) not to load.
DISABLE_PLUGINS_ENV = "HARNESS_DISABLE_PLUGINS"

T = TypeVar("T")


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
                registry._load(PluginInfo(module), functools.partial(importlib.import_module, module))
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
        groups: tuple[tuple[Namespace[Any], list[Any]], ...] = (
            (self.tasks, tasks),
            (self.models, models),
            (self.suites, suites),
            (self.schemas, schemas),
        )
        for namespace, specs in groups:
            for spec in specs:
                namespace.add(spec, info)

    def _call(self, hook: str, info: PluginInfo) -> list[Any]:
        """What this one plugin's implementation of ``hook`` returns, flattened."""
        return _flatten(
            impl.function()
            for impl in getattr(self._manager.hook, hook).get_hookimpls()
            if impl.plugin_name == info.name
        )

    def _check_hook_names(self, plugin: object) -> None:
        """Raise, naming the hook and the nearest real one, if ``plugin`` implements an unknown hook
        (every plugin registered before passed, so only this one can fail)."""
        try:
            self._manager.check_pending()
        except pluggy.PluginValidationError:
            known = sorted(name for name in vars(hookspecs) if name.startswith(f"{hookspecs.PROJECT}_"))
            unknown = sorted(
                caller.name for caller in self._manager.get_hookcallers(plugin) or [] if not caller.has_spec()
            )
            raise ValueError(
                f"unknown hook '{unknown[0]}'{did_you_mean(unknown[0], known)} (hooks: {', '.join(known)})"
            ) from None

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
        raise RegistryError(
            f"{kind} '{spec.name}' from {plugin} failed to import: {type(exc).__name__}: {exc}"
        ) from exc


def _task_spec(item: object) -> TaskSpec:
    """What ``harness_tasks`` returned, as a spec: a :class:`TaskSpec`, or a Task class (its metadata
    says the rest)."""
    if isinstance(item, type) and issubclass(item, Task):
        metadata = getattr(item, "metadata", None)
        if not isinstance(metadata, TaskMetadata):
            raise declaration_error(
                f"task class {item.__qualname__}", "metadata", f"must be a TaskMetadata, not {type(metadata).__name__}"
            )
        return metadata.spec(f"{item.__module__}:{item.__qualname__}")
    return _expect(item, TaskSpec, "harness_tasks", "or a Task class")


def _expect(item: object, kind: type[T], hook: str, alternative: str = "") -> T:
    if not isinstance(item, kind):
        raise TypeError(
            f"{hook} returned {item!r:.60}, not a {kind.__name__}{' ' + alternative if alternative else ''}"
        )
    return item


def _env_names(variable: str) -> list[str]:
    return [name.strip() for name in os.environ.get(variable, "").split(",") if name.strip()]


def _flatten(results: Iterable[Iterable[T] | None]) -> list[T]:
    return [spec for result in results if result for spec in result]
