"""Where MLQA files are: the official release, XTREME's copy, or pairs built from a parallel set.

* The official ``MLQA_V1.zip`` layout: ``MLQA_V1/{split}/{split}-context-{c}-question-{q}.json``.
  ``--data-dir`` may name the folder holding ``MLQA_V1``, ``MLQA_V1`` itself, or the split folder.
* XTREME's layout: only the same-language files, renamed ``{split}-{lang}.json`` (XLT only).
* A parallel SQuAD-format set with the same question ids in every ``{lang}.json`` (the built-in
  demo data): the pair (c, q) is built as MLQA builds its files -- the paragraphs and answers of
  language c with the questions of language q.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from harness.plugin import HarnessError, InputError
from harness.plugin.io import SpanQuestion, read_span_file

Layout = Literal["official", "xtreme", "parallel"]
Pair = tuple[str, str]  # (context language, question language)


def official_name(split: str, pair: Pair) -> str:
    """The release's file name of a pair, e.g. ``dev-context-ar-question-es.json``."""
    return f"{split}-context-{pair[0]}-question-{pair[1]}.json"


@dataclass(frozen=True)
class Source:
    """A located MLQA split: its layout and the folder its files are in."""

    layout: Layout
    folder: Path
    split: str

    def file_name(self, pair: Pair) -> str:
        """The name of the file holding ``pair`` (also the name of its predictions file)."""
        if self.layout == "xtreme":
            return f"{self.split}-{pair[0]}.json"
        return official_name(self.split, pair)

    def has_language(self, lang: str) -> bool:
        """Whether the same-language file (or the parallel file) of ``lang`` is there."""
        if self.layout == "parallel":
            return (self.folder / f"{lang}.json").is_file()
        return (self.folder / self.file_name((lang, lang))).is_file()

    def path(self, pair: Pair) -> Path:
        if self.layout == "xtreme" and pair[0] != pair[1]:
            raise HarnessError(
                f"XTREME's MLQA layout ({self.folder}) has only same-language files; G-XLT needs the MLQA_V1 release"
            )
        path = self.folder / self.file_name(pair)
        if not path.is_file():
            raise InputError("missing: no MLQA file for this (context, question) pair", file=path)
        return path


def locate(data_dir: Path, split: str, parallel: bool) -> Source:
    """Find the split's files under ``data_dir`` (see the module docstring for the layouts)."""
    if parallel:
        return Source("parallel", data_dir, split)
    for folder in (data_dir / "MLQA_V1" / split, data_dir / split, data_dir):
        if folder.is_dir() and any(folder.glob(f"{split}-context-*-question-*.json")):
            return Source("official", folder, split)
    if any(data_dir.glob(f"{split}-??.json")):
        return Source("xtreme", data_dir, split)
    raise HarnessError(
        f"no MLQA {split} files in {data_dir}: expected MLQA_V1/{split}/{official_name(split, ('en', 'en'))} "
        f"(the official release) or {split}-en.json (XTREME's layout)"
    )


def parallel_pair(by_language: dict[str, list[SpanQuestion]], pair: Pair, files: dict[str, Path]) -> list[SpanQuestion]:
    """MLQA-style pair from a parallel set: contexts and answers of language c, questions of q."""
    context_lang, question_lang = pair
    questions = {q.id: q.question for q in by_language[question_lang]}
    out = []
    for question in by_language[context_lang]:
        if question.id not in questions:
            raise InputError(
                f"question id '{question.id}' of {files[context_lang].name} has no question in "
                f"{files[question_lang].name} (a parallel set needs the same ids in every language)",
                file=files[question_lang],
            )
        out.append(replace(question, question=questions[question.id]))
    return out


def read_parallel(folder: Path, languages: list[str]) -> tuple[dict[str, list[SpanQuestion]], dict[str, Path]]:
    """Every question of each ``{lang}.json`` of a parallel set."""
    files = {lang: folder / f"{lang}.json" for lang in languages}
    return {lang: read_span_file(path) for lang, path in files.items()}, files
