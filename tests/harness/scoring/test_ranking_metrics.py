"""Vectorised AP equals the official per-question loop (XTREME-R utils_lareqa.average_precision_at_k)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.scoring.ranking import NOT_RETRIEVED, average_precision, mid_ranks


def official_style_ap(targets: set[int], ranked: list[int], k: int | None) -> float:
    """The official definition, transcribed from its description: walk the ranked list."""
    ranked = ranked[:k] if k else ranked
    score, hits = 0.0, 0.0
    for i, pred in enumerate(ranked):
        if pred in targets and pred not in ranked[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    return score / (min(len(targets), k) if k else len(targets))


def test_hand_computed_values() -> None:
    # correct answers at ranks 1 and 3 of 2 targets: AP = (1/1 + 2/3) / 2 = 0.8333...
    ranks = np.array([[1.0, 3.0]])
    assert average_precision(ranks, np.array([2]))[0] == pytest.approx(5 / 6)
    # AP@2 only sees the hit at rank 1; divisor min(2, 2) = 2
    assert average_precision(ranks, np.array([2]), k=2)[0] == pytest.approx(0.5)
    # an unretrieved target contributes nothing: (1/2) / 2
    assert average_precision(np.array([[2.0, NOT_RETRIEVED]]), np.array([2]))[0] == pytest.approx(0.25)


@pytest.mark.parametrize("k", [None, 20, 3])
def test_matches_the_official_loop_on_random_rankings(k: int | None) -> None:
    rng = np.random.default_rng(7)
    n_candidates, n_targets = 200, 11
    ranks, counts, expected = [], [], []
    for _ in range(50):
        ranking = list(rng.permutation(n_candidates))
        targets = set(rng.choice(n_candidates, size=n_targets, replace=False).tolist())
        expected.append(official_style_ap(targets, ranking, k))
        ranks.append([ranking.index(t) + 1 for t in targets])
        counts.append(n_targets)
    got = average_precision(np.array(ranks, dtype=float), np.array(counts), k=k)
    assert np.allclose(got, expected, rtol=0, atol=1e-12)


def test_mid_ranks_by_hand() -> None:
    # scores 5, 3, 3, 3, 1: the three 3s span ranks 2, 3, 4 and share 3; padding is +inf
    scores = np.array([[5.0, 3.0, 3.0, 3.0, 1.0]])
    assert mid_ranks(scores, np.array([[0, 2, 4, -1]])).tolist() == [[1.0, 3.0, 5.0, np.inf]]


def test_mid_ranks_equal_the_mean_position_of_the_tied_block_in_a_sorted_row() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(20, 30)).astype(np.float32)  # many ties
    columns = np.stack([rng.choice(30, size=5, replace=False) for _ in range(20)])
    got = mid_ranks(scores, columns)
    for row in range(20):
        ordered = sorted(range(30), key=lambda c: -scores[row, c])
        for j, column in enumerate(columns[row]):
            block = [i + 1 for i, c in enumerate(ordered) if scores[row, c] == scores[row, column]]
            assert got[row, j] == sum(block) / len(block)
