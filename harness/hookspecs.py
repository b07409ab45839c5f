"""The hooks a plugin implements, in the style of pytest's hookspecs.

A plugin is a module (named by an entry point in the ``harness.plugins`` group) with functions
marked ``@hookimpl``. Each hook returns *specs*: names plus the import path of the object that
does the work, so that listing plugins never imports torch, transformers or a large model.

Example plugin module::

    from harness.hookspecs import hookimpl
    from harness.registry import ModelSpec, TaskSpec

    @hookimpl
    def harness_tasks():
        return [TaskSpec("my-task", "my_pkg.task:MyTask", "What it measures")]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pathlib import Path

    from harness.registry import ModelSpec, SuiteSpec, TaskSpec

PROJECT = "harness"
ENTRY_POINT_GROUP = "harness.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def harness_tasks() -> list[TaskSpec]:
    """Return the tasks (benchmarks) this plugin provides."""


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
