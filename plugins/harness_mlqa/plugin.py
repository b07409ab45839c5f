"""Declares the MLQA task; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import TaskSpec

from harness_squad.normalize import MLQA_LANGUAGES


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec(
            "mlqa",
            "harness_mlqa.task:MLQA",
            "MLQA extractive QA, official scorer: XLT (7 languages) or G-XLT (mlqa:mode=gxlt, 7x7 pairs): EM/F1",
            MLQA_LANGUAGES,
        )
    ]
