"""Declares the MLQA task and its suite; importing this module imports nothing heavy."""

from harness.plugin import SuiteSpec, TaskSpec, hookimpl
from harness_mlqa.metadata import MLQA


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [MLQA.spec("harness_mlqa.task:MLQA")]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [SuiteSpec("mlqa-all", ("mlqa", "mlqa:mode=gxlt"), "MLQA both ways: XLT and the 7x7 G-XLT matrix")]
