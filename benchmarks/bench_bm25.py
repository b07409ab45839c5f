"""The harness's BM25 against bm25s and rank-bm25 on the same tokens: build time, query throughput,
peak memory, and whether the top-10 rankings agree.

    pip install -e ".[test,bench]"
    python benchmarks/bench_bm25.py                  # real XQuAD-R and 200,000 synthetic passages
    nice python benchmarks/bench_bm25.py --full      # and 1,000,000 synthetic passages (slow)

Baseline: bm25s (the ``bench`` extra's version, its default numpy backend, no numba; built with
``method="robertson"``, whose term weights are BM25Okapi's divided by k1 + 1, but whose idf is
clamped at 0 where BM25Okapi puts ``epsilon * mean(idf)``, and float32) and rank-bm25's
``BM25Okapi`` (the ``test`` extra's 0.2.2: the scores the harness reproduces), all with k1=1.5,
b=0.75 and top 10.

Corpora: real XQuAD-R as the LAReQA task builds its candidate pool (each sentence followed by its
paragraph, 13,014 candidates over 11 languages), queried with its questions, tokenised once by the
harness's tokeniser; synthetic passages made as ``synthetic_corpus.py`` makes them (100 words of
a Zipf vocabulary), queried with 5 words of the same distribution. For corpus files of millions
of passages, built without holding them in memory, see ``bench_bm25_scale.py``.

Each measurement runs in a fresh process, so its peak resident memory (VmHWM) is that of one
engine alone; the figure beside it is that peak less the resident memory once the tokens and the engine's
modules were loaded. Engines take turns (``--repeat`` rounds, each in a rotated
order) so a machine whose speed drifts slows them alike; min and median over the rounds are
printed. rank-bm25 scores a query with Python loops over every document, so it scores only
``--check-queries`` of the queries (its throughput is measured on those) and is left out at
1,000,000 passages; the harness's top 10 is checked against rank-bm25's on those queries, ties
ordered by document position as a stable sort orders them. The agreement with bm25s's top 10 is
printed too, for what it is worth given its other idf and precision.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_corpus import passages as synthetic_passages
from synthetic_corpus import queries as synthetic_queries

REPO = Path(__file__).resolve().parent.parent
ENGINES = ("harness", "bm25s", "rank-bm25")
TOP = 10
K1, B = 1.5, 0.75


# -- corpora (tokenised once, in the parent) ----------------------------------------------------


def _shared(tokens: list[list[str]], canonical: dict[str, str]) -> list[list[str]]:
    """The same token lists with one string object per distinct token, so they take 8 bytes a
    token in every engine's process (and pickle compactly)."""
    return [list(map(canonical.setdefault, doc, doc)) for doc in tokens]


def xquad_r_tokens(data_dir: Path) -> tuple[list[list[str]], list[list[str]]]:
    """LAReQA's candidate pool of the real XQuAD-R and its questions, tokenised by the harness."""
    from harness.definitions.task import DataRequest
    from harness_bm25.model import as_text
    from harness_bm25.tokenize import tokenize
    from harness_lareqa.task import LAReQA

    task = LAReQA()
    data = task.load(DataRequest(data_dir=data_dir / "lareqa" / "xquad-r", split="test"))
    corpus = task.corpus(data)
    canonical: dict[str, str] = {}
    documents = _shared([tokenize(as_text(text), lang) for text, lang in zip(corpus.texts, corpus.langs)], canonical)
    queries = _shared([tokenize(q.text, q.lang) for q in data.questions], canonical)
    return documents, queries


def synthetic_tokens(n: int, n_queries: int) -> tuple[list[list[str]], list[list[str]]]:
    """``synthetic_corpus``'s passages (texts) and queries; its words are already the harness's tokens."""
    from harness_bm25.tokenize import tokenize

    passages = [text.rstrip(".") for _, text in synthetic_passages(n)]
    assert all(tokenize(p, "en") == p.split() for p in passages[:100])
    canonical: dict[str, str] = {}
    documents = [list(map(canonical.setdefault, p.split(), p.split())) for p in passages]
    del passages
    return documents, _shared([q.split() for q in synthetic_queries(n_queries)], canonical)


# -- one engine in one process ------------------------------------------------------------------


def _memory_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def _stable_top(scores: np.ndarray) -> np.ndarray:
    """rank-bm25's ranking: all scores sorted descending, ties by document position."""
    return np.argsort(-scores, kind="stable")[:TOP]


def run_engine(engine: str, tokens_path: Path, out_path: Path, check_queries: int) -> dict[str, Any]:
    with open(tokens_path, "rb") as handle:
        documents, queries = pickle.load(handle)
    sample = queries[:check_queries]
    if engine == "harness":
        from harness_bm25.index import BM25Index
    elif engine == "bm25s":
        import bm25s
    else:
        from rank_bm25 import BM25Okapi
    loaded = _memory_kib("VmRSS")  # tokens and the engine's modules: build and search come on top
    start = time.perf_counter()
    if engine == "harness":
        index = BM25Index.build(documents, k1=K1, b=B)
        built = time.perf_counter() - start
        start = time.perf_counter()
        top = index.top_k(queries, TOP)[0]
    elif engine == "bm25s":
        retriever = bm25s.BM25(k1=K1, b=B, method="robertson")
        retriever.index(documents, show_progress=False)
        built = time.perf_counter() - start
        start = time.perf_counter()
        top = retriever.retrieve(queries, k=TOP, show_progress=False, n_threads=0)[0]
    else:
        reference = BM25Okapi(documents, k1=K1, b=B)
        built = time.perf_counter() - start
        queries = sample
        start = time.perf_counter()
        top = np.stack([_stable_top(reference.get_scores(q)) for q in queries])
    searched = time.perf_counter() - start
    np.save(out_path, np.asarray(top, dtype=np.int64))
    return {
        "build_s": built,
        "qps": len(queries) / searched,
        "peak_mib": _memory_kib("VmHWM") / 1024,
        "loaded_mib": loaded / 1024,
    }


def in_fresh_process(engine: str, tokens_path: Path, out_path: Path, check_queries: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", engine, str(tokens_path), str(out_path), str(check_queries)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode:
        raise SystemExit(f"{engine} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the comparison -----------------------------------------------------------------------------


def _agreement(ours: np.ndarray, other: np.ndarray) -> str:
    n = min(len(ours), len(other))
    same = int((ours[:n] == other[:n]).all(axis=1).sum())
    return f"{same}/{n} queries identical"


def compare(
    name: str,
    documents: list[list[str]],
    queries: list[list[str]],
    engines: tuple[str, ...],
    repeat: int,
    check_queries: int,
) -> None:
    checked = f"the first {min(check_queries, len(queries))}" if "rank-bm25" in engines else "not run"
    print(
        f"\n== {name}: {len(documents):,} documents, {sum(map(len, documents)):,} tokens, "
        f"{len(queries):,} queries (rank-bm25: {checked})",
        flush=True,
    )
    figures: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    with tempfile.TemporaryDirectory(prefix="bench-bm25-") as folder:
        tokens_path = Path(folder) / "tokens.pickle"
        with open(tokens_path, "wb") as handle:
            pickle.dump((documents, queries), handle, protocol=pickle.HIGHEST_PROTOCOL)
        tops: dict[str, np.ndarray] = {}
        for round_ in range(repeat):
            for engine in engines[round_ % len(engines) :] + engines[: round_ % len(engines)]:
                out_path = Path(folder) / f"{engine}.npy"
                figures[engine].append(in_fresh_process(engine, tokens_path, out_path, check_queries))
                tops[engine] = np.load(out_path)
    print(
        f"{'engine':10} {'build s (min/median)':>22} {'queries/s (min/median)':>24} {'peak MiB (min/median)':>23}"
        f" {'over tokens MiB':>16}"
    )
    medians: dict[str, dict[str, float]] = {}
    for engine, runs in figures.items():
        row = {key: [run[key] for run in runs] for key in runs[0]}
        medians[engine] = {key: statistics.median(values) for key, values in row.items()}
        print(
            f"{engine:10} {min(row['build_s']):10.2f} / {medians[engine]['build_s']:<9.2f}"
            f" {min(row['qps']):11.1f} / {medians[engine]['qps']:<10.1f}"
            f" {min(row['peak_mib']):10.0f} / {medians[engine]['peak_mib']:<10.0f}"
            f" {medians[engine]['peak_mib'] - medians[engine]['loaded_mib']:13.0f}"
        )
    ours = medians["harness"]
    for engine in engines[1:]:
        other = medians[engine]
        print(
            f"harness / {engine} (medians): queries/s x{ours['qps'] / other['qps']:.2f}, "
            f"build time x{ours['build_s'] / other['build_s']:.2f}, peak memory x{ours['peak_mib'] / other['peak_mib']:.2f}"
            f" (over tokens x{(ours['peak_mib'] - ours['loaded_mib']) / (other['peak_mib'] - other['loaded_mib']):.2f})"
        )
    for engine in engines[1:]:
        print(f"top-{TOP} vs {engine}: {_agreement(tops['harness'], tops[engine])}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        engine, tokens_path, out_path, check_queries = sys.argv[2:6]
        print(json.dumps(run_engine(engine, Path(tokens_path), Path(out_path), int(check_queries))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("HARNESS_REAL_DATA", REPO.parent / "shared" / "data")),
        help="real data folder holding lareqa/xquad-r (default: $HARNESS_REAL_DATA, else ../shared/data)",
    )
    parser.add_argument("--full", action="store_true", help="also 1,000,000 synthetic passages (without rank-bm25)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[200_000], help="synthetic corpus sizes")
    parser.add_argument("--no-real", action="store_true", help="skip real XQuAD-R")
    parser.add_argument("--queries", type=int, default=1000, help="queries on a synthetic corpus")
    parser.add_argument("--check-queries", type=int, default=100, help="queries rank-bm25 scores (and checks)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    print(
        f"bench_bm25: harness vs bm25s (method='robertson', numpy backend) and rank-bm25 BM25Okapi; "
        f"k1={K1}, b={B}, top {TOP}; {args.repeat} rounds, engines alternated, each run in a fresh process"
    )
    if not args.no_real:
        compare(
            "real XQuAD-R (LAReQA candidates)", *xquad_r_tokens(args.data_dir), ENGINES, args.repeat, args.check_queries
        )
    for n in args.sizes + ([1_000_000] if args.full else []):
        engines = ENGINES if n < 1_000_000 else ENGINES[:2]
        compare(
            f"synthetic {n:,} passages", *synthetic_tokens(n, args.queries), engines, args.repeat, args.check_queries
        )


if __name__ == "__main__":
    main()
