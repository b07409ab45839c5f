"""The sparse BM25 gives rank-bm25's BM25Okapi scores and rankings, and tokenises every script."""

from __future__ import annotations

import json

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from harness.definitions.model import Runtime
from harness.definitions.protocols import Corpus
from harness.demo import LANGUAGES, parallel_qa_dir
from harness.models.search import rank_descending
from harness_bm25.index import BM25Index
from harness_bm25.model import BM25
from harness_bm25.tokenize import tokenize


def demo_corpus() -> tuple[list[list[str]], list[list[str]]]:
    """Sentences (documents) and questions of every demo language, tokenised."""
    documents, queries = [], []
    for lang in LANGUAGES:
        doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
        for article in doc["data"]:
            for paragraph in article["paragraphs"]:
                documents += [tokenize(s, lang) for s in paragraph["sentences"]]
                queries += [tokenize(qa["question"], lang) for qa in paragraph["qas"]]
    return documents, queries


@pytest.mark.parametrize("params", [{}, {"k1": 1.2, "b": 0.5, "epsilon": 0.1}])
def test_scores_and_rankings_equal_rank_bm25(params: dict[str, float]) -> None:
    documents, queries = demo_corpus()
    reference = BM25Okapi(documents, **params)
    expected = np.array([reference.get_scores(q) for q in queries])
    got = BM25Index.build(documents, **params).scores(queries)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(rank_descending(got), rank_descending(expected))


def test_negative_idf_is_floored_like_rank_bm25() -> None:
    # "the" is in 3 of 4 documents: idf = ln(1.5/3.5) < 0, replaced by 0.25 * mean idf.
    documents = [["the", "cat"], ["the", "dog"], ["the", "bird"], ["fish"]]
    expected = BM25Okapi(documents).get_scores(["the"])
    assert np.allclose(BM25Index.build(documents).scores([["the"]])[0], expected)
    assert expected[0] > 0


def test_model_searches_across_languages_with_top_k() -> None:
    model = BM25(runtime=Runtime(device_request="cpu"))
    corpus = Corpus(
        ids=["a", "b", "c"],
        texts=["Der Hund bellt.", "犬が吠える。", "The dog barks loudly."],
        langs=["de", "ja", "en"],
    )
    index = model.index(corpus)
    ranking = index.search(["dog barks", "吠える犬"], langs=["en", "ja"], k=2)
    assert ranking.indices[0, 0] == 2 and ranking.indices[1, 0] == 1
    assert index.search(["dog"], langs=["en"], k=None).indices.shape == (1, 3)


@pytest.mark.parametrize(
    "text, lang, expected",
    [
        ("हिन्दी भाषा", "hi", ["हिन्दी", "भाषा"]),  # vowel signs and virama stay inside the word
        ("العربيّة لغة", "ar", ["العربيّة", "لغة"]),  # the shadda (a combining mark) too
        ("Die STRAẞE, bitte!", "de", ["die", "strasse", "bitte"]),  # case folding, punctuation dropped
        ("Tiếng Việt có dấu.", "vi", ["tiếng", "việt", "có", "dấu"]),
    ],
)
def test_spaced_scripts_keep_words_whole(text: str, lang: str, expected: list[str]) -> None:
    assert tokenize(text, lang) == expected


def test_unspaced_scripts_use_real_segmenters() -> None:
    zh = tokenize("我爱北京天安门。", "zh")
    assert "北京" in zh and "天安门" in zh and "。" not in zh
    ja = tokenize("東京タワーに行きました。", "ja")
    assert "東京" in ja and "に" in ja and "。" not in ja
    assert tokenize("ภาษาไทยง่ายนิดเดียว", "th") == ["ภาษาไทย", "ง่าย", "นิดเดียว"]  # newmm's dictionary words
    assert tokenize("北京", "zh_cn") == tokenize("北京", "zh")
