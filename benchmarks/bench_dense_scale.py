"""Dense retrieval over a million vectors: float16 shards on disk, exact search shard by shard,
int8 shards and faiss IVF-PQ / HNSW with their recall@100 against exact search on the same queries.

    python benchmarks/bench_dense_scale.py --size 1000000 --work /work/scale-data/dense-1m
    python benchmarks/bench_dense_scale.py --size 200000 --work /tmp/dense --hnsw   # HNSW too

Vectors: encoding a million passages with e5-small takes hours on a CPU, and random vectors have
no neighbourhoods for an approximate index to find, so the vectors are drawn like embeddings
are spread: unit vectors around :data:`CLUSTERS` random centres (384 dimensions, e5-small's), a
passage's vector its centre plus an offset along a few shared directions (:data:`SUBSPACE`) and a
little noise, a query likewise (a question among its passages). Each phase runs in a fresh process through the harness's
``build_or_load`` (the ``dense`` model's path); peak memory is VmHWM (with the pages of the
memory-mapped shards it touched, which the OS may drop) and the peak of RssAnon (heap alone,
sampled every 20 ms):

* ``write``: the shards encoded and written (float16, and int8 in a folder beside);
* ``exact``: every query's top 100 by exact search over the shards on disk (the float16 ranking
  is the reference; the int8 one's recall@100 against it is printed);
* ``ivfpq``: an IVF-PQ index (``nlist`` lists, ``pq_m`` bytes a vector) trained and built from
  the shards, searched with ``nprobe`` 16 and 64: queries/s and recall@100 (the share of exact
  search's top 100 it finds), and its bytes per passage (index file / passages);
* ``hnsw`` (``--hnsw``): an HNSW graph over the same vectors (float32 in memory), likewise.

Measured on the 2-core machine with other work finished, 1,000,000 vectors, 500 queries: exact
over float16 shards (732 MiB) 82 queries/s, peak 1,052 MiB (312 MiB heap); IVF-PQ (nlist 4,096,
48 bytes, refine 4) built in 54 s, 63 bytes a passage, nprobe 16: 679 queries/s at recall@100
0.299, nprobe 64: 1,288 at 0.570; HNSW (M 32, efConstruction 80) built in 252 s, 1,808 bytes a
passage, efSearch 64: 2,865 queries/s at 0.703, efSearch 256: 1,178 at 0.956. int8 shards (366
MiB), two runs on another day: 92.6 / 93.2 queries/s against float16's 72.8 / 67.5 in the same
runs, recall@100 0.993 of float16's top 100, peak 694 MiB.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _phases import dispatch, memory_mib, run_phase, size_mib

DIM = 384
CLUSTERS = 4096
#: A passage's offset from its centre lies mostly in a subspace of this many dimensions (text
#: embeddings vary along few directions), plus a little isotropic noise.
SUBSPACE = 32
SPREAD, JITTER = 0.6, 0.05
K = 100


class AnonymousPeak:
    """The largest RssAnon seen, sampled every 20 ms in a background thread."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, memory_mib("RssAnon"))
            self._stop.wait(0.02)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def _centres() -> np.ndarray:
    centres = np.random.default_rng(0).standard_normal((CLUSTERS, DIM), dtype=np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def _spread(centres: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    basis = np.random.default_rng(1).standard_normal((SUBSPACE, DIM), dtype=np.float32) / np.sqrt(SUBSPACE * DIM)
    offsets = rng.standard_normal((len(centres), SUBSPACE), dtype=np.float32) @ basis * (SPREAD * np.sqrt(DIM))
    jitter = rng.standard_normal(centres.shape, dtype=np.float32) * (JITTER / np.sqrt(DIM))
    vectors = centres + offsets + jitter
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def encode_passages(texts: Sequence[str], langs: Sequence[str] | None) -> np.ndarray:
    """A shard's vectors: passage ``i`` around centre ``hash(i) % CLUSTERS`` (the same shards,
    the same vectors)."""
    positions = np.asarray([int(t) for t in texts], dtype=np.uint64)
    clusters = (positions * np.uint64(2654435761) % np.uint64(2**32) % np.uint64(CLUSTERS)).astype(np.int64)
    return _spread(_centres()[clusters], np.random.default_rng([2, int(positions[0])]))


def encode_queries(texts: Sequence[str], langs: Sequence[str] | None) -> np.ndarray:
    """Query ``q``: near a random centre, among its passages."""
    rng = np.random.default_rng(4)
    return _spread(_centres()[rng.integers(0, CLUSTERS, len(texts))], rng)


class PositionTexts(Sequence[str]):
    """A corpus whose texts are their positions (the vectors are computed from them)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return [str(i) for i in range(*index.indices(self.n))] if isinstance(index, slice) else str(index)


def _queries(n: int) -> list[str]:
    return [f"query {q}" for q in range(n)]


def _open(size: int, folder: Path, settings: Any, dtype: str = "float16") -> Any:
    from harness.definitions.protocols import Corpus
    from harness_dense.index import build_or_load

    texts = PositionTexts(size)
    corpus = Corpus(ids=texts, texts=texts, langs=["en"] * size)
    return build_or_load(
        corpus,
        folder=folder,
        settings=settings,
        encoder_identity={"name": "clusters", "dim": DIM},
        encode_passages=encode_passages,
        encode_queries=encode_queries,
        shard_size=65536,
        dtype=dtype,
    )  # type: ignore[arg-type]


def write(size: int, folder: Path, dtype: str) -> dict[str, Any]:
    from harness_dense.index import IndexSettings

    start = time.perf_counter()
    _open(size, folder, IndexSettings("exact"), dtype)
    return {"write_s": time.perf_counter() - start, "disk_mib": size_mib(folder)}


def exact(size: int, folder: Path, dtype: str, n_queries: int, out: Path) -> dict[str, Any]:
    """Search shards already written (their vectors are no part of this phase's memory)."""
    from harness_dense.index import IndexSettings

    sampler = AnonymousPeak()
    index = _open(size, folder, IndexSettings("exact"), dtype)
    start = time.perf_counter()
    ranking = index.search(_queries(n_queries), k=K)
    searched = time.perf_counter() - start
    np.save(out, ranking.indices)
    return {"qps": n_queries / searched, "peak_mib": memory_mib("VmHWM"), "anon_mib": sampler.stop()}


def _recall(found: np.ndarray, expected: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, expected)]))


def approximate(
    kind: str, size: int, folder: Path, n_queries: int, exact_top: Path, nlist: int, probes: list[int]
) -> dict[str, Any]:
    from harness.models.distributed import World
    from harness_dense.index import IndexSettings, faiss_name

    sampler = AnonymousPeak()
    expected = np.load(exact_top)
    settings = IndexSettings(kind, hnsw_m=32, ef_construction=80, nlist=nlist, pq_m=48)  # type: ignore[arg-type]
    start = time.perf_counter()
    index = _open(size, folder, settings)
    built = time.perf_counter() - start
    figures: dict[str, Any] = {
        "build_s": built,
        "bytes_per_passage": (folder / faiss_name(settings.kind, World())).stat().st_size / size,
    }
    queries = _queries(n_queries)
    for probe in probes:
        if kind == "hnsw":
            index.faiss.hnsw.efSearch = probe
        else:
            index.faiss.nprobe = probe
        start = time.perf_counter()
        found = index.search(queries, k=K).indices
        searched = time.perf_counter() - start
        figures[str(probe)] = {"qps": n_queries / searched, "recall@100": _recall(found, expected)}
    figures.update(peak_mib=memory_mib("VmHWM"), anon_mib=sampler.stop())
    return figures


def main() -> None:
    if dispatch({"write": write, "exact": exact, "approximate": approximate}):
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, required=True, help="folder for the shards (outside the repository)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--nlist", type=int, default=4096)
    parser.add_argument("--hnsw", action="store_true", help="also an HNSW graph (slow to build on a small CPU)")
    args = parser.parse_args()
    folder, top = args.work / "index", args.work / "exact-top.npy"
    print(
        f"bench_dense_scale: {args.size:,} vectors of {DIM} dimensions around {CLUSTERS} centres, "
        f"{args.queries} queries, top {K}; each phase in a fresh process",
        flush=True,
    )
    for dtype in ("float16", "int8"):
        where, ranking = (folder, top) if dtype == "float16" else (args.work / "index-int8", args.work / "int8-top.npy")
        written = run_phase(__file__, "write", args.size, where, dtype)
        done = written and run_phase(__file__, "exact", args.size, where, dtype, args.queries, ranking)
        if not written or not done:
            return
        recall = "" if dtype == "float16" else f", recall@100 {_recall(np.load(ranking), np.load(top)):.3f}"
        print(
            f"exact  {dtype} shards {written['disk_mib']:,.0f} MiB on disk (written in {written['write_s']:.1f} s); "
            f"search {done['qps']:.1f} queries/s{recall}; peak {done['peak_mib']:,.0f} MiB with mapped pages, "
            f"{done['anon_mib']:,.0f} MiB heap",
            flush=True,
        )
    kinds = [("ivfpq", [16, 64])] + ([("hnsw", [64, 256])] if args.hnsw else [])
    for kind, probes in kinds:
        got = run_phase(__file__, "approximate", kind, args.size, folder, args.queries, top, args.nlist, probes)
        if got is None:
            continue
        knob = "efSearch" if kind == "hnsw" else "nprobe"
        searches = "; ".join(
            f"{knob} {p}: {got[str(p)]['qps']:.0f} queries/s, recall@100 {got[str(p)]['recall@100']:.3f}"
            for p in probes
        )
        print(
            f"{kind:6} built in {got['build_s']:.1f} s, {got['bytes_per_passage']:.0f} bytes a passage; {searches}; "
            f"peak {got['peak_mib']:,.0f} MiB, {got['anon_mib']:,.0f} MiB heap",
            flush=True,
        )


if __name__ == "__main__":
    main()
