"""One process of a dense retrieval run, on its own or as a rank under torchrun (for test_distributed).

    python distributed_worker.py CORPUS.tsv INDEX_DIR OUT.npz LOG_DIR [SHARD_SIZE K]

Reads the corpus through the harness's streaming reader, encodes it with a hash encoder (each
text's vector drawn from a generator seeded by its bytes, so every process gives a text the same
vector, as a real encoder does), builds or resumes the dense index in INDEX_DIR, searches it and,
on rank 0, saves the ranking to OUT.npz. Each rank appends to LOG_DIR/rank{r}.log the first
passage of every shard it encodes, and once the index is open the number of shards it holds.
``KILL_RANK=r KILL_AFTER=n``: rank r dies (``os._exit``, as a kill leaves it) when asked to encode
its (n + 1)-th shard. ``INDEX_KIND=flat`` searches each rank's faiss index instead of exact search.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.data.passages import read_passages
from harness.models.distributed import current_world
from harness_dense.index import IndexSettings, build_or_load

DIM = 16
QUERIES = [f"query {i} w{i % 7} w{(3 * i) % 11}" for i in range(24)]


def hash_vectors(texts: Sequence[object], role: str) -> np.ndarray:
    rows = []
    for text in texts:
        seed = hashlib.sha256(f"{role}|{text}".encode()).digest()
        rows.append(np.random.default_rng(list(seed[:8])).standard_normal(DIM, dtype=np.float32))
    return np.stack(rows) if rows else np.zeros((0, DIM), dtype=np.float32)


def main() -> None:
    corpus_path, index_dir, out, log_dir = map(Path, sys.argv[1:5])
    shard_size, k = (int(sys.argv[5]), int(sys.argv[6])) if len(sys.argv) > 6 else (50, 10)
    world = current_world()
    log = log_dir / f"rank{world.rank}.log"
    encoded = 0

    def encode_passages(texts: Sequence[object], langs: Sequence[str] | None) -> np.ndarray:
        nonlocal encoded
        if str(world.rank) == os.environ.get("KILL_RANK") and encoded == int(os.environ.get("KILL_AFTER", "-1")):
            os._exit(9)
        encoded += 1
        _, text = texts[0]  # (title, text) pairs; a text starts with its passage's number
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"encoded {text.split()[0]}\n")
        return hash_vectors(texts, "passage")

    corpus = read_passages(corpus_path).as_corpus()
    settings = IndexSettings(os.environ.get("INDEX_KIND", "exact"))  # type: ignore[arg-type]
    index = build_or_load(
        corpus,
        folder=index_dir,
        settings=settings,
        encoder_identity={"name": "hash"},
        encode_passages=encode_passages,
        encode_queries=lambda texts, langs: hash_vectors(texts, "query"),
        shard_size=shard_size,
        world=world,
    )
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"holds {len(index.shards)} shards\n")
    ranking = index.search(QUERIES, k=k)
    if world.is_main:
        np.savez(out, indices=ranking.indices, scores=ranking.scores)


if __name__ == "__main__":
    main()
