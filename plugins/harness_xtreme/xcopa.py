"""XCOPA (XTREME-R) run with a multiple-choice model, as ``third_party/run_xcopa.py`` does.

Each example is a premise, a question (``cause`` or ``effect``) and two choices; the model
chooses one, and the score per language is accuracy against the gold choice, its mean over the
11 languages the task's figure (``evaluate.py``). The text each choice is paired with is
``f"{premise} What was the {question}?"`` (``run_xcopa.py``'s ``preprocess_function``), the
choice itself the second text, in the order ``choice1``, ``choice2`` (output 0, 1). A language
model chooses by log-likelihood instead, with lm-evaluation-harness's prompt
(:mod:`harness_xtreme.likelihood`).

Files, as ``scripts/download_data.sh`` leaves them in ``xcopa/``: ``{split}-{lang}.jsonl``, one
object a line with ``premise``, ``choice1``, ``choice2``, ``question`` and ``label``; the dev split
is XCOPA's ``val``. The download script sets every test label to 0 (the test labels are kept
back), so a test run always takes its labels from a label folder, ``labels=DIR`` with
``DIR/xcopa/test-{lang}.jsonl`` (``{"label": 0|1}`` a line, the submission layout). Predictions:
``xcopa/test-{lang}.jsonl`` in the same form, as a submission.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from harness.plugin import DataRequest, InputError, MultipleChoice
from harness.plugin.io import iter_jsonl
from harness.plugin.services import ChoiceQuestion
from harness_xtreme.benchmark import Version
from harness_xtreme.labelled import LabelledData, XtremeFilesTask
from harness_xtreme.likelihood import xcopa_question
from harness_xtreme.metadata import XCOPA_TASK

#: The file prefix of each split in XTREME-R's download layout (XCOPA calls its dev split ``val``).
FILE_SPLITS = {"test": "test", "dev": "val"}
QUESTIONS = ("cause", "effect")


class Question(NamedTuple):
    """One XCOPA example: the premise, what is asked (``cause`` or ``effect``), the two choices."""

    premise: str
    question: str
    choices: tuple[str, str]


def question_text(premise: str, question: str) -> str:
    """The text XTREME-R's ``run_xcopa.py`` pairs with each choice."""
    return f"{premise} What was the {question}?"


def read_examples(path: Path) -> tuple[list[Question], list[Any]]:
    """An XCOPA file's questions and the labels it carries."""
    questions: list[Question] = []
    labels: list[Any] = []
    for number, record in iter_jsonl(path):
        where = f"line {number}"
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", file=path, record=where)
        for name in ("premise", "choice1", "choice2"):
            if not isinstance(record.get(name), str):
                raise InputError("expected a string", file=path, record=where, field=name)
        if record.get("question") not in QUESTIONS:
            raise InputError(
                f"expected 'cause' or 'effect', got {record.get('question')!r}",
                file=path,
                record=where,
                field="question",
            )
        questions.append(Question(record["premise"], record["question"], (record["choice1"], record["choice2"])))
        labels.append(record.get("label"))
    if not questions:
        raise InputError("no examples", file=path)
    return questions, labels


class XCOPA(XtremeFilesTask[LabelledData]):
    """XCOPA with any multiple-choice model: the choice per example, accuracy per language."""

    metadata = XCOPA_TASK
    label_set = (0, 1)

    def __init__(self, labels: Path | None = None, xtreme_version: Version = "xtreme-r") -> None:
        """``labels``: the gold of the test split (the download script blanks it to 0)."""
        super().__init__(labels=labels, xtreme_version=xtreme_version)

    def check_labels(self, path: Path | str, labels: list[Any], inputs: Sequence[Any]) -> None:
        """One choice per example, 0 or 1 (JSON numbers: ``true`` is no choice)."""
        if len(labels) != len(inputs):
            raise InputError(f"{len(labels)} labels for {len(inputs)} examples (one per line)", file=path)
        bad = next(
            (n for n, label in enumerate(labels, start=1) if isinstance(label, bool) or label not in self.label_set),
            None,
        )
        if bad is not None:
            raise InputError(
                f"expected the choice 0 or 1, got {labels[bad - 1]!r}", file=path, record=f"line {bad}", field="label"
            )

    def load(self, request: DataRequest) -> LabelledData:
        data = self.empty_data(request, LabelledData)
        assert request.data_dir is not None
        prefix = FILE_SPLITS[request.split]
        for lang in data.languages:
            path = request.data_dir / f"{prefix}-{lang}.jsonl"
            if not path.is_file():
                raise InputError(f"missing: XTREME-R's download layout has xcopa/{path.name}", file=path)
            questions, labels = read_examples(path)
            data.files.append(path)
            label_file: Path = path
            if request.split == "test":  # every label 0: kept back by the download script
                label_file, labels = self._folder_labels(lang, path)
                data.files.append(label_file)
            self.check_labels(label_file, labels, questions)
            data.inputs[lang] = questions[: request.limit]
            data.labels[lang] = labels[: request.limit]
        data.statistics = {"examples": {lang: len(items) for lang, items in data.inputs.items()}}
        return data

    def ask(self, model: MultipleChoice, inputs: Sequence[Question]) -> list[int]:
        return model.choose([(question_text(q.premise, q.question), list(q.choices)) for q in inputs])

    def choice_question(self, example: Question, lang: str) -> ChoiceQuestion:
        return xcopa_question(example.premise, example.question, example.choices, lang)
