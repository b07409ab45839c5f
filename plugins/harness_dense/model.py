"""The ``dense`` model: a :class:`~harness.protocols.Retriever` from any encoder, for corpora too
large to encode into memory at once.

``dense:encoder=e5-small,index=hnsw,index_dir=/data/psgs-e5`` encodes the corpus once into
``index_dir`` and reuses it on later runs. The plain encoder-to-retriever adapter of the core
(exact search over vectors held in memory) stays the default for small task pools; this model is
for passage collections. Its identity names the encoder (with its weights) and the index
parameters, since an approximate index changes the scores.
"""

from __future__ import annotations

from pathlib import Path

from harness.compose import identity_part, load_model
from harness.model import Model, ModelIdentity, Runtime
from harness.options import ModelOption
from harness.protocols import Corpus, Encoder, Retriever
from harness.provenance import package_version

from harness_dense.index import IndexKind, IndexSettings, ShardedVectors, build_or_load


class DenseRetriever(Model):
    """Encoder + on-disk vector shards + exact or faiss search."""
    provides = frozenset({Retriever})

    def __init__(self, *, runtime: Runtime, encoder: ModelOption = "e5-small", index: IndexKind = "exact",
                 index_dir: Path | None = None, shard_size: int = 65536, hnsw_m: int = 32, ef_construction: int = 200,
                 ef_search: int = 128, nlist: int = 1024, nprobe: int = 16) -> None:
        """``encoder``: the encoder model, as on the command line (``hf-encoder:path=...``);
        ``index``: exact, flat, hnsw or ivf; ``index_dir``: where vectors and index are kept
        (default: a temporary folder); ``shard_size``: passages encoded and stored per shard."""
        self.runtime = runtime
        self.encoder_model, self.encoder = load_model(encoder, runtime, needs=Encoder, owner="dense")
        self.settings = IndexSettings(index, hnsw_m, ef_construction, ef_search, nlist, nprobe)
        self.index_dir = index_dir
        self.shard_size = max(1, shard_size)

    def _encoder_identity(self) -> dict[str, object]:
        return identity_part(self.encoder_model)

    def identity(self) -> ModelIdentity:
        encoder = self._encoder_identity()
        index = self.settings.describe()
        parameters = ", ".join(f"{k}={v}" for k, v in index.items() if k != "kind")
        return ModelIdentity(
            name=self.name or "dense",
            label=f"{encoder['label']} [{index['kind']}{' ' + parameters if parameters else ''}]",
            weights=encoder["weights"],
            options={"encoder": encoder, "index": index},
            details={"index_dir": None if self.index_dir is None else str(self.index_dir),
                     "shard_size": self.shard_size, "faiss": package_version("faiss-cpu")},
        )

    def index(self, corpus: Corpus) -> ShardedVectors:
        return build_or_load(self.encoder, corpus, folder=self.index_dir, settings=self.settings,
                             encoder_identity=self._encoder_identity(), shard_size=self.shard_size)
