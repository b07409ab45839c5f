"""Declares the MKQA task and the No-Answer baseline; importing this module imports nothing heavy."""

from harness.plugin import ModelSpec, TaskSpec, hookimpl
from harness_mkqa.metadata import MKQA


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [MKQA.spec("harness_mkqa.task:MKQA")]


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "no-answer",
            "harness_mkqa.models:NoAnswer",
            "abstains on every open-domain question (MKQA's No-Answer baseline)",
        ),
    ]
