"""Compiled loops of the BM25 index: the per-block score bounds written at build time, and exact
top-k search with dynamic pruning (MaxScore with block-max bounds), queries spread over threads.

Why numba: the search walks several posting lists at once, one posting at a time, with branches
that depend on each posting (Turtle and Flood's MaxScore, as Lucene's and PISA's query
processors do it); numpy's whole-array operations cannot skip, and a Python loop runs a few
hundred thousand postings a second where this needs a few hundred million. numba compiles these
loops from Python at first use (cached on disk afterwards), releases the GIL and runs ``prange``
over queries on every core, from a wheel on PyPI for this numpy; Cython or a Rust extension
would need a compiler at install time or a wheel of our own for every platform, for the same
machine code. ``fastmath`` stays off: every weight and sum is the IEEE operation numpy and
rank-bm25 perform, in their order, so the scores are rank-bm25's bit for bit.

Exactness. A posting's weight is ``idf * (tf * (k1 + 1) / (tf + norm))``, rank-bm25's
expression; a document's score adds its query tokens' weights in the query's token order
(repeated tokens again), starting from 0.0, as rank-bm25's ``get_scores`` does. The bounds (a
term's largest weight, and each block of :data:`harness_bm25.index.BLOCK` postings' largest) are
maxima of those same weights, so a document's true score never exceeds the sum of its terms'
bounds in exact arithmetic; float sums in another order differ from it by a few units in the
last place, so every bound is compared after multiplying by :data:`SLACK` (1 + 1e-9, far above
the rounding of sums of fewer than a million terms): pruning may examine a document it could
have skipped, never skip one that belongs in the top k. Documents are visited in increasing
position, and equal scores rank by position (lower first), so a document enters a full top k
only with a score strictly above the k-th: a bound equal to the k-th score prunes.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Bounds are compared after this factor (see the module docstring): covers float rounding.
SLACK = 1.0 + 1e-9
_NO_DOC = np.iinfo(np.int64).max


@njit(nogil=True, cache=True)
def block_bounds(indptr: np.ndarray, docs: np.ndarray, tfs: np.ndarray, idf: np.ndarray, norms: np.ndarray,
                 k1: float, block: int, block_max: np.ndarray, block_last: np.ndarray,
                 term_max: np.ndarray) -> None:
    """Per block of ``block`` postings of each term (``indptr`` relative to ``docs``; the terms'
    blocks one after the other in ``block_max``/``block_last``), the largest weight and the last
    document; per term, its largest weight."""
    k1p1 = k1 + 1.0
    out = 0
    for t in range(len(indptr) - 1):
        best_term = 0.0
        for start in range(indptr[t], indptr[t + 1], block):
            stop = min(start + block, indptr[t + 1])
            best = -np.inf
            for p in range(start, stop):
                tf = float(tfs[p])
                weight = idf[t] * (tf * k1p1 / (tf + norms[docs[p]]))
                best = max(best, weight)
            block_max[out] = best
            block_last[out] = docs[stop - 1]
            best_term = best if start == indptr[t] else max(best_term, best)
            out += 1
        term_max[t] = best_term


@njit(nogil=True, cache=True, inline="always")
def _worse(score_a: float, doc_a: int, score_b: float, doc_b: int) -> bool:
    """Whether (score_a, doc_a) ranks below (score_b, doc_b): lower score, or equal and later."""
    return score_a < score_b or (score_a == score_b and doc_a > doc_b)


@njit(nogil=True, cache=True)
def _sift_down(scores: np.ndarray, docs: np.ndarray, n: int, i: int) -> None:
    """Restore the heap (worst entry at the root) below position ``i``."""
    while True:
        child = 2 * i + 1
        if child >= n:
            return
        if child + 1 < n and _worse(scores[child + 1], docs[child + 1], scores[child], docs[child]):
            child += 1
        if not _worse(scores[child], docs[child], scores[i], docs[i]):
            return
        scores[i], scores[child] = scores[child], scores[i]
        docs[i], docs[child] = docs[child], docs[i]
        i = child


@njit(nogil=True, cache=True)
def _push(scores: np.ndarray, docs: np.ndarray, n: int, score: float, doc: int) -> None:
    """Add an entry to a heap of ``n`` entries (room for it)."""
    i = n
    scores[i], docs[i] = score, doc
    while i > 0:
        parent = (i - 1) // 2
        if not _worse(scores[i], docs[i], scores[parent], docs[parent]):
            return
        scores[i], scores[parent] = scores[parent], scores[i]
        docs[i], docs[parent] = docs[parent], docs[i]
        i = parent


@njit(nogil=True, cache=True)
def _next_block(block_last: np.ndarray, b: int, end: int, doc: int) -> int:
    """The first block from ``b`` on (before ``end``) whose last document is ``doc`` or later,
    or ``end``: galloping, then bisection, so a long list skipped far costs a few reads."""
    if block_last[b] >= doc:
        return b
    step = 1
    lo = b  # block_last[lo] < doc
    hi = b + 1
    while hi < end and block_last[hi] < doc:
        lo = hi
        step *= 2
        hi = lo + step
    hi = min(hi, end)
    while hi - lo > 1:  # block_last[lo] < doc <= block_last[hi] (or hi == end)
        mid = (lo + hi) // 2
        if block_last[mid] < doc:
            lo = mid
        else:
            hi = mid
    return hi


@njit(nogil=True, cache=True)
def _top_k(terms: np.ndarray, mult: np.ndarray, tokens: np.ndarray, k: int, indptr: np.ndarray,
           bptr: np.ndarray, indices: np.ndarray, counts: np.ndarray, block_max: np.ndarray,
           block_last: np.ndarray, term_max: np.ndarray, idf: np.ndarray, norms: np.ndarray, k1: float,
           block: int, out_docs: np.ndarray, out_scores: np.ndarray) -> int:
    """One query's top k (documents and scores, best first) by MaxScore over the distinct
    ``terms`` (``mult``: how often each occurs in the query; ``tokens``: the query's tokens as
    positions in ``terms``, in order). Every idf must be > 0, so that exactly the documents holding
    a query term score above 0. Returns how many documents score above 0 (at most k)."""
    m = len(terms)
    k1p1 = k1 + 1.0
    bound = np.empty(m)
    for u in range(m):
        bound[u] = mult[u] * term_max[terms[u]]
    order = np.argsort(bound)  # ascending: the first ``essential`` terms are the non-essential ones
    below = np.empty(m)  # below[i]: bound on the sum of the terms order[0..i]
    total = 0.0
    for i in range(m):
        total += bound[order[i]]
        below[i] = total
    cursor = np.empty(m, dtype=np.int64)
    for u in range(m):
        cursor[u] = indptr[terms[u]]
    weight = np.zeros(m)
    heap_scores = np.empty(k)
    heap_docs = np.empty(k, dtype=np.int64)
    n = 0
    threshold = -np.inf  # the k-th score once k documents are held; a document needs more
    essential = 0  # order[:essential] cannot lift a document past the threshold on their own
    while True:
        doc = _NO_DOC
        for i in range(essential, m):
            u = order[i]
            c = cursor[u]
            if c < indptr[terms[u] + 1] and indices[c] < doc:
                doc = indices[c]
        if doc == _NO_DOC:
            break
        estimate = 0.0
        for i in range(essential, m):
            u = order[i]
            c = cursor[u]
            weight[u] = 0.0
            if c < indptr[terms[u] + 1] and indices[c] == doc:
                tf = float(counts[c])
                weight[u] = idf[terms[u]] * (tf * k1p1 / (tf + norms[doc]))
                estimate += mult[u] * weight[u]
                cursor[u] = c + 1
        pruned = False
        for i in range(essential - 1, -1, -1):
            u = order[i]
            weight[u] = 0.0
        for i in range(essential - 1, -1, -1):
            if (estimate + below[i]) * SLACK <= threshold:
                pruned = True
                break
            u = order[i]
            t = terms[u]
            c = cursor[u]
            end = indptr[t + 1]
            if c >= end or indices[c] > doc:
                continue
            if indices[c] < doc:
                b = _next_block(block_last, bptr[t] + (c - indptr[t]) // block, bptr[t + 1], doc)
                if b == bptr[t + 1]:
                    cursor[u] = end
                    continue
                c = max(c, indptr[t] + (b - bptr[t]) * block)
                rest = below[i - 1] if i > 0 else 0.0
                if (estimate + mult[u] * block_max[b] + rest) * SLACK <= threshold:
                    cursor[u] = c
                    pruned = True
                    break
                while indices[c] < doc:  # stops within block b, whose last document is >= doc
                    c += 1
                cursor[u] = c
            if indices[c] == doc:
                tf = float(counts[c])
                weight[u] = idf[t] * (tf * k1p1 / (tf + norms[doc]))
                estimate += mult[u] * weight[u]
        if pruned:
            continue
        score = 0.0
        for p in range(len(tokens)):  # rank-bm25's sum: query order, from 0.0
            score += weight[tokens[p]]
        if n < k:
            _push(heap_scores, heap_docs, n, score, doc)
            n += 1
        elif score > threshold:
            heap_scores[0], heap_docs[0] = score, doc
            _sift_down(heap_scores, heap_docs, n, 0)
        else:
            continue
        if n == k:
            threshold = heap_scores[0]
            while essential < m and below[essential] * SLACK <= threshold:
                essential += 1
    ranked = np.argsort(heap_docs[:n])  # by position, then stable by score descending
    ranked = ranked[np.argsort(-heap_scores[:n][ranked], kind="mergesort")]
    for i in range(n):
        out_docs[i] = heap_docs[ranked[i]]
        out_scores[i] = heap_scores[ranked[i]]
    return n


@njit(nogil=True, cache=True, parallel=True)
def top_k_batch(query_ptr: np.ndarray, terms: np.ndarray, mult: np.ndarray, token_ptr: np.ndarray,
                tokens: np.ndarray, k: int, indptr: np.ndarray, bptr: np.ndarray, indices: np.ndarray,
                counts: np.ndarray, block_max: np.ndarray, block_last: np.ndarray, term_max: np.ndarray,
                idf: np.ndarray, norms: np.ndarray, k1: float, block: int, out_docs: np.ndarray,
                out_scores: np.ndarray) -> None:
    """Each query's top k, queries spread over numba's threads. Query q's distinct terms are
    ``terms[query_ptr[q]:query_ptr[q + 1]]`` (with ``mult``), its tokens
    ``tokens[token_ptr[q]:token_ptr[q + 1]]``. Where fewer than k documents hold a query term,
    the rest of the row is the first documents that hold none, by position, with score 0.0 (as
    a stable sort of every score ranks them)."""
    for q in prange(len(query_ptr) - 1):
        lo, hi = query_ptr[q], query_ptr[q + 1]
        n = _top_k(terms[lo:hi], mult[lo:hi], tokens[token_ptr[q]:token_ptr[q + 1]], k, indptr, bptr, indices,
                   counts, block_max, block_last, term_max, idf, norms, k1, block, out_docs[q], out_scores[q])
        if n < k:
            held = np.sort(out_docs[q, :n])
            doc, i, j = 0, n, 0
            while i < k:
                if j < n and held[j] == doc:
                    j += 1
                else:
                    out_docs[q, i] = doc
                    out_scores[q, i] = 0.0
                    i += 1
                doc += 1
