"""Retrieval over a large synthetic corpus: BM25 and dense exact search, time and peak memory.

    python benchmarks/bench_retrieval_scale.py            # 30,000 passages (well under a minute)
    nice python benchmarks/bench_retrieval_scale.py --full  # 1,000,000 passages

The corpus is generated here (never stored in the repository): passages of 60 words drawn from
a Zipf-distributed vocabulary of 50,000 made-up words, so posting lists are as skewed as in
text; queries are 5 words of a random passage. Each measurement runs in a fresh process, so the
peak resident memory printed (ru_maxrss) is that of the phase alone; for dense search it counts
the memory-mapped shard pages it touched (page cache the OS can drop), so the peak of private
(anonymous) memory is printed beside it:

* BM25: build the index (harness_bm25, streaming construction), then top-100 search;
* dense: vectors (384-d, random, unit length) written in 65,536-row ``.npy`` shards, then exact
  top-100 search shard by shard (harness_dense, memory-mapped shards);
* reference: rank-bm25's BM25Okapi on the first ``--reference-size`` passages (it scores a
  query with a Python loop over every document), against harness BM25 on the same passages, in
  the same run; scores are checked to agree before the speed ratio is printed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

VOCABULARY = 50_000
WORDS_PER_PASSAGE = 60
QUERY_WORDS = 5
DIM = 384


def make_passages(n: int, seed: int = 0) -> list[str]:
    """``n`` synthetic passages; the same for the same ``n`` and seed."""
    rng = np.random.default_rng(seed)
    words = np.asarray([f"w{i}" for i in range(VOCABULARY)], dtype=object)
    out: list[str] = []
    for start in range(0, n, 100_000):
        size = min(100_000, n - start)
        ids = np.minimum(rng.zipf(1.3, size=(size, WORDS_PER_PASSAGE)) - 1, VOCABULARY - 1)
        out.extend(" ".join(row) for row in words[ids])
    return out


def make_queries(passages: list[str], n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(passages[i].split()[:QUERY_WORDS]) for i in rng.integers(0, len(passages), size=n)]


def _peak_mib() -> float:
    """Peak resident memory of this process, file-backed (memory-mapped) pages included."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class AnonymousPeak:
    """Samples RssAnon (heap and other private memory, without memory-mapped file pages, which the
    OS can drop at will) every 20 ms in a background thread; ``peak`` is the largest seen."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            with open("/proc/self/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        self.peak = max(self.peak, int(line.split()[1]) / 1024)
            self._stop.wait(0.02)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def bm25_phase(n: int, n_queries: int) -> dict[str, Any]:
    from harness.model import Runtime
    from harness.protocols import Corpus
    from harness_bm25.model import BM25

    passages = make_passages(n)
    queries = make_queries(passages, n_queries)
    corpus = Corpus(ids=[str(i) for i in range(n)], texts=passages, langs=["en"] * n)
    base = _peak_mib()
    start = time.perf_counter()
    index = BM25(runtime=Runtime()).index(corpus)
    built = time.perf_counter() - start
    start = time.perf_counter()
    index.search(queries, langs=["en"] * len(queries), k=100)
    searched = time.perf_counter() - start
    return {"build_s": built, "qps": len(queries) / searched, "peak_mib": _peak_mib(), "corpus_mib": base, "nnz": int(index.index.weights.nnz)}


class RandomEncoder:
    """Unit-length random vectors: the cost of search does not depend on what they encode."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(2)

    def encode(self, texts: Any, *, role: str, langs: Any = None) -> np.ndarray:
        vectors = self.rng.standard_normal((len(texts), DIM), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def dense_phase(n: int, n_queries: int) -> dict[str, Any]:
    from harness.protocols import Corpus
    from harness_dense.index import IndexSettings, build_or_load

    corpus = Corpus(ids=range(n), texts=[""] * n, langs=["en"] * n)  # type: ignore[arg-type]
    sampler = AnonymousPeak()
    with tempfile.TemporaryDirectory(prefix="bench-dense-") as folder:
        start = time.perf_counter()
        index = build_or_load(RandomEncoder(), corpus, folder=Path(folder) / "idx", settings=IndexSettings("exact"),
                              encoder_identity={"name": "random"}, shard_size=65_536)
        built = time.perf_counter() - start
        start = time.perf_counter()
        index.search([""] * n_queries, k=100)
        searched = time.perf_counter() - start
    return {"write_s": built, "qps": n_queries / searched, "peak_mib": _peak_mib(), "anon_mib": sampler.stop(),
            "shards": len(index.shards)}


def reference_phase(n: int, n_queries: int) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    from harness_bm25.index import BM25Index
    from harness_bm25.model import BM25Search
    from harness_bm25.tokenize import tokenize

    passages = make_passages(n)
    queries = make_queries(passages, n_queries)
    documents = [tokenize(p, "en") for p in passages]
    query_tokens = [tokenize(q, "en") for q in queries]
    start = time.perf_counter()
    ours = BM25Index.build(documents)
    ours_build = time.perf_counter() - start
    start = time.perf_counter()
    BM25Search(ours).search(queries, langs=["en"] * n_queries, k=100)
    ours_search = time.perf_counter() - start
    start = time.perf_counter()
    reference = BM25Okapi(documents)
    reference_build = time.perf_counter() - start
    start = time.perf_counter()
    expected = np.stack([reference.get_scores(q) for q in query_tokens])
    top = np.argsort(-expected, axis=1, kind="stable")[:, :100]
    reference_search = time.perf_counter() - start
    np.testing.assert_allclose(ours.scores(query_tokens), expected, rtol=1e-12)
    assert top.shape == (n_queries, 100)
    return {"ours_build_s": ours_build, "reference_build_s": reference_build,
            "ours_qps": n_queries / ours_search, "reference_qps": n_queries / reference_search}


def in_fresh_process(phase: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    pool = multiprocessing.get_context("spawn").Pool(1)
    try:
        return pool.apply(phase, args)
    finally:
        pool.close()
        pool.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="1,000,000 passages instead of 30,000")
    parser.add_argument("--size", type=int, help="number of passages (overrides --full)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--reference-size", type=int, default=10_000, help="passages for the rank-bm25 comparison")
    parser.add_argument("--reference-queries", type=int, default=100)
    args = parser.parse_args()
    n = args.size or (1_000_000 if args.full else 30_000)

    print(f"synthetic corpus: {n:,} passages of {WORDS_PER_PASSAGE} words, Zipf vocabulary of {VOCABULARY:,}")
    bm25 = in_fresh_process(bm25_phase, n, args.queries)
    print(f"BM25   build {bm25['build_s']:7.1f} s (tokenise + index, {bm25['nnz']:,} postings)  "
          f"search {bm25['qps']:8.1f} queries/s (top 100)  peak {bm25['peak_mib']:,.0f} MiB "
          f"(corpus texts and process before indexing: {bm25['corpus_mib']:,.0f} MiB)")
    dense = in_fresh_process(dense_phase, n, args.queries)
    print(f"dense  write {dense['write_s']:7.1f} s ({dense['shards']} shards of {DIM}-d float32)       "
          f"search {dense['qps']:8.1f} queries/s (exact top 100)  peak {dense['peak_mib']:,.0f} MiB with "
          f"memory-mapped pages, {dense['anon_mib']:,.0f} MiB without (vectors on disk: {n * DIM * 4 / 2**20:,.0f} MiB)")
    ref = in_fresh_process(reference_phase, args.reference_size, args.reference_queries)
    print(f"rank-bm25 on {args.reference_size:,} passages, {args.reference_queries} queries (same scores): "
          f"build {ref['reference_build_s']:.2f} s vs harness {ref['ours_build_s']:.2f} s; search "
          f"{ref['reference_qps']:.1f} vs harness {ref['ours_qps']:.1f} queries/s -> harness BM25 "
          f"{ref['ours_qps'] / ref['reference_qps']:.1f}x faster")


if __name__ == "__main__":
    main()
