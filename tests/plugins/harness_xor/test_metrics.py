"""The XOR metrics against hand arithmetic and against the official scripts' own building blocks.

Expected token lists and MeCab strings were printed by the official dependencies themselves:
``NLTK_DATA=<punkt_tab built from NLTK's english.pickle> python -c "from nltk import word_tokenize;
print(word_tokenize(TEXT))"`` (nltk 3.10.4) and ``python -c "import MeCab;
print(repr(MeCab.Tagger('-Owakati').parse(TEXT)))"`` (mecab-python3 1.0.12 + unidic-lite 1.0.8).
"""

from __future__ import annotations

import random
import sys
import warnings

import pytest

from harness.scoring.normalize import ascii_english
from harness_xor.metrics import (
    char_bleu,
    f1_and_em,
    first_tokens,
    full_normalize,
    full_prediction,
    full_references,
    recall_hit,
    wakati,
)
from harness_xor.tokens import _english_tables_path, read_punkt_tables, word_tokenize


@pytest.mark.parametrize(
    "text, tokens",
    [
        # "Inc." ends a sentence only with the real model's orthographic table (an empty table keeps
        # the two sentences together, and "Inc." then stays one token).
        (
            "She worked for Acme Inc. Her brother worked at Google.",
            ["She", "worked", "for", "Acme", "Inc", ".", "Her", "brother", "worked", "at", "Google", "."],
        ),
        (
            "Mr. Smith visited St. Peter's Basilica. It cost $2.8 million (2.8%).",
            [
                "Mr.",
                "Smith",
                "visited",
                "St.",
                "Peter",
                "'s",
                "Basilica",
                ".",
                "It",
                "cost",
                "$",
                "2.8",
                "million",
                "(",
                "2.8",
                "%",
                ")",
                ".",
            ],
        ),
        ('He said "yes" and left.', ["He", "said", "``", "yes", "''", "and", "left", "."]),
    ],
)
def test_word_tokenize_equals_nltk_with_the_real_punkt_model(text: str, tokens: list[str]) -> None:
    assert word_tokenize(text) == tokens


def test_punkt_tables_are_nltks_english_model() -> None:
    # Sizes of NLTK's tokenizers/punkt/PY3/english.pickle, compared entry by entry when adopted.
    tables = read_punkt_tables(_english_tables_path())
    assert [len(tables[name]) for name in ("ABBREV_TYPES", "COLLOCATIONS", "SENT_STARTERS", "ORTHO_CONTEXT")] == [
        156,
        37,
        39,
        20366,
    ]


def test_recall_is_a_raw_substring_of_the_first_tokens() -> None:
    contexts = ["Mr. Smith visited St. Peter's Basilica.", "It cost 2.8%."]
    tokens = first_tokens(contexts, 5000, word_tokenize)
    assert recall_hit(tokens, ["St. Peter 's"])
    assert not recall_hit(tokens, ["St. Peter's Basilica"])  # the tokens split "'s" off
    assert not recall_hit(tokens, ["2.8%"])  # tokens "2.8 %"
    assert not recall_hit(tokens, ["basilica"])  # case-sensitive
    assert recall_hit(tokens, ["isit"])  # any substring, even inside a word
    # The first context has 8 tokens (Mr. Smith visited St. Peter 's Basilica .): a budget of 8
    # stops before "It cost 2.8 % .", a budget of 11 ends with "2.8".
    assert first_tokens(contexts, 8, word_tokenize)[-1] == "."
    assert not recall_hit(first_tokens(contexts, 8, word_tokenize), ["2.8"])
    assert first_tokens(contexts, 11, word_tokenize)[-1] == "2.8"


def test_squad_normalisation() -> None:
    assert ascii_english("The  Eiffel-Tower, (Paris)!") == ["eiffeltower", "paris"]
    assert ascii_english("A") == []
    # te gold "A" normalises to nothing: an empty prediction gets EM 1 but F1 0 (official).
    assert f1_and_em("", ["A"], ascii_english) == (0.0, 1.0)
    # "the new york times" vs "New York": 2 common of 3 predicted, 2 gold -> P 2/3, R 1, F1 0.8
    assert f1_and_em("the New York Times", ["New York", "Boston"], ascii_english) == pytest.approx((0.8, 0.0))


def test_full_normalisation_deletes_counters_everywhere() -> None:
    assert full_normalize("1,868年 人口 Seoul's 5세 10년") == ["1868", "口", "seouls", "5세", "10"]
    assert full_normalize("Ｔｈｅ Eiffel") == ["ｔｈｅ", "eiffel"]  # no article removal, no NFKC


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("アンリ・ブラコノー", "アンリ ・ ブラコノー \n"),
        ("1868年", "1868 年 \n"),
        ("東京タワー、スカイツリー", "東京 タワー 、 スカイ ツリー \n"),
        ("", "\n"),
        ("\r\n", "\r \n"),
    ],
)
def test_wakati_equals_mecab_python3(text: str, parsed: str) -> None:
    assert wakati(text) == parsed


def test_japanese_gold_with_a_middle_dot_cannot_match_itself() -> None:
    gold = "アンリ・ブラコノー"
    # Official: the prediction's ・ becomes a space and MeCab then splits it "アンリ ブラ コノー";
    # the gold keeps it, "アンリ ・ ブラコノー". One common token of 3 and 3: P = R = F1 = 1/3, EM 0.
    assert full_prediction(gold, "ja") == "アンリ ブラ コノー \n"
    official = f1_and_em(full_prediction(gold, "ja"), full_references([gold], "ja"), full_normalize)
    assert official == pytest.approx((1 / 3, 0.0))
    corrected = f1_and_em(full_prediction(gold, "ja"), full_references([gold], "ja", symmetric=True), full_normalize)
    assert corrected == (1.0, 1.0)


def test_char_bleu_by_hand() -> None:
    # Hypothesis "New York" (8 chars) against "New York City" (13): every 1..4-gram of the
    # hypothesis is in the reference, so all precisions are 1 and BLEU = BP = exp(1 - 13/8).
    assert char_bleu(["New York City"], "New York") == pytest.approx(0.5352614285189903, rel=1e-15)
    # Exact 4+ character answers score 1; nothing in common scores 0.
    assert char_bleu(["1868"], "1868") == 1.0
    assert char_bleu(["abc"], "xyz") == 0.0
    # An exact 2-character answer: p3 = p4 = 0 are replaced by the smallest float, so
    # BLEU = (2.2250738585072014e-308) ** (2/4) = 1.49e-154 (NLTK 3.10 prints 1.491668146240062e-154).
    assert char_bleu(["ab"], "ab") == pytest.approx(1.491668146240062e-154, rel=1e-12)
    assert char_bleu(["abc"], "abc") == pytest.approx(sys.float_info.min**0.25, rel=1e-12)
    # Corrected variant: orders 1..2 for a 2-character answer -> 1.
    assert char_bleu(["ab"], "ab", effective_order=True) == 1.0
    assert char_bleu(["New York City"], "New York", effective_order=True) == char_bleu(["New York City"], "New York")


def test_char_bleu_equals_nltk_sentence_bleu_on_random_strings() -> None:
    # The official script calls nltk.translate.bleu(references, prediction) on plain strings.
    from nltk.translate import bleu

    rng = random.Random(0)
    alphabet = "ab cd年\n"
    cases = [
        (
            [("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))) for _ in range(rng.randint(1, 3))],
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))),
        )
        for _ in range(400)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for references, hypothesis in cases:
            assert char_bleu(references, hypothesis) == bleu(references, hypothesis), (references, hypothesis)
