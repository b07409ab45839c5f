"""Reading MKQA: the official ``mkqa.jsonl.gz`` into per-language gold annotations.

One JSON object per line: ``example_id`` (an int, Natural Questions' id, possibly negative),
``query`` (English), ``queries`` ``{lang: text}`` and ``answers`` ``{lang: [answer, ...]}``,
an answer being ``{"type", "text", "aliases"?, "entity"?}``. As the official scorer reads it:

* the gold strings of an example in a language are, over its answers, ``text or ""`` plus every
  alias, as a set. Wikidata QIDs (``entity``) play no part in scoring;
* ``text`` is null for ``unanswerable`` *and* ``long_answer``, so both are "No Answer": an example
  is answerable iff its gold set is not exactly ``{""}``;
* example ids are compared as strings (``str(example_id)``).

The official file has all 26 languages in every example. A file with fewer (a subset, or the
built-in demo) is read too, provided every example has the same languages; the languages it
lacks are reported as missing, and no official macro average is given then.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.plugin import HarnessError, InputError, TaskData
from harness.plugin.io import iter_jsonl
from harness_mkqa.languages import MKQA_LANGUAGES

#: The answer types of MKQA (counts in the full data: entity 4221, long_answer 1815,
#: unanswerable 1427, date 1174, number 485, number_with_unit 394, short_phrase 346, binary 138).
ANSWER_TYPES: tuple[str, ...] = (
    "entity",
    "date",
    "number",
    "number_with_unit",
    "short_phrase",
    "binary",
    "long_answer",
    "unanswerable",
)

#: The answer types whose ``text`` is null in MKQA (no short answer to give); every other type
#: carries its answer as text, so a null or absent ``text`` there is a broken gold answer.
TEXTLESS_TYPES = frozenset({"long_answer", "unanswerable"})

#: File names looked for in a ``--data-dir`` folder, in order: the release (``dataset/mkqa.jsonl.gz``
#: in apple/ml-mkqa, or beside it), uncompressed, then the official test file of six examples
#: (``tests/testdata/test_mkqa.jsonl.gz``), so that a data root holding any of them serves MKQA.
DATA_FILES: tuple[str, ...] = (
    "mkqa.jsonl.gz",
    "dataset/mkqa.jsonl.gz",
    "mkqa.jsonl",
    "test_mkqa.jsonl.gz",
    "tests/testdata/test_mkqa.jsonl.gz",
)


@dataclass(frozen=True)
class Annotation:
    """One example's gold in one language, as the official scorer sees it."""

    golds: tuple[str, ...]  # distinct gold strings ("" stands for No Answer), sorted
    types: tuple[str, ...]  # distinct answer types, in ANSWER_TYPES order
    reference: str  # the first non-empty answer text ("" if none): the oracle's answer
    binary: bool  # the reference is a yes/no answer (the oracle gives it as binary_answer)

    @property
    def answerable(self) -> bool:
        return self.golds != ("",)


@dataclass
class MKQAData(TaskData):
    """Examples in file order; for each language present, their queries and annotations."""

    example_ids: list[str] = field(default_factory=list)  # str(example_id), as the scorer compares
    raw_ids: list[Any] = field(default_factory=list)  # example_id as written (int), for output files
    queries: dict[str, list[str]] = field(default_factory=dict)
    annotations: dict[str, list[Annotation]] = field(default_factory=dict)
    file_languages: tuple[str, ...] = ()  # every language the file has (data.languages: those loaded)
    languages_chosen: bool = False  # the user named the languages (--langs)
    ids_beyond_limit: frozenset[str] = frozenset()  # ids in the file but left out by --limit

    def position(self) -> dict[str, int]:
        """example id -> its index in file order."""
        return {example_id: i for i, example_id in enumerate(self.example_ids)}


def find_data_file(data_dir: Path) -> Path:
    """The MKQA file: ``--data-dir`` itself if it is a file, else the first of :data:`DATA_FILES` in it."""
    if data_dir.is_file():
        return data_dir
    for name in DATA_FILES:
        if (data_dir / name).is_file():
            return data_dir / name
    raise HarnessError(
        f"no MKQA file in {data_dir} (looked for {', '.join(DATA_FILES)}; pass the file itself "
        "as --data-dir to read a file with another name)"
    )


def _text(value: Any, *, file: Path, record: str, field_name: str, nullable: bool = False) -> Any:
    if isinstance(value, str) or (nullable and value is None):
        return value
    kind = "a string or null" if nullable else "a string"
    raise InputError(f"expected {kind}, got {type(value).__name__}", file=file, record=record, field=field_name)


def _annotation(answers: Any, *, file: Path, record: str, where: str) -> Annotation:
    if not isinstance(answers, list) or not answers:
        # The official scorer asserts a non-empty gold list for every example.
        raise InputError("expected a non-empty list of answers", file=file, record=record, field=where)
    golds: set[str] = set()
    types: set[str] = set()
    reference, binary = "", False
    for a, answer in enumerate(answers):
        at = f"{where}[{a}]"
        if not isinstance(answer, dict):
            raise InputError("expected an answer object", file=file, record=record, field=at)
        kind = answer.get("type")
        if kind not in ANSWER_TYPES:
            raise InputError(
                f"unknown answer type {kind!r} (types: {', '.join(ANSWER_TYPES)})",
                file=file,
                record=record,
                field=f"{at}.type",
            )
        if "text" not in answer:
            raise InputError(
                "missing (null for long_answer and unanswerable, else the answer)",
                file=file,
                record=record,
                field=f"{at}.text",
            )
        text = _text(answer["text"], file=file, record=record, field_name=f"{at}.text", nullable=kind in TEXTLESS_TYPES)
        aliases = answer.get("aliases", [])
        if not isinstance(aliases, list):
            raise InputError("expected a list of strings", file=file, record=record, field=f"{at}.aliases")
        for i, alias in enumerate(aliases):
            _text(alias, file=file, record=record, field_name=f"{at}.aliases[{i}]")
        golds.add(text or "")
        golds.update(aliases)
        types.add(kind)
        if text and not reference:
            reference, binary = text, kind == "binary"
    return Annotation(tuple(sorted(golds)), tuple(t for t in ANSWER_TYPES if t in types), reference, binary)


def _languages_of(example: dict[str, Any], *, file: Path, record: str) -> tuple[str, ...]:
    answers = example.get("answers")
    if not isinstance(answers, dict):
        raise InputError("expected an object {language: [answer, ...]}", file=file, record=record, field="answers")
    unknown = sorted(set(answers) - set(MKQA_LANGUAGES))
    if unknown:
        raise InputError(
            f"unknown language '{unknown[0]}' (MKQA languages: {' '.join(MKQA_LANGUAGES)})",
            file=file,
            record=record,
            field=f"answers.{unknown[0]}",
        )
    if not answers:
        raise InputError("no language has answers", file=file, record=record, field="answers")
    return tuple(lang for lang in MKQA_LANGUAGES if lang in answers)


def read_mkqa(path: Path, languages: tuple[str, ...], *, chosen: bool, limit: int | None, split: str) -> MKQAData:
    """Read the examples of ``path`` for ``languages`` (those of the file when not ``chosen``)."""
    data = MKQAData(split=split, languages=(), files=[path], statistics={}, source=str(path), languages_chosen=chosen)
    seen: dict[str, int] = {}
    beyond: set[str] = set()
    for line, example in iter_jsonl(path):
        record = f"line {line}"
        if not isinstance(example, dict):
            raise InputError("expected a JSON object", file=path, record=record)
        raw_id = example.get("example_id")
        if not isinstance(raw_id, (int, str)) or isinstance(raw_id, bool):
            raise InputError("expected an integer or string id", file=path, record=record, field="example_id")
        example_id = str(raw_id)
        if example_id in seen:
            raise InputError(
                f"example id {example_id} appears twice (first on line {seen[example_id]})",
                file=path,
                record=record,
                field="example_id",
            )
        seen[example_id] = line
        present = _languages_of(example, file=path, record=record)
        if not data.file_languages:
            data.file_languages = present
            missing = [lang for lang in languages if lang not in present]
            if chosen and missing:
                raise HarnessError(f"language '{missing[0]}' is not in {path} (languages there: {' '.join(present)})")
            # MKQA order whatever the order asked for: the macro average sums in this order.
            data.languages = tuple(lang for lang in present if lang in languages)
            data.queries = {lang: [] for lang in data.languages}
            data.annotations = {lang: [] for lang in data.languages}
        elif present != data.file_languages:
            odd = sorted(set(present) ^ set(data.file_languages))[0]
            where = "missing here" if odd in data.file_languages else "not in the first example"
            raise InputError(
                f"language '{odd}' is {where} (every example must have the same languages)",
                file=path,
                record=record,
                field=f"answers.{odd}",
            )
        if limit is not None and len(data.example_ids) >= limit:
            beyond.add(example_id)
            continue
        queries = example.get("queries")
        if not isinstance(queries, dict):
            raise InputError("expected an object {language: question}", file=path, record=record, field="queries")
        for lang in data.languages:
            data.queries[lang].append(_text(queries.get(lang), file=path, record=record, field_name=f"queries.{lang}"))
            data.annotations[lang].append(
                _annotation(example["answers"][lang], file=path, record=record, where=f"answers.{lang}")
            )
        data.example_ids.append(example_id)
        data.raw_ids.append(raw_id)
    if not data.example_ids:
        raise InputError("no examples", file=path)
    data.ids_beyond_limit = frozenset(beyond)
    data.statistics = statistics(data)
    return data


def statistics(data: MKQAData) -> dict[str, Any]:
    """Counts recorded in the result: examples, languages, answerable and No-Answer examples."""
    return {
        "examples": len(data.example_ids),
        "languages_in_file": list(data.file_languages),
        "missing_languages": [lang for lang in MKQA_LANGUAGES if lang not in data.file_languages],
        "answerable_per_language": {lang: sum(a.answerable for a in data.annotations[lang]) for lang in data.languages},
        "no_answer_per_language": {
            lang: sum(not a.answerable for a in data.annotations[lang]) for lang in data.languages
        },
    }
