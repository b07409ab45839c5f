"""The MKQA normaliser, against expectations computed by hand from its four steps (lower-case,
delete ASCII punctuation, replace articles by a space, tokenise), and the official test's cases.

The normaliser was also compared with the official ``normalize_answer_by_language``
(apple/ml-mkqa@651b8cc, ``mkqa_eval_util.py``) on 60,000 random strings over all 26 languages
(article words, ASCII punctuation, Unicode blocks U+0020-U+2FFF, odd spaces): no difference.
"""

from __future__ import annotations

import pytest

from harness_mkqa.data import Annotation
from harness_mkqa.normalize import answer_tokens, normalize_answer
from harness_mkqa.scoring import score_examples


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        # fr: no closing \b, so a prefix goes: "leur" -> "le|ur" -> "ur", "dessin" -> "de|ssin" -> "ssin".
        ("leur dessin", "fr", "ur ssin"),
        # fr: alternatives in written order: "les" matches "le" first and keeps "s"; "une" matches "un" -> "e".
        ("Les Misérables, une histoire", "fr", "s misérables e histoire"),
        # fr: the apostrophe is deleted before the articles, so "l'" never matches: "l'homme" -> "lhomme".
        ("L'homme de la rue", "fr", "lhomme rue"),
        # it: "italia" starts with the article "i" -> "talia"; "isola" -> "sola".
        ("Italia isola", "it", "talia sola"),
        # it: "del" comes before "della" in the list, so "della" -> "del|la" -> "la" (no \b before "la").
        ("della casa", "it", "la casa"),
        # en: whole words only.
        ("The Beatles: an anthology", "en", "beatles anthology"),
        ("theatre", "en", "theatre"),
        # ar: every "ال" goes, even inside a word, which splits it.
        ("التفاحة", "ar", "تفاحة"),
        ("فالكتاب الجديد", "ar", "ف كتاب جديد"),
        # Only ASCII punctuation is deleted: the fullwidth comma and curly quotes stay.
        ("“quoted”, text!", "en", "“quoted” text"),
        # ko: whitespace tokens, no segmenter; ASCII punctuation deleted.
        ("서울, 대한민국!", "ko", "서울 대한민국"),
        ("서울특별시", "ko", "서울특별시"),
        # es/de: whole-word articles.
        ("esto es una manzana", "es", "esto es manzana"),
        ("Der Mann und das Haus", "de", "mann und haus"),
    ],
)
def test_normalized_strings(text: str, lang: str, expected: str) -> None:
    assert normalize_answer(text, lang) == expected


def test_every_character_is_a_token_for_chinese_japanese_thai_khmer() -> None:
    # Lower-case, no ASCII punctuation here, spaces dropped, every other character one token.
    expected = ["a", "p", "p", "l", "e", "i", "p", "h", "o", "n", "e", "1", "2", "，", "苹", "果"]
    for lang in ("zh_cn", "zh_hk", "zh_tw", "ja", "th", "km"):
        assert answer_tokens("Apple iPhone 12，苹果", lang) == expected
    assert answer_tokens("東京タワー 333m", "ja") == ["東", "京", "タ", "ワ", "ー", "3", "3", "3", "m"]
    # Thai: code points, vowel signs included, the space dropped ("ดี" is ด + ี).
    assert answer_tokens("ภาษาไทย ดี", "th") == ["ภ", "า", "ษ", "า", "ไ", "ท", "ย", "ด", "ี"]
    # Korean is not among them: "Apple iPhone 12，苹果" is three whitespace tokens there.
    assert answer_tokens("Apple iPhone 12，苹果", "ko") == ["apple", "iphone", "12，苹果"]


def _f1_em(prediction: str, golds: tuple[str, ...], lang: str) -> tuple[float, float]:
    scores = score_examples([Annotation(golds, ("entity",), golds[0], False)], [prediction], [0.0], [0], lang)
    return float(scores.f1[0]), float(scores.exact_match[0])


@pytest.mark.parametrize(
    ("prediction", "golds", "lang", "f1", "em"),
    [
        # The official tests/test_mkqa_eval.py cases (expected values copied from it as facts):
        ("alternative answer", ("dummy answer one", "alternative answer two"), "en", 0.8, 0.0),
        ("an answer ?? without stopwords", ("answer -- without, stopwords!!",), "en", 1.0, 1.0),
        ("esto es manzana", ("esto es una manzana", "esta es otra manzana"), "es", 1.0, 1.0),
        ("تفاحة", ("التفاحة", "هذه تفاحة"), "ar", 1.0, 1.0),
        ("c'est de la pomme", ("c'est la pomme", "c'est une autre pomme"), "fr", 1.0, 1.0),
        ("ez egy alma", ("ez alma", "ez egy újabb alma"), "hu", 1.0, 1.0),
        ("这个一个苹果", ("这是还是苹果", "这是另一个苹果"), "zh_cn", 0.7692307692307692, 0.0),
        ("នេះគឺជាផ្លែប៉ោម", ("នេះគឺជាផ្លែប៉ោមមួយទៀត",), "km", 0.8333333333333333, 0.0),
        # Empty against empty is F1 1 in MKQA (0 in SQuAD/MLQA); "the" normalises to empty in en.
        ("", ("",), "en", 1.0, 1.0),
        ("the", ("",), "en", 1.0, 1.0),
        ("", ("first dummy answer",), "en", 0.0, 0.0),
        # Character F1, hand-computed: "苹果手机" vs "苹果" -> 2 common of 4 and 2: P 1/2, R 1, F1 2/3.
        ("苹果手机", ("苹果",), "zh_cn", 2 / 3, 0.0),
    ],
)
def test_example_scores(prediction: str, golds: tuple[str, ...], lang: str, f1: float, em: float) -> None:
    assert _f1_em(prediction, golds, lang) == (f1, em)
