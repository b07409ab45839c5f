"""Declares the XQuAD task; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import TaskSpec

from harness_squad.xquad import XQUAD_LANGUAGES


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec(
            "xquad",
            "harness_squad.xquad:XQuAD",
            "XQuAD extractive QA, 12 languages, SQuAD v1.1 scorer for every language (as XTREME): EM/F1",
            XQUAD_LANGUAGES,
        )
    ]
