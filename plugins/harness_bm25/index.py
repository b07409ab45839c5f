"""BM25 on sparse matrices: every query scored against the whole corpus in one product.

Scores equal rank-bm25's ``BM25Okapi`` (the reference Python implementation): for each query
token (repeated tokens count again) ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
with ``idf = ln((N - n + 0.5) / (n + 0.5))``, and negative idfs replaced by
``epsilon * mean(idf)``. The per-document term weights are precomputed once in a
(vocabulary x documents) CSR matrix, so a batch of queries is one sparse product instead of a
Python loop over tokens and documents.

Construction streams the documents: each one adds its distinct term ids and counts to compact
typed arrays (4 bytes an entry), so a corpus of millions of passages never exists as Python
lists of ints. An index is saved as plain ``.npy`` arrays plus a JSON vocabulary (no pickle)
and reloaded memory-mapped.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from harness.errors import HarnessError

#: Bumped when the saved layout changes; an index of another format is rebuilt, never misread.
FORMAT = 1
_ARRAYS = ("data", "indices", "indptr")


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
        vocabulary: dict[str, int] = {}
        indptr = array("q", [0])
        terms = array("i")
        counts = array("i")
        lengths = array("q")
        for tokens in documents:
            tf = Counter(vocabulary.setdefault(token, len(vocabulary)) for token in tokens)
            terms.extend(tf.keys())
            counts.extend(tf.values())
            indptr.append(len(terms))
            lengths.append(len(tokens))
        n_docs = len(lengths)
        by_document = sparse.csr_matrix(
            (np.frombuffer(counts, dtype=np.int32).astype(np.float64), np.frombuffer(terms, dtype=np.int32),
             np.frombuffer(indptr, dtype=np.int64)), shape=(n_docs, len(vocabulary)))
        del terms, counts, indptr
        weights = by_document.T.tocsr()  # (vocabulary, documents), documents sorted within each term
        del by_document
        doc_freq = np.diff(weights.indptr).astype(np.float64)
        idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
        if len(idf):
            idf[idf < 0] = epsilon * idf.mean()
        doc_lengths = np.frombuffer(lengths, dtype=np.int64).astype(np.float64)
        avgdl = doc_lengths.sum() / n_docs if n_docs else 0.0
        tf = weights.data
        norm = k1 * (1.0 - b + b * doc_lengths[weights.indices] / avgdl) if avgdl else np.full_like(tf, k1)
        term_of_entry = np.repeat(np.arange(len(vocabulary)), np.diff(weights.indptr))
        # Same operation order as rank-bm25, so equal documents get bit-identical scores.
        weights.data = idf[term_of_entry] * (tf * (k1 + 1.0) / (tf + norm))
        return cls(weights, vocabulary, {"k1": k1, "b": b, "epsilon": epsilon})

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

    # -- on disk ------------------------------------------------------------------------------

    def save(self, folder: Path, metadata: dict[str, Any]) -> None:
        """Write the index to ``folder`` (created whole or not at all); ``metadata`` says what it
        indexes (corpus fingerprint, tokenisers) so :meth:`load` can refuse a stale index."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            for name in _ARRAYS:
                np.save(staging / f"{name}.npy", getattr(self.weights, name), allow_pickle=False)
            terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
            (staging / "vocabulary.json").write_text(json.dumps(terms, ensure_ascii=False), encoding="utf-8")
            info = {"format": FORMAT, "shape": list(self.weights.shape), "parameters": self.parameters, **metadata}
            (staging / "index.json").write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    @staticmethod
    def saved_metadata(folder: Path) -> dict[str, Any] | None:
        """The metadata of the index saved in ``folder``, or None if there is none."""
        path = folder / "index.json"
        if not path.is_file():
            return None
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise HarnessError(f"{path} is not a BM25 index description: {exc}") from None
        return info if isinstance(info, dict) else None

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        """Reload an index written by :meth:`save`; the arrays are memory-mapped, not read."""
        info = cls.saved_metadata(folder)
        if info is None or info.get("format") != FORMAT:
            raise HarnessError(f"{folder} holds no BM25 index of format {FORMAT}")
        data, indices, indptr = (np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS)
        weights = sparse.csr_matrix((data, indices, indptr), shape=tuple(info["shape"]), copy=False)
        terms = json.loads((folder / "vocabulary.json").read_text(encoding="utf-8"))
        return cls(weights, {term: i for i, term in enumerate(terms)}, info["parameters"])
