"""XTREME's per-language metrics that are not span QA or tagging, as ``evaluate.py`` computes them.

All are percentages (0-100), computed with the official operations in the official order so
the floats are the official ones: accuracy is ``correct / n * 100``; BUCC's F1 is over *sets*
of (source id, target id) pairs; Mewsli-X's "map@20" is the mean reciprocal rank of the single
gold entity within the top 20 (``third_party/utils_mewslix.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def mean(values: Sequence[float]) -> float:
    """The unweighted mean, summed in the given order (XTREME's average over languages/tasks)."""
    return sum(values) / len(values)


def accuracy(labels: Sequence[Any], predictions: Sequence[Any]) -> float:
    """Share of positions where prediction and label are equal, 0-100 (``p == l`` per line, as
    read: Tatoeba's line numbers are compared as text, so ``[367]`` is not ``367``)."""
    correct = sum(int(p == label) for p, label in zip(predictions, labels))
    return correct / len(predictions) * 100


def percent_mean(values: Sequence[float]) -> float:
    """``sum / n * 100`` in the given order: :func:`accuracy` from each line's 0/1 correctness,
    :func:`mean_reciprocal_rank` from each mention's reciprocal rank, in their arithmetic."""
    return sum(values) / len(values) * 100


#: The metrics of :func:`counted_scores`, in the order the official scorers report them.
COUNTED_METRICS = ("f1", "precision", "recall")


def counted_scores(correct: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> dict[str, np.ndarray]:
    """Micro precision, recall and F1 (0-100) from counts of correct, predicted and gold items
    (chunks, or pairs), elementwise over arrays of counts: ``correct / predicted``,
    ``correct / gold``, ``2 * p * r / (p + r)``, each 0 where its denominator is 0 -- seqeval
    1.2.2's operations and evaluate.py's BUCC F1 (all 0 when nothing is correct, which these
    rules give too), so the floats are theirs, whether from one file's counts or a resample's."""
    correct, predicted, gold = (np.asarray(x, dtype=np.float64) for x in (correct, predicted, gold))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, correct / predicted, 0.0)
        recall = np.where(gold > 0, correct / gold, 0.0)
        total = precision + recall
        f1 = np.where(total > 0, 2.0 * precision * recall / total, 0.0)
    return {"f1": f1 * 100, "precision": precision * 100, "recall": recall * 100}


def pair_set_scores(gold: Sequence[tuple[str, ...]], predicted: Sequence[tuple[str, ...]]) -> dict[str, float]:
    """BUCC 2018: precision, recall and F1 of the predicted pairs against the gold pairs, each
    side taken as a set (repeated lines count once); all 0 when no pair is correct."""
    gold_set, predicted_set = set(gold), set(predicted)
    scores = counted_scores(
        np.asarray(len(gold_set & predicted_set)), np.asarray(len(predicted_set)), np.asarray(len(gold_set))
    )
    return {metric: float(scores[metric]) for metric in COUNTED_METRICS}


#: Mewsli-X scores the first 20 predicted entities of each mention.
MEWSLIX_TOP_K = 20


def mean_reciprocal_rank(
    gold: Mapping[str, Sequence[str]], predictions: Mapping[str, Sequence[str]], k: int = MEWSLIX_TOP_K
) -> float:
    """Mewsli-X "map@20" (0-100): over the gold mentions, in file order, the reciprocal rank of the
    gold entity (its first label, white space stripped) among the first ``k`` predicted entities,
    0 when it is not there or the mention has no prediction. With one gold entity per mention
    MAP@k and MRR@k are the same number, hence the official name."""
    return percent_mean(reciprocal_ranks(gold, predictions, k)) if gold else 0.0


def reciprocal_ranks(
    gold: Mapping[str, Sequence[str]], predictions: Mapping[str, Sequence[str]], k: int = MEWSLIX_TOP_K
) -> list[float]:
    """Each gold mention's reciprocal rank (see :func:`mean_reciprocal_rank`), in file order."""
    ranks = []
    for mention, labels in gold.items():
        target = labels[0].strip()
        ranked = list(predictions.get(mention, []))[:k]
        ranks.append(next((1.0 / rank for rank, entity in enumerate(ranked, start=1) if entity == target), 0.0))
    return ranks
