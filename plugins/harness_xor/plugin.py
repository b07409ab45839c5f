"""Declares the XOR-TyDi QA tasks; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import TaskSpec

from harness_xor.data import XOR_LANGUAGES


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec("xor-retrieve", "harness_xor.task:XorRetrieve",
                 "XOR-TyDi QA retrieval of English passages (R@2kt, R@5kt); corpus=... to run a retriever",
                 XOR_LANGUAGES),
        TaskSpec("xor-engspan", "harness_xor.task:XorEnglishSpan",
                 "XOR-TyDi QA English-span answers (SQuAD F1, EM); any open-domain QA model, e.g. retrieve-read",
                 XOR_LANGUAGES),
        TaskSpec("xor-full", "harness_xor.task:XorFull",
                 "XOR-TyDi QA answers in the question language (F1, EM, char BLEU); any open-domain QA model",
                 XOR_LANGUAGES),
    ]
