"""Top-k search over postings ranks as a stable sort of rank-bm25's scores does; the vectorised
build gives the weights a plain per-document loop gives; a saved index has normal permissions."""

from __future__ import annotations

import math
import os
import stat
from collections import Counter
from collections.abc import Iterator
from functools import partialmethod
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from harness_bm25 import index as bm25_index
from harness_bm25.index import BM25Index
from tests.plugins.harness_bm25.test_bm25_okapi import demo_corpus


def stable_ranking(reference: BM25Okapi, query: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """rank-bm25's top k: every score sorted descending, ties by document position."""
    scores = reference.get_scores(query)
    order = np.argsort(-scores, kind="stable")[:k]
    return order, scores[order]


@pytest.fixture(params=["pruned", "sparse", "dense", "dense, 3 postings at a time"])
def accumulation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one way of finding a query's top k: the compiled pruned search (blocks of 2
    postings), or every posting summed over their union, or into all documents (reading a few
    postings at a time, as over a corpus of millions)."""
    if request.param == "pruned":
        monkeypatch.setattr(bm25_index, "BLOCK", 2)
        return request.param
    monkeypatch.setattr(BM25Index, "top_k", partialmethod(BM25Index.top_k, exhaustive=True))
    monkeypatch.setattr(bm25_index, "SPARSE_SHARE", 0 if request.param == "sparse" else 10**12)
    if request.param.endswith("at a time"):
        monkeypatch.setattr(bm25_index, "READ_POSTINGS", 3)
    return request.param


@pytest.mark.parametrize("k", [1, 10, 100])
def test_top_k_is_rank_bm25s_stable_ranking(accumulation: str, k: int) -> None:
    documents, queries = demo_corpus()
    reference = BM25Okapi(documents)
    indices, scores = BM25Index.build(documents).top_k(queries, k)
    for query, got_indices, got_scores in zip(queries, indices, scores):
        expected_indices, expected_scores = stable_ranking(reference, query, k)
        np.testing.assert_array_equal(got_indices, expected_indices)
        # Summed in the query's token order, as rank-bm25 sums: the same bits.
        np.testing.assert_array_equal(got_scores, expected_scores)


def test_ties_are_ordered_by_position_and_cut_at_k(accumulation: str) -> None:
    documents = [["a", "b"], ["c", "d"], ["a", "b"], ["a", "b"], ["e", "f"]]
    index = BM25Index.build(documents)
    indices, scores = index.top_k([["a"]], 2)
    assert indices.tolist() == [[0, 2]]  # documents 0, 2 and 3 tie; the lowest positions are kept
    assert scores[0, 0] == scores[0, 1] > 0
    np.testing.assert_array_equal(indices[0], stable_ranking(BM25Okapi(documents), ["a"], 2)[0])


def test_k_beyond_the_corpus_ranks_every_document(accumulation: str) -> None:
    documents = [["a", "b"], ["c"], ["b", "b", "d"], ["e"], ["f"]]
    indices, scores = BM25Index.build(documents).top_k([["b", "e"]], 10)
    expected_indices, expected_scores = stable_ranking(BM25Okapi(documents), ["b", "e"], 10)
    assert indices.shape == (1, 5)
    np.testing.assert_array_equal(indices[0], expected_indices)
    np.testing.assert_array_equal(scores[0], expected_scores)
    assert indices[0, -2:].tolist() == [1, 4]  # those with no query term come last, in order


@pytest.mark.parametrize("query", [["unseen", "words"], []], ids=["unknown terms only", "empty"])
def test_a_query_that_matches_nothing_ranks_documents_in_order(accumulation: str, query: list[str]) -> None:
    documents = [["a"], ["b"], ["c"], ["a", "c"]]
    indices, scores = BM25Index.build(documents).top_k([query], 3)
    assert indices.tolist() == [[0, 1, 2]]
    assert scores.tolist() == [[0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(indices[0], stable_ranking(BM25Okapi(documents), query, 3)[0])


def test_documents_scoring_below_zero_come_after_those_without_the_term(accumulation: str) -> None:
    # Every term is in more than half of the documents, so the mean idf, and with it the floor
    # epsilon * mean(idf) that replaces each negative idf, is negative: matching scores < 0.
    documents = [["a", "b"], ["a", "b"], ["a"]]
    indices, scores = BM25Index.build(documents).top_k([["b"]], 3)
    expected_indices, expected_scores = stable_ranking(BM25Okapi(documents), ["b"], 3)
    assert indices.tolist() == [[2, 0, 1]] and scores[0, 1] < 0
    np.testing.assert_array_equal(indices[0], expected_indices)
    np.testing.assert_array_equal(scores[0], expected_scores)


def naive_weights(documents: list[list[str]], k1: float, b: float, epsilon: float) -> dict[tuple[str, int], float]:
    """BM25Okapi's weight of each (term, document) pair, one document and one term at a time."""
    counts = [Counter(doc) for doc in documents]
    doc_freq: Counter[str] = Counter()
    for count in counts:
        doc_freq.update(count.keys())
    n = len(documents)
    idf = {term: math.log(n - df + 0.5) - math.log(df + 0.5) for term, df in doc_freq.items()}
    total = 0.0
    for value in idf.values():  # left to right, as rank-bm25 adds them (sum() may compensate)
        total += value
    floor = epsilon * (total / len(idf))
    idf = {term: floor if value < 0 else value for term, value in idf.items()}
    avgdl = sum(map(len, documents)) / n
    return {
        (term, d): idf[term] * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(documents[d]) / avgdl)))
        for d, count in enumerate(counts)
        for term, tf in count.items()
    }


@pytest.mark.parametrize(
    "run_tokens, merge_postings",
    [
        (bm25_index.RUN_TOKENS, bm25_index.MERGE_POSTINGS),  # one run, one merge step
        (1, 400),  # a run per document
        (37, 200),  # runs that cut a term's postings between them, merge steps of a few terms
    ],
)
def test_build_gives_the_naive_weights(run_tokens: int, merge_postings: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the number of sorted runs and merge steps (the memory bound), the same weights."""
    monkeypatch.setattr(bm25_index, "MERGE_POSTINGS", merge_postings)
    documents = demo_corpus()[0]
    index = BM25Index.build(iter(documents), k1=1.2, b=0.6, epsilon=0.3, run_tokens=run_tokens)
    terms = list(index.vocabulary)
    assert terms == list(dict.fromkeys(token for doc in documents for token in doc))  # first appearance order
    postings = index.postings
    assert postings.shape == (len(terms), len(documents))
    assert postings.counts.dtype == np.uint8  # every count under 256: one byte a posting
    got = {}
    for term, number in index.vocabulary.items():
        doc_ids, weights = postings.weights(number)
        assert np.all(np.diff(doc_ids) > 0)  # each term's documents in order, once each
        got.update({(term, int(d)): float(w) for d, w in zip(doc_ids, weights)})
    assert got == naive_weights(documents, 1.2, 0.6, 0.3)


def test_a_count_past_255_widens_the_counts() -> None:
    documents = [["a"] * 300 + ["b"], ["b", "c"], ["c"]]
    index = BM25Index.build(documents, run_tokens=2)
    assert index.postings.counts.dtype == np.uint16
    got = {
        (term, int(d)): float(w)
        for term, number in index.vocabulary.items()
        for d, w in zip(*index.postings.weights(number))
    }
    assert got == naive_weights(documents, 1.5, 0.75, 0.25)


@pytest.fixture
def umask() -> Iterator[int]:
    mask = 0o027
    previous = os.umask(mask)
    try:
        yield mask
    finally:
        os.umask(previous)


def test_saved_index_has_normal_permissions(tmp_path: Path, umask: int) -> None:
    folder = tmp_path / "parent" / "index"
    BM25Index.build([["a", "b"], ["b", "c"]], folder, metadata={"corpus": "test"})
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask == 0o750  # not mkdtemp's 0700
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == dict.fromkeys(
        [
            "counts.npy",
            "indices.npy",
            "indptr.npy",
            "idf.npy",
            "norms.npy",
            "vocabulary.json",
            "index.json",
            "block_max.npy",
            "block_last.npy",
            "term_max.npy",
            "impacts.npy",
            "dense_rows.npy",
            "dense_terms.npy",
        ],
        0o640,
    )
    assert [p.name for p in folder.parent.iterdir()] == ["index"]  # no staging folder left behind


def test_a_failed_build_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    with pytest.raises(TypeError):
        BM25Index.build([["a"]], folder, metadata={"corpus": object()})  # not JSON: fails after the arrays
    assert list(tmp_path.iterdir()) == []
