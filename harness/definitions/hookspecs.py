"""The hooks a plugin implements, in the style of pytest's hookspecs.

A plugin is a module (named by an entry point in the ``harness.plugins`` group) with functions
marked ``@hookimpl``. The harness imports every plugin module to list what they provide, so a
plugin module imports nothing heavy at its top (torch, transformers, numpy: inside the methods
that use them). A task can then be one module: its metadata, its class and the hook that returns
the class (the registry reads the spec from the class's metadata, and checks the metadata as the
plugin loads)::

    from harness.plugin import Task, TaskMetadata, hookimpl

    class MyTask(Task):
        metadata = TaskMetadata(name="my-task", ...)
        ...

    @hookimpl
    def harness_tasks():
        return [MyTask]

A task whose module must import something heavy is declared from a light module instead, by a
:class:`~harness.definitions.specs.TaskSpec` naming the class by import path (``metadata.spec("pkg.task:MyTask")``),
as the first-party plugins do; models are always declared so
(``ModelSpec("my-model", "pkg.model:MyModel", "what it is")``), since a model's name and summary
are the registry's. ``examples/third_party_plugin`` is a complete plugin of each kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

    from harness.definitions.specs import ModelSpec, SuiteSpec, TaskSpec
    from harness.definitions.task import Task

PROJECT = "harness"
ENTRY_POINT_GROUP = "harness.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def harness_tasks() -> list[TaskSpec | type[Task[Any]]]:
    """Return the tasks (benchmarks) this plugin provides: specs, or the Task classes themselves."""


@hookspec
def harness_models() -> list[ModelSpec]:
    """Return the model adapters this plugin provides."""


@hookspec
def harness_suites() -> list[SuiteSpec]:
    """Return named lists of tasks to run together with one model."""


@hookspec
def harness_schemas() -> list[Path]:
    """Return the JSON Schema files (``NAME.schema.json``) of the formats this plugin's tasks
    name, so ``harness validate --schema NAME`` and the tasks themselves can check them."""
