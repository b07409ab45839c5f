"""Exact inner-product search with bounded memory and reproducible tie order.

Scores are computed one (query chunk x corpus chunk) block at a time, so memory stays bounded
whatever the corpus size; the running top-k is merged block by block. Equal scores are ordered
by corpus position, lower first, so the same vectors always give the same ranking.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from harness.definitions.protocols import Ranking

#: Scores held at once: query_chunk x corpus_chunk float32 values (64 MiB by default).
DEFAULT_BLOCK = 1 << 24


def rank_descending(scores: np.ndarray) -> np.ndarray:
    """Full ranking of each row, best first, ties by column (lower first)."""
    return np.argsort(-scores, axis=1, kind="stable")


def ranks_of(scores: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """1-based rank of selected columns in each row's descending order (ties by column, lower
    first), without sorting the row: count the better columns. ``columns`` may be padded with -1,
    whose rank is +inf.

    For a few targets among many candidates this is much cheaper than a full argsort.
    """
    rows = np.arange(len(scores))[:, None]
    valid = columns >= 0
    safe = np.where(valid, columns, 0)
    target_scores = scores[rows, safe][:, :, None]
    better = (scores[:, None, :] > target_scores).sum(axis=2)
    before = np.arange(scores.shape[1])[None, None, :] < safe[:, :, None]
    tied_before = ((scores[:, None, :] == target_scores) & before).sum(axis=2)
    return np.where(valid, better + tied_before + 1, np.inf)


def top_k(scores: np.ndarray, k: int, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best columns of each row (as ``offset + column``) and their scores, best first.

    Ties are ordered by column, and a tie that straddles the k-th place keeps the lowest columns.
    """
    n_rows, n_cols = scores.shape
    if k >= n_cols:
        order = rank_descending(scores)
        return order + offset, np.take_along_axis(scores, order, axis=1)
    kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1 : k]
    chosen = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    straddling = np.flatnonzero((scores >= kth).sum(axis=1) > k)
    for row in straddling:  # rare for real-valued scores; exact and deterministic when it happens
        candidates = np.flatnonzero(scores[row] >= kth[row, 0])
        chosen[row] = candidates[np.argsort(-scores[row, candidates], kind="stable")[:k]]
    chosen_scores = np.take_along_axis(scores, chosen, axis=1)
    order = np.lexsort((chosen, -chosen_scores), axis=1)
    chosen = np.take_along_axis(chosen, order, axis=1)
    return chosen + offset, np.take_along_axis(chosen_scores, order, axis=1)


def merge_top_k(
    best: tuple[np.ndarray, np.ndarray] | None, new: tuple[np.ndarray, np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Merge two (indices, scores) top lists into one of length ``k``, same tie order."""
    if best is None:
        return new
    indices = np.concatenate([best[0], new[0]], axis=1)
    scores = np.concatenate([best[1], new[1]], axis=1)
    order = np.lexsort((indices, -scores), axis=1)[:, :k]
    return np.take_along_axis(indices, order, axis=1), np.take_along_axis(scores, order, axis=1)


def exact_search(
    queries: np.ndarray,
    corpus: np.ndarray,
    k: int | None,
    *,
    block: int = DEFAULT_BLOCK,
    progress: Callable[[int], None] | None = None,
) -> Ranking:
    """Rank ``corpus`` rows by inner product with each query row; ``k=None`` ranks everything."""
    n_queries, n_docs = len(queries), len(corpus)
    full = k is None or k >= n_docs
    k_eff = n_docs if full or k is None else int(k)
    if full:
        query_chunk = max(1, block // max(n_docs, 1))
        corpus_chunk = n_docs
    else:
        corpus_chunk = max(1, min(n_docs, block // 256))
        query_chunk = max(1, min(n_queries, block // max(corpus_chunk, 1)))
    out_idx = np.empty((n_queries, k_eff), dtype=np.int64)
    out_scores = np.empty((n_queries, k_eff), dtype=np.float32)
    for q0 in range(0, n_queries, query_chunk):
        q = queries[q0 : q0 + query_chunk]
        best: tuple[np.ndarray, np.ndarray] | None = None
        for d0 in range(0, n_docs, corpus_chunk):
            block_scores = q @ corpus[d0 : d0 + corpus_chunk].T
            best = merge_top_k(best, top_k(block_scores, k_eff, offset=d0), k_eff)
        if best is not None:
            out_idx[q0 : q0 + len(q)], out_scores[q0 : q0 + len(q)] = best
        if progress is not None:
            progress(len(q))
    return Ranking(out_idx, out_scores)
