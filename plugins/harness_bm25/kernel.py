"""Compiled loops of the BM25 index: the per-block score bounds and per-posting impacts written at
build time, and exact top-k search, queries spread over threads: with dynamic pruning (MaxScore
with block-max bounds) for queries of rare words, by integer impact sums and exact scores of the
few passages they leave in doubt for the others.

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

import os

import numba
import numpy as np
from numba import njit, prange
from numba.np.ufunc import get_thread_id  # numba's own package does not re-export it to a type checker

# A fork-safe thread pool, unless the user chose one: numba prefers GNU OpenMP where torch's
# libgomp is present, and a process forked after a search (multiprocessing's default on Linux)
# then dies at its first search ("fork() called from a process already using GNU OpenMP").
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "forksafe"  # type: ignore[attr-defined]  # set at run time

#: Bounds are compared after this factor (see the module docstring): covers float rounding.
SLACK = 1.0 + 1e-9
_NO_DOC = np.iinfo(np.int64).max


@njit(nogil=True, cache=True)
def block_bounds(
    indptr: np.ndarray,
    docs: np.ndarray,
    tfs: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    step: float,
    block_max: np.ndarray,
    block_last: np.ndarray,
    term_max: np.ndarray,
    impacts: np.ndarray,
) -> None:
    """Per block of ``block`` postings of each term (``indptr`` relative to ``docs``; the terms'
    blocks one after the other in ``block_max``/``block_last``), the largest weight and the last
    document; per term, its largest weight; per posting, its impact: the fewest whole steps
    that add up to more than its weight, ``floor(weight / step) + 1`` (see :func:`_exact_in_spans`)."""
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
                impacts[p] = min(max(np.floor(weight / step) + 1.0, 0.0), 65535.0)
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
def _partition(bound: np.ndarray, order: np.ndarray, below: np.ndarray) -> None:
    """``order``: the terms by ascending ``bound``; ``below[i]``: the sum of the bounds of
    ``order[0..i]`` (what those terms can add to a document together). An insertion sort in
    place: a query has a few terms, and this runs once a window."""
    for i in range(len(bound)):
        j = i
        while j > 0 and bound[order[j - 1]] > bound[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    total = 0.0
    for i in range(len(bound)):
        total += bound[order[i]]
        below[i] = total


@njit(nogil=True, cache=True)
def _past(indices: np.ndarray, lo: int, hi: int, doc: int) -> int:
    """The first posting in ``lo`` to ``hi`` whose document is after ``doc`` (``hi`` if none), by
    bisection: postings are in document order."""
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] <= doc:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True)
def _gallop(indices: np.ndarray, lo: int, hi: int, doc: int) -> int:
    """:func:`_past` for a target near ``lo``: steps of 1, 2, 4, ... until one passes ``doc``,
    then bisection within the last step (reads stay close to ``lo`` when the target is)."""
    step = 1
    while lo + step <= hi and indices[lo + step - 1] <= doc:
        lo += step
        step *= 2
    return _past(indices, lo, min(hi, lo + step), doc)


@njit(nogil=True, cache=True)
def _weight_of(
    t: int,
    doc: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    block_last: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1p1: float,
    block: int,
) -> float:
    """Term ``t``'s weight in ``doc`` (0.0 if absent), found by bisection over its blocks' last
    documents, then within the block."""
    b = _next_block(block_last, bptr[t], bptr[t + 1], doc)
    if b == bptr[t + 1]:
        return 0.0
    first = indptr[t] + (b - bptr[t]) * block
    c = _past(indices, first, min(indptr[t + 1], first + block), doc - 1)
    if c == indptr[t + 1] or indices[c] != doc:
        return 0.0
    tf = float(counts[c])
    return float(idf[t] * (tf * k1p1 / (tf + norms[doc])))


@njit(nogil=True, cache=True)
def _seed(
    terms: np.ndarray,
    tokens: np.ndarray,
    k: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    block_last: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    seed: int,
) -> float:
    """A score the query's k-th best document reaches: the k-th best exact score among up to
    ``seed`` documents likely to score high (-inf if fewer than k are scored). Documents are
    visited in position order, so without it the threshold stays low until k documents holding
    the rare terms together have gone by, and the frequent terms' postings before them are all
    read. The likely ones: those of the shortest list that also hold the second shortest's term
    (looked for among the first ``16 * seed`` of the shortest list), then, while fewer than k,
    the first of the shortest list."""
    m = len(terms)
    if m == 0:
        return -np.inf
    first, second = 0, -1
    for u in range(1, m):
        if indptr[terms[u] + 1] - indptr[terms[u]] < indptr[terms[first] + 1] - indptr[terms[first]]:
            first = u
    for u in range(m):
        if u != first and (
            second < 0 or indptr[terms[u] + 1] - indptr[terms[u]] < indptr[terms[second] + 1] - indptr[terms[second]]
        ):
            second = u
    lo, hi = indptr[terms[first]], indptr[terms[first] + 1]
    chosen = np.empty(min(seed, hi - lo), dtype=np.int64)
    n = 0
    if second >= 0:
        t = terms[second]
        b = bptr[t]
        for c in range(lo, min(hi, lo + 16 * seed)):
            if n == len(chosen):
                break
            doc = indices[c]
            b = _next_block(block_last, b, bptr[t + 1], doc)
            if b == bptr[t + 1]:
                break
            start = indptr[t] + (b - bptr[t]) * block
            at = _past(indices, start, min(indptr[t + 1], start + block), doc - 1)
            if at < indptr[t + 1] and indices[at] == doc:
                chosen[n] = doc
                n += 1
    if n < k:  # too few together: the first documents of the shortest list instead
        n = len(chosen)
        chosen[:] = indices[lo : lo + n]
    if n < k:
        return -np.inf
    k1p1 = k1 + 1.0
    weight = np.empty(m)
    scores = np.empty(n)
    for i in range(n):
        for u in range(m):
            weight[u] = _weight_of(
                terms[u], chosen[i], indptr, bptr, indices, counts, block_last, idf, norms, k1p1, block
            )
        score = 0.0
        for p in range(len(tokens)):
            score += weight[tokens[p]]
        scores[i] = score
    return float(np.sort(scores)[n - k])


@njit(nogil=True, cache=True)
def _top_k(
    terms: np.ndarray,
    mult: np.ndarray,
    tokens: np.ndarray,
    k: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    block_max: np.ndarray,
    block_last: np.ndarray,
    term_max: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    seed: int,
    out_docs: np.ndarray,
    out_scores: np.ndarray,
) -> int:
    """One query's top k (documents and scores, best first) over the distinct ``terms``
    (``mult``: how often each occurs in the query; ``tokens``: the query's tokens as positions in
    ``terms``, in order). Every idf must be > 0, so that exactly the documents holding a query
    term score above 0. Returns how many documents score above 0 (at most k).

    MaxScore in windows of documents, as Lucene's MaxScoreBulkScorer does: once k documents are
    held, the terms whose bounds add up to no more than the k-th score are non-essential (a
    document holding only those cannot enter), and documents are visited only where an
    essential term has a posting. Each window ends where the first of the terms' current blocks
    ends, so within it each term's bound is its block's largest weight: a window whose bounds
    add up to no more than the k-th score is skipped whole, and within the others the terms are
    split again by those tighter bounds; non-essential terms are looked up for a document only
    while the bounds of those not yet looked up could still lift it past the k-th score."""
    m = len(terms)
    k1p1 = k1 + 1.0
    end = np.empty(m, dtype=np.int64)
    cursor = np.empty(m, dtype=np.int64)
    current = np.empty(m, dtype=np.int64)  # each term's current block
    block_end = np.empty(m, dtype=np.int64)  # where it ends (a posting position)
    by_doc = np.empty(m, dtype=np.int64)
    bound = np.empty(m)
    for u in range(m):
        cursor[u] = indptr[terms[u]]
        end[u] = indptr[terms[u] + 1]
        current[u] = bptr[terms[u]]
        bound[u] = mult[u] * term_max[terms[u]]
    order = np.empty(m, dtype=np.int64)
    below = np.empty(m)
    _partition(bound, order, below)
    window_order = np.empty(m, dtype=np.int64)
    window_below = np.empty(m)
    weight = np.zeros(m)
    heap_scores = np.empty(k)
    heap_docs = np.empty(k, dtype=np.int64)
    n = 0
    # A document must score above the k-th score once k are held (a later document that ties
    # ranks below), or reach the seed's score: bounds are compared with the larger.
    seeded = np.nextafter(
        _seed(terms, tokens, k, indptr, bptr, indices, counts, block_last, idf, norms, k1, block, seed), -np.inf
    )
    threshold = seeded
    essential = 0  # order[:essential] cannot lift a document past the threshold on their own
    while essential < m and below[essential] * SLACK <= threshold:
        essential += 1
    while True:
        lo = _NO_DOC  # the window's first document: the next posting of an essential term
        for i in range(essential, m):
            u = order[i]
            if cursor[u] < end[u] and indices[cursor[u]] < lo:
                lo = indices[cursor[u]]
        if lo == _NO_DOC:
            break
        hi = _NO_DOC  # the window's last document: where the first current block ends
        for u in range(m):
            bound[u] = 0.0
            if cursor[u] >= end[u]:
                continue
            t = terms[u]
            b = _next_block(block_last, current[u], bptr[t + 1], lo)
            current[u] = b
            if b == bptr[t + 1]:
                cursor[u] = end[u]
                continue
            block_end[u] = min(end[u], indptr[t] + (b - bptr[t] + 1) * block)
            # Documents before lo hold no essential term: they cannot enter.
            cursor[u] = _past(indices, max(cursor[u], indptr[t] + (b - bptr[t]) * block), block_end[u], lo - 1)
            bound[u] = mult[u] * block_max[b]
            hi = min(hi, block_last[b])
        _partition(bound, window_order, window_below)
        window_essential = 0
        while window_essential < m and window_below[window_essential] * SLACK <= threshold:
            window_essential += 1
        while window_essential < m:
            # The next document worth a look (block-max WAND's pivot): the first, in document
            # order, where the window bounds of the terms at or before it could lift a document
            # past the threshold. The terms before it skip to it unread.
            live = 0
            for u in range(m):
                if cursor[u] < end[u] and indices[cursor[u]] <= hi:
                    j = live
                    while j > 0 and indices[cursor[by_doc[j - 1]]] > indices[cursor[u]]:
                        by_doc[j] = by_doc[j - 1]
                        j -= 1
                    by_doc[j] = u
                    live += 1
            reach = 0.0
            doc = _NO_DOC
            for j in range(live):
                reach += bound[by_doc[j]]
                if reach * SLACK > threshold:
                    doc = indices[cursor[by_doc[j]]]
                    break
            if doc == _NO_DOC:
                break  # nothing left in this window can enter
            for j in range(live):
                u = by_doc[j]
                if indices[cursor[u]] >= doc:
                    break
                cursor[u] = _past(indices, cursor[u], block_end[u], doc - 1)
            estimate = 0.0
            for i in range(window_essential, m):
                u = window_order[i]
                c = cursor[u]
                weight[u] = 0.0
                if c < end[u] and indices[c] == doc:
                    tf = float(counts[c])
                    weight[u] = idf[terms[u]] * (tf * k1p1 / (tf + norms[doc]))
                    estimate += mult[u] * weight[u]
                    cursor[u] = c + 1
            for i in range(window_essential):
                weight[window_order[i]] = 0.0
            pruned = False
            for i in range(window_essential - 1, -1, -1):
                if (estimate + window_below[i]) * SLACK <= threshold:
                    pruned = True
                    break
                u = window_order[i]
                c = cursor[u]
                while c < end[u] and indices[c] < doc:  # within the term's current block
                    c += 1
                cursor[u] = c
                if c < end[u] and indices[c] == doc:
                    tf = float(counts[c])
                    weight[u] = idf[terms[u]] * (tf * k1p1 / (tf + norms[doc]))
                    estimate += mult[u] * weight[u]
            if pruned:
                continue
            score = 0.0
            for p in range(len(tokens)):  # rank-bm25's sum: query order, from 0.0
                score += weight[tokens[p]]
            if n < k:
                _push(heap_scores, heap_docs, n, score, doc)
                n += 1
            elif score > heap_scores[0]:
                heap_scores[0], heap_docs[0] = score, doc
                _sift_down(heap_scores, heap_docs, n, 0)
            else:
                continue
            if n == k:
                threshold = max(seeded, heap_scores[0])
                while window_essential < m and window_below[window_essential] * SLACK <= threshold:
                    window_essential += 1
                while essential < m and below[essential] * SLACK <= threshold:
                    essential += 1
        for u in range(m):  # past the window, within the current block (a skipped window's postings are never read)
            if cursor[u] < end[u]:
                cursor[u] = _past(indices, cursor[u], block_end[u], hi)
    ranked = np.argsort(heap_docs[:n])  # by position, then stable by score descending
    ranked = ranked[np.argsort(-heap_scores[:n][ranked], kind="mergesort")]
    for i in range(n):
        out_docs[i] = heap_docs[ranked[i]]
        out_scores[i] = heap_scores[ranked[i]]
    return n


@njit(nogil=True, cache=True, parallel=True)
def impact_sums(
    query_ptr: np.ndarray,
    terms: np.ndarray,
    token_ptr: np.ndarray,
    tokens: np.ndarray,
    rows: np.ndarray,
    cursor: np.ndarray,
    lo: int,
    hi: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    impacts: np.ndarray,
    dense_rows: np.ndarray,
    passages: int,
    span: int,
    sums: np.ndarray,
    spans: np.ndarray,
) -> None:
    """The first pass of the impacts search, over passages ``lo`` to ``hi`` (a chunk; ``lo`` a
    multiple of ``span``), queries spread over numba's threads: every posting's impact (its
    weight in whole steps, rounded up: see :func:`block_bounds`) in the chunk is added into the
    thread's row of ``sums`` (zeros, a chunk long, left zeroed), a term with a dense row
    (``rows[u]`` >= 0: its impacts for every passage, row ``rows[u]`` of ``dense_rows``) a whole
    slice at a time, and each span of ``span`` passages' largest sum goes to ``spans[q]``.
    ``cursor[p]``: where token p's postings stand (the chunk's end on return). Queries as in
    :func:`top_k_batch`; integers add exactly and in any order, so the chunks change no sum."""
    n = hi - lo
    whole = n // span
    first = lo // span
    for q in prange(len(query_ptr) - 1):
        own = sums[get_thread_id()]
        for p in range(token_ptr[q], token_ptr[q + 1]):
            u = query_ptr[q] + tokens[p]
            if rows[u] >= 0:
                row = dense_rows[rows[u] * passages + lo : rows[u] * passages + hi]
                for i in range(n):
                    own[i] += row[i]
            else:
                end = indptr[terms[u] + 1]
                stop = end if hi == passages else _past(indices, cursor[p], end, hi - 1)
                for c in range(cursor[p], stop):  # a counted loop: no test of each posting's document
                    own[indices[c] - lo] += impacts[c]
                cursor[p] = stop
        # Whole-slice maxima and one fill, not a loop testing and zeroing each sum: these compile to
        # vector instructions, 0.11 ns a sum against 0.63 for the loop (its maximum kept in a wider
        # integer than the sums) on the AVX-512 machine, which was half of a search's time at 21 M.
        for s in range(whole):
            spans[q, first + s] = own[s * span : (s + 1) * span].max()
        if whole * span < n:
            spans[q, first + whole] = own[whole * span : n].max()
        own[:n] = 0


@njit(nogil=True, cache=True)
def _exact_in_spans(
    terms: np.ndarray,
    tokens: np.ndarray,
    rows: np.ndarray,
    k: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    impacts: np.ndarray,
    dense_rows: np.ndarray,
    block_last: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    span: int,
    spans: np.ndarray,
    out_docs: np.ndarray,
    out_scores: np.ndarray,
) -> int:
    """The same top k as :func:`_top_k`, from a query's spans' largest impact sums
    (:func:`impact_sums`): only the passages whose sums could still reach the top k are scored
    exactly, in rank-bm25's arithmetic and order. Why it is exact: a passage's impact sum A over
    the query's m tokens bounds its score S by step * (A - m) <= S <= step * A, so the k
    passages of largest sums all score at least step * (A_k - m), where A_k is the k-th largest
    sum, and a passage can only rank among the k best (ties included) if its own sum is at least
    A_k - m; one step more covers the float rounding of a sum of m weights, far below a step.
    The k-th largest of the spans' maxima is at most A_k (k passages in distinct spans reach
    it), which leaves a few more passages to score, never one fewer; a span whose largest is
    below the floor is not read again, and the others' sums are added again, span by span."""
    passages = len(norms)
    # A sum of 0: no query term (scores 0, the caller's fill).
    reached = np.partition(spans, len(spans) - k)[len(spans) - k] if len(spans) >= k else 0
    floor = max(1, int(reached) - len(tokens) - 1)
    k1p1 = k1 + 1.0
    weight = np.empty(len(terms))
    local = np.empty(span, dtype=np.int64)
    cursor = np.empty(len(tokens), dtype=np.int64)  # each token's postings, past the spans read
    for p in range(len(tokens)):
        cursor[p] = indptr[terms[tokens[p]]]
    heap_scores = np.empty(k)
    heap_docs = np.empty(k, dtype=np.int64)
    n = 0
    for s in range(len(spans)):
        if spans[s] < floor:
            continue
        start, stop = s * span, min(passages, (s + 1) * span)
        local[:] = 0
        for p in range(len(tokens)):
            u = tokens[p]
            if rows[u] >= 0:
                for doc in range(start, stop):
                    local[doc - start] += dense_rows[rows[u] * passages + doc]
            else:
                t = terms[u]
                c = _gallop(indices, cursor[p], indptr[t + 1], start - 1)  # spans come in order
                while c < indptr[t + 1] and indices[c] < stop:
                    local[indices[c] - start] += impacts[c]
                    c += 1
                cursor[p] = c
        for doc in range(start, stop):
            if local[doc - start] < floor:
                continue
            for u in range(len(terms)):
                weight[u] = _weight_of(
                    terms[u], doc, indptr, bptr, indices, counts, block_last, idf, norms, k1p1, block
                )
            score = 0.0
            for p in range(len(tokens)):  # rank-bm25's sum: query order, from 0.0
                score += weight[tokens[p]]
            if n < k:
                _push(heap_scores, heap_docs, n, score, doc)
                n += 1
            elif score > heap_scores[0]:
                heap_scores[0], heap_docs[0] = score, doc
                _sift_down(heap_scores, heap_docs, n, 0)
    ranked = np.argsort(heap_docs[:n])  # by position, then stable by score descending
    ranked = ranked[np.argsort(-heap_scores[:n][ranked], kind="mergesort")]
    for i in range(n):
        out_docs[i] = heap_docs[ranked[i]]
        out_scores[i] = heap_scores[ranked[i]]
    return n


@njit(nogil=True, cache=True)
def _fill(out_docs: np.ndarray, out_scores: np.ndarray, n: int) -> None:
    """Where fewer than k documents hold a query term (``n`` found), the rest of the row: the
    first documents that hold none, by position, with score 0.0 (as a stable sort of every
    score ranks them)."""
    held = np.sort(out_docs[:n])
    doc, i, j = 0, n, 0
    while i < len(out_docs):
        if j < n and held[j] == doc:
            j += 1
        else:
            out_docs[i] = doc
            out_scores[i] = 0.0
            i += 1
        doc += 1


@njit(nogil=True, cache=True, parallel=True)
def impact_top_k(
    query_ptr: np.ndarray,
    terms: np.ndarray,
    token_ptr: np.ndarray,
    tokens: np.ndarray,
    rows: np.ndarray,
    k: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    impacts: np.ndarray,
    dense_rows: np.ndarray,
    block_last: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    span: int,
    spans: np.ndarray,
    first: int,
    last: int,
    out_docs: np.ndarray,
    out_scores: np.ndarray,
) -> None:
    """The second pass of the impacts search: the top k of queries ``first`` to ``last`` from
    their spans (:func:`_exact_in_spans`), queries spread over numba's threads."""
    for q in prange(first, last):
        lo, hi = query_ptr[q], query_ptr[q + 1]
        n = _exact_in_spans(
            terms[lo:hi],
            tokens[token_ptr[q] : token_ptr[q + 1]],
            rows[lo:hi],
            k,
            indptr,
            bptr,
            indices,
            counts,
            impacts,
            dense_rows,
            block_last,
            idf,
            norms,
            k1,
            block,
            span,
            spans[q],
            out_docs[q],
            out_scores[q],
        )
        if n < k:
            _fill(out_docs[q], out_scores[q], n)


@njit(nogil=True, cache=True, parallel=True)
def top_k_batch(
    query_ptr: np.ndarray,
    terms: np.ndarray,
    mult: np.ndarray,
    token_ptr: np.ndarray,
    tokens: np.ndarray,
    k: int,
    indptr: np.ndarray,
    bptr: np.ndarray,
    indices: np.ndarray,
    counts: np.ndarray,
    block_max: np.ndarray,
    block_last: np.ndarray,
    term_max: np.ndarray,
    idf: np.ndarray,
    norms: np.ndarray,
    k1: float,
    block: int,
    seed: int,
    out_docs: np.ndarray,
    out_scores: np.ndarray,
) -> None:
    """Each query's top k by the pruned walk (:func:`_top_k`), queries spread over numba's
    threads. Query q's distinct terms are ``terms[query_ptr[q]:query_ptr[q + 1]]`` (with
    ``mult``), its tokens ``tokens[token_ptr[q]:token_ptr[q + 1]]`` (positions among its distinct
    terms). Rows with fewer than k documents are filled as :func:`_fill` says."""
    for q in prange(len(query_ptr) - 1):
        lo, hi = query_ptr[q], query_ptr[q + 1]
        n = _top_k(
            terms[lo:hi],
            mult[lo:hi],
            tokens[token_ptr[q] : token_ptr[q + 1]],
            k,
            indptr,
            bptr,
            indices,
            counts,
            block_max,
            block_last,
            term_max,
            idf,
            norms,
            k1,
            block,
            seed,
            out_docs[q],
            out_scores[q],
        )
        if n < k:
            _fill(out_docs[q], out_scores[q], n)
