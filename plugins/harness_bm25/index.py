"""BM25 with postings per term: a query touches only the documents that hold one of its terms.

Scores equal rank-bm25's ``BM25Okapi`` (the reference Python implementation): for each query
token (repeated tokens count again) ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
with ``idf = ln((N - n + 0.5) / (n + 0.5))``, and negative idfs replaced by
``epsilon * mean(idf)``. The weight of every (term, document) pair is precomputed once and stored
per term (a (vocabulary x documents) CSR matrix: the postings of a term are one contiguous slice
of document ids and weights), so scoring a query gathers the slices of its tokens and sums them
per document, in the query's token order as rank-bm25 does, and top-k search never holds a
(queries x documents) block.

Construction maps tokens to ids at C speed (``map`` over a dict whose ``__missing__`` numbers
new terms), a million at a time into a compact int32 array (4 bytes a token), then counts terms
per document and transposes to postings with scipy's compiled sparse routines: no Python loop
runs per token (only per document and per new term). An
index is saved as plain ``.npy`` arrays plus a JSON vocabulary (no pickle) and reloaded
memory-mapped.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from harness.errors import HarnessError
from harness.io import atomic_folder, parse_json
from harness.search import top_k

#: Bumped when the saved layout changes; an index of another format is rebuilt, never misread.
FORMAT = 1
_ARRAYS = ("data", "indices", "indptr")

#: A query whose postings number less than ``n_docs / SPARSE_SHARE`` is summed over the union of
#: its postings (a sort of that union); a longer one into a dense vector of all documents, which
#: then costs less than sorting.
SPARSE_SHARE = 8

#: Token ids converted to int32 at a time while building (a list of them costs 8 bytes an id).
_CHUNK = 1 << 20


class _Numbering(dict[str, int]):
    """A vocabulary that numbers a token the first time it is looked up, so mapping a document's
    tokens to ids is one ``map(numbering.__getitem__, tokens)`` run by the interpreter in C."""

    def __missing__(self, token: str) -> int:
        self[token] = number = len(self)
        return number


def _idf(doc_freq: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """Each term's idf (terms numbered in order of first appearance), bit for bit as rank-bm25
    computes it, so documents that tie there tie here: ``math.log`` (numpy's log differs from it
    in the last bit for some numbers), once per distinct document frequency; the mean for the
    floor summed left to right in term order, as rank-bm25 sums it, not pairwise as ``mean`` does."""
    freqs, of_term = np.unique(doc_freq, return_inverse=True)
    idf = np.array([math.log(n_docs - f + 0.5) - math.log(f + 0.5) for f in freqs.tolist()])[of_term]
    if len(idf):
        idf[idf < 0] = epsilon * (np.cumsum(idf)[-1] / len(idf))
    return idf


class BM25Index:
    """Term weights of a tokenised corpus: a (vocabulary x documents) CSR matrix."""

    def __init__(self, weights: sparse.csr_matrix, vocabulary: dict[str, int], parameters: dict[str, float]) -> None:
        self.weights = weights
        self.vocabulary = vocabulary
        self.n_docs = weights.shape[1]
        self.parameters = parameters

    @classmethod
    def build(cls, documents: Iterable[Sequence[str]], *, k1: float = 1.5, b: float = 0.75,
              epsilon: float = 0.25) -> BM25Index:
        """Index tokenised documents (any iterable, consumed once)."""
        vocabulary = _Numbering()
        tokens_ids = array("i")
        lengths = array("q")
        pending: list[int] = []  # ids go through a list: array.extend parses each int on its own
        for tokens in documents:
            pending += map(vocabulary.__getitem__, tokens)
            lengths.append(len(tokens))
            if len(pending) >= _CHUNK:
                tokens_ids.frombytes(np.array(pending, dtype=np.int32).tobytes())
                pending.clear()
        tokens_ids.frombytes(np.array(pending, dtype=np.int32).tobytes())
        del pending
        n_docs, n_terms = len(lengths), len(vocabulary)
        doc_lengths = np.frombuffer(lengths, dtype=np.int64)
        doc_starts = np.concatenate([[0], np.cumsum(doc_lengths)])
        # (documents x vocabulary) with a 1 per token. Its transpose by a stable counting sort
        # lists each term's documents in order, a document's repeats of the term side by side,
        # so summing those repeats (the term's count in the document) needs no sort.
        by_document = sparse.csr_matrix(
            (np.ones(len(tokens_ids), dtype=np.float32), np.frombuffer(tokens_ids, dtype=np.int32), doc_starts),
            shape=(n_docs, n_terms))
        del tokens_ids
        postings = by_document.tocsc()
        del by_document
        postings.sum_duplicates()
        weights = sparse.csr_matrix((postings.data.astype(np.float64), postings.indices, postings.indptr),
                                    shape=(n_terms, n_docs), copy=False)
        del postings
        idf = _idf(np.diff(weights.indptr), n_docs, epsilon)
        doc_lengths = doc_lengths.astype(np.float64)
        avgdl = doc_lengths.sum() / n_docs if n_docs else 0.0
        tf = weights.data
        # In place, in rank-bm25's operation order, so equal documents get bit-identical scores:
        # idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))).
        norm = doc_lengths[weights.indices]
        norm *= b
        norm /= avgdl
        norm += 1.0 - b
        norm *= k1
        norm += tf
        tf *= k1 + 1.0
        tf /= norm
        del norm
        tf *= np.repeat(idf, np.diff(weights.indptr))
        return cls(weights, dict(vocabulary), {"k1": k1, "b": b, "epsilon": epsilon})

    # -- scoring ------------------------------------------------------------------------------

    def _postings(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Document ids and weights of the query's tokens, one slice per known token in query
        order (a repeated token repeats its slice), so per-document sums add up in rank-bm25's order."""
        indptr, vocabulary = self.weights.indptr, self.vocabulary
        slices = [slice(indptr[term], indptr[term + 1]) for term in map(vocabulary.get, tokens) if term is not None]
        if not slices:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float64)
        return (np.concatenate([self.weights.indices[s] for s in slices]),
                np.concatenate([self.weights.data[s] for s in slices]))

    def _dense_scores(self, tokens: Sequence[str]) -> np.ndarray:
        docs, weights = self._postings(tokens)
        return np.bincount(docs, weights=weights, minlength=self.n_docs)

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores, float64 (for callers that need every score)."""
        out = np.empty((len(queries), self.n_docs), dtype=np.float64)
        for row, tokens in zip(out, queries):
            row[:] = self._dense_scores(tokens)
        return out

    def top_k(self, queries: Sequence[Sequence[str]], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``min(k, n_docs)`` best documents of each query and their scores, best first, ties
        by document position (lower first), as a stable sort of all scores would order them."""
        k = min(k, self.n_docs)
        indices = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float64)
        if k == 0:
            return indices, scores
        for q, tokens in enumerate(queries):
            indices[q], scores[q] = self._best(tokens, k)
        return indices, scores

    def _best(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        docs, weights = self._postings(tokens)
        candidates: np.ndarray | None  # document ids of ``totals``; None: totals covers every document
        if len(docs) * SPARSE_SHARE < self.n_docs:
            candidates, inverse = np.unique(docs, return_inverse=True)
            totals = np.bincount(inverse, weights=weights, minlength=len(candidates))
        else:
            candidates, totals = None, np.bincount(docs, weights=weights, minlength=self.n_docs)
        kept = None  # positions in ``totals`` of the k best and of every score tied with the k-th
        if len(totals) >= k:
            # Selecting the k-th smallest of the negated scores: numpy's selection of the k-th
            # largest is ten times slower on a vector of mostly equal scores (zeros) than this.
            kth = -np.partition(-totals, k - 1)[k - 1]
            if kth > 0:
                kept = np.flatnonzero(totals >= kth)
        if kept is None:
            # The ranking reaches documents that score 0 (no query term) or less: rank them all.
            if candidates is None:
                dense = totals
            else:
                dense = np.zeros(self.n_docs)
                dense[candidates] = totals
            best, best_scores = top_k(dense[None, :], k)
            return best[0], best_scores[0]
        ids = kept if candidates is None else candidates[kept]
        order = np.lexsort((ids, -totals[kept]))[:k]
        return ids[order], totals[kept][order]

    # -- on disk ------------------------------------------------------------------------------

    def save(self, folder: Path, metadata: dict[str, Any]) -> None:
        """Write the index to ``folder`` (created whole or not at all); ``metadata`` says what it
        indexes (corpus fingerprint, tokenisers) so :meth:`load` can refuse a stale index.

        The arrays are streamed into :func:`harness.io.atomic_folder`'s staging folder (no second
        copy of the index in memory), which then replaces ``folder`` whole, with a normal mode.
        """
        with atomic_folder(folder) as staging:
            for name in _ARRAYS:
                np.save(staging / f"{name}.npy", getattr(self.weights, name), allow_pickle=False)
            terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
            (staging / "vocabulary.json").write_text(json.dumps(terms, ensure_ascii=False), encoding="utf-8")
            info = {"format": FORMAT, "shape": list(self.weights.shape), "parameters": self.parameters, **metadata}
            (staging / "index.json").write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")

    @staticmethod
    def saved_metadata(folder: Path) -> dict[str, Any] | None:
        """The metadata of the index saved in ``folder``, or None if there is none."""
        path = folder / "index.json"
        if not path.is_file():
            return None
        try:
            info = parse_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # ValueError: malformed, nested too deep, not UTF-8
            raise HarnessError(f"{path} is not a BM25 index description: {exc}") from None
        return info if isinstance(info, dict) else None

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        """Reload an index written by :meth:`save`; the arrays are memory-mapped, not read."""
        info = cls.saved_metadata(folder)
        if info is None or info.get("format") != FORMAT:
            raise HarnessError(f"{folder} holds no BM25 index of format {FORMAT}")
        try:
            data, indices, indptr = (np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                                     for name in _ARRAYS)
            weights = sparse.csr_matrix((data, indices, indptr), shape=tuple(info["shape"]), copy=False)
            terms = parse_json((folder / "vocabulary.json").read_text(encoding="utf-8"))
            vocabulary = {term: i for i, term in enumerate(terms)}
            return cls(weights, vocabulary, info["parameters"])
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a file missing, cut short or replaced
            raise HarnessError(f"{folder} holds a damaged BM25 index ({exc.__class__.__name__}: {exc}): delete "
                               "the folder to build it again") from None
