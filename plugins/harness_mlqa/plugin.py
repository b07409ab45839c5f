"""Declares the MLQA task and the span-QA suites; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import SuiteSpec, TaskSpec

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


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        SuiteSpec("mlqa-all", ("mlqa", "mlqa:mode=gxlt"), "MLQA both ways: XLT and the 7x7 G-XLT matrix"),
        SuiteSpec("xtreme-qa", ("xquad", "mlqa", "tydiqa"), "XTREME's extractive QA tasks: XQuAD, MLQA (XLT), TyDiQA-GoldP"),
    ]
