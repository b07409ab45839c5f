"""The ``bm25`` model: a :class:`~harness.definitions.protocols.Retriever` over any corpus and languages.

Top-k search is exact and pruned: each query reads only the parts of its terms' posting lists
that can change its top k, in a compiled kernel, queries spread over the runtime's threads (see
:meth:`BM25Index.top_k` and :mod:`harness_bm25.kernel`); ranking the whole corpus (``k=None``) holds at most :data:`SCORE_BLOCK`
dense scores at once. ``index_dir=...`` saves the index on first use (built in bounded memory,
see :mod:`harness_bm25.index`; under torchrun by rank 0 alone) and reloads it (postings read from disk) on
later runs over the same corpus; a folder holding the index of another corpus or other settings
is refused, never silently reused or overwritten.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np

from harness.plugin import (
    Corpus,
    HarnessError,
    Model,
    ModelIdentity,
    Ranking,
    Retriever,
    Runtime,
    constructor_defaults,
    default_threads,
    label_with_options,
)
from harness.plugin.io import package_version
from harness.plugin.scoring import rank_descending
from harness.plugin.services import Progress, current_world
from harness_bm25.index import BM25Index, IdfKind, bm25_parameters, idf_kind
from harness_bm25.tokenize import describe, tokenize

#: Scores held at once when ranking the whole corpus: bounds the dense (queries x documents) block.
SCORE_BLOCK = 1 << 24
#: rank-bm25's floor on a term's idf (a share of the mean idf); Lucene's idf takes none.
EPSILON = 0.25


def as_text(item: str | tuple[str, str]) -> str:
    """A (sentence, context) pair is indexed as its two parts joined by a space."""
    return item if isinstance(item, str) else " ".join(item)


class BM25Search:
    """A tokenised corpus, searched with BM25."""

    def __init__(self, index: BM25Index, threads: int | None = None) -> None:
        """``threads``: for the pruned search's queries (:func:`default_threads` when None)."""
        self.index = index
        self.threads = threads

    def _tokens(self, queries: Sequence[str], langs: Sequence[str] | None) -> list[list[str]]:
        per_query: Sequence[str | None] = langs or [None] * len(queries)
        return [tokenize(as_text(q), lang) for q, lang in zip(queries, per_query)]

    def scores(self, queries: Sequence[str], *, langs: Sequence[str] | None = None) -> np.ndarray:
        return self.index.scores(self._tokens(queries, langs))

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        tokens = self._tokens(queries, langs)
        if k is not None:
            ceiling: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at run time
            numba.set_num_threads(min(self.threads or default_threads(), ceiling))
            indices, scores = self.index.top_k(tokens, k)
            return Ranking(indices, scores.astype(np.float32))
        n_docs = self.index.n_docs
        indices = np.empty((len(queries), n_docs), dtype=np.int64)
        scores = np.empty((len(queries), n_docs), dtype=np.float32)
        step = max(1, SCORE_BLOCK // max(n_docs, 1))
        for start in range(0, len(queries), step):
            block = self.index.scores(tokens[start : start + step])
            order = rank_descending(block)
            indices[start : start + len(block)] = order
            scores[start : start + len(block)] = np.take_along_axis(block, order, axis=1)
        return Ranking(indices, scores)


class BM25(Model):
    """Okapi BM25 with language-aware tokenisation (parameters as in rank-bm25's BM25Okapi;
    ``idf=lucene`` weighs terms by Lucene's idf instead, as Elasticsearch and Pyserini do:
    :data:`harness_bm25.index.IDF_KINDS`)."""

    provides = frozenset({Retriever})

    def __init__(
        self,
        *,
        runtime: Runtime,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = EPSILON,
        idf: str = "rank-bm25",
        index_dir: Path | None = None,
    ) -> None:
        """``index_dir``: a folder to save the index in, or to reload it from. ``k1 >= 0``,
        ``0 <= b <= 1`` and ``epsilon >= 0`` are BM25's own ranges: outside them the scores still
        compute but rank nonsense, so they are refused rather than run. ``idf``: ``rank-bm25``
        (the official numbers' BM25) or ``lucene``."""
        if k1 < 0 or not 0 <= b <= 1 or epsilon < 0:
            raise HarnessError(
                f"bm25: k1 must be >= 0, b within [0, 1] and epsilon >= 0 (got k1={k1}, b={b}, epsilon={epsilon})"
            )
        if idf == "lucene" and epsilon != EPSILON:
            raise HarnessError(
                f"bm25: epsilon floors rank-bm25's idf only; idf=lucene takes none (got epsilon={epsilon})"
            )
        self.runtime = runtime
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.idf: IdfKind = idf_kind(idf)
        self.index_dir = index_dir

    @property
    def parameters(self) -> dict[str, Any]:
        """What the index's weights depend on (rank-bm25's idf left unnamed: see
        :func:`harness_bm25.index.bm25_parameters`); also the identity's options."""
        return bm25_parameters(self.k1, self.b, self.epsilon, self.idf)

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name=self.name or "bm25",
            label=label_with_options("BM25", self.parameters, constructor_defaults(BM25)),
            weights=None,
            options=self.parameters,
            details={
                "tokenizers": describe(),
                "jieba": package_version("jieba"),
                "fugashi": package_version("fugashi"),
                "unidic-lite": package_version("unidic-lite"),
                "pythainlp": package_version("pythainlp"),
                "kiwipiepy": package_version("kiwipiepy"),
                "index_dir": None if self.index_dir is None else str(self.index_dir),
            },
        )

    def _build(self, corpus: Corpus, folder: Path | None, metadata: dict[str, Any] | None) -> BM25Index:
        """Stream the corpus through the tokenisers into a new index (see :meth:`BM25Index.build`)."""
        with Progress(len(corpus), "indexing passages (BM25)", unit="passage") as bar:

            def documents() -> Iterator[list[str]]:
                for text, lang in zip(corpus.texts, corpus.langs):
                    yield tokenize(as_text(text), lang)
                    bar.update()

            return BM25Index.build(
                documents(), folder, k1=self.k1, b=self.b, epsilon=self.epsilon, idf=self.idf, metadata=metadata
            )

    def index(self, corpus: Corpus) -> BM25Search:
        if self.index_dir is None:
            return BM25Search(self._build(corpus, None, None), self.runtime.threads)
        wanted: dict[str, Any] = {
            "corpus": corpus.fingerprint,
            "documents": len(corpus),
            "tokenizers": describe(),
            "parameters": self.parameters,
        }
        saved = BM25Index.saved_metadata(self.index_dir)
        if saved is None:
            if self.index_dir.exists() and any(self.index_dir.iterdir()):
                raise HarnessError(f"model bm25: index_dir={self.index_dir} is not empty and holds no BM25 index")
            # Under torchrun, rank 0 alone builds the index; the others load it once it is written.
            world = current_world()
            world.barrier()  # every rank has looked at the folder before rank 0 writes there
            built = self._build(corpus, self.index_dir, wanted) if world.is_main else None
            world.barrier()
            return BM25Search(built or BM25Index.load(self.index_dir), self.runtime.threads)
        stale = [key for key, value in wanted.items() if saved.get(key) != value]
        if stale:
            raise HarnessError(
                f"model bm25: index_dir={self.index_dir} holds an index of another corpus or settings "
                f"(differs in {', '.join(stale)}); use another folder or delete it"
            )
        return BM25Search(BM25Index.load(self.index_dir), self.runtime.threads)
