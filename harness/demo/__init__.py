"""Built-in parallel demo QA set for xlqa-harness (data only).

This package ships a small multilingual question-answering set that was
written by the xlqa-harness project itself (not copied from XQuAD, SQuAD,
Wikipedia or any other dataset), so the harness can run its tasks end to end
-- LAReQA-style answer-sentence retrieval from a multilingual pool, and
XQuAD/MLQA-style extractive span QA -- without downloading anything.

The data is in the XQuAD-R file format (SQuAD v1.1 JSON plus per-paragraph
``sentences`` and ``sentence_breaks``), one file per language, and is fully
parallel: every file has the same 8 articles, the same sentences in the same
order, and the same 24 question ids whose answers sit in the same sentence
index in every language.  It is a demo and smoke-test set, not a benchmark.
"""

from __future__ import annotations

from pathlib import Path

#: Languages with a file ``<lang>.json`` in :func:`xquad_r_dir`.  The order is
#: the XQuAD-R order (English first) so results tables line up with it.
LANGUAGES: tuple[str, ...] = ("en", "de", "es", "ru", "ar", "hi", "vi", "zh", "th")


def xquad_r_dir() -> Path:
    """Return the folder holding the ``<lang>.json`` XQuAD-R files.

    Resolved relative to this module so it works the same for a normal or an
    editable install, and callers can hand it to the XQuAD-R loader exactly as
    they would a downloaded copy of the real dataset.
    """
    return Path(__file__).parent / "xquad-r"
