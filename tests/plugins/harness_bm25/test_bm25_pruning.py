"""The pruned top-k search (MaxScore with block bounds, compiled) returns the full ranking's top k,
ties included: against the exhaustive path over every posting and against rank-bm25's stable
ranking, on random corpora made of a few words (many equal scores), with repeated query terms,
blocks of a few postings and k from 1 to past the corpus, and the dense pass's impact sums at full
and at coarse resolution; an index of format 3 or 4 is upgraded in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from harness.errors import HarnessError
from harness_bm25 import index as bm25_index
from harness_bm25.index import BM25Index


def random_corpus(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Documents of 1 to 12 tokens from a skewed vocabulary of 40 words (frequent words repeat
    within documents, many documents are equal), with rare words no query needs, and queries of
    1 to 7 tokens that repeat words."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(40)]
    weights = 1.0 / np.arange(1, 41) ** 1.1
    weights /= weights.sum()
    documents = [list(rng.choice(vocabulary, size=rng.integers(1, 13), p=weights)) for _ in range(400)]
    # Rare filler words keep every query word's idf > 0 (in under half of the documents), so the
    # pruned path is the one taken.
    documents += [[f"rare{i}", f"rare{i}"] for i in range(400)]
    queries = [list(rng.choice(vocabulary[:25], size=rng.integers(1, 8))) for _ in range(60)]
    queries += [["w0", "w0", "w0"], ["w39", "w0"], ["unseen"], []]
    return documents, queries


@pytest.mark.parametrize(
    "block, first_scored, dense_share, impact_steps, span, row_share, chunk",
    [
        (1, 0, 1e9, 4094, 256, 1 / 3, 1 << 18),
        (3, 12, 1e9, 4094, 256, 1 / 3, 1 << 18),
        (128, 2048, 1e9, 4094, 256, 1 / 3, 1 << 18),
        (128, 2048, 0.0, 4094, 256, 1 / 3, 1 << 18),
        (128, 2048, 0.0, 4094, 256, 1 / 3, 300),
        (128, 2048, 0.0, 65534, 1, 0.0, 7),
        (3, 12, 0.01, 4094, 5, 0.1, 12),
        (128, 2048, 0.0, 7, 3, 0.05, 1),
        (3, 12, 0.0, 1, 256, 1.0, 1 << 18),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_top_k_is_the_full_ranking_top_k(
    seed: int,
    block: int,
    first_scored: int,
    dense_share: float,
    impact_steps: int,
    span: int,
    row_share: float,
    chunk: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``first_scored``: documents scored up front to start the threshold (none, a few, all);
    ``dense_share``: queries with this many times the documents in postings take the kernel's
    dense pass instead of the pruned walk (none, all, some); ``impact_steps``: the dense pass's
    resolution (at 4,094 the sums of these queries fit 2 bytes, at 65,534 they take 4; at 7 or 1 steps most sums tie, and every passage they cannot tell apart from the
    k-th must be scored exactly); ``span``: passages per span of sums (1: every passage its own;
    256: the corpus's 800 in 4, fewer than most k); ``row_share``: terms in more than this share
    of the documents are added as dense rows (every term, some, none); ``chunk``: passages the
    dense pass adds at a time (rounded down to whole spans, at least one: all 800 at once, 256
    then 256, 256, 32, or a span or two at a time)."""
    monkeypatch.setattr(bm25_index, "BLOCK", block)
    monkeypatch.setattr(bm25_index, "IMPACT_STEPS", impact_steps)
    monkeypatch.setattr(bm25_index, "SUM_SPAN", span)
    monkeypatch.setattr(bm25_index, "SUM_CHUNK", chunk)
    monkeypatch.setattr(bm25_index, "DENSE_ROW_SHARE", row_share)
    monkeypatch.setattr(bm25_index, "DENSE_SHARE", dense_share)
    monkeypatch.setattr(bm25_index, "SEED", first_scored)
    monkeypatch.setattr(bm25_index, "QUERY_BATCH", 7)  # several kernel calls, the last one short
    documents, queries = random_corpus(seed)
    # Chunked: the mapped pages dropped after every step (searches read them again from the file).
    monkeypatch.setattr(bm25_index, "MAPPED_BUDGET", 0 if chunk < len(documents) else 1 << 28)
    index = BM25Index.build(documents)
    assert index.postings.bounds.block == block
    df = np.diff(index.postings.indptr)
    np.testing.assert_array_equal(index.postings.dense_terms, np.flatnonzero(df > row_share * len(documents)))
    assert 0 < len(index.postings.dense_terms) < len(df) or row_share in (0.0, 1.0)
    idf = index.postings.idf
    known = [[index.vocabulary[t] for t in q if t in index.vocabulary] for q in queries]
    assert all(np.all(idf[q] > 0) for q in known)  # every query takes the pruned path
    reference = BM25Okapi(documents)
    expected = [reference.get_scores(q) for q in queries]
    for k in (1, 5, 10, 50, len(documents) + 5):
        got_docs, got_scores = index.top_k(queries, k)
        full_docs, full_scores = index.top_k(queries, k, exhaustive=True)
        np.testing.assert_array_equal(got_docs, full_docs)
        np.testing.assert_array_equal(got_scores, full_scores)
        for q, scores in enumerate(expected):
            order = np.argsort(-scores, kind="stable")[:k]
            np.testing.assert_array_equal(got_docs[q], order)
            np.testing.assert_array_equal(got_scores[q], scores[order])  # the same bits
    # The corpus is made for ties: equal scores straddle the cut of most of these queries.
    straddling = sum(np.sum(s == np.sort(s)[::-1][9]) > 1 for s in expected)
    assert straddling > 20


def test_bounds_are_the_largest_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block's bound is its largest weight and its last document; a term's, its largest."""
    monkeypatch.setattr(bm25_index, "BLOCK", 2)
    documents = random_corpus(3)[0]
    postings = BM25Index.build(documents).postings
    bounds = postings.bounds
    block_max, block_last = (
        bounds.block_max.read(0, len(bounds.block_max)),
        bounds.block_last.read(0, len(bounds.block_last)),
    )
    for term in range(postings.shape[0]):
        docs, weights = postings.weights(term)
        blocks = range(int(bounds.bptr[term]), int(bounds.bptr[term + 1]))
        assert len(blocks) == (len(docs) + 1) // 2
        for j, b in enumerate(blocks):
            assert block_max[b] == weights[2 * j : 2 * j + 2].max()
            assert block_last[b] == docs[min(2 * j + 1, len(docs) - 1)]
        assert bounds.term_max[term] == weights.max()


def test_impacts_are_weights_in_whole_steps_rounded_up() -> None:
    """A posting's impact is the fewest steps of largest idf * (k1 + 1) / IMPACT_STEPS that add
    up to more than its weight; the largest is at most IMPACT_STEPS + 1."""
    postings = BM25Index.build(random_corpus(5)[0]).postings
    step = postings.idf.max() * (postings.k1 + 1.0) / bm25_index.IMPACT_STEPS
    impacts = postings.impacts.read(0, len(postings.impacts))
    for term in range(postings.shape[0]):
        weights = postings.weights(term)[1]
        got = impacts[postings.indptr[term] : postings.indptr[term + 1]].astype(np.float64)
        assert np.all(got * step > weights * (1 - 1e-12)) and np.all((got - 1) * step <= weights * (1 + 1e-12))
    assert impacts.dtype == np.uint16 and impacts.max() <= bm25_index.IMPACT_STEPS + 1


@pytest.mark.parametrize("format", [3, 4, 5, 6])
def test_an_older_index_is_upgraded_in_place(tmp_path: Path, format: int) -> None:
    """Format 3 had no block bounds, format 4 no impacts, format 5 no dense rows, format 6 impacts
    of 65,534 steps: each gains what it lacks on load."""
    documents, queries = random_corpus(4)
    folder = tmp_path / "index"
    expected = BM25Index.build(documents, folder).top_k(queries, 10)
    info = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    lacking = {
        3: ["block_max.npy", "block_last.npy", "term_max.npy", "impacts.npy", "dense_terms.npy", "dense_rows.npy"],
        4: ["impacts.npy", "dense_terms.npy", "dense_rows.npy"],
        5: ["dense_terms.npy", "dense_rows.npy"],
        6: [],
    }
    for name in lacking[format]:
        (folder / name).unlink()
    del info["impact_steps"]
    if format == 3:
        del info["block"]
    (folder / "index.json").write_text(json.dumps({**info, "format": format}), encoding="utf-8")
    got = BM25Index.load(folder).top_k(queries, 10)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert json.loads((folder / "index.json").read_text(encoding="utf-8"))["format"] == bm25_index.FORMAT
    assert sorted(p.name for p in folder.iterdir() if "tmp" in p.name) == []


def test_an_index_of_an_unknown_format_is_refused_with_its_format(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    BM25Index.build([["a", "b"]], folder)
    info = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    (folder / "index.json").write_text(json.dumps({**info, "format": 2}), encoding="utf-8")
    with pytest.raises(HarnessError, match="holds format 2: delete the folder"):
        BM25Index.load(folder)


def test_a_process_forked_after_a_search_can_search() -> None:
    """numba's thread pool is a fork-safe one: with GNU OpenMP (torch's libgomp present) a child
    forked after a parallel search was killed at its first search."""
    documents, queries = random_corpus(5)
    index = BM25Index.build(documents)
    expected = index.top_k(queries, 10)[0]
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's result is checked by the parent)
        os.close(read)
        os.write(write, index.top_k(queries, 10)[0].tobytes())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = np.frombuffer(pipe.read(), dtype=expected.dtype)
    assert os.waitpid(child, 0)[1] == 0
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)
