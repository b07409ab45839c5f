"""BM25: scores equal rank-bm25's, the index survives a save and reload, tokenisation per language."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import Corpus
from harness.demo import parallel_qa_dir
from harness.errors import HarnessError
from harness_bm25.index import BM25Index, StoredArray
from harness_bm25.model import BM25
from harness_bm25.tokenize import tokenize


def _demo_corpus() -> Corpus:
    doc = json.loads((parallel_qa_dir() / "en.json").read_text(encoding="utf-8"))
    texts = [s for article in doc["data"] for p in article["paragraphs"] for s in p["sentences"]]
    return Corpus(ids=[str(i) for i in range(len(texts))], texts=texts, langs=["en"] * len(texts))


QUERIES = ["Who founded the city?", "What is the capital of France?", "the the river"]


def test_scores_equal_rank_bm25() -> None:
    from rank_bm25 import BM25Okapi

    corpus = _demo_corpus()
    documents = [tokenize(t, "en") for t in corpus.texts]
    index = BM25Index.build(iter(documents), k1=1.2, b=0.7, epsilon=0.3)
    reference = BM25Okapi(documents, k1=1.2, b=0.7, epsilon=0.3)
    queries = [tokenize(q, "en") for q in QUERIES]
    expected = np.stack([reference.get_scores(q) for q in queries])
    # Equal up to the order in which a query's terms are summed (a few ulps).
    np.testing.assert_allclose(index.scores(queries), expected, rtol=1e-13, atol=0)


def test_saved_index_reloads_with_the_same_rankings(tmp_path: Path) -> None:
    corpus = _demo_corpus()
    folder = tmp_path / "index"
    first = BM25(runtime=Runtime(), index_dir=folder).index(corpus).search(QUERIES, langs=["en"] * 3, k=5)
    assert sorted(p.name for p in folder.iterdir()) == [
        "block_last.npy",
        "block_max.npy",
        "counts.npy",
        "dense_rows.npy",
        "dense_terms.npy",
        "idf.npy",
        "impacts.npy",
        "index.json",
        "indices.npy",
        "indptr.npy",
        "norms.npy",
        "term_max.npy",
        "vocabulary.json",
    ]
    reloaded = BM25(runtime=Runtime(), index_dir=folder).index(corpus)
    assert isinstance(reloaded.index.postings.counts, StoredArray)  # read as queries need it, not loaded
    again = reloaded.search(QUERIES, langs=["en"] * 3, k=5)
    np.testing.assert_array_equal(first.indices, again.indices)
    np.testing.assert_array_equal(first.scores, again.scores)


def test_an_index_of_another_corpus_or_setting_is_refused(tmp_path: Path) -> None:
    corpus = _demo_corpus()
    folder = tmp_path / "index"
    BM25(runtime=Runtime(), index_dir=folder).index(corpus)
    smaller = Corpus(ids=corpus.ids[:5], texts=corpus.texts[:5], langs=corpus.langs[:5])
    with pytest.raises(HarnessError, match="differs in corpus, documents"):
        BM25(runtime=Runtime(), index_dir=folder).index(smaller)
    with pytest.raises(HarnessError, match="differs in parameters"):
        BM25(runtime=Runtime(), k1=1.2, index_dir=folder).index(corpus)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(HarnessError, match="not empty and holds no BM25 index"):
        BM25(runtime=Runtime(), index_dir=other).index(corpus)


@pytest.mark.parametrize(
    "text, lang, tokens",
    [
        # Korean: morphemes, so 서울의 (of Seoul) and 서울이다 (is Seoul) share the token 서울.
        ("서울의 인구", "ko", ["서울", "의", "인구"]),
        ("수도는 서울이다.", "ko", ["수도", "는", "서울", "이", "다"]),
        # Bengali and Telugu: vowel signs and viramas stay inside their word.
        ("বাংলাদেশের রাজধানী কোথায়?", "bn", ["বাংলাদেশের", "রাজধানী", "কোথায়"]),
        ("భారతదేశ రాజధాని ఏది?", "te", ["భారతదేశ", "రాజధాని", "ఏది"]),
        ("Missä Eiffel-torni sijaitsee?", "fi", ["missä", "eiffel", "torni", "sijaitsee"]),
        ("Какая столица России?", "ru", ["какая", "столица", "россии"]),
        ("ما هي عاصمة مصر؟", "ar", ["ما", "هي", "عاصمة", "مصر"]),
    ],
)
def test_language_aware_tokens(text: str, lang: str, tokens: list[str]) -> None:
    assert tokenize(text, lang) == tokens


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "counts.npy").unlink(),
        lambda folder: (folder / "norms.npy").write_bytes((folder / "idf.npy").read_bytes()),
        lambda folder: (folder / "indptr.npy").write_bytes(b"\x93NUMPY cut"),
        lambda folder: (folder / "vocabulary.json").write_text("[" * 100_000, encoding="utf-8"),
        lambda folder: (folder / "index.json").write_text("[" * 100_000, encoding="utf-8"),
    ],
)
def test_a_damaged_saved_index_is_one_clear_error(tmp_path: Path, damage) -> None:
    corpus = _demo_corpus()
    folder = tmp_path / "index"
    BM25(runtime=Runtime(), index_dir=folder).index(corpus)
    damage(folder)
    with pytest.raises(HarnessError, match=f"^{folder}"):
        BM25(runtime=Runtime(), index_dir=folder).index(corpus)


@pytest.mark.parametrize("options", [{"k1": -5.0}, {"b": 1.5}, {"b": -0.1}, {"epsilon": -1.0}])
def test_parameters_outside_bm25_ranges_are_refused(options: dict) -> None:
    with pytest.raises(HarnessError, match="k1 must be >= 0, b within \\[0, 1\\] and epsilon >= 0"):
        BM25(runtime=Runtime(), **options)


def test_under_torchrun_rank_0_alone_builds_a_saved_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1 of 2 waits while rank 0 builds ``index_dir`` (played here at the second barrier),
    then loads what rank 0 wrote instead of building its own into the same folder."""
    from harness.models.distributed import World
    from harness_bm25 import model as bm25_model

    corpus = _demo_corpus()
    folder = tmp_path / "index"
    builds = []
    real_build = BM25Index.build
    monkeypatch.setattr(BM25Index, "build", lambda *args, **kwargs: builds.append(1) or real_build(*args, **kwargs))

    class RankOne(World):
        def barrier(self) -> None:
            self.barriers.append(1)
            if len(self.barriers) == 2:  # rank 0 has built the index meanwhile
                with monkeypatch.context() as inner:
                    inner.setattr(bm25_model, "current_world", World)
                    BM25(runtime=Runtime(), index_dir=folder).index(corpus)

    rank_one = RankOne(rank=1, size=2)
    object.__setattr__(rank_one, "barriers", [])
    monkeypatch.setattr(bm25_model, "current_world", lambda: rank_one)
    search = BM25(runtime=Runtime(), index_dir=folder).index(corpus)
    assert builds == [1] and rank_one.barriers == [1, 1]  # one build, rank 0's
    assert isinstance(search.index.postings.counts, StoredArray)
    expected = BM25(runtime=Runtime()).index(corpus).search(QUERIES, langs=["en"] * 3, k=5)
    np.testing.assert_array_equal(search.search(QUERIES, langs=["en"] * 3, k=5).indices, expected.indices)
