"""Declares the LAReQA task and its suite; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import SuiteSpec, TaskSpec

from harness_lareqa.languages import XQUAD_R_LANGUAGES


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec(
            "lareqa",
            "harness_lareqa.task:LAReQA",
            "XQuAD-R answer-sentence retrieval from one 11-language pool: mAP, mAP@20, language bias",
            XQUAD_R_LANGUAGES,
        )
    ]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        SuiteSpec("lareqa-candidates", ("lareqa", "lareqa:candidates=pair", "lareqa:candidates=sentence"),
                  "LAReQA with each candidate form (the questions are encoded once for all three)"),
    ]
