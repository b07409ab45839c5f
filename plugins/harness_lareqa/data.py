"""Reading XQuAD-R: one candidate pool over all languages, and the correct answers of each question.

Follows XTREME-R's official loader (``third_party/utils_lareqa.py``):

* every sentence (``context[start:end]`` for each ``sentence_breaks`` entry) of every paragraph
  that has at least one question becomes a candidate, identified by position:
  ``{lang}_{paragraph_number}_{sentence_index}`` (paragraphs counted from 1 over the file,
  sentences from 0), so equal sentences in different paragraphs are different candidates;
* a question's answer sentence is the one whose ``[start, end)`` holds its ``answer_start``;
  questions whose answer start falls in no sentence are skipped, as the official code does;
* the correct candidates of a question are, in *every* language, the sentences of the paragraph
  equal to that language's answer sentence for the question with the same id (``xling_id``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import InputError, TaskData
from harness.plugin.io import read_json


@dataclass(frozen=True)
class Question:
    uid: str  # XTREME-R's question uid: f"{xling_id}_{lang}"
    xling_id: str
    lang: str
    text: str


@dataclass
class Pool:
    """The multilingual candidate pool, in load order (language, paragraph, sentence)."""

    ids: list[str] = field(default_factory=list)
    langs: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class QuestionSample:
    """What ``--limit`` kept: a seeded sample of questions per language, against the full pool."""

    per_language: int
    seed: int
    of_questions: int  # questions before sampling


@dataclass
class LAReQAData(TaskData):
    questions: list[Question] = field(default_factory=list)
    pool: Pool = field(default_factory=Pool)
    targets: dict[str, np.ndarray] = field(default_factory=dict)  # xling_id -> pool positions
    skipped: int = 0
    sample: QuestionSample | None = None
    #: Languages whose candidates the pool lacks because ``--langs`` left them out (pool=multilingual).
    left_out_of_pool: tuple[str, ...] = ()

    def questions_in(self, lang: str) -> list[Question]:
        return [q for q in self.questions if q.lang == lang]


def _expect(value: Any, kind: type | tuple[type, ...], *, file: Path, record: str, field_name: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(f"expected {names}, got {type(value).__name__}", file=file, record=record, field=field_name)
    return value


#: How a reader finds a paragraph's sentences: ``[start, end)`` offsets into ``context``.
SentenceBreaks = Callable[..., list[tuple[int, int]]]


def given_sentence_breaks(paragraph: dict[str, Any], context: str, *, file: Path, record: str) -> list[tuple[int, int]]:
    """XQuAD-R's own sentence offsets (``sentence_breaks``), checked."""
    if "sentence_breaks" not in paragraph:
        raise InputError(
            "missing (XQuAD-R paragraphs need sentence offsets)", file=file, record=record, field="sentence_breaks"
        )
    breaks = _expect(paragraph["sentence_breaks"], list, file=file, record=record, field_name="sentence_breaks")
    out = []
    for i, pair in enumerate(breaks):
        where = f"sentence_breaks[{i}]"
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
        ):
            raise InputError("expected a pair of integer offsets [start, end]", file=file, record=record, field=where)
        start, end = pair
        if not 0 <= start < end <= len(context):
            raise InputError(
                f"[{start}, {end}) is outside its paragraph (context length {len(context)})",
                file=file,
                record=record,
                field=where,
            )
        out.append((start, end))
    return out


def read_language(
    path: Path, lang: str, data: LAReQAData, seen_uids: set[str], breaks_of: SentenceBreaks = given_sentence_breaks
) -> None:
    """Add one language file's questions, candidates and answer sentences to ``data``;
    ``breaks_of(paragraph, context, file=, record=)`` gives each paragraph's sentences (XQuAD-R's
    own offsets by default; MLQA-R splits the contexts itself)."""
    doc = read_json(path)
    _expect(doc, dict, file=path, record="top level", field_name="data")
    articles = _expect(doc.get("data"), list, file=path, record="top level", field_name="data")
    paragraph_number = 0
    answer_sentences: list[tuple[str, str, list[str], int]] = []  # (xling_id, answer sentence, sentences, first pos)
    for a, article in enumerate(articles):
        _expect(article, dict, file=path, record=f"data[{a}]", field_name="paragraphs")
        paragraphs = _expect(article.get("paragraphs"), list, file=path, record=f"data[{a}]", field_name="paragraphs")
        for p, paragraph in enumerate(paragraphs):
            paragraph_number += 1
            record = f"data[{a}].paragraphs[{p}]"
            _expect(paragraph, dict, file=path, record=record, field_name="context")
            context = _expect(paragraph.get("context"), str, file=path, record=record, field_name="context")
            breaks = breaks_of(paragraph, context, file=path, record=record)
            sentences = [context[s:e] for s, e in breaks]
            context_id = f"{lang}_{paragraph_number}"
            first_position: int | None = None
            qas = _expect(paragraph.get("qas", []), list, file=path, record=record, field_name="qas")
            for q, qa in enumerate(qas):
                qa_record = f"{record}.qas[{q}]"
                _expect(qa, dict, file=path, record=qa_record, field_name="id")
                xling_id = _expect(qa.get("id"), str, file=path, record=qa_record, field_name="id")
                text = _expect(qa.get("question"), str, file=path, record=qa_record, field_name="question")
                answers = _expect(qa.get("answers"), list, file=path, record=qa_record, field_name="answers")
                if not answers or not isinstance(answers[0], dict):
                    raise InputError(
                        "expected at least one answer object", file=path, record=qa_record, field="answers"
                    )
                start = _expect(
                    answers[0].get("answer_start"),
                    int,
                    file=path,
                    record=qa_record,
                    field_name="answers[0].answer_start",
                )
                sentence = next((context[s:e] for s, e in breaks if s <= start < e), None)
                if sentence is None:  # the official loader skips these with a warning
                    data.skipped += 1
                    continue
                uid = f"{xling_id}_{lang}"
                if uid in seen_uids:
                    raise InputError(f"duplicate question id '{xling_id}'", file=path, record=qa_record, field="id")
                seen_uids.add(uid)
                data.questions.append(Question(uid, xling_id, lang, text))
                if first_position is None:  # candidates come from paragraphs that have questions
                    first_position = len(data.pool.ids)
                    for index, candidate in enumerate(sentences):
                        data.pool.ids.append(f"{context_id}_{index}")
                        data.pool.langs.append(lang)
                        data.pool.sentences.append(candidate)
                        data.pool.contexts.append(context)
                answer_sentences.append((xling_id, sentence, sentences, first_position))
    targets: dict[str, list[int]] = defaultdict(list)
    for xling_id, sentence, sentences, first in answer_sentences:
        for index, candidate in enumerate(sentences):
            if candidate == sentence and first + index not in targets[xling_id]:
                targets[xling_id].append(first + index)
    for xling_id, positions in targets.items():
        data.targets.setdefault(xling_id, np.empty(0, dtype=np.int64))
        data.targets[xling_id] = np.concatenate([data.targets[xling_id], np.asarray(positions, dtype=np.int64)])


def sample_questions(data: LAReQAData, limit: int, seed: int) -> None:
    """Keep ``limit`` questions per language, drawn at random (seeded) but the same ids in every
    language where it can (one shuffled order of ids serves all languages), so the languages stay
    parallel; the candidate pool is left whole, so the limited mAP estimates the full one (a pool
    cut to the sampled questions' paragraphs would make retrieval far easier)."""
    ids = sorted({q.xling_id for q in data.questions})
    priority = {xid: i for i, xid in enumerate(np.random.default_rng(seed).permutation(ids))}
    kept: set[str] = set()
    for lang in data.languages:
        in_lang = sorted((q for q in data.questions if q.lang == lang), key=lambda q: priority[q.xling_id])
        kept.update(q.uid for q in in_lang[:limit])
    data.sample = QuestionSample(per_language=limit, seed=seed, of_questions=len(data.questions))
    data.questions = [q for q in data.questions if q.uid in kept]


def statistics(data: LAReQAData) -> dict[str, Any]:
    """Counts recorded in the result: questions and candidates per language, targets per question."""
    n_targets = [len(data.targets.get(q.xling_id, ())) for q in data.questions]
    return {
        "questions": len(data.questions),
        "candidates": len(data.pool.ids),
        "questions_per_language": {lang: sum(q.lang == lang for q in data.questions) for lang in data.languages},
        "candidates_per_language": {lang: data.pool.langs.count(lang) for lang in data.languages},
        "correct_per_question": {
            "min": min(n_targets, default=0),
            "max": max(n_targets, default=0),
            "mean": round(float(np.mean(n_targets)), 4) if n_targets else 0.0,
        },
        "skipped_questions": data.skipped,
        **({"sample": asdict(data.sample)} if data.sample else {}),
    }
