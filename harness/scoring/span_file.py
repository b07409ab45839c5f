"""Reading SQuAD v1.1-format files (the span-QA file format) into questions with gold answers.

The official scorers walk ``data[].paragraphs[].qas[]`` in file order and score every question
against the ``text`` of each of its answers; this reader keeps that order (scores are sums in
that order, so they match the official floats to the last digit) and checks every field the
scorers and readers use, naming the file, the record (``data[3].paragraphs[2].qas[5]``) and
the field of anything malformed instead of failing later with a ``KeyError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.files.io import read_json


@dataclass(frozen=True)
class SpanQuestion:
    """One question of a span-QA file: its context and every gold answer text; ``article`` names
    the article it comes from (its title, else its place in the file), so a few-shot prompt never
    shows a shot from the question's own article (its answer may be there)."""

    id: str
    question: str
    context: str
    answers: tuple[str, ...]
    article: str = ""


def _expect(value: Any, kind: type, *, file: Path, record: str, field: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"expected {kind.__name__}, got {type(value).__name__}", file=file, record=record, field=field)
    return value


def _answers(qa: dict[str, Any], *, file: Path, record: str) -> tuple[str, ...]:
    answers = _expect(qa.get("answers"), list, file=file, record=record, field="answers")
    if not answers:
        # The official scorers take max() over the gold answers and crash on an empty list.
        raise InputError(
            "no gold answers (a span-QA question needs at least one)", file=file, record=record, field="answers"
        )
    texts = []
    for i, answer in enumerate(answers):
        _expect(answer, dict, file=file, record=record, field=f"answers[{i}]")
        texts.append(_expect(answer.get("text"), str, file=file, record=record, field=f"answers[{i}].text"))
    return tuple(texts)


def read_span_file(path: Path) -> list[SpanQuestion]:
    """Every question of a SQuAD v1.1-format file, in file order.

    The ``version`` field is not checked: the official scorers only warn about it (MLQA files
    say 1.0, SQuAD/XQuAD 1.1, TyDiQA-GoldP a text). Question ids must be unique in a file,
    because predictions are keyed by id.
    """
    doc = read_json(path)
    _expect(doc, dict, file=path, record="top level", field="data")
    articles = _expect(doc.get("data"), list, file=path, record="top level", field="data")
    questions: list[SpanQuestion] = []
    seen: set[str] = set()
    for a, article in enumerate(articles):
        _expect(article, dict, file=path, record=f"data[{a}]", field="paragraphs")
        paragraphs = _expect(article.get("paragraphs"), list, file=path, record=f"data[{a}]", field="paragraphs")
        for p, paragraph in enumerate(paragraphs):
            record = f"data[{a}].paragraphs[{p}]"
            _expect(paragraph, dict, file=path, record=record, field="context")
            context = _expect(paragraph.get("context"), str, file=path, record=record, field="context")
            qas = _expect(paragraph.get("qas"), list, file=path, record=record, field="qas")
            for q, qa in enumerate(qas):
                qa_record = f"{record}.qas[{q}]"
                _expect(qa, dict, file=path, record=qa_record, field="id")
                qid = _expect(qa.get("id"), str, file=path, record=qa_record, field="id")
                if qid in seen:
                    raise InputError(f"duplicate question id '{qid}'", file=path, record=qa_record, field="id")
                seen.add(qid)
                text = _expect(qa.get("question"), str, file=path, record=qa_record, field="question")
                title = article.get("title")
                questions.append(
                    SpanQuestion(
                        qid,
                        text,
                        context,
                        _answers(qa, file=path, record=qa_record),
                        title if isinstance(title, str) and title else f"data[{a}]",
                    )
                )
    return questions
