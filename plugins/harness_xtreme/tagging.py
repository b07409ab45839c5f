"""Span F1 of tag sequences (PAN-X, UD-POS) as XTREME computes it: seqeval 1.2.2's default mode.

XTREME's ``evaluate.py`` calls seqeval's ``f1_score``, ``precision_score`` and ``recall_score``
with their defaults (micro average, no scheme, not strict). That mode finds chunks with a small
state machine over the sentences laid end to end, an ``O`` after each sentence, and then counts
chunks (type, first, last) that the gold and the prediction share. This module is the harness's
own implementation of that machine; ``tests/plugins/harness_xtreme`` checks it against seqeval
1.2.2 on random sequences. Its rules, applied to every tag in turn:

* a tag is split into a *letter* (its first character) and a *type* (what follows the first
  ``-`` after that letter, or everything after the letter when there is no ``-``; ``_`` when
  that is empty): ``B-PER`` -> (B, PER); ``O`` -> (O, _); and for UD-POS tags, which have no
  prefix, ``NOUN`` -> (N, OUN), ``PROPN`` -> (P, ROPN), ``X`` -> (X, _);
* the open chunk ends before the current tag if the previous letter is E or S; or the pair of
  letters is B->B, B->S, B->O, I->B, I->S or I->O; or the previous letter is neither O nor
  ``.`` and the type changes;
* a chunk starts at the current tag if its letter is B or S; or the pair is E->E, E->I, S->E,
  S->I, O->E or O->I; or its letter is neither O nor ``.`` and the type changes.

So a run of equal UD-POS tags is one chunk, and a tag whose type equals the previous one starts
nothing (``O X``: X has O's type ``_``), in which case the chunk it closes later begins where the
last chunk began -- seqeval's behaviour, kept, which is why XTREME's POS "F1" is not per-token
accuracy and why its value depends on the seqeval version (the mock UD-POS set gives 70.40 with
1.2.2; XTREME's own test expects 70.22, made with an older seqeval).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from harness_xtreme.metrics import counted_scores

#: A chunk: (type, first position, last position) in the sentences laid end to end.
Chunk = tuple[str, int, int]

#: (previous letter, letter) pairs that end the open chunk / start a new one.
_ENDING = {("B", "B"), ("B", "S"), ("B", "O"), ("I", "B"), ("I", "S"), ("I", "O")}
_STARTING = {("E", "E"), ("E", "I"), ("S", "E"), ("S", "I"), ("O", "E"), ("O", "I")}
#: Letters that never take part in a type change.
_UNTYPED = ("O", ".")


def letter_and_type(tag: str) -> tuple[str, str]:
    """Split a non-empty tag into seqeval's letter and type (see the module docstring).

    >>> letter_and_type("B-PER"), letter_and_type("NOUN"), letter_and_type("O")
    (('B', 'PER'), ('N', 'OUN'), ('O', '_'))
    """
    before, dash, after = tag[1:].partition("-")
    return tag[0], (after if dash else before) or "_"


def _laid_end_to_end(sentences: Sequence[Sequence[str]]) -> Iterator[str]:
    """Every tag, an ``O`` after each sentence, and one more ``O`` that closes the last chunk."""
    for sentence in sentences:
        yield from sentence
        yield "O"
    yield "O"


def chunks(sentences: Sequence[Sequence[str]]) -> set[Chunk]:
    """The chunks seqeval's default mode finds in ``sentences``."""
    found: set[Chunk] = set()
    previous_letter, previous_type, begin = "O", "", 0
    for position, tag in enumerate(_laid_end_to_end(sentences)):
        letter, type_ = letter_and_type(tag)
        type_changed = previous_type != type_
        if (
            previous_letter in ("E", "S")
            or (previous_letter, letter) in _ENDING
            or (previous_letter not in _UNTYPED and type_changed)
        ):
            found.add((previous_type, begin, position - 1))
        if letter in ("B", "S") or (previous_letter, letter) in _STARTING or (letter not in _UNTYPED and type_changed):
            begin = position
        previous_letter, previous_type = letter, type_
    return found


@dataclass(frozen=True)
class SpanScores:
    """Micro precision, recall and F1 over chunks, 0-100 as XTREME reports them."""

    precision: float
    recall: float
    f1: float

    def as_metrics(self) -> dict[str, float]:
        return {"f1": self.f1, "precision": self.precision, "recall": self.recall}


def span_scores(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> SpanScores:
    """Chunk precision/recall/F1 of ``predicted`` against ``gold`` (same sentence lengths; the
    caller checks them, as seqeval refuses anything else), from the chunk counts by
    :func:`~harness_xtreme.metrics.counted_scores`, seqeval's arithmetic operation for operation."""
    gold_chunks, predicted_chunks = chunks(gold), chunks(predicted)
    scores = counted_scores(
        np.asarray(len(gold_chunks & predicted_chunks)), np.asarray(len(predicted_chunks)), np.asarray(len(gold_chunks))
    )
    return SpanScores(float(scores["precision"]), float(scores["recall"]), float(scores["f1"]))


@dataclass(frozen=True)
class SentenceCounts:
    """One sentence's share of the chunk counts: the chunks (gold, predicted, both) that end in
    it or in the ``O`` laid after it. Summed over the sentences they are the file's counts."""

    correct: int
    predicted: int
    gold: int


def sentence_counts(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> list[SentenceCounts]:
    """Each sentence's :class:`SentenceCounts`. The chunks are found over the whole file, as
    seqeval finds them, and each is given to the sentence where it ends: a UD-POS chunk can begin
    in an earlier sentence (``X`` after a sentence starts nothing, see the module docstring), so
    counting each sentence on its own would not always give the file's numbers."""
    ends = list(itertools.accumulate(len(sentence) + 1 for sentence in gold))  # past each sentence's O
    gold_chunks, predicted_chunks = chunks(gold), chunks(predicted)

    def per_sentence(found: set[Chunk]) -> list[int]:
        counts = [0] * len(gold)
        for _, _, last in found:
            counts[bisect.bisect_right(ends, last)] += 1
        return counts

    correct, guessed, true = (
        per_sentence(found) for found in (gold_chunks & predicted_chunks, predicted_chunks, gold_chunks)
    )
    return [SentenceCounts(*counts) for counts in zip(correct, guessed, true)]
