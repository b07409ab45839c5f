"""Per-item records of XTREME's accuracy, span-F1 and pair-F1 tasks, and how their rows are
computed from them (for bootstrap intervals and paired comparisons, :mod:`harness.stats`).

* Accuracy (XNLI, PAWS-X, XCOPA, Tatoeba): one item per line, ``correct`` 0/1; a row is
  :func:`~harness_xtreme.metrics.percent_mean` of them.
* Mewsli-X: one item per gold mention, its reciprocal rank; map@20 is their percent mean.
* Span QA (XQuAD, MLQA, TyDiQA-GoldP): one item per question, its EM and F1 (built in
  :mod:`harness_xtreme.kinds`, which knows each task's normaliser).
* Span F1 (PAN-X, UD-POS): one item per sentence with its share of the chunk counts
  (``correct``, ``predicted``, ``gold``: see :func:`~harness_xtreme.tagging.sentence_counts`);
  seqeval's F1 does not decompose into a mean, so a row sums the counts of its sentences (of a
  resample) and computes precision, recall and F1 from the sums as seqeval does.
* Pair F1 (BUCC 2018): one item per source sentence id that has a gold or a predicted pair, with
  its pairs' counts (pairs as sets, as evaluate.py takes them); a row as for span F1.

The bootstrap resamples items within each language. A resample of PAN-X sentences scores exactly
as seqeval on the resampled sentences (a test checks it); for UD-POS too, except where a chunk
begins in an earlier sentence (an ``X`` after a sentence's end), whose count stays with the
sentence where it ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.plugin.scoring import Gathered, Mean, UnitStatistic
from harness_xtreme.metrics import COUNTED_METRICS, MEWSLIX_TOP_K, counted_scores, percent_mean, reciprocal_ranks
from harness_xtreme.tagging import sentence_counts

#: The per-item values a counted row reads.
COUNTS = ("correct", "predicted", "gold")


@dataclass(frozen=True)
class Item:
    """One scored item of a language: its id, gold, prediction and per-item values."""

    id: str
    gold: Any
    prediction: Any
    values: dict[str, float]


def line_items(task: str, lang: str, labels: Sequence[Any], predictions: Sequence[Any]) -> list[Item]:
    """One item per line (0-based line number), correct when prediction equals label (``p == l``)."""
    return [
        Item(str(line), label, predicted, {"correct": float(predicted == label)})
        for line, (label, predicted) in enumerate(zip(labels, predictions))
    ]


def sentence_items(
    task: str, lang: str, labels: Sequence[Sequence[str]], predictions: Sequence[Sequence[str]]
) -> list[Item]:
    """One item per sentence (0-based), with its share of the file's chunk counts."""
    return [
        Item(
            str(number),
            list(gold),
            list(predicted),
            {"correct": float(counts.correct), "predicted": float(counts.predicted), "gold": float(counts.gold)},
        )
        for number, (gold, predicted, counts) in enumerate(
            zip(labels, predictions, sentence_counts(labels, predictions))
        )
    ]


def pair_items(
    task: str, lang: str, labels: Sequence[tuple[str, ...]], predictions: Sequence[tuple[str, ...]]
) -> list[Item]:
    """One item per source id of a gold or predicted pair (gold's first, in file order): its gold
    and predicted targets, each pair once, and how many of its predicted pairs are gold."""
    gold_set = set(labels)
    sources = dict.fromkeys(pair[0] for pair in [*labels, *predictions])
    gold_of: dict[str, list[tuple[str, ...]]] = {source: [] for source in sources}
    predicted_of: dict[str, list[tuple[str, ...]]] = {source: [] for source in sources}
    for pairs, by_source in ((labels, gold_of), (predictions, predicted_of)):
        for pair in dict.fromkeys(pairs):
            by_source[pair[0]].append(pair)
    return [
        Item(
            source,
            ["\t".join(pair[1:]) for pair in gold_of[source]],
            ["\t".join(pair[1:]) for pair in predicted_of[source]],
            {
                "correct": float(sum(pair in gold_set for pair in predicted_of[source])),
                "predicted": float(len(predicted_of[source])),
                "gold": float(len(gold_of[source])),
            },
        )
        for source in sources
    ]


def mention_items(
    task: str, lang: str, labels: Mapping[str, Sequence[str]], predictions: Mapping[str, Sequence[str]]
) -> list[Item]:
    """Mewsli-X: one item per gold mention, its gold entities, its first ranked predictions and its
    reciprocal rank (0 when the gold entity is not among them)."""
    return [
        Item(
            mention,
            list(labels[mention]),
            list(predictions.get(mention, []))[:MEWSLIX_TOP_K],
            {"reciprocal_rank": rank},
        )
        for mention, rank in zip(labels, reciprocal_ranks(labels, predictions))
    ]


@dataclass(frozen=True, eq=False)
class CountedScore(UnitStatistic):
    """F1, precision or recall of one language from the summed ``correct``, ``predicted`` and
    ``gold`` counts of its items (of each resample), by :func:`counted_scores`; the point is the
    official number bit for bit (the counts are whole numbers, summed exactly)."""

    def on_unit(self, gathered: Gathered) -> np.ndarray:
        correct, predicted, gold = (gathered.values[name].sum(axis=1) for name in COUNTS)
        return counted_scores(correct, predicted, gold)[self.metric]


def accuracy_statistics(unit: str) -> dict[str, UnitStatistic]:
    """A language's accuracy: the share of correct lines, 0-100, in evaluate.py's arithmetic."""
    return {"accuracy": Mean(unit, "correct", official=percent_mean, binary=True)}


def mention_statistics(unit: str) -> dict[str, UnitStatistic]:
    """A language's Mewsli-X map@20: the percent mean of its mentions' reciprocal ranks."""
    return {"map@20": Mean(unit, "reciprocal_rank", official=percent_mean)}


def qa_statistics(unit: str) -> dict[str, UnitStatistic]:
    """A language's SQuAD v1.1 EM and F1: ``100.0 * sum / n`` of the questions' values."""
    return {"exact_match": Mean(unit, "exact_match", binary=True), "f1": Mean(unit, "f1")}


def counted_statistics(unit: str) -> dict[str, UnitStatistic]:
    """A language's F1, precision and recall from its items' counts."""
    return {metric: CountedScore(unit, metric) for metric in COUNTED_METRICS}
