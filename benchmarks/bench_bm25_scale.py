"""BM25 over a corpus file of millions of passages: the harness against bm25s (memory-mapped), in
one run: build time, index size on disk, peak memory and queries/s; top 10 checked against
rank-bm25 on a sample.

    python benchmarks/synthetic_corpus.py 1000000 /work/scale-data/psgs-1m.tsv
    pip install -e ".[test,bench]"
    python benchmarks/bench_bm25_scale.py /work/scale-data/psgs-1m.tsv --work /work/scale-data/bench-1m

The corpus is a file in DPR's ``psgs_w100.tsv`` layout (``synthetic_corpus.py`` writes one with
its statistics), indexed as XOR-Retrieve indexes it: title and text, the harness's tokeniser.
Each phase runs in a fresh process, so its peak resident memory (VmHWM: heap and the pages of
memory-mapped files it touched) is that phase's alone:

* ``harness-build``: the corpus scanned and streamed through the tokeniser into the index
  (``bm25:index_dir=...``'s path: sorted runs merged on disk), never held in memory;
* ``bm25s-build``: the same tokens (the harness's tokeniser, one string object per distinct
  token) as bm25s takes them, a list of token lists, indexed with ``method="robertson"`` (BM25Okapi's
  term weights over k1 + 1; idf clamped at 0, float32) and saved;
* ``harness-search`` / ``bm25s-search``: the saved index loaded (``BM25.load(mmap=True)`` for
  bm25s) and ``--queries`` queries (5 words from the corpus's distribution) searched for their top 10,
  one thread each.

bm25s holds the corpus's token lists and their ids in Python lists while it builds (about 40
bytes a token), so it is run under an address-space limit (``--bm25s-memory-gb``) and reported
as failed rather than let it take the machine's memory; its search is then timed on an index in
its saved format written from the harness's postings (the same postings, bm25s's float32
``robertson`` weights: ``bm25s-from-postings``). The check: the harness's top 10 equals
rank-bm25's ``BM25Okapi`` stable ranking on the first ``--check-size`` passages for
``--check-queries`` queries (rank-bm25 scores with Python loops over every document).

Measured before the search was pruned (the exhaustive path, ``top_k(..., exhaustive=True)``
today; ``bench_bm25_engines.py`` compares both), on the 2-core machine with other work finished (build s / index MiB / build peak MiB /
queries/s / search peak MiB): 1 M passages, harness 76 / 368 / 718 / 91.5 / 306, bm25s 150 / 561
/ 4,398 / 48.9 / 780; 5 M passages, harness 362 / 1,740 / 804 / 12.2 / 510, bm25s's build over
16 GB (failed), its format from the same postings 2,708 MiB, 6.5 queries/s, 2,965 MiB;
21,015,324 passages (harness alone, 200 queries), 2,422 (the CPU shared) / 7,235 / 1,169 / 2.9 /
746. Top 10 equal to rank-bm25's on 100 of 100 queries (first 20,000 passages) at every size.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _phases import dispatch, memory_mib, run_phase, size_mib
from synthetic_corpus import queries as synthetic_queries

K1, B, TOP = 1.5, 0.75, 10


def _query_tokens(n: int) -> list[list[str]]:
    from harness_bm25.tokenize import tokenize

    return [tokenize(q, "en") for q in synthetic_queries(n)]


def _documents(corpus: Path):  # type: ignore[no-untyped-def]
    """The corpus's passages as the harness indexes them: (title, text) tokenised."""
    from harness.data.passages import read_passages
    from harness_bm25.model import as_text
    from harness_bm25.tokenize import tokenize

    passages = read_passages(corpus).as_corpus(True)
    return passages, (tokenize(as_text(text), lang) for text, lang in zip(passages.texts, passages.langs))


def harness_build(corpus: Path, folder: Path, idf: str = "rank-bm25") -> dict[str, Any]:
    from harness.data.passages import read_passages
    from harness.definitions.model import Runtime
    from harness_bm25.model import BM25

    start = time.perf_counter()
    passages = read_passages(corpus)
    scanned = time.perf_counter() - start
    BM25(runtime=Runtime(), k1=K1, b=B, idf=idf, index_dir=folder).index(passages.as_corpus(True))
    return {
        "build_s": time.perf_counter() - start,
        "scan_s": scanned,
        "size_mib": size_mib(folder),
        "peak_mib": memory_mib("VmHWM"),
        "documents": len(passages),
    }


def harness_search(folder: Path, n_queries: int, out: Path) -> dict[str, Any]:
    from harness_bm25.index import BM25Index

    queries = _query_tokens(n_queries)
    start = time.perf_counter()
    index = BM25Index.load(folder)
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    top = index.top_k(queries, TOP)[0]
    searched = time.perf_counter() - start
    np.save(out, top)
    return {"load_s": loaded, "qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


def bm25s_build(corpus: Path, folder: Path, limit_gb: float) -> dict[str, Any]:
    resource.setrlimit(resource.RLIMIT_AS, (int(limit_gb * 2**30),) * 2)
    import bm25s

    start = time.perf_counter()
    canonical: dict[str, str] = {}
    _, documents = _documents(corpus)
    tokens = [list(map(canonical.setdefault, doc, doc)) for doc in documents]
    retriever = bm25s.BM25(k1=K1, b=B, method="robertson")
    retriever.index(tokens, show_progress=False)
    retriever.save(str(folder))
    return {
        "build_s": time.perf_counter() - start,
        "size_mib": size_mib(folder),
        "peak_mib": memory_mib("VmHWM"),
        "documents": len(tokens),
    }


def bm25s_search(folder: Path, n_queries: int, out: Path) -> dict[str, Any]:
    import bm25s

    queries = _query_tokens(n_queries)
    start = time.perf_counter()
    retriever = bm25s.BM25.load(str(folder), mmap=True)
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    top = retriever.retrieve(queries, k=TOP, show_progress=False, n_threads=0)[0]
    searched = time.perf_counter() - start
    np.save(out, np.asarray(top, dtype=np.int64))
    return {"load_s": loaded, "qps": n_queries / searched, "peak_mib": memory_mib("VmHWM")}


def bm25s_from_postings(harness: Path, folder: Path) -> dict[str, Any]:
    """bm25s's saved index written from the harness's postings (the same postings bm25s builds),
    with bm25s's ``robertson`` float32 weights, for timing bm25s's search where its build does
    not fit in memory."""
    import json

    from harness_bm25.index import BM25Index

    start = time.perf_counter()
    postings = BM25Index.load(harness).postings
    _, n_docs = postings.shape
    counts, indices = (np.load(harness / f"{name}.npy", mmap_mode="r") for name in ("counts", "indices"))
    doc_freq = np.diff(postings.indptr)
    idf = np.maximum(np.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5)), 0.0)  # robertson, clamped at 0
    folder.mkdir(parents=True)
    data = np.lib.format.open_memmap(folder / "data.csc.index.npy", mode="w+", dtype=np.float32, shape=(len(indices),))
    step = 1 << 24
    for a in range(0, len(data), step):
        tf = np.asarray(counts[a : a + step], dtype=np.float64)
        # each posting's term, a chunk at a time (all at once: 8 bytes a posting, 12 GB at 21 M passages)
        terms = np.searchsorted(postings.indptr, np.arange(a, a + len(tf)), side="right") - 1
        data[a : a + step] = idf[terms] * tf / (tf + postings.norms[indices[a : a + step]])
    data.flush()
    del data
    np.save(folder / "indices.csc.index.npy", indices, allow_pickle=False)
    np.save(folder / "indptr.csc.index.npy", np.append(postings.indptr, postings.indptr[-1]), allow_pickle=False)
    terms_json = json.loads((harness / "vocabulary.json").read_text(encoding="utf-8"))
    vocab = {term: i for i, term in enumerate(terms_json)}
    vocab[""] = len(vocab)  # bm25s's empty token, with no postings
    (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "params.index.json").write_text(
        json.dumps(
            {
                "k1": K1,
                "b": B,
                "delta": 0.5,
                "method": "robertson",
                "idf_method": "robertson",
                "dtype": "float32",
                "int_dtype": "int32",
                "num_docs": n_docs,
                "version": "0.3.16",
                "backend": "numpy",
            }
        ),
        encoding="utf-8",
    )
    return {
        "build_s": time.perf_counter() - start,
        "size_mib": size_mib(folder),
        "peak_mib": memory_mib("VmHWM"),
        "documents": n_docs,
        "converted": True,
    }


def rank_bm25_check(corpus: Path, size: int, n_queries: int) -> dict[str, Any]:
    """The harness's top 10 against rank-bm25's stable ranking, on the first ``size`` passages."""
    from itertools import islice

    from rank_bm25 import BM25Okapi

    from harness_bm25.index import BM25Index

    documents = list(islice(_documents(corpus)[1], size))
    queries = _query_tokens(n_queries)
    ours = BM25Index.build(documents, k1=K1, b=B).top_k(queries, TOP)[0]
    reference = BM25Okapi(documents, k1=K1, b=B)
    expected = np.stack([np.argsort(-reference.get_scores(q), kind="stable")[:TOP] for q in queries])
    return {"documents": len(documents), "queries": n_queries, "equal": int((ours == expected).all(axis=1).sum())}


PHASES = {
    "harness-build": harness_build,
    "harness-search": harness_search,
    "bm25s-build": bm25s_build,
    "bm25s-from-postings": bm25s_from_postings,
    "bm25s-search": bm25s_search,
    "check": rank_bm25_check,
}


def main() -> None:
    if dispatch(PHASES):
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a passage file in psgs_w100's layout")
    parser.add_argument("--work", type=Path, required=True, help="folder for the indexes (outside the repository)")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--engines", default="harness,bm25s")
    parser.add_argument("--bm25s-memory-gb", type=float, default=16.0)
    parser.add_argument("--check-size", type=int, default=20_000)
    parser.add_argument("--check-queries", type=int, default=100)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    print(
        f"bench_bm25_scale: {args.corpus} ({args.corpus.stat().st_size / 2**30:.2f} GiB), k1={K1}, b={B}, "
        f"top {TOP}, {args.queries} queries; each phase in a fresh process",
        flush=True,
    )
    figures: dict[str, dict[str, Any] | None] = {}
    failed_build = False
    for engine in engines:
        folder = args.work / f"{engine}-index"
        if folder.exists():
            raise SystemExit(f"{folder} exists: remove it (the build is what is measured)")
        extra = [args.bm25s_memory_gb] if engine == "bm25s" else []
        figures[f"{engine}-build"] = built = run_phase(
            __file__, f"{engine}-build", args.corpus.resolve(), folder, *extra
        )
        print(f"  {engine}-build: {built}", flush=True)
        if built is None and engine == "bm25s" and figures.get("harness-build"):
            shutil.rmtree(folder, ignore_errors=True)
            print("  bm25s's search is timed on its index format written from the harness's postings", flush=True)
            figures["bm25s-build"] = run_phase(__file__, "bm25s-from-postings", args.work / "harness-index", folder)
            failed_build = True
        if figures[f"{engine}-build"] is not None:
            figures[f"{engine}-search"] = run_phase(
                __file__, f"{engine}-search", folder, args.queries, args.work / f"{engine}-top.npy"
            )
            print(f"  {engine}-search: {figures[f'{engine}-search']}", flush=True)
    print(
        f"\n{'engine':8} {'build s':>9} {'index MiB':>10} {'build peak MiB':>15} {'queries/s':>10} "
        f"{'search peak MiB':>16}"
    )
    for engine in engines:
        built, searched = figures.get(f"{engine}-build"), figures.get(f"{engine}-search")
        if built is None or searched is None:
            print(f"{engine:8} {'failed':>9}")
            continue
        if built.get("converted"):
            print(
                f"{engine:8} {'failed':>9} {built['size_mib']:10.0f} {'-':>15} {searched['qps']:10.1f} "
                f"{searched['peak_mib']:16.0f}"
            )
            continue
        print(
            f"{engine:8} {built['build_s']:9.1f} {built['size_mib']:10.0f} {built['peak_mib']:15.0f} "
            f"{searched['qps']:10.1f} {searched['peak_mib']:16.0f}"
        )
    if failed_build:
        print(
            f"bm25s's build failed within --bm25s-memory-gb={args.bm25s_memory_gb:g}; its index size and search "
            "are those of its format written from the same postings (bm25s-from-postings)"
        )
    if all(figures.get(f"{e}-search") for e in ("harness", "bm25s")):
        ours, theirs = np.load(args.work / "harness-top.npy"), np.load(args.work / "bm25s-top.npy")
        same = int((ours == theirs).all(axis=1).sum())
        print(f"top-{TOP} identical to bm25s's on {same}/{len(ours)} queries (bm25s clamps idf at 0 and sums float32)")
    check = run_phase(__file__, "check", args.corpus.resolve(), args.check_size, args.check_queries)
    if check is not None:
        print(
            f"top-{TOP} equal to rank-bm25's BM25Okapi on the first {check['documents']:,} passages: "
            f"{check['equal']}/{check['queries']} queries"
        )


if __name__ == "__main__":
    main()
