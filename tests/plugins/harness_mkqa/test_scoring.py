"""The best-threshold sweep, its order-independent variant, rounding and the macro average, on
small cases worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import numpy as np

from harness_mkqa.data import ANSWER_TYPES
from harness_mkqa.scoring import (
    ExampleScores,
    answer_type_breakdown,
    evaluate_language,
    macro_average,
    official_threshold,
    tie_robust_threshold,
)


def scores(
    *,
    answerable: list[bool],
    f1: list[float],
    em: list[float] | None = None,
    answered: list[bool],
    probs: list[float],
    lines: list[int] | None = None,
    types: list[tuple[str, ...]] | None = None,
) -> ExampleScores:
    n = len(f1)
    types = types or [("entity",)] * n
    return ExampleScores(
        exact_match=np.asarray(em if em is not None else [float(x == 1.0) for x in f1]),
        f1=np.asarray(f1, dtype=float),
        answerable=np.asarray(answerable),
        answered=np.asarray(answered),
        no_answer_prob=np.asarray(probs, dtype=float),
        line=np.asarray(lines if lines is not None else range(n)),
        type_masks={kind: np.asarray([kind in t for t in types]) for kind in ANSWER_TYPES},
    )


def test_sweep_by_hand() -> None:
    # A1 answerable F1 1 (prob -2), A2 answerable F1 0.5 (prob 1), N1 and N2 No Answer but answered
    # (probs -1 and 3). Start: 2 (No-Answer count). By prob: A1 +1 -> 3 (best, threshold -2),
    # N1 -1 -> 2, A2 +0.5 -> 2.5, N2 -1 -> 1.5. best_f1 = 100 * 3 / 4 = 75.
    # Applying -2: A2, N1, N2 abstain (prob > -2): EM A1 1, A2 0, N1 1, N2 1 -> 75; answerable EM
    # (1 + 0) / 2 = 50, answerable F1 (1 + 0) / 2 = 50, unanswerable EM 100.
    # Plain: EM (1 + 0 + 0 + 0) / 4 = 25, F1 (1 + 0.5 + 0 + 0) / 4 = 37.5, answerable F1 75.
    s = scores(
        answerable=[True, True, False, False],
        f1=[1.0, 0.5, 0.0, 0.0],
        answered=[True, True, True, True],
        probs=[-2.0, 1.0, -1.0, 3.0],
    )
    assert official_threshold(s) == (3.0, -2.0)
    assert evaluate_language(s).metrics == {
        "best_em": 75.0,
        "best_f1": 75.0,
        "best_answerable_em": 50.0,
        "best_answerable_f1": 50.0,
        "best_unanswerable_em": 100.0,
        "best_f1_threshold": -2.0,
        "exact_match": 25.0,
        "f1": 37.5,
        "answerable_exact_match": 50.0,
        "answerable_f1": 75.0,
        "unanswerable_exact_match": 0.0,
        # No ties, and answering A1 beats abstaining everywhere: the same as the official numbers.
        "best_f1_tie_robust": 75.0,
        "best_em_tie_robust": 75.0,
    }


def test_first_strict_maximum_wins() -> None:
    # Both answerable: A (prob 1, F1 1) -> 1, B (prob 2, F1 0) -> 1 again: not strictly better,
    # so the threshold stays at A's 1.0 and B abstains.
    s = scores(answerable=[True, True], f1=[1.0, 0.0], answered=[True, True], probs=[1.0, 2.0])
    assert official_threshold(s) == (1.0, 1.0)
    assert tie_robust_threshold(s) == (1.0, 1.0)


def test_abstaining_everywhere_keeps_threshold_zero() -> None:
    # One answerable and one No-Answer example, both answered wrongly, probs -1 and -0.5. Start 1;
    # -1 -> +0 -> 1; -0.5 -> -1 -> 0. Nothing beats 1: best_f1 50, threshold stays 0.0, and applying
    # 0.0 answers both (probs <= 0): best_em 0. The order-independent variant abstains everywhere
    # (threshold None) and measures its EM there: 50.
    s = scores(answerable=[True, False], f1=[0.0, 0.0], answered=[True, True], probs=[-1.0, -0.5])
    metrics = evaluate_language(s).metrics
    assert (metrics["best_f1"], metrics["best_em"], metrics["best_f1_threshold"]) == (50.0, 0.0, 0.0)
    assert tie_robust_threshold(s) == (1.0, None)
    assert (metrics["best_f1_tie_robust"], metrics["best_em_tie_robust"]) == (50.0, 50.0)


def test_ties_follow_line_order_officially_and_not_in_the_variant() -> None:
    # Two answerable (F1 1) and two No-Answer examples answered with text, all prob 0.
    # Answerable lines first: 2 -> 3 -> 4 (best, 100) -> 3 -> 2. Last: 2 -> 1 -> 0 -> 1 -> 2: 50.
    # The only real thresholds are "abstain everywhere" (2 of 4) and 0 (answer all: 2 + 0 = 2 of 4):
    # 50 both ways for the variant, which abstains everywhere (the first of the equal candidates).
    common = dict(answerable=[True, True, False, False], f1=[1.0, 1.0, 0.0, 0.0], answered=[True] * 4, probs=[0.0] * 4)
    first = evaluate_language(scores(**common, lines=[0, 1, 2, 3])).metrics
    last = evaluate_language(scores(**common, lines=[2, 3, 0, 1])).metrics
    assert (first["best_f1"], last["best_f1"]) == (100.0, 50.0)
    # best_em applies threshold 0 both times: everything answered, 2 right of 4.
    assert (first["best_em"], last["best_em"]) == (50.0, 50.0)
    assert first["best_f1_tie_robust"] == last["best_f1_tie_robust"] == 50.0
    assert first["best_em_tie_robust"] == last["best_em_tie_robust"] == 50.0


def test_variant_answers_a_tie_as_a_whole() -> None:
    # probs: A1 -3 (F1 1), tie at 0: A2 (F1 1) and N1 (answered), then A3 5 (F1 0.5). Start 1.
    # Candidates: abstain all 1; t=-3: 2; t=0: 2 + 1 - 1 = 2; t=5: 2.5 -> best 2.5 at 5 = 62.5.
    # The official sweep: 1, 2, (A2 first) 3, 2, 2.5 -> 3 at prob 0 = 75.0, a prefix of the tie.
    s = scores(
        answerable=[True, True, False, True], f1=[1.0, 1.0, 0.0, 0.5], answered=[True] * 4, probs=[-3.0, 0.0, 0.0, 5.0]
    )
    assert official_threshold(s) == (3.0, 0.0)
    assert tie_robust_threshold(s) == (2.5, 5.0)
    metrics = evaluate_language(s).metrics
    # At 0 (official): A3 abstains -> EM 1, 1, 0, 0 = 50. At 5 (variant): all answered -> 1, 1, 0, 0 = 50.
    assert (metrics["best_f1"], metrics["best_f1_tie_robust"]) == (75.0, 62.5)
    assert (metrics["best_em"], metrics["best_em_tie_robust"]) == (50.0, 50.0)


def test_undefined_parts_are_none() -> None:
    # No No-Answer example: the official script prints NaN for the unanswerable EM; here None.
    metrics = evaluate_language(scores(answerable=[True], f1=[1.0], answered=[True], probs=[0.0])).metrics
    assert metrics["best_unanswerable_em"] is None and metrics["unanswerable_exact_match"] is None
    assert metrics["best_f1"] == 100.0


def test_macro_average_of_rounded_values() -> None:
    # (33.33 + 33.34 + 33.34) / 3 = 33.33666... -> 33.34; None anywhere -> None.
    rows = [
        {"best_f1": 33.33, "best_unanswerable_em": 1.0},
        {"best_f1": 33.34, "best_unanswerable_em": None},
        {"best_f1": 33.34, "best_unanswerable_em": 2.0},
    ]
    assert macro_average(rows) == {"best_f1": 33.34, "best_unanswerable_em": None}


def test_answer_type_breakdown_counts_mixed_examples_under_each_type() -> None:
    # Three answerable examples answered at threshold 0 (all probs 0): entity F1 1, date F1 0,
    # and one with both an entity and a long_answer annotation, F1 0.5.
    s = scores(
        answerable=[True, True, True],
        f1=[1.0, 0.0, 0.5],
        answered=[True] * 3,
        probs=[0.0] * 3,
        types=[("entity",), ("date",), ("entity", "long_answer")],
    )
    breakdown = answer_type_breakdown([(s, evaluate_language(s))])
    assert breakdown["entity"] == {"count": 2, "best_em": 50.0, "best_f1": 75.0, "exact_match": 50.0, "f1": 75.0}
    assert breakdown["long_answer"]["count"] == 1 and breakdown["long_answer"]["f1"] == 50.0
    assert set(breakdown) == {"entity", "date", "long_answer"}
