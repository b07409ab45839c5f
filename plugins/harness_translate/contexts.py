"""MLQA's translate-test of reading: the context translated into English sentence by sentence, the
English reader's answer projected back onto the original context.

The MLQA paper projects the answer with the translation model's attention alignments; a
translator here (a translations file, any seq2seq checkpoint) exposes no alignment, so this is
the documented fuzzy-match fallback:

1. the context is split into sentences (:func:`harness.data.sentences.split_sentences`) and each is
   translated on its own, so the English context is the translated sentences joined by a space
   and each English sentence knows its original;
2. the answer's English sentence (the one holding its start) names the original sentence;
3. in that sentence the answer is the first case-insensitive occurrence of the English answer
   text (names, numbers and dates often survive translation), else the longest substring the
   two share if it has at least :data:`MIN_SHARED` characters, else the whole original sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from harness.plugin import SpanAnswer
from harness.plugin.io import split_sentences

#: The shortest shared substring taken as the answer (shorter is chance: "e", "de").
MIN_SHARED = 3


@dataclass(frozen=True)
class TranslatedContext:
    """A context, its sentences, and their translations joined into one English context."""

    original: str
    sentences: list[tuple[int, int]]  # [start, end) in the original
    english: str
    english_sentences: list[tuple[int, int]]  # [start, end) in the English context


def sentence_texts(context: str, lang: str) -> tuple[list[tuple[int, int]], list[str]]:
    """The context's sentence offsets and texts (what is translated)."""
    spans = split_sentences(context, lang)
    return spans, [context[s:e] for s, e in spans]


def join_translation(context: str, sentences: list[tuple[int, int]], translated: list[str]) -> TranslatedContext:
    english, spans, position = [], [], 0
    for text in translated:
        spans.append((position, position + len(text)))
        english.append(text)
        position += len(text) + 1
    return TranslatedContext(context, sentences, " ".join(english), spans)


def project(answer: SpanAnswer, context: TranslatedContext) -> SpanAnswer:
    """The English answer as a span of the original context (steps 2 and 3 above)."""
    if not context.sentences or not answer.text:  # nothing to find: an empty answer stays empty
        return SpanAnswer("", 0, answer.score, answer.no_answer_score)
    index = next(
        (i for i, (s, e) in enumerate(context.english_sentences) if s <= answer.start <= e), len(context.sentences) - 1
    )
    start, end = context.sentences[index]
    sentence = context.original[start:end]
    folded, wanted = sentence.casefold(), answer.text.casefold()
    found = folded.find(wanted)
    if found >= 0 and len(folded) == len(sentence) and len(wanted) == len(answer.text):  # offsets kept
        left, right = start + found, start + found + len(answer.text)
    else:
        match = SequenceMatcher(None, sentence, answer.text, autojunk=False).find_longest_match(
            0, len(sentence), 0, len(answer.text)
        )
        left, right = (start + match.a, start + match.a + match.size) if match.size >= MIN_SHARED else (start, end)
    return SpanAnswer(context.original[left:right], left, answer.score, answer.no_answer_score)
