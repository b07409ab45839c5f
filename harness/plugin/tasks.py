"""The plugin contract's task kits: the task bases and helpers several benchmarks share.

The span-QA task bases (one unit per language file, the official scorer per file), passage
collections for open retrieval, prompted generation and few-shot prompt templates, asking an
open-domain model, translate-test, and the parallel-QA demo data a task can run on without its
files. See :mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.data.passages import Passage, Passages, corpus_files, read_passages
from harness.demo import ParallelQADemo
from harness.models.open_domain import ask
from harness.models.prompting import OpenGeneration, PromptChoice, PromptedTask, Shot, ask_open, load_template
from harness.qa.task import (
    LanguageFilesTask,
    SpanQAData,
    SpanQATask,
    SpanUnit,
    read_answer_file,
    read_unit,
    refuse_foreign_answers,
    span_data,
    span_unit,
)
from harness.qa.translate import KeyedTranslator, translate_each

__all__ = [
    "KeyedTranslator",
    "LanguageFilesTask",
    "OpenGeneration",
    "ParallelQADemo",
    "Passage",
    "Passages",
    "PromptChoice",
    "PromptedTask",
    "Shot",
    "SpanQAData",
    "SpanQATask",
    "SpanUnit",
    "ask",
    "ask_open",
    "corpus_files",
    "load_template",
    "read_answer_file",
    "read_passages",
    "read_unit",
    "refuse_foreign_answers",
    "span_data",
    "span_unit",
    "translate_each",
]
