"""Span F1 of tag sequences: hand-worked cases and a differential test against seqeval 1.2.2."""

from __future__ import annotations

import random
import warnings

import pytest

from harness_xtreme.tagging import chunks, letter_and_type, span_scores


def test_letters_and_types() -> None:
    assert letter_and_type("B-PER") == ("B", "PER")
    assert letter_and_type("I-PER-X") == ("I", "PER-X")  # only the first "-" after the letter splits
    assert letter_and_type("NOUN") == ("N", "OUN")  # UD tags have no prefix: first letter, then the rest
    assert letter_and_type("X") == ("X", "_")
    assert letter_and_type("O") == ("O", "_")


def test_entities_across_sentences() -> None:
    # Sentences are laid end to end with an "O" after each: positions 0-3, separator 4, then 5-6.
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG"]]
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O"]]
    assert chunks(gold) == {("PER", 0, 1), ("LOC", 3, 3), ("ORG", 5, 6)}
    assert chunks(predicted) == {("PER", 0, 1), ("ORG", 3, 3), ("ORG", 5, 5)}
    # One chunk in common out of 3 on each side: P = R = F1 = 1/3.
    scores = span_scores(gold, predicted)
    assert (scores.precision, scores.recall, scores.f1) == pytest.approx((100 / 3, 100 / 3, 100 / 3))


def test_pos_tags_make_runs_and_keep_a_stale_start() -> None:
    # Equal POS tags form one chunk; a change of type closes it.
    assert chunks([["NOUN", "NOUN", "VERB"]]) == {("OUN", 0, 1), ("ERB", 2, 2)}
    # "X" has the type "_" of the "O" before it, so it starts no chunk; the chunk NOUN closes then
    # begins where the last chunk began (position 0, the "O"), as in seqeval.
    assert chunks([["O", "X", "NOUN"]]) == {("_", 0, 1), ("OUN", 2, 2)}


def test_no_chunks_scores_zero() -> None:
    assert span_scores([["O", "O"]], [["O", "O"]]).as_metrics() == {"f1": 0.0, "precision": 0.0, "recall": 0.0}


TAGS = [
    "O",
    "O",
    "B-PER",
    "I-PER",
    "E-PER",
    "S-PER",
    "B-LOC",
    "I-LOC",
    "NOUN",
    "NOUN",
    "PROPN",
    "VERB",
    "X",
    "PUNCT",
    ".",
    "B",
    "I-",
    "ADJ",
    "ADP",
]


def _random_case(rng: random.Random) -> tuple[list[list[str]], list[list[str]]]:
    gold = [[rng.choice(TAGS) for _ in range(rng.randint(0, 6))] for _ in range(rng.randint(1, 4))]
    predicted = [[tag if rng.random() < 0.6 else rng.choice(TAGS) for tag in sentence] for sentence in gold]
    return gold, predicted


def test_equals_seqeval_1_2_2_on_random_sequences() -> None:
    seqeval = pytest.importorskip("seqeval.metrics")
    from seqeval.metrics.sequence_labeling import get_entities

    rng = random.Random(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns about every non-IOB tag and every 0/0
        for _ in range(400):
            gold, predicted = _random_case(rng)
            assert chunks(gold) == set(get_entities(gold))
            scores = span_scores(gold, predicted)
            # XTREME's evaluate.py: f1_score(labels, predictions) * 100, likewise precision and recall.
            assert scores.f1 == seqeval.f1_score(gold, predicted) * 100
            assert scores.precision == seqeval.precision_score(gold, predicted) * 100
            assert scores.recall == seqeval.recall_score(gold, predicted) * 100
