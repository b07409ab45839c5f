"""The official normalisers on hand-worked cases (each expectation follows the official steps:
lowercase -> delete punctuation -> articles to a space -> split/segment)."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.scoring.answers import token_f1
from harness.scoring.normalize import ascii_english, multilingual
from harness.scoring.span_file import SpanQuestion
from harness.scoring.spans import score_questions


def test_squad_v1_deletes_ascii_punctuation_and_english_articles() -> None:
    # "The Eiffel-Tower!" -> "the eiffel-tower!" -> "the eiffeltower" -> " eiffeltower"
    assert ascii_english("The Eiffel-Tower!") == ["eiffeltower"]
    # only whole words are articles: "theatre" and "Anna" stay
    assert ascii_english("an apple, a pear and THE theatre of Anna") == [
        "apple",
        "pear",
        "and",
        "theatre",
        "of",
        "anna",
    ]
    # punctuation is deleted, not replaced by a space
    assert ascii_english("U.S.") == ["us"]


def test_squad_v1_is_english_only() -> None:
    # Non-ASCII punctuation is kept and unspaced scripts are one token, for every language.
    assert ascii_english("«Paris»") == ["«paris»"]
    assert ascii_english("「東京」。") == ["「東京」。"]
    assert ascii_english("กรุงเทพมหานคร") == ["กรุงเทพมหานคร"]


def test_mlqa_arabic_removes_al_everywhere_splitting_words() -> None:
    # 'الكتاب رجال' -> ' كتاب رج ' : the prefix goes, and "رجال" loses its inner "ال".
    assert multilingual("ar")("الكتاب رجال") == ["كتاب", "رج"]
    # "فالكتاب" (fa + al + kitab): one word becomes two tokens.
    assert multilingual("ar")("فالكتاب") == ["ف", "كتاب"]


def test_mlqa_spanish_una_normalises_to_nothing_em_1_f1_0() -> None:
    assert multilingual("es")("Una") == []
    assert multilingual("es")("¡Una casa, los perros!") == ["casa", "perros"]
    # One question whose gold is "una": predicting "una" (or "") is an exact match (both
    # normalise to ""), but F1 is 0 because no token is shared: EM 100, F1 0.
    question = SpanQuestion("q1", "¿?", "una", ("una",))
    for prediction in ("una", ""):
        scores = score_questions([question], {"q1": prediction}, multilingual("es"))
        assert (scores.exact_match, scores.f1) == (100.0, 0.0)


def test_mlqa_zh_mixed_segmentation_stops_at_u9fa5() -> None:
    zh = multilingual("zh")
    # "Apple iPhone 12，苹果": "，" (U+FF0C, Po) is deleted; 苹 and 果 are single tokens.
    assert zh("Apple iPhone 12，苹果") == ["apple", "iphone", "12", "苹", "果"]
    # U+9FA5 is the last character split off; U+9FA6 is outside the official range and stays
    # glued to the following "c"; CJK extension A (U+3400, U+3401) is never split.
    assert zh("ab\u9fa5\u9fa6c") == ["ab", "\u9fa5", "\u9fa6c"]
    assert zh("\u3400\u3401 x") == ["\u3400\u3401", "x"]


def test_mlqa_removes_cjk_punctuation_and_keeps_non_ascii_symbols() -> None:
    # 「」。 are Unicode punctuation (Ps/Pe/Po): deleted. 東 (U+6771) and 京 (U+4EAC) are split in zh.
    assert multilingual("zh")("「東京」。") == ["東", "京"]
    assert multilingual("en")("「東京」。") == ["東京"]
    # € (Sc) and ° (So) are symbols, not punctuation: kept; "+" is in string.punctuation: deleted;
    # "…" (U+2026) is Po: deleted.
    assert multilingual("en")("€5 + 3°…") == ["€5", "3°"]


def test_mlqa_article_lists_per_language() -> None:
    assert multilingual("de")("Der Hund und die Katze") == ["hund", "und", "katze"]
    # Vietnamese: the official list removes words that are not articles (của "of", cái classifier).
    assert multilingual("vi")("cái bàn của tôi") == ["bàn", "tôi"]
    assert multilingual("en")("The U.S. Army") == ["us", "army"]
    # Hindi and Chinese remove nothing.
    assert multilingual("hi")("the") == ["the"]
    assert multilingual("zh")("the") == ["the"]


def test_multilingual_language_without_rules_is_an_error() -> None:
    with pytest.raises(HarnessError, match="no answer normalisation rules for language 'fr'"):
        multilingual("fr")


def test_f1_by_hand() -> None:
    # en: "the big red dog" -> [big, red, dog]; "a red dog" -> [red, dog]; 2 shared:
    # P = 2/3, R = 2/2, F1 = 2 * (2/3) * 1 / (2/3 + 1) = 0.8
    assert token_f1(multilingual("en")("the big red dog"), multilingual("en")("a red dog")) == pytest.approx(0.8)
    # zh: 北京大学 -> [北, 京, 大, 学] vs 北京 -> [北, 京]: P = 2/4, R = 1, F1 = 2/3;
    # under SQuAD v1.1 each is a single token and they differ: F1 0.
    assert token_f1(multilingual("zh")("北京大学"), multilingual("zh")("北京")) == pytest.approx(2 / 3)
    assert token_f1(ascii_english("北京大学"), ascii_english("北京")) == 0.0


def test_score_questions_counts_missing_predictions_as_zero() -> None:
    questions = [SpanQuestion("a", "?", "c", ("red dog",)), SpanQuestion("b", "?", "c", ("x", "blue cat"))]
    # a: exact (EM 1, F1 1); b: "the cat" vs golds "x" (F1 0) and "blue cat" (P 1/1, R 1/2, F1 2/3)
    scores = score_questions(questions, {"a": "Red dog.", "b": "the cat"}, multilingual("en"))
    assert scores.exact_match == 100.0 * 1 / 2
    assert scores.f1 == 100.0 * (1 + 2 / 3) / 2
    missing = score_questions(questions, {"a": "red dog"}, multilingual("en"))
    assert (missing.exact_match, missing.f1, missing.unanswered) == (50.0, 50.0, 1)
