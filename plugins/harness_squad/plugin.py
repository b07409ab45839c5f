"""Declares the XQuAD task; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import TaskSpec

from harness_squad.metadata import XQUAD


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [XQUAD.spec("harness_squad.xquad:XQuAD")]
