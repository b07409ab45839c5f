"""The official span-QA evaluation loop: exact match and F1 of one file, 0-100.

As in SQuAD's ``evaluate-v1.1.py`` and MLQA's ``mlqa_evaluation_v1.py``: walk the questions in
file order; a question without a prediction counts in the total and scores 0; otherwise add the
best exact match and the best F1 over the gold answers; finally ``100.0 * sum / total``. The sums
are plain Python float additions in file order, so the result is the official float bit for bit.
Prediction ids that are not questions of the file are not looked at (the task decides whether
they are an error).

Two things are done differently, neither changing a digit: a memo (see :func:`memoize`)
normalises each distinct string once, which matters when the same gold answers are scored
against several files (the 49 MLQA pairs share 7 answer sets), and an exact match is given F1
1.0 without counting tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.scoring.answers import best_over_golds, token_f1
from harness.scoring.normalize import Normalizer
from harness.scoring.span_file import SpanQuestion


@dataclass(frozen=True)
class SpanScores:
    """Scores of one file as the official scorer prints them (0-100) and how they were reached."""

    exact_match: float
    f1: float
    count: int
    unanswered: int
    #: Each question's exact match and F1 (0 or 1, and a fraction), in file order; 0 for a
    #: question without a prediction. ``percent_of_sum`` of them is the official number.
    question_exact: tuple[float, ...] = ()
    question_f1: tuple[float, ...] = ()


def memoize(normalize: Normalizer) -> Normalizer:
    """``normalize`` with a per-string memo. The returned token lists are shared between calls:
    read them, never change them."""
    memo: dict[str, list[str]] = {}

    def cached(text: str) -> list[str]:
        tokens = memo.get(text)
        if tokens is None:
            tokens = memo[text] = normalize(text)
        return tokens

    return cached


def gold_emptied(questions: Sequence[SpanQuestion], normalize: Normalizer) -> list[SpanQuestion]:
    """The questions whose every gold answer ``normalize`` empties (MLQA's Spanish rules delete
    the article "una", SQuAD's "the"): F1 against an empty gold is 0 whatever the answer (no
    token is shared), so no prediction, the gold one included, scores F1 on them."""
    return [question for question in questions if not any(normalize(gold) for gold in question.answers)]


def score_questions(
    questions: Sequence[SpanQuestion], predictions: Mapping[str, str], normalize: Normalizer
) -> SpanScores:
    """Exact match and F1 (0-100) of ``predictions`` (question id -> answer) on ``questions``.

    Empty against empty is EM 1 but F1 0, as in the official scorers (both normalise "una" or
    "the" to nothing: equal strings, yet ``num_same == 0``).
    """
    if not questions:
        raise ValueError("no questions to score")

    def exact(prediction: str, gold: str) -> float:
        return float(normalize(prediction) == normalize(gold))

    def f1(prediction: str, gold: str) -> float:
        tokens, gold_tokens = normalize(prediction), normalize(gold)
        # Equal non-empty token lists: P = R = 1.0 and 2 * 1.0 * 1.0 / 2.0 is exactly 1.0, so the
        # bag-of-tokens count (the costly part) is skipped for exact matches.
        if tokens and tokens == gold_tokens:
            return 1.0
        return token_f1(tokens, gold_tokens)

    exact_sum = f1_sum = 0.0
    unanswered = 0
    question_exact, question_f1 = [], []
    for question in questions:
        prediction = predictions.get(question.id)
        if prediction is None:
            unanswered += 1
            question_exact.append(0.0)
            question_f1.append(0.0)
            continue
        question_exact.append(best_over_golds(exact, prediction, question.answers))
        question_f1.append(best_over_golds(f1, prediction, question.answers))
        exact_sum += question_exact[-1]
        f1_sum += question_f1[-1]
    total = len(questions)
    return SpanScores(
        100.0 * exact_sum / total, 100.0 * f1_sum / total, total, unanswered, tuple(question_exact), tuple(question_f1)
    )
