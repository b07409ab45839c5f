"""The files of an XTREME submission, read as ``evaluate.py`` reads them and written back the same.

* line files (PAWS-X, XNLI, Tatoeba, BUCC): one item per line, white space stripped from both
  ends, blank lines kept (as ``""``) -- so a stray blank line changes the line count;
* tag files (PAN-X, UD-POS): one tag per line, a blank line ends a sentence (two blank lines in a
  row make an empty sentence; a last sentence without a blank line after it still counts);
* JSON files: span-QA ``{question_id: answer}`` (labels in SQuAD v1.1 format) and Mewsli-X
  ``{mention_id: [entity, ...]}``; JSON lines with a ``label`` field for XCOPA.

Where ``evaluate.py`` would crash, or silently score something that cannot be meant, the harness
stops with one line naming the file, the line and the field: a Tatoeba line that is not a line
number, a BUCC line that is not ``source_id<TAB>target_id``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.plugin import InputError
from harness.plugin.formats import validate
from harness.plugin.io import iter_jsonl, read_json

_LINE_NUMBER = re.compile(r"0|[1-9][0-9]*")


def _read_text(path: Path) -> list[str]:
    """The file's lines as Python's text mode splits them (universal newlines), unstripped."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readlines()
    except FileNotFoundError:
        raise InputError("missing", file=path) from None
    except (UnicodeDecodeError, OSError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from None


def read_lines(path: Path) -> list[str]:
    """One item per line, stripped (``evaluate.py``'s ``read_label``)."""
    return [line.strip() for line in _read_text(path)]


def read_line_numbers(path: Path, *, official: bool = False) -> list[int | str]:
    """Tatoeba: one 0-based line number per line. XTREME compares them as text; written without
    leading zeros, text and number comparisons agree, so any other spelling is refused. Under
    ``official`` rules such a line is kept as its text (``[367]``, ``0367``, a blank), which equals
    no label, as ``evaluate.py``'s string comparison scores it: a wrong answer."""
    numbers: list[int | str] = []
    for number, line in enumerate(read_lines(path), start=1):
        if official and not (_LINE_NUMBER.fullmatch(line) and len(line) <= len(str(sys.maxsize))):
            numbers.append(line)
            continue
        if not _LINE_NUMBER.fullmatch(line):
            raise InputError(
                f"expected a 0-based line number such as 367, got {line!r} (XTREME's "
                "evaluate_retrieval.py writes '[367]', which never matches a label)",
                file=path,
                record=f"line {number}",
            )
        if len(line) > len(str(sys.maxsize)):  # past any file's length, and int() refuses 4,300 digits
            raise InputError(
                f"line number of {len(line)} digits: no file has that many lines", file=path, record=f"line {number}"
            )
        numbers.append(int(line))
    return numbers


def read_pairs(path: Path, *, official: bool = False) -> list[tuple[str, ...]]:
    """BUCC 2018: one ``source_id<TAB>target_id`` pair per line. Under ``official`` rules any
    line is the tuple of its tab-separated fields, as ``evaluate.py`` reads it: one with a third
    column (or a single one) equals no gold pair, so it counts as a predicted pair that never matches."""
    pairs = []
    for number, line in enumerate(read_lines(path), start=1):
        pair = tuple(line.split("\t"))
        if (len(pair) != 2 or not all(pair)) and not official:
            raise InputError(f"expected source_id<TAB>target_id, got {line!r}", file=path, record=f"line {number}")
        pairs.append(pair)
    return pairs


def read_tags(path: Path) -> list[list[str]]:
    """PAN-X / UD-POS: sentences of tags (``evaluate.py``'s ``read_tag``)."""
    sentences: list[list[str]] = []
    sentence: list[str] = []
    for line in read_lines(path):
        if line:
            sentence.append(line)
        else:
            sentences.append(sentence)
            sentence = []
    if sentence:
        sentences.append(sentence)
    return sentences


def read_choices(path: Path) -> list[Any]:
    """XCOPA: the ``label`` of each JSON line."""
    labels = []
    for number, item in iter_jsonl(path):
        if not isinstance(item, dict) or "label" not in item:
            raise InputError("expected a JSON object with a 'label'", file=path, record=f"line {number}", field="label")
        labels.append(item["label"])
    return labels


def read_entities(path: Path, *, gold: bool) -> dict[str, list[str]]:
    """Mewsli-X: ``{mention_id: [entity_id, ...]}`` (labels: one gold entity first)."""
    mapping: dict[str, list[str]] = read_json(path, unique_keys=True)  # so the schema makes it
    validate(mapping, "mewslix-predictions", file=path)
    if gold:
        empty = next((mention for mention, entities in mapping.items() if not entities), None)
        if empty is not None:
            raise InputError("no gold entity", file=path, record=empty)
    return mapping


def lines_file(items: Sequence[Any]) -> bytes:
    """A line file: one item per line."""
    return "".join(f"{item}\n" for item in items).encode("utf-8")


def tags_file(sentences: Sequence[Sequence[str]]) -> bytes:
    """A tag file: each sentence's tags, one per line, then a blank line."""
    return "".join("".join(f"{tag}\n" for tag in sentence) + "\n" for sentence in sentences).encode("utf-8")


def choices_file(labels: Sequence[Any]) -> bytes:
    """An XCOPA file: one ``{"label": ...}`` JSON object per line."""
    return "".join(json.dumps({"label": label}) + "\n" for label in labels).encode("utf-8")


def json_file(mapping: Any) -> bytes:
    return json.dumps(mapping, ensure_ascii=False).encode("utf-8")
