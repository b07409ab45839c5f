"""The ``dense`` model: a :class:`~harness.definitions.protocols.Retriever` from any encoder, for corpora too
large to encode into memory at once, on one process or across many (torchrun).

``dense:encoder=e5-small,index=hnsw,index_dir=/data/psgs-e5`` encodes the corpus once into
``index_dir`` and reuses it on later runs. The plain encoder-to-retriever adapter of the core
(exact search over vectors held in memory) stays the default for small task pools; this model is
for passage collections. Its identity names the encoder (with its weights), the vector type and
the index parameters, since float16 or int8 vectors and an approximate index change the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import Corpus, Encoder, Model, ModelIdentity, ModelOption, Retriever, Runtime
from harness.plugin.io import package_version
from harness.plugin.services import EncodingService, EncodingStats, World, current_world, identity_part, load_model
from harness_dense.index import IndexKind, IndexSettings, ShardedVectors, VectorType, build_or_load

#: Passages handed to the encoder at a time: an encoder may tokenise all it is given first and keep
#: the tokens until it encodes them (the Hugging Face encoder's arrays take about 4 KB a 100-word
#: passage; a tokeniser's own objects about 50 KB), so a 65,536-passage shard at once could take
#: gigabytes; length buckets of 4,096 passages already leave little padding.
PASSAGE_CHUNK = 4096


class DenseRetriever(Model):
    """Encoder + on-disk vector shards (one share per rank) + exact or faiss search."""

    provides = frozenset({Retriever})

    def __init__(
        self,
        *,
        runtime: Runtime,
        encoder: ModelOption = "e5-small",
        index: IndexKind = "exact",
        index_dir: Path | None = None,
        shard_size: int = 65536,
        dtype: VectorType = "float16",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
        nlist: int = 1024,
        nprobe: int = 16,
        pq_m: int = 48,
        refine: int = 4,
    ) -> None:
        """``encoder``: the encoder model, as on the command line (``hf-encoder:path=...``);
        ``index``: exact, flat, hnsw, ivf or ivfpq (``refine``: candidates per result it scores
        again exactly from the shards); ``index_dir``: where vectors and index are
        kept (default: a temporary folder); ``shard_size``: passages encoded and stored per shard
        (for a new index); ``dtype``: float16 (half the disk and memory), float32, or int8 (a
        quarter: codes with a per-dimension scale, :class:`~harness_dense.index.Shard`)."""
        self.runtime = runtime
        self.encoder: Encoder
        self.encoder_model, self.encoder = load_model(encoder, runtime, needs=Encoder, owner="dense")
        self.settings = IndexSettings(index, hnsw_m, ef_construction, ef_search, nlist, nprobe, pq_m, refine)
        self.index_dir = index_dir
        self.shard_size = max(1, shard_size)
        self.dtype = dtype
        self.precision = self.encoder_model.precision
        self._passages: EncodingService | None = None

    def _encoder_identity(self) -> dict[str, Any]:
        return identity_part(self.encoder_model)

    def identity(self) -> ModelIdentity:
        encoder = self._encoder_identity()
        index = self.settings.describe()
        parameters = "".join(f" {k}={v}," for k, v in index.items() if k != "kind")
        return ModelIdentity(
            name=self.name or "dense",
            label=f"{encoder['label']} [{index['kind']}{parameters.rstrip(',')}, {self.dtype}]",
            weights=encoder["weights"],
            options={"encoder": encoder, "index": index, "dtype": self.dtype},
            details={
                "index_dir": None if self.index_dir is None else str(self.index_dir),
                "shard_size": self.shard_size,
                "dtype": self.dtype,
                "faiss": package_version("faiss-cpu"),
            },
        )

    def _encode_passages(self, texts: Sequence[Any], langs: Sequence[str] | None) -> np.ndarray:
        """One shard's passages, length-batched by a service of this process alone (see
        :mod:`harness_dense.index` for why not the run's), :data:`PASSAGE_CHUNK` at a time; the
        service forgets each chunk's vectors once they are copied out and keeps counting (tokens/s,
        share of the peak) for the run's execution record."""
        if self._passages is None:
            inner = self.encoder.encoder if isinstance(self.encoder, EncodingService) else self.encoder
            batch_size = self.runtime.batch_size or getattr(inner, "batch_size", None)
            self._passages = EncodingService(
                inner,
                batch_size=batch_size,
                world=World(),
                show_progress=False,
                device=self.runtime.device_used,
                threads=self.runtime.threads,
            )
        chunks = []
        for start in range(0, len(texts), PASSAGE_CHUNK):
            chunks.append(
                self._passages.encode(
                    texts[start : start + PASSAGE_CHUNK],
                    role="passage",
                    langs=None if langs is None else langs[start : start + PASSAGE_CHUNK],
                )
            )
            self._passages.release()  # the chunk's vectors are copied out
        return np.concatenate(chunks)

    @property
    def encoding_stats(self) -> EncodingStats | None:
        """The corpus encoding of this run on this process (None: every shard was on disk)."""
        return None if self._passages is None else self._passages.stats

    def _encode_queries(self, texts: Sequence[str], langs: Sequence[str] | None) -> np.ndarray:
        return self.encoder.encode(texts, role="query", langs=langs)

    def index(self, corpus: Corpus) -> ShardedVectors:
        return build_or_load(
            corpus,
            folder=self.index_dir,
            settings=self.settings,
            encoder_identity=self._encoder_identity(),
            encode_passages=self._encode_passages,
            encode_queries=self._encode_queries,
            shard_size=self.shard_size,
            dtype=self.dtype,
            world=current_world(),
        )
