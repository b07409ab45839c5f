"""Passage collections for open retrieval, supplied by the user (benchmarks such as XOR QA ship none).

In the core because a task (XOR-Retrieve reads the passages it ranks) and a model (retrieve-read
indexes them) both read them.

Two formats, as open-retrieval baselines use them:

* TSV with the header ``id<TAB>text<TAB>title`` (any column order), quoted like DPR's
  ``psgs_w100.tsv`` (read with :mod:`csv`, tab-delimited);
* JSON lines of ``{"id", "title", "text"}``.

A file is an English collection. A folder holds one file per language, named by its language code
(``en.tsv``, ``ja.jsonl``, ...), for retrieval over English and the question languages together.
Passages are indexed as (title, text) pairs; predictions list the passage text. Ids of
non-English files are prefixed with their language (``ja:123``), as Wikipedia dumps reuse ids.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError, InputError
from harness.io import iter_jsonl
from harness.protocols import Corpus

COLUMNS = ("id", "text", "title")
SUFFIXES = (".tsv", ".jsonl", ".jsonl.gz")


@dataclass
class Passages:
    """A passage collection in file order."""

    ids: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    langs: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def as_corpus(self, with_titles: bool = True) -> Corpus:
        """The collection for a retriever: (title, text) pairs, or texts alone."""
        texts = list(zip(self.titles, self.texts)) if with_titles else self.texts
        return Corpus(ids=self.ids, texts=texts, langs=self.langs)


def _tsv_rows(path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header is None or sorted(header) != sorted(COLUMNS):
            raise InputError(f"the first line must be the header {'<TAB>'.join(COLUMNS)} (any order), got {header}",
                             file=path, record="line 1")
        for row in reader:
            record = f"line {reader.line_num}"
            if not row:
                continue
            if len(row) < len(header):
                raise InputError(f"has {len(row)} of the {len(header)} tab-separated columns",
                                 file=path, record=record, field=header[len(row)])
            if len(row) > len(header):
                raise InputError(f"has {len(row)} tab-separated columns, the header {len(header)}", file=path, record=record)
            yield record, dict(zip(header, row))


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    for line, item in iter_jsonl(path):
        record = f"line {line}"
        if not isinstance(item, dict):
            raise InputError("must be a JSON object with id, title and text", file=path, record=record)
        row = {}
        for column in COLUMNS:
            value = item.get(column)
            if isinstance(value, int) and not isinstance(value, bool) and column == "id":
                value = str(value)
            if not isinstance(value, str):
                problem = "is missing" if value is None else f"must be a string, got {type(value).__name__}"
                raise InputError(problem, file=path, record=record, field=column)
            row[column] = value
        yield record, row


def _read_file(path: Path, lang: str, passages: Passages, seen: set[str]) -> None:
    rows = _tsv_rows(path) if path.suffix == ".tsv" else _jsonl_rows(path)
    for record, row in rows:
        pid = row["id"] if lang == "en" else f"{lang}:{row['id']}"  # per-language dumps reuse ids
        if pid in seen:
            raise InputError(f"passage id '{row['id']}' appears twice", file=path, record=record, field="id")
        seen.add(pid)
        passages.ids.append(pid)
        passages.titles.append(row["title"])
        passages.texts.append(row["text"])
        passages.langs.append(lang)
    passages.files.append(path)


def _language_of(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return ""


def corpus_files(location: Path) -> list[tuple[Path, str]]:
    """The passage files of a corpus and their languages: one English file, or a folder's
    ``{lang}.tsv`` / ``{lang}.jsonl`` files (English first)."""
    location = location.expanduser()
    if location.is_file():
        if not location.name.endswith(SUFFIXES):
            raise HarnessError(f"corpus {location}: expected a .tsv or .jsonl file")
        return [(location, "en")]
    if location.is_dir():
        files = sorted((p for p in location.iterdir() if p.is_file() and _language_of(p)),
                       key=lambda p: (_language_of(p) != "en", p.name))
        if not files:
            raise HarnessError(f"corpus folder {location} has no {{lang}}.tsv or {{lang}}.jsonl files")
        return [(path, _language_of(path)) for path in files]
    raise HarnessError(f"corpus {location} does not exist")


def read_passages(location: Path) -> Passages:
    """Read a passage file (English) or a folder of ``{lang}.tsv`` / ``{lang}.jsonl`` files."""
    passages = Passages()
    seen: set[str] = set()
    for path, lang in corpus_files(location):
        _read_file(path, lang, passages, seen)
    if not passages.ids:
        raise HarnessError(f"corpus {location} has no passages")
    return passages
