"""The task's prediction path: an OpenDomainQA model's answers become official prediction lines."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import OpenAnswer, OpenQuestion
from harness.definitions.task import DataRequest, RunContext
from harness.errors import HarnessError
from harness_mkqa.data import MKQAData
from harness_mkqa.task import MKQA


class LookupModel:
    """Answers from a table: gold texts, yes/no for binary questions, no score at all."""

    def __init__(self, data: MKQAData, lang: str, drop_last: bool = False) -> None:
        self.answers = {}
        for example_id, annotation in zip(data.example_ids, data.annotations[lang]):
            yes_no = annotation.reference if annotation.binary else None
            self.answers[example_id] = OpenAnswer(text="" if yes_no else annotation.reference, yes_no=yes_no)
        self.drop_last = drop_last

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        answers = [self.answers[q.id] for q in questions]
        return answers[:-1] if self.drop_last else answers


@pytest.fixture
def demo() -> tuple[MKQA, MKQAData]:
    task = MKQA()
    return task, task.load(DataRequest(task.demo_data_dir(), "test", ("en", "th")))


def test_answers_become_official_lines(demo: tuple[MKQA, MKQAData]) -> None:
    task, data = demo
    context = RunContext(runtime=Runtime(), show_progress=False)
    lines = task.predict(LookupModel(data, "th"), data, "th", context)
    assert len(lines) == 30
    by_id = {line["example_id"]: line for line in lines}
    binary = [line for line in lines if line["binary_answer"]]
    # The demo's two yes/no questions: "yes" (Etna is active) and "no" (penguins do not fly).
    assert sorted(line["binary_answer"] for line in binary) == ["no", "yes"]
    assert all("no_answer_prob" not in line for line in lines)  # no score given: the official default 0
    assert set(by_id) == set(data.raw_ids)
    th = next(row for row in task.evaluate(data, {"th": lines}).rows if row.subset == "th")
    assert th.metrics["best_f1"] == 100.0 and th.metrics["best_em"] == 100.0


def test_a_model_that_loses_answers_is_stopped(demo: tuple[MKQA, MKQAData]) -> None:
    task, data = demo
    context = RunContext(runtime=Runtime(), show_progress=False)
    with pytest.raises(HarnessError, match="the model returned 29 answers for 30 questions"):
        task.predict(LookupModel(data, "en", drop_last=True), data, "en", context)
