"""BM25 on sparse matrices: every query scored against the whole corpus in one product.

Scores equal rank-bm25's ``BM25Okapi`` (the reference Python implementation): for each query
token (repeated tokens count again) ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
with ``idf = ln((N - n + 0.5) / (n + 0.5))``, and negative idfs replaced by
``epsilon * mean(idf)``. The per-document term weights are precomputed once in a
(vocabulary x documents) CSR matrix, so a batch of queries is one sparse product instead of a
Python loop over tokens and documents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse


class BM25Index:
    """Term weights of a tokenised corpus."""

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25) -> None:
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        lengths = np.zeros(len(documents), dtype=np.float64)
        for doc_id, tokens in enumerate(documents):
            lengths[doc_id] = len(tokens)
            for token in tokens:
                rows.append(vocabulary.setdefault(token, len(vocabulary)))
                cols.append(doc_id)
        n_docs = len(documents)
        counts = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.float64), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(vocabulary), n_docs),
        )
        counts.sum_duplicates()
        doc_freq = np.diff(counts.indptr).astype(np.float64)
        idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
        if len(idf):
            idf[idf < 0] = epsilon * idf.mean()
        avgdl = lengths.mean() if n_docs else 0.0
        tf = counts.data
        doc_of_entry = counts.indices
        norm = k1 * (1.0 - b + b * lengths[doc_of_entry] / avgdl) if avgdl else np.full_like(tf, k1)
        term_of_entry = np.repeat(np.arange(len(vocabulary)), np.diff(counts.indptr))
        # Same operation order as rank-bm25, so equal documents get bit-identical scores.
        counts.data = idf[term_of_entry] * (tf * (k1 + 1.0) / (tf + norm))
        self.weights = counts  # (vocabulary, documents) CSR
        self.vocabulary = vocabulary
        self.n_docs = n_docs
        self.parameters = {"k1": k1, "b": b, "epsilon": epsilon}

    def query_matrix(self, queries: Sequence[Sequence[str]]) -> sparse.csr_matrix:
        """(queries x vocabulary) token counts; tokens unseen in the corpus score nothing."""
        rows, cols = [], []
        for q, tokens in enumerate(queries):
            for token in tokens:
                term = self.vocabulary.get(token)
                if term is not None:
                    rows.append(q)
                    cols.append(term)
        return sparse.csr_matrix(
            (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(queries), len(self.vocabulary)),
        )

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores, float64."""
        product = self.query_matrix(queries) @ self.weights
        return np.asarray(product.todense())
