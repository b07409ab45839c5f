"""Declares the XOR-TyDi QA tasks; importing this module imports nothing heavy."""

from harness.plugin import TaskSpec, hookimpl
from harness_xor.metadata import XOR_ENGSPAN, XOR_FULL, XOR_RETRIEVE


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        XOR_RETRIEVE.spec("harness_xor.task:XorRetrieve"),
        XOR_ENGSPAN.spec("harness_xor.task:XorEnglishSpan"),
        XOR_FULL.spec("harness_xor.task:XorFull"),
    ]
