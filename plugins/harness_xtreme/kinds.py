"""For each kind of XTREME task: how its label and prediction files are read and checked against
each other, how one language is scored, and how predictions are written back.

The checks are ``evaluate.py``'s: every task but BUCC, Mewsli-X and the QA tasks must have as
many predictions as labels (an assertion there), and seqeval refuses tag sentences of different
lengths. Here they are one-line errors naming the file and the line or sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.plugin import InputError
from harness.plugin.scoring import (
    Normalizer,
    SpanScores,
    UnitStatistic,
    ascii_english,
    memoize,
    multilingual,
    score_questions,
)
from harness.plugin.tasks import SpanUnit, read_answer_file, read_unit
from harness_xtreme import formats
from harness_xtreme.benchmark import Kind
from harness_xtreme.metrics import accuracy, mean_reciprocal_rank, pair_set_scores
from harness_xtreme.records import (
    Item,
    accuracy_statistics,
    counted_statistics,
    line_items,
    mention_items,
    mention_statistics,
    pair_items,
    qa_statistics,
    sentence_items,
)
from harness_xtreme.tagging import span_scores


@dataclass(frozen=True)
class FileKind:
    """How one kind of task's files are handled (``lang`` is the file's language)."""

    read_labels: Callable[[Path, str], Any]  # (file, lang) -> labels
    read_predictions: Callable[[Path, Any], Any]  # (file, labels) -> predictions, checked against the labels
    score: Callable[[str, str, Any, Any], dict[str, float]]  # (task, lang, labels, predictions) -> metrics
    write: Callable[[Any], bytes]
    gold: Callable[[Any], Any]  # labels -> the predictions that copy them (the oracle)
    #: (task, lang, labels, predictions) -> one language's per-item records
    items: Callable[[str, str, Any, Any], list[Item]]
    #: unit -> how its row metrics are computed from those records (see :mod:`harness_xtreme.records`)
    statistics: Callable[[str], dict[str, UnitStatistic]]
    #: read_predictions under ``--input-rules official``, where the official reading differs
    read_official: Callable[[Path, Any], Any] | None = None


def _same_length(read: Callable[[Path], list[Any]]) -> Callable[[Path, Sequence[Any]], list[Any]]:
    def read_checked(path: Path, labels: Sequence[Any]) -> list[Any]:
        predictions = read(path)
        if len(predictions) != len(labels):
            raise InputError(
                f"{len(predictions)} lines, but the labels have {len(labels)} (one prediction per "
                "label line, as evaluate.py asserts)",
                file=path,
            )
        return predictions

    return read_checked


def check_sentence_lengths(
    path: Path | str, tags: Sequence[Sequence[str]], reference: Sequence[Sequence[Any]], against: str = "the labels"
) -> None:
    """Refuse tag sentences that do not line up with ``reference`` (the gold tags, or the words
    they tag): as many sentences, and as many tags as ``reference`` has items in each."""
    if len(tags) != len(reference):
        raise InputError(
            f"{len(tags)} sentences, but {against} have {len(reference)} (sentences end at a blank line)", file=path
        )
    for number, (tagged, other) in enumerate(zip(tags, reference), start=1):
        if len(tagged) != len(other):
            raise InputError(
                f"{len(tagged)} tags, but {against} have {len(other)} (one tag per token)",
                file=path,
                record=f"sentence {number}",
            )


def check_tags(path: Path | str, sentences: Sequence[Sequence[str]], tags: Sequence[str]) -> None:
    """Refuse a tag that is none of the task's tags, naming the sentence."""
    for number, sentence in enumerate(sentences, start=1):
        unknown = next((tag for tag in sentence if tag not in tags), None)
        if unknown is not None:
            raise InputError(
                f"{unknown!r} is not a tag (tags: {', '.join(tags)})", file=path, record=f"sentence {number}"
            )


def _read_tag_predictions(path: Path, labels: Sequence[Sequence[str]]) -> list[list[str]]:
    sentences = formats.read_tags(path)
    check_sentence_lengths(path, sentences, labels)
    return sentences


#: The official answer normaliser of each QA task (MLQA's depends on the answer language).
QA_NORMALIZERS: dict[str, Callable[[str], Normalizer]] = {"mlqa": multilingual}


def _qa_scores(task: str, lang: str, unit: SpanUnit, answers: dict[str, str]) -> SpanScores:
    normalize = QA_NORMALIZERS[task](lang) if task in QA_NORMALIZERS else ascii_english
    return score_questions(unit.questions, answers, memoize(normalize))


def _qa_score(task: str, lang: str, unit: SpanUnit, answers: dict[str, str]) -> dict[str, float]:
    scores = _qa_scores(task, lang, unit, answers)
    return {"exact_match": scores.exact_match, "f1": scores.f1}


def _qa_items(task: str, lang: str, unit: SpanUnit, answers: dict[str, str]) -> list[Item]:
    """One item per question: its gold answers, the prediction (None when absent), EM and F1."""
    scores = _qa_scores(task, lang, unit, answers)
    return [
        Item(question.id, list(question.answers), answers.get(question.id), {"exact_match": em, "f1": f1})
        for question, em, f1 in zip(unit.questions, scores.question_exact, scores.question_f1)
    ]


def _accuracy(task: str, lang: str, labels: Sequence[Any], predictions: Sequence[Any]) -> dict[str, float]:
    return {"accuracy": accuracy(labels, predictions)}


def _copy(labels: Any) -> Any:
    return labels


def _any_language(read: Callable[[Path], Any]) -> Callable[[Path, str], Any]:
    return lambda path, lang: read(path)


def _unchecked(read: Callable[[Path], Any]) -> Callable[[Path, Any], Any]:
    return lambda path, labels: read(path)


def _pairs_file(pairs: Sequence[tuple[str, ...]]) -> bytes:
    return formats.lines_file(["\t".join(pair) for pair in pairs])


#: Every kind ``evaluate.py`` scores (XTREME-R's LAReQA has no entry there, nor here).
KINDS: dict[Kind, FileKind] = {
    "classification": FileKind(
        _any_language(formats.read_lines),
        _same_length(formats.read_lines),
        _accuracy,
        formats.lines_file,
        _copy,
        line_items,
        accuracy_statistics,
    ),
    "tatoeba": FileKind(
        _any_language(formats.read_line_numbers),
        _same_length(formats.read_line_numbers),
        _accuracy,
        formats.lines_file,
        _copy,
        line_items,
        accuracy_statistics,
        _same_length(lambda path: formats.read_line_numbers(path, official=True)),
    ),
    "xcopa": FileKind(
        _any_language(formats.read_choices),
        _same_length(formats.read_choices),
        _accuracy,
        formats.choices_file,
        _copy,
        line_items,
        accuracy_statistics,
    ),
    "bitext": FileKind(
        _any_language(formats.read_pairs),
        _unchecked(formats.read_pairs),
        lambda task, lang, labels, predictions: pair_set_scores(labels, predictions),
        _pairs_file,
        _copy,
        pair_items,
        counted_statistics,
        _unchecked(lambda path: formats.read_pairs(path, official=True)),
    ),
    "tagging": FileKind(
        _any_language(formats.read_tags),
        _read_tag_predictions,
        lambda task, lang, labels, predictions: span_scores(labels, predictions).as_metrics(),
        formats.tags_file,
        _copy,
        sentence_items,
        counted_statistics,
    ),
    "qa": FileKind(
        lambda path, lang: read_unit(path, lang, lang, lang, (lang,), None),
        read_answer_file,
        _qa_score,
        formats.json_file,
        lambda unit: {q.id: q.answers[0] for q in unit.questions},
        _qa_items,
        qa_statistics,
        lambda path, unit: read_answer_file(path, unit, official=True),
    ),
    "mewslix": FileKind(
        _any_language(lambda path: formats.read_entities(path, gold=True)),
        _unchecked(lambda path: formats.read_entities(path, gold=False)),
        lambda task, lang, labels, predictions: {"map@20": mean_reciprocal_rank(labels, predictions)},
        formats.json_file,
        lambda labels: {mention: [labels[mention][0].strip()] for mention in labels},
        mention_items,
        mention_statistics,
    ),
}


def check_classes(path: Path | str, lines: Sequence[str], classes: Sequence[str]) -> None:
    """Refuse a classification file line that is none of the task's labels, naming the line."""
    for number, line in enumerate(lines, start=1):
        if line not in classes:
            raise InputError(
                f"{line!r} is not a label (labels: {', '.join(classes)})", file=path, record=f"line {number}"
            )


def example_count(labels: Any) -> int:
    """Labels' size for result rows: lines, sentences, pairs, questions or mentions."""
    return len(labels.questions) if isinstance(labels, SpanUnit) else len(labels)
