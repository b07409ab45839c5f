"""Declares the LAReQA tasks (XQuAD-R, MLQA-R) and the suite; importing this module imports nothing heavy."""

from harness.plugin import SuiteSpec, TaskSpec, hookimpl
from harness_lareqa.metadata import LAREQA, MLQA_R


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [LAREQA.spec("harness_lareqa.task:LAReQA"), MLQA_R.spec("harness_lareqa.mlqa_r:MLQAR")]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        SuiteSpec(
            "lareqa-candidates",
            ("lareqa", "lareqa:candidates=pair", "lareqa:candidates=sentence"),
            "LAReQA with each candidate form (the questions are encoded once for all three)",
        ),
    ]
