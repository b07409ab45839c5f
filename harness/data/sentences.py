"""Sentence splitting for any language, with exact character offsets.

In the core because two plugins split text into sentences: MLQA-R builds its candidate pool from
MLQA's paragraphs, and translate-test translates reading contexts sentence by sentence (so an
answer found in the translation can be traced back to its sentence). Both use sentencex
(Wikimedia's rule-based splitter: every MLQA language, no model to download), pinned in
pyproject because MLQA-R's pool depends on its rules.
"""

from __future__ import annotations

from importlib.metadata import version

from harness.errors import HarnessError

SPLITTER = "sentencex"


def splitter_version() -> str:
    """The splitter and its version, as results record it."""
    return f"{SPLITTER} {version(SPLITTER)}"


def split_sentences(text: str, lang: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence sentencex finds in ``text``, without the whitespace
    around it (its pieces concatenate to the text, so offsets are exact)."""
    from sentencex import segment

    spans: list[tuple[int, int]] = []
    start = 0
    for piece in segment(lang, text):
        stripped = piece.strip()
        if stripped:
            left = start + len(piece) - len(piece.lstrip())
            spans.append((left, left + len(stripped)))
        start += len(piece)
    if start != len(text):  # offsets would be wrong: a splitter version that rewrites text
        raise HarnessError(
            f"{splitter_version()} changed the text it split; the harness needs the version pinned in its requirements"
        )
    return spans
