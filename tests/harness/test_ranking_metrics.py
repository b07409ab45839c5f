"""Vectorised AP equals the official per-question loop (XTREME-R utils_lareqa.average_precision_at_k)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.metrics.ranking import NOT_RETRIEVED, average_precision


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
