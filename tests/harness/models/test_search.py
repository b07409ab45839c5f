"""Exact search returns the same ranking however the work is chunked, with ties by position."""

from __future__ import annotations

import numpy as np
import pytest

from harness.models.search import exact_search, merge_top_k, top_k


def reference_order(scores: np.ndarray) -> np.ndarray:
    """Score descending, then column ascending, computed the slow obvious way."""
    return np.array([sorted(range(len(row)), key=lambda j: (-row[j], j)) for row in scores])


@pytest.mark.parametrize("k", [1, 3, 7, 20])
def test_top_k_orders_ties_by_position(k: int) -> None:
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(30, 20)).astype(np.float32)  # many ties, also across the k-th place
    indices, values = top_k(scores, k)
    expected = reference_order(scores)[:, :k]
    assert np.array_equal(indices, expected)
    assert np.array_equal(values, np.take_along_axis(scores, expected, axis=1))


def test_merge_keeps_the_global_top_k() -> None:
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 5, size=(8, 40)).astype(np.float32)
    merged = None
    for start in range(0, 40, 7):
        merged = merge_top_k(merged, top_k(scores[:, start : start + 7], 5, offset=start), 5)
    assert np.array_equal(merged[0], reference_order(scores)[:, :5])


@pytest.mark.parametrize("k", [None, 4])
def test_exact_search_is_independent_of_block_size(k: int | None) -> None:
    rng = np.random.default_rng(2)
    queries = rng.normal(size=(13, 8)).astype(np.float32)
    corpus = np.round(rng.normal(size=(50, 8)), 1).astype(np.float32)
    expected = reference_order(queries @ corpus.T)
    if k is not None:
        expected = expected[:, :k]
    for block in (1, 37, 1 << 20):
        ranking = exact_search(queries, corpus, k, block=block)
        assert np.array_equal(ranking.indices, expected), block
