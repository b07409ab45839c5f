"""Declares the dense-index model; importing this module imports nothing heavy."""

from harness.plugin import ModelSpec, hookimpl


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "dense",
            "harness_dense.model:DenseRetriever",
            "any encoder (encoder=e5-small) over a large corpus: vectors in npy shards (index_dir=...), "
            "exact sharded search or faiss flat/hnsw/ivf (index=...)",
        )
    ]
