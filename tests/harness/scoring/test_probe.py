"""The language-ID probe: perfect on vectors that carry the language, chance on vectors that do not."""

from __future__ import annotations

import math

import numpy as np

from harness.scoring.probe import language_id_probe


def test_vectors_that_carry_the_language_are_told_apart_perfectly() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(600, 16))
    langs = ["en", "zh"] * 300
    vectors[:, 0] = [5.0 if lang == "zh" else -5.0 for lang in langs]  # one coordinate says it all
    result = language_id_probe(vectors, langs, ("en", "zh"), seed=0)
    assert result is not None and result.accuracy == 1.0
    assert (result.train, result.test) == (400, 200) and result.majority == 0.5


def test_vectors_without_language_signal_give_chance() -> None:
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(3000, 16))
    langs = ["en", "zh"] * 1500
    result = language_id_probe(vectors, langs, ("en", "zh"), seed=0)
    assert result is not None and abs(result.accuracy - 0.5) < 0.05


def test_only_the_two_languages_count_and_a_missing_one_gives_none() -> None:
    rng = np.random.default_rng(3)
    langs = ["en"] * 40 + ["de"] * 50 + ["zh"] * 20
    result = language_id_probe(rng.normal(size=(110, 4)), langs, ("en", "zh"), seed=0)
    assert result is not None
    assert result.test == math.ceil(60 / 3) and result.train == 60 - math.ceil(60 / 3)
    # stratified: the hold-out keeps the 40:20 proportion, 13.3 : 6.7 rounded by largest remainder
    assert result.majority == 13 / 20
    assert language_id_probe(rng.normal(size=(90, 4)), langs[:90], ("en", "zh"), seed=0) is None
