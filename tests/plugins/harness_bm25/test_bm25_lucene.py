"""``bm25:idf=lucene``: Lucene's idf, asked by name; the default stays rank-bm25's, with the same
options, label and saved settings as before the variant existed."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from harness.definitions.model import Runtime
from harness.definitions.protocols import Corpus
from harness.errors import HarnessError
from harness_bm25 import index as bm25_index
from harness_bm25.index import BM25Index
from harness_bm25.model import BM25

K1, B = 1.2, 0.75
# "the" is in every document, "river" in most: Lucene's idf weighs them little, never below 0
DOCUMENTS = [
    "the river runs through the city",
    "the city was founded by the river",
    "the capital of france is paris",
    "the river seine crosses paris",
    "a the the the",
    "the mountains rise above the river valley",
    "the river and the river again",
]


def lucene_scores(documents: list[list[str]], query: list[str]) -> np.ndarray:
    """Each document's score, written from Lucene's BM25Similarity (its idf; the weight times k1 + 1,
    which orders documents alike): a plain loop over documents and query tokens."""
    n = len(documents)
    avgdl = sum(map(len, documents)) / n
    df = Counter(token for doc in documents for token in set(doc))
    out = np.zeros(n)
    for d, doc in enumerate(documents):
        tf = Counter(doc)
        for token in query:
            if df[token] == 0:
                continue
            idf = math.log(1 + (n - df[token] + 0.5) / (df[token] + 0.5))
            out[d] += idf * tf[token] * (K1 + 1) / (tf[token] + K1 * (1 - B + B * len(doc) / avgdl))
    return out


@pytest.mark.parametrize("route", ["walk", "impacts"])
def test_lucene_idf_scores_and_ranks_as_written_from_lucene(route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scores against the plain loop, and the top k of both pruned searches (the MaxScore walk over
    blocks of 2 postings, and the impact sums) and of the exhaustive path against a stable sort of
    those scores."""
    monkeypatch.setattr(bm25_index, "BLOCK", 2)
    monkeypatch.setattr(bm25_index, "DENSE_SHARE", float("inf") if route == "walk" else 0.0)
    documents = [text.split() for text in DOCUMENTS]
    index = BM25Index.build(iter(documents), k1=K1, b=B, idf="lucene")
    queries = [["the", "river"], ["paris", "the"], ["the"], ["river", "valley", "the", "river"]]
    expected = np.stack([lucene_scores(documents, q) for q in queries])
    np.testing.assert_allclose(index.scores(queries), expected, rtol=1e-13, atol=0)
    assert (index.postings.idf > 0).all()  # so every query takes the pruned search
    for exhaustive in (False, True):
        docs, scores = index.top_k(queries, 3, exhaustive=exhaustive)
        for q in range(len(queries)):
            order = np.argsort(-expected[q], kind="stable")[:3]
            np.testing.assert_array_equal(docs[q], order)
            np.testing.assert_allclose(scores[q], expected[q][order], rtol=1e-13)


def test_the_idf_differs_from_rank_bm25s_where_rank_bm25_floors_it() -> None:
    """A term in every document: rank-bm25's idf is negative, floored to epsilon x the mean idf;
    Lucene's is ln(1 + 0.5 / (n + 0.5)), small and positive."""
    documents = [text.split() for text in DOCUMENTS]
    lucene = BM25Index.build(iter(documents), idf="lucene")
    okapi = BM25Index.build(iter(documents))
    the = lucene.vocabulary["the"]
    assert lucene.postings.idf[the] == pytest.approx(math.log(1 + 0.5 / 7.5), rel=1e-15)
    floor = BM25Okapi(documents).idf["the"]  # rank-bm25's own
    assert okapi.postings.idf[the] == floor and floor > 4 * lucene.postings.idf[the]


def test_the_variant_is_named_and_the_default_unchanged(tmp_path: Path) -> None:
    default, lucene = BM25(runtime=Runtime()), BM25(runtime=Runtime(), idf="lucene", k1=1.2)
    assert default.identity().options == {"k1": 1.5, "b": 0.75, "epsilon": 0.25}  # cache keys, board labels
    assert default.identity().label == "BM25"
    assert lucene.identity().options == {"k1": 1.2, "b": 0.75, "idf": "lucene"}  # no epsilon: it floors nothing
    assert lucene.identity().label == "BM25 (k1=1.2, idf=lucene)"
    corpus = Corpus(ids=[str(i) for i in range(len(DOCUMENTS))], texts=DOCUMENTS, langs=["en"] * len(DOCUMENTS))
    folder = tmp_path / "index"
    BM25(runtime=Runtime(), index_dir=folder).index(corpus)
    with pytest.raises(HarnessError, match="differs in parameters"):  # another idf: another index
        BM25(runtime=Runtime(), idf="lucene", index_dir=folder).index(corpus)
    with pytest.raises(HarnessError, match="idf must be one of rank-bm25, lucene"):
        BM25(runtime=Runtime(), idf="okapi")
    with pytest.raises(HarnessError, match="idf must be one of rank-bm25, lucene"):
        BM25Index.build(iter([["a"]]), idf="okapi")  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="epsilon floors rank-bm25's idf only"):
        BM25(runtime=Runtime(), idf="lucene", epsilon=0.5)
