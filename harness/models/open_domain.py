"""Asking an :class:`~harness.definitions.protocols.OpenDomainQA` model a task's questions.

Every open-domain task (MKQA, XOR-EnglishSpan, XOR-Full) hands its questions over the same way:
in chunks, so progress shows between calls and a retrieve-then-read model reads a whole chunk's
(question, passage) pairs in one length-batched pass, and with every answer checked, so a model
that loses a question or returns something else stops the run with one clear line.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.definitions.protocols import OpenAnswer, OpenDomainQA, OpenQuestion
from harness.definitions.task import RunContext
from harness.errors import HarnessError

#: Questions handed to the model per call.
QUESTION_CHUNK = 256


def ask(
    model: OpenDomainQA, questions: Sequence[OpenQuestion], context: RunContext, description: str
) -> list[OpenAnswer]:
    """The model's answers to ``questions``, in order; ``description`` names the task and unit
    in progress bars and errors."""
    answers: list[OpenAnswer] = []
    with context.progress(len(questions), description) as bar:
        for start in range(0, len(questions), QUESTION_CHUNK):
            chunk = questions[start : start + QUESTION_CHUNK]
            got = list(model.answer(chunk))
            if len(got) != len(chunk):
                raise HarnessError(f"{description}: the model returned {len(got)} answers for {len(chunk)} questions")
            for question, answer in zip(chunk, got):
                if (
                    not isinstance(answer, OpenAnswer)
                    or not isinstance(answer.text, str)
                    or answer.yes_no not in (None, "yes", "no")
                ):
                    raise HarnessError(
                        f"{description}: the model's answer to question {question.id} is not an "
                        f"OpenAnswer with a text and yes_no in (None, 'yes', 'no'): {answer!r}"
                    )
            answers.extend(got)
            bar.update(len(chunk))
    return answers
