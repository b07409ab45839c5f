"""Declares the MKQA task and the No-Answer baseline; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import ModelSpec, TaskSpec

from harness_mkqa.languages import MKQA_LANGUAGES


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec(
            "mkqa",
            "harness_mkqa.task:MKQA",
            "MKQA open-domain QA, 26 languages: best F1/EM over a No-Answer threshold, macro average",
            MKQA_LANGUAGES,
        )
    ]


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec("no-answer", "harness_mkqa.models:NoAnswer",
                  "abstains on every open-domain question (MKQA's No-Answer baseline)"),
    ]
