"""Reading XOR-TyDi QA v1.1: JSON lines of ``{id, question, answers, lang, split}``.

The official file names (XOR QA README) are fixed per task and split; ``--data-dir`` is the folder
holding them. XOR-Retrieve and XOR-EnglishSpan share one file (English answers); XOR-Full has
its own (answers in the question's language). The question-only test files carry no answers and
can be run but not scored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.plugin import DataRequest, HarnessError, InputError, TaskData
from harness.plugin.io import iter_jsonl
from harness_xor.metadata import XOR_LANGUAGES

#: Official file names per file family and split (README of AkariAsai/XORQA).
FILES = {
    "retrieve_eng_span": {
        "dev": "xor_dev_retrieve_eng_span_v1_1.jsonl",
        "test": "xor_test_retrieve_eng_span_q_only_v1_1.jsonl",
        "train": "xor_train_retrieve_eng_span.jsonl",
    },
    "full": {
        "dev": "xor_dev_full_v1_1.jsonl",
        "test": "xor_test_full_q_only_v1_1.jsonl",
        "train": "xor_train_full.jsonl",
    },
}

#: Answers that XOR-Retrieve does not look for in passages (boolean questions).
YES_NO = frozenset({"yes", "no"})


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answers: tuple[str, ...]
    lang: str

    @property
    def span_answers(self) -> tuple[str, ...]:
        """The answers XOR-Retrieve searches for: all but "yes" and "no"."""
        return tuple(a for a in self.answers if a not in YES_NO)


@dataclass
class XorData(TaskData):
    questions: list[Question] = field(default_factory=list)
    by_id: dict[str, Question] = field(default_factory=dict)
    #: Every question id of the file, also those outside the selected languages or ``--limit``, so
    #: a predictions file for all languages scores on a subset while an id of no question is refused.
    known_ids: frozenset[str] = frozenset()

    def questions_in(self, lang: str) -> list[Question]:
        return [q for q in self.questions if q.lang == lang]


def data_file(data_dir: Path, family: str, split: str) -> Path:
    """The official file of ``family`` for ``split`` in ``data_dir``, or a clear error."""
    name = FILES[family][split]
    path = data_dir / name
    if not path.is_file():
        raise HarnessError(f"{data_dir} has no {name} (the official XOR-TyDi QA v1.1 file for split {split})")
    return path


def _string(value: Any, path: Path, record: str, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {type(value).__name__}", file=path, record=record, field=name)
    return value


def read_questions(path: Path, languages: tuple[str, ...], limit: int | None) -> tuple[list[Question], set[str]]:
    """Questions of ``languages`` (the first ``limit`` per language), validated record by record,
    and the ids of all the file's questions."""
    out: list[Question] = []
    seen: set[str] = set()
    per_language: Counter[str] = Counter()
    for line, item in iter_jsonl(path):
        record = f"line {line}"
        if not isinstance(item, dict):
            raise InputError("must be a JSON object", file=path, record=record)
        qid = _string(item.get("id"), path, record, "id")
        lang = _string(item.get("lang"), path, record, "lang")
        if lang not in XOR_LANGUAGES:
            raise InputError(
                f"unknown language '{lang}' (XOR-TyDi QA: {', '.join(XOR_LANGUAGES)})",
                file=path,
                record=record,
                field="lang",
            )
        if "answers" not in item:
            raise HarnessError(f"{path} has no answers (a question-only test file): it cannot be scored")
        answers = item["answers"]
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise InputError("must be a list of strings", file=path, record=record, field="answers")
        if qid in seen:
            raise InputError(f"question id '{qid}' appears twice", file=path, record=record, field="id")
        seen.add(qid)
        if lang not in languages or (limit is not None and per_language[lang] >= limit):
            continue
        per_language[lang] += 1
        out.append(Question(qid, _string(item.get("question"), path, record, "question"), tuple(answers), lang))
    return out, seen


def load(request: DataRequest, family: str, all_languages: tuple[str, ...]) -> XorData:
    """Read the official file of ``family`` for the requested split, languages and limit."""
    assert request.data_dir is not None
    path = data_file(request.data_dir, family, request.split)
    questions, known_ids = read_questions(path, request.languages or all_languages, request.limit)
    if not questions:
        raise HarnessError(f"{path} has no questions in {', '.join(request.languages or all_languages)}")
    languages = tuple(lang for lang in all_languages if any(q.lang == lang for q in questions))
    statistics = {
        "questions": {lang: sum(q.lang == lang for q in questions) for lang in languages},
        "yes_no_only": {lang: sum(q.lang == lang and not q.span_answers for q in questions) for lang in languages},
    }
    return XorData(
        split=request.split,
        languages=languages,
        files=[path],
        statistics=statistics,
        source=str(request.data_dir),
        questions=questions,
        by_id={q.id: q for q in questions},
        known_ids=frozenset(known_ids),
    )
