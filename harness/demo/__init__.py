"""Built-in parallel demo QA set for xlqa-harness (data only).

This package ships a small multilingual question-answering set that was
written by the xlqa-harness project itself (not copied from XQuAD, SQuAD,
Wikipedia or any other dataset), so the harness can run its tasks end to end
-- answer-sentence retrieval from a multilingual pool, extractive span QA and
bitext retrieval -- without downloading anything.

It is in the core, as data, because several task plugins use it as their demo
data and the model plugins' tests read it; no plugin may import another.

The data is in the XQuAD-R file format (SQuAD v1.1 JSON plus per-paragraph
``sentences`` and ``sentence_breaks``), one file per language, and is fully
parallel: every file has the same 8 articles, the same sentences in the same
order, and the same 24 question ids whose answers sit in the same sentence
index in every language.  It is a demo and smoke-test set, not a benchmark.
"""

from __future__ import annotations

from pathlib import Path

#: Languages with a file ``<lang>.json`` in :func:`parallel_qa_dir`.  The order
#: is the XQuAD-R order (English first) so results tables line up with it.
LANGUAGES: tuple[str, ...] = ("en", "de", "es", "ru", "ar", "hi", "vi", "zh", "th")

#: The name of each language's file in :func:`parallel_qa_dir`.
FILE_NAME = "{lang}.json"


def parallel_qa_dir() -> Path:
    """Return the folder holding the ``<lang>.json`` files.

    Resolved relative to this module so it works the same for a normal or an
    editable install, and callers can hand it to a task's loader exactly as
    they would a downloaded copy of a real dataset.
    """
    return Path(__file__).parent / "parallel-qa"


class ParallelQADemo:
    """Mixin for tasks whose built-in demo data is this set (list it before the task base)."""

    def demo_data_dir(self) -> Path | None:
        return parallel_qa_dir()
