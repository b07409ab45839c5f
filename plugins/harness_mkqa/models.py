"""The No-Answer baseline of the MKQA paper (Table 5): abstain on every question.

It answers "" with ``no_answer_score`` 1.0, so its best F1 (and EM) is the share of No-Answer
examples (32.42 on the full data, where ``long_answer`` and ``unanswerable`` count as No
Answer). It is a real :class:`~harness.definitions.protocols.OpenDomainQA` model rather than a reference
prediction kind, so it runs through the task's own prediction path and works for any
open-domain task.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.plugin import Model, ModelIdentity, OpenAnswer, OpenDomainQA, OpenQuestion, Runtime


class NoAnswer(Model):
    """Abstains everywhere: empty answer, no-answer score 1."""

    provides = frozenset({OpenDomainQA})

    def __init__(self, *, runtime: Runtime) -> None:
        self.runtime = runtime

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name=self.name or "no-answer", label=self.name or "no-answer", weights=None, options={})

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        return [OpenAnswer(text="", no_answer_score=1.0) for _ in questions]
