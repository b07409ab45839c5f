"""Passage collections for open retrieval, supplied by the user (benchmarks such as XOR QA ship none),
streamed from disk: a collection of 21 million passages (DPR's ``psgs_w100.tsv``, 13 GB) is never
held in memory.

In the core because a task (XOR-Retrieve reads the passages it ranks) and a model (retrieve-read
indexes them) both read them.

Two formats, as open-retrieval baselines use them:

* TSV with the header ``id<TAB>text<TAB>title`` (any column order), quoted like DPR's
  ``psgs_w100.tsv`` (parsed with :mod:`csv`, tab-delimited, as DPR reads it);
* JSON lines of ``{"id", "title", "text"}``.

A file is an English collection. A folder holds one file per language, named by its language code
(``en.tsv``, ``ja.jsonl``, ...), for retrieval over English and the question languages together.
Passages are indexed as (title, text) pairs; predictions list the passage text. Ids of
non-English files are prefixed with their language (``ja:123``), as Wikipedia dumps reuse ids.

:func:`read_passages` scans the files once, checking every row (columns, UTF-8, unique ids), and
keeps per passage only its byte offset (8 bytes) — the rows themselves are read again when asked
for, by position (:meth:`Passages.passage`) or as a stream (:meth:`Passages.stream`), which is how
an index is built. The same scan hashes the files' bytes into the collection's fingerprint, so an
index can tell two collections apart without a second pass. A file changed after the scan is
refused rather than misread. Gzipped files are refused: a passage could not be read by position.
"""

from __future__ import annotations

import csv
import hashlib
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar, overload

import numpy as np

from harness.definitions.protocols import Corpus, Text
from harness.errors import HarnessError, InputError
from harness.files.io import parse_json, sha256_text

COLUMNS = ("id", "text", "title")
SUFFIXES = (".tsv", ".jsonl")
#: Bumped when what the fingerprint covers changes, so indexes of the old one are rebuilt.
FINGERPRINT_VERSION = "passages/1"

T = TypeVar("T")


@dataclass(frozen=True)
class Passage:
    """One row of a collection; ``id`` carries the language prefix of a non-English file."""

    id: str
    title: str
    text: str
    lang: str


@dataclass(frozen=True)
class CorpusFile:
    """A passage file, its language, and its size and modification time when it was scanned."""

    path: Path
    lang: str
    size: int = 0
    mtime_ns: int = 0

    def stamped(self) -> CorpusFile:
        stat = self.path.stat()
        return CorpusFile(self.path, self.lang, stat.st_size, stat.st_mtime_ns)

    def open(self) -> BinaryIO:
        """The file for reading back rows found by the scan; refused if it changed since."""
        stat = self.path.stat()
        if (stat.st_size, stat.st_mtime_ns) != (self.size, self.mtime_ns):
            raise HarnessError(f"corpus file {self.path} changed while the run was reading it; run again")
        return open(self.path, "rb")


# -- one file's rows ------------------------------------------------------------------------------


class _Lines:
    """A binary file's lines from a byte offset, decoded, counting bytes and lines as they are
    taken, so a row's offset is known even when a quoted TSV field spans lines. ``digest``, if
    given, hashes every byte read."""

    def __init__(self, handle: BinaryIO, path: Path, offset: int, line: int, digest: hashlib._Hash | None) -> None:
        self.handle, self.path, self.offset, self.line, self.digest = handle, path, offset, line, digest

    def __iter__(self) -> Iterator[str]:
        for raw in self.handle:
            self.line += 1
            self.offset += len(raw)
            if self.digest is not None:
                self.digest.update(raw)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"is not UTF-8 (byte {exc.start + 1} of the line)", file=self.path, record=f"line {self.line}"
                ) from None


def _tsv_header(lines: Iterator[str], path: Path) -> list[int]:
    """Positions of id, text and title in a row, from the header line."""
    header = next(csv.reader([next(lines, "")], delimiter="\t"), None)
    if header is None or sorted(header) != sorted(COLUMNS):
        raise InputError(
            f"the first line must be the header {'<TAB>'.join(COLUMNS)} (any order), got {header}",
            file=path,
            record="line 1",
        )
    return [header.index(column) for column in COLUMNS]


def _tsv_rows(lines: _Lines, columns: list[int]) -> Iterator[tuple[int, int, tuple[str, str, str]]]:
    """``(offset, line, (id, text, title))`` of each row; blank lines are skipped."""
    csv.field_size_limit(sys.maxsize)
    reader = csv.reader(lines, delimiter="\t")
    width = len(COLUMNS)
    while True:
        offset, line = lines.offset, lines.line + 1
        row = next(reader, None)
        if row is None:
            return
        if not row:
            continue
        if len(row) != width:
            if len(row) < width:
                raise InputError(
                    f"has {len(row)} of the {width} tab-separated columns",
                    file=lines.path,
                    record=f"line {line}",
                    field=COLUMNS[columns.index(len(row))],
                )
            raise InputError(
                f"has {len(row)} tab-separated columns, the header {width}", file=lines.path, record=f"line {line}"
            )
        yield offset, line, (row[columns[0]], row[columns[1]], row[columns[2]])


def _jsonl_rows(lines: _Lines) -> Iterator[tuple[int, int, tuple[str, str, str]]]:
    """``(offset, line, (id, text, title))`` of each non-blank line (an integer id is read as text)."""
    offset = lines.offset
    for text in lines:
        record = f"line {lines.line}"
        start, offset = offset, lines.offset
        if not text.strip():
            continue
        try:
            item = parse_json(text)
        except ValueError as exc:
            raise InputError(f"malformed JSON: {exc}", file=lines.path, record=record) from None
        if not isinstance(item, dict):
            raise InputError("must be a JSON object with id, title and text", file=lines.path, record=record)
        values = []
        for column in COLUMNS:
            value = item.get(column)
            if isinstance(value, int) and not isinstance(value, bool) and column == "id":
                value = str(value)
            if not isinstance(value, str):
                problem = "is missing" if value is None else f"must be a string, got {type(value).__name__}"
                raise InputError(problem, file=lines.path, record=record, field=column)
            values.append(value)
        yield start, lines.line, (values[0], values[1], values[2])


def _rows(
    handle: BinaryIO, source: CorpusFile, offset: int = 0, digest: hashlib._Hash | None = None
) -> Iterator[tuple[int, int, tuple[str, str, str]]]:
    """The rows of ``source`` from byte ``offset`` (0: the first row, after a TSV's header)."""
    handle.seek(0)
    lines = _Lines(handle, source.path, 0, 0, digest)
    if source.path.suffix != ".tsv":
        handle.seek(offset)
        lines.offset = offset
        return _jsonl_rows(lines)
    stream = iter(lines)
    columns = _tsv_header(stream, source.path)
    if offset:
        handle.seek(offset)
        lines.offset = offset
    return _tsv_rows(lines, columns)


# -- a collection ---------------------------------------------------------------------------------


class _Column(Sequence[T], Generic[T]):
    """One field of every passage, read from the files when asked for (a lazy, read-only list)."""

    def __init__(self, passages: Passages, field: Callable[[Passage], T]) -> None:
        self._passages, self._field = passages, field

    def __len__(self) -> int:
        return len(self._passages)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return [self._field(p) for p in self._passages.stream(start, stop)]
        return self._field(self._passages.passage(index))

    def __iter__(self) -> Iterator[T]:
        return map(self._field, self._passages.stream())


class _Languages(Sequence[str]):
    """Each passage's language, from which file holds it (no file is read)."""

    def __init__(self, passages: Passages) -> None:
        self._passages = passages

    def __len__(self) -> int:
        return len(self._passages)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._passages.files[self._passages.file_of(index)].lang

    def __iter__(self) -> Iterator[str]:
        for source, (first, last) in zip(self._passages.files, self._passages.file_bounds()):
            yield from [source.lang] * (last - first)


@dataclass(frozen=True, eq=False)
class PassageCorpus(Corpus):
    """A :class:`Corpus` whose columns are read from the passage files on demand; its fingerprint
    is the scan's (a hash of the files' bytes and of what is indexed), not a hash of its texts."""

    digest: str

    @property
    def fingerprint(self) -> str:
        return self.digest


class Passages:
    """A scanned passage collection in file order (see the module docstring)."""

    def __init__(self, files: list[CorpusFile], offsets: np.ndarray, starts: np.ndarray, fingerprint: str) -> None:
        """``offsets``: each passage's byte offset in its file; ``starts``: the position of each
        file's first passage, then the number of passages."""
        self.files = files
        self.offsets = offsets
        self.starts = starts
        self.fingerprint = fingerprint
        self.ids: Sequence[str] = _Column(self, lambda p: p.id)
        self.titles: Sequence[str] = _Column(self, lambda p: p.title)
        self.texts: Sequence[str] = _Column(self, lambda p: p.text)
        self.langs: Sequence[str] = _Languages(self)

    def __len__(self) -> int:
        return len(self.offsets)

    def file_of(self, position: int) -> int:
        """Which of :attr:`files` holds the passage at ``position`` (negative: from the end)."""
        if not -len(self) <= position < len(self):
            raise IndexError(f"passage {position} of {len(self)}")
        return int(np.searchsorted(self.starts, position % len(self), side="right")) - 1

    def file_bounds(self) -> list[tuple[int, int]]:
        return [(int(a), int(b)) for a, b in zip(self.starts[:-1], self.starts[1:])]

    def passage(self, position: int) -> Passage:
        """The passage at ``position``, read back from its file."""
        number = self.file_of(position)
        source = self.files[number]
        with source.open() as handle:
            _, _, row = next(_rows(handle, source, int(self.offsets[position])))
        return _passage(row, source.lang)

    def stream(self, start: int = 0, stop: int | None = None) -> Iterator[Passage]:
        """The passages ``start`` to ``stop`` in order, each file read sequentially once."""
        stop = len(self) if stop is None else min(stop, len(self))
        for source, (first, last) in zip(self.files, self.file_bounds()):
            if last <= start or first >= stop:
                continue
            begin = max(start, first)
            with source.open() as handle:
                rows = _rows(handle, source, int(self.offsets[begin]))
                for _ in range(min(stop, last) - begin):
                    _, _, row = next(rows)
                    yield _passage(row, source.lang)

    def __iter__(self) -> Iterator[Passage]:
        return self.stream()

    def as_corpus(self, with_titles: bool = True) -> Corpus:
        """The collection for a retriever: (title, text) pairs, or texts alone, read on demand."""
        texts: Sequence[Text] = _Column(self, lambda p: (p.title, p.text)) if with_titles else self.texts
        return PassageCorpus(
            ids=self.ids,
            texts=texts,
            langs=self.langs,
            digest=sha256_text(self.fingerprint, "title+text" if with_titles else "text"),
        )


def _passage(row: tuple[str, str, str], lang: str) -> Passage:
    pid, text, title = row
    return Passage(pid if lang == "en" else f"{lang}:{pid}", title, text, lang)


# -- reading --------------------------------------------------------------------------------------


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
        if location.name.endswith(".gz"):
            raise HarnessError(
                f"corpus {location}: decompress it first (gunzip): passages are read back by their position in the file"
            )
        if not location.name.endswith(SUFFIXES):
            raise HarnessError(f"corpus {location}: expected a .tsv or .jsonl file")
        return [(location, "en")]
    if location.is_dir():
        files = sorted(
            (p for p in location.iterdir() if p.is_file() and _language_of(p)),
            key=lambda p: (_language_of(p) != "en", p.name),
        )
        if not files:
            raise HarnessError(f"corpus folder {location} has no {{lang}}.tsv or {{lang}}.jsonl files")
        return [(path, _language_of(path)) for path in files]
    raise HarnessError(f"corpus {location} does not exist")


def _line_of(source: CorpusFile, offset: int) -> int:
    """The line number at byte ``offset`` of a file (for the error naming a repeated id)."""
    with open(source.path, "rb") as handle:
        return handle.read(offset).count(b"\n") + 1


def _refuse_repeated_ids(passages: Passages, hashes: np.ndarray) -> None:
    """Stop at the first passage whose id an earlier passage has. Ids are compared by their 64-bit
    hash (8 bytes a passage, where a set of 21 million id strings would take gigabytes); passages
    whose hashes collide are read back and their ids compared, so a collision is never an error."""
    ordered = np.sort(hashes)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    del ordered
    first_repeat: tuple[int, str] | None = None
    for value in repeated.tolist():
        seen: dict[str, int] = {}
        for position in np.flatnonzero(hashes == value).tolist():
            pid = passages.passage(position).id
            if pid in seen and (first_repeat is None or position < first_repeat[0]):
                first_repeat = position, pid
            seen.setdefault(pid, position)
    if first_repeat is not None:
        position, pid = first_repeat
        source = passages.files[passages.file_of(position)]
        shown = pid if source.lang == "en" else pid.split(":", 1)[1]
        raise InputError(
            f"passage id '{shown}' appears twice",
            file=source.path,
            record=f"line {_line_of(source, int(passages.offsets[position]))}",
            field="id",
        )


def read_passages(location: Path) -> Passages:
    """Scan a passage file (English) or a folder of ``{lang}.tsv`` / ``{lang}.jsonl`` files."""
    files: list[CorpusFile] = []
    offsets, hashes = array("q"), array("q")
    starts = [0]
    digest = hashlib.sha256(FINGERPRINT_VERSION.encode())
    for path, lang in corpus_files(location):
        source = CorpusFile(path, lang).stamped()
        digest.update(f"\0{lang}\0".encode())
        prefix = "" if lang == "en" else f"{lang}:"
        with source.open() as handle:
            for offset, _, (pid, _, _) in _rows(handle, source, 0, digest):
                offsets.append(offset)
                hashes.append(hash(prefix + pid))
        files.append(source)
        starts.append(len(offsets))
    if not offsets:
        raise HarnessError(f"corpus {location} has no passages")
    passages = Passages(
        files, np.frombuffer(offsets, dtype=np.int64), np.asarray(starts, dtype=np.int64), digest.hexdigest()
    )
    _refuse_repeated_ids(passages, np.frombuffer(hashes, dtype=np.int64))
    return passages
