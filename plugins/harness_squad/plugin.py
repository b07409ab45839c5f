"""Declares the XQuAD task; importing this module imports nothing heavy."""

from harness.plugin import TaskSpec, hookimpl
from harness_squad.metadata import XQUAD


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [XQUAD.spec("harness_squad.xquad:XQuAD")]
