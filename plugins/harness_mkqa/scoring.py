"""MKQA's official metrics (``mkqa_eval.py`` + ``mkqa_eval_util.py``), one language at a time.

Per example: exact match and token F1 of the predicted text (``binary_answer`` if given, else
``prediction``) against each gold string after the MKQA normaliser, maximum over the golds; the
F1 of an empty prediction against an empty gold is 1 (0 in SQuAD/MLQA).

Then the **best-threshold sweep**, which is what the leaderboard reports. A model gives every
example a ``no_answer_prob`` (any real number; Apple's sample predictions use logits). The sweep
starts from "abstain everywhere" (score = number of No-Answer examples, threshold 0.0), visits
the examples by ascending ``no_answer_prob`` (ties in prediction-file order: Python's stable
sort) and switches each to answering: + its F1 if it is answerable, -1 if it is No Answer and
the predicted text is non-empty (before normalisation), 0 if both are empty. Each time the
running score *strictly* exceeds the best so far, the best score and the threshold (that
example's ``no_answer_prob``) are recorded; ``best_f1 = 100 * best / N``. Every other "best_"
metric applies that threshold afterwards: ``no_answer_prob > threshold`` means No Answer, which
scores 1 on a No-Answer example and 0 otherwise.

Two consequences are kept because they are the official numbers:

* within a run of tied ``no_answer_prob`` values the sweep scores prefixes of the tie, which no
  threshold can select, so ``best_f1`` depends on the order of lines in the prediction file
  and can describe a different operating point from ``best_em``;
* when abstaining everywhere is best, the recorded threshold stays 0.0, and applying it
  answers every example whose ``no_answer_prob`` is at most 0, so ``best_em`` can be measured
  where ``best_f1`` was not (answering everything wrongly gives best_f1 50, best_em 0 on a set
  that is half No Answer).

Beside them, :func:`tie_robust_threshold` gives an order-independent variant (the
``*_tie_robust`` metrics). Rounding is the official script's: 2 decimals, where the means of
per-example scores are rounded by numpy (``round`` on a ``numpy.float64``, which rounds the
scaled binary value: 48.325 -> 48.33) and ``best_f1`` and the threshold by Python's ``round``
(correctly rounded: 48.325 -> 48.32). The reported numbers are exactly what the script prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.plugin import Clusters
from harness.plugin.scoring import (
    Gathered,
    InstanceTable,
    Macro,
    Mean,
    RowStatistics,
    Statistic,
    UnitStatistic,
    token_f1,
)
from harness_mkqa.data import ANSWER_TYPES, Annotation
from harness_mkqa.normalize import answer_tokens


@dataclass(frozen=True)
class ExampleScores:
    """Per-example arrays for one language, in data-file order."""

    exact_match: np.ndarray  # float64, 0 or 1
    f1: np.ndarray  # float64
    answerable: np.ndarray  # bool
    answered: np.ndarray  # bool: the predicted text is non-empty (before normalisation)
    no_answer_prob: np.ndarray  # float64
    line: np.ndarray  # int64: the prediction's position in its file (the sweep's tie order)
    type_masks: dict[str, np.ndarray]  # answer type -> bool mask (an example may have two types)

    def __len__(self) -> int:
        return len(self.f1)


def _memoised_tokens(lang: str) -> Callable[[str], tuple[str, ...]]:
    """``answer_tokens`` for one language, computed once per distinct string (golds recur: dates
    carry a dozen formatted aliases, "yes"/"no" and "" are everywhere, predictions repeat)."""
    memo: dict[str, tuple[str, ...]] = {}

    def tokens(text: str) -> tuple[str, ...]:
        found = memo.get(text)
        if found is None:
            found = memo[text] = tuple(answer_tokens(text, lang))
        return found

    return tokens


def score_examples(
    annotations: Sequence[Annotation],
    texts: Sequence[str],
    probs: Sequence[float],
    lines: Sequence[int],
    lang: str,
) -> ExampleScores:
    """Exact match and F1 of each predicted text (aligned with ``annotations``), max over golds.

    Exact match is equality of token sequences (the official comparison of normalised strings,
    whose tokens are joined by single spaces). As equal tokens give F1 1 (both empty included),
    F1 is computed only without a match, for a non-empty prediction, against the golds sharing
    a token with it: every other gold scores 0 (one side empty, or no common token).
    """
    tokens = _memoised_tokens(lang)
    n = len(annotations)
    em, f1 = np.zeros(n), np.zeros(n)
    for i, (annotation, text) in enumerate(zip(annotations, texts)):
        predicted = tokens(text)
        golds = list(map(tokens, annotation.golds))
        if predicted in golds:
            em[i] = f1[i] = 1.0
        elif predicted:
            shared = set(predicted)
            f1[i] = max(
                (token_f1(predicted, gold, both_empty=1.0) for gold in golds if not shared.isdisjoint(gold)),
                default=0.0,
            )
    answer_types = [a.types for a in annotations]
    return ExampleScores(
        exact_match=em,
        f1=f1,
        answerable=np.fromiter((a.answerable for a in annotations), dtype=bool, count=n),
        answered=np.fromiter((bool(t) for t in texts), dtype=bool, count=n),
        no_answer_prob=np.asarray(probs, dtype=np.float64),
        line=np.asarray(lines, dtype=np.int64),
        type_masks={
            kind: np.fromiter((kind in types for types in answer_types), dtype=bool, count=n) for kind in ANSWER_TYPES
        },
    )


def _sweep(scores: ExampleScores, order: np.ndarray) -> np.ndarray:
    """The running score after switching each example of ``order`` to answering, summed one
    example at a time from the No-Answer count, exactly as the official loop adds."""
    gain = np.where(scores.answerable, scores.f1, np.where(scores.answered, -1.0, 0.0))
    start = float(np.count_nonzero(~scores.answerable))
    return np.cumsum(np.concatenate(([start], gain[order])))[1:]  # cumsum adds sequentially


def official_threshold(scores: ExampleScores) -> tuple[float, float]:
    """(best score, threshold) of the official sweep: ties in prediction-file order, first strict maximum."""
    order = np.lexsort((scores.line, scores.no_answer_prob))
    running = _sweep(scores, order)
    best, threshold = float(np.count_nonzero(~scores.answerable)), 0.0
    k = int(np.argmax(running))
    if running[k] > best:
        best, threshold = float(running[k]), float(scores.no_answer_prob[order[k]])
    return best, threshold


def tie_robust_threshold(scores: ExampleScores) -> tuple[float, float | None]:
    """(best score, threshold) over the operating points a threshold can actually select.

    The candidates are "abstain on everything" (threshold None) and every distinct
    ``no_answer_prob`` value t, scored as the official rule applies a threshold (answer iff
    ``no_answer_prob <= t``, so a tie is answered or abstained on as a whole); the first (lowest)
    best candidate wins, like the official strict ``>``. Sums run in data-file order within a
    tie, so the result does not depend on the prediction file's line order, even in the last
    bit. Without ties and when some threshold beats abstaining everywhere, it equals the
    official sweep; its EM (``best_em_tie_robust``) is measured at the same operating point.
    """
    order = np.lexsort((np.arange(len(scores)), scores.no_answer_prob))
    running = _sweep(scores, order)
    sorted_probs = scores.no_answer_prob[order]
    tie_ends = np.flatnonzero(np.append(sorted_probs[1:] != sorted_probs[:-1], True))
    candidates = running[tie_ends]
    k = int(np.argmax(candidates))
    best = float(np.count_nonzero(~scores.answerable))
    if candidates[k] > best:
        return float(candidates[k]), float(sorted_probs[tie_ends[k]])
    return best, None


def _abstains(scores: ExampleScores, threshold: float | None) -> np.ndarray:
    if threshold is None:
        return np.ones(len(scores), dtype=bool)
    return scores.no_answer_prob > threshold


def _at_threshold(values: np.ndarray, scores: ExampleScores, abstains: np.ndarray) -> np.ndarray:
    """Per-example scores once abstentions are applied: an abstention scores 1 on No Answer, else 0."""
    return np.where(abstains, (~scores.answerable).astype(np.float64), values)


def _percent(values: np.ndarray) -> float | None:
    """``round(100.0 * np.mean(values), 2)`` as the official script computes it (numpy rounding);
    None where the official script would print NaN (no examples of that kind)."""
    if values.size == 0:
        return None
    return float(round(100.0 * np.mean(values), 2))


def _best_percent(best: float, n: int) -> float:
    return round(100.0 * best / n, 2)  # a Python float: Python's rounding, as in the official script


@dataclass(frozen=True)
class LanguageResult:
    """The metrics of one language, the thresholds chosen, and the per-example scores at the
    official threshold (the values behind ``best_em`` and ``best_answerable_f1``)."""

    metrics: dict[str, float | None]
    threshold: float
    tie_robust_threshold: float | None  # None: abstaining on everything is best
    best_em_by_example: np.ndarray
    best_f1_by_example: np.ndarray


def evaluate_language(scores: ExampleScores) -> LanguageResult:
    """Every metric of one language, rounded as the official script prints them: its six, the five
    plain ones ``--verbose`` adds, and ``best_f1_tie_robust`` / ``best_em_tie_robust``."""
    n, answerable = len(scores), scores.answerable
    best, threshold = official_threshold(scores)
    abstains = _abstains(scores, threshold)
    em_at = _at_threshold(scores.exact_match, scores, abstains)
    f1_at = _at_threshold(scores.f1, scores, abstains)
    robust_best, robust_threshold = tie_robust_threshold(scores)
    robust_em = _at_threshold(scores.exact_match, scores, _abstains(scores, robust_threshold))
    metrics = {
        "best_em": _percent(em_at),
        "best_f1": _best_percent(best, n),
        "best_answerable_em": _percent(em_at[answerable]),
        "best_answerable_f1": _percent(f1_at[answerable]),
        "best_unanswerable_em": _percent(em_at[~answerable]),
        "best_f1_threshold": round(threshold, 2),
        "exact_match": _percent(scores.exact_match),
        "f1": _percent(scores.f1),
        "answerable_exact_match": _percent(scores.exact_match[answerable]),
        "answerable_f1": _percent(scores.f1[answerable]),
        "unanswerable_exact_match": _percent(scores.exact_match[~answerable]),
        "best_f1_tie_robust": _best_percent(robust_best, n),
        "best_em_tie_robust": _percent(robust_em),
    }
    return LanguageResult(metrics, threshold, robust_threshold, em_at, f1_at)


def macro_average(per_language: Sequence[dict[str, float | None]]) -> dict[str, float | None]:
    """The official "Macro Average" row: the unweighted mean of the *rounded* per-language values,
    in MKQA language order, rounded again (``round(float(np.mean(values)), 2)``)."""
    out: dict[str, float | None] = {}
    for metric in per_language[0]:
        values = [row[metric] for row in per_language]
        present = [v for v in values if v is not None]
        out[metric] = _macro(present) if len(present) == len(values) else None
    return out


def answer_type_breakdown(parts: Sequence[tuple[ExampleScores, LanguageResult]]) -> dict[str, dict[str, Any]]:
    """Scores by answer type over the examples of ``parts`` (one language, or several pooled):
    ``best_em``/``best_f1`` at each language's official best threshold (an abstention scores 1
    on No Answer) and the plain ``exact_match``/``f1``. An example with answers of two types
    counts under both, so the counts can add up to more than the examples."""
    em_at = np.concatenate([result.best_em_by_example for _, result in parts])
    f1_at = np.concatenate([result.best_f1_by_example for _, result in parts])
    em = np.concatenate([scores.exact_match for scores, _ in parts])
    f1 = np.concatenate([scores.f1 for scores, _ in parts])
    out: dict[str, dict[str, Any]] = {}
    for kind in ANSWER_TYPES:
        mask = np.concatenate([scores.type_masks[kind] for scores, _ in parts])
        if mask.any():
            out[kind] = {
                "count": int(mask.sum()),
                "best_em": _percent(em_at[mask]),
                "best_f1": _percent(f1_at[mask]),
                "exact_match": _percent(em[mask]),
                "f1": _percent(f1[mask]),
            }
    return out


# -- per-example records and the statistics that re-run the official aggregation ---------------

#: The per-example values an MKQA instance records: enough to re-run the threshold sweep on any
#: resample of the examples (the sweep does not decompose into a mean).
SWEEP_VALUES = ("f1", "exact_match", "answerable", "answered", "no_answer_prob", "line")


def example_values(scores: ExampleScores) -> list[dict[str, float]]:
    """Each example's :data:`SWEEP_VALUES`, in data order."""
    columns = [scores.f1, scores.exact_match, scores.answerable, scores.answered, scores.no_answer_prob, scores.line]
    return [dict(zip(SWEEP_VALUES, map(float, row))) for row in zip(*columns)]


def _from_columns(values: Mapping[str, np.ndarray]) -> ExampleScores:
    return ExampleScores(
        exact_match=values["exact_match"],
        f1=values["f1"],
        answerable=values["answerable"] == 1,
        answered=values["answered"] == 1,
        no_answer_prob=values["no_answer_prob"],
        line=values["line"].astype(np.int64),
        type_masks={},
    )


@dataclass(frozen=True, eq=False)
class SweepMetric(UnitStatistic):
    """``best_f1`` or ``best_em`` of one language: the official best-threshold sweep re-run on
    each resample (rows of the gathered matrices), vectorised: the examples of a row visited by
    ascending ``no_answer_prob`` (ties by file line), the running score from the No-Answer
    count, its first strict maximum and that example's probability as the threshold. The point
    estimate is the official, rounded number; resampled values are left unrounded (rounding to
    2 decimals would only put steps into the interval's ends).
    """

    def point(self, table: InstanceTable) -> float:
        value = evaluate_language(_from_columns(table.unit(self.unit).values)).metrics[self.metric]
        assert value is not None
        return value

    def on_unit(self, gathered: Gathered) -> np.ndarray:
        if "best" not in gathered.scratch:
            _sweep_rows(gathered)
        v = gathered.values
        n: int = v["f1"].shape[1]
        if self.metric == "best_f1":
            return 100.0 * gathered.scratch["best"] / n
        abstains = v["no_answer_prob"] > gathered.scratch["threshold"][:, None]
        em_at = np.where(abstains, 1.0 - v["answerable"], v["exact_match"])
        per_row: np.ndarray = em_at.mean(axis=1)
        return 100.0 * per_row


def _sweep_rows(gathered: Gathered) -> None:
    """The official sweep for every row at once: best score and threshold into ``gathered.scratch``."""
    v = gathered.values
    order = np.lexsort((v["line"], v["no_answer_prob"]), axis=1)
    gain = np.where(v["answerable"] == 1, v["f1"], np.where(v["answered"] == 1, -1.0, 0.0))
    start = (1.0 - v["answerable"]).sum(axis=1)
    running = np.cumsum(np.column_stack([start, np.take_along_axis(gain, order, axis=1)]), axis=1)[:, 1:]
    k = running.argmax(axis=1)
    top = np.take_along_axis(running, k[:, None], axis=1)[:, 0]
    better = top > start
    probs = np.take_along_axis(np.take_along_axis(v["no_answer_prob"], order, axis=1), k[:, None], axis=1)[:, 0]
    gathered.scratch["best"] = np.where(better, top, start)
    gathered.scratch["threshold"] = np.where(better, probs, 0.0)


def _rounded_percent(values: Sequence[float]) -> float:
    percent = _percent(np.asarray(values, dtype=np.float64))
    assert percent is not None
    return percent


def _macro(values: Sequence[float]) -> float:
    """The official macro average of rounded per-language numbers, rounded again."""
    return round(float(np.mean(values)), 2)


#: Row metrics with intervals: the sweep's two, and the plain means without a threshold.
SWEEP_METRICS = ("best_f1", "best_em")
PLAIN_METRICS = {"f1": False, "exact_match": True}


def language_statistics(table: InstanceTable, summary: str, clusters: Clusters | None = None) -> RowStatistics:
    """Per language: ``best_f1``/``best_em`` (the sweep, re-run per resample) and ``f1``/
    ``exact_match`` (rounded means); the ``summary`` row: their official macro average,
    resampling ``clusters`` (an example in every language) whole."""
    per_language: RowStatistics = {}
    for lang in table.units:
        per_language[lang] = {m: SweepMetric(lang, m) for m in SWEEP_METRICS}
        per_language[lang].update(
            {m: Mean(lang, m, official=_rounded_percent, binary=binary) for m, binary in PLAIN_METRICS.items()}
        )
    metrics = (*SWEEP_METRICS, *PLAIN_METRICS)
    overall: dict[str, Statistic] = {
        m: Macro(tuple(per_language[lang][m] for lang in table.units), _macro, clusters=clusters) for m in metrics
    }
    return {summary: overall, **per_language}
