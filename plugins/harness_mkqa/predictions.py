"""The official MKQA prediction format: one JSON-lines file per language, named ``<lang>.jsonl``.

Each line: ``{"example_id": 7631360939705650347, "prediction": "Ridley Scott",
"binary_answer": null, "no_answer_prob": -11.56}`` (schema ``mkqa-predictions``). As the
official scorer reads it: ``example_id``, ``prediction`` and ``binary_answer`` are required;
ids match as strings (an int or a string works); ``prediction`` null is ""; ``binary_answer``
is case-insensitive yes/no or empty/null and replaces the prediction when given;
``no_answer_prob`` defaults to 0; other fields are ignored. Lines are kept in file order,
because the official threshold sweep breaks ties among equal ``no_answer_prob`` values by it.

Where the official scorer crashes or silently picks one line, the harness stops with an error
that names the file, the line and the field: a missing or unknown example id (AssertionError /
KeyError there), a duplicate id (there the last line wins, at the first line's position), a
``no_answer_prob`` that is not a finite number (it breaks the sort there).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.plugin import HarnessError, InputError
from harness.plugin.formats import validate
from harness.plugin.io import iter_jsonl, write_folder_atomic
from harness.plugin.scoring import foreign_script, refuse_or_warn
from harness_mkqa.data import MKQAData
from harness_mkqa.languages import MKQA_LANGUAGES

SCHEMA = "mkqa-predictions"
REQUIRED = ("example_id", "prediction", "binary_answer")


def _problem(item: Any) -> tuple[str | None, str] | None:
    """A fast check of one line against the schema (plus finiteness): (field, reason) or None.

    jsonschema is ~70 µs a line, too slow for 26 x 10,000 lines; it is asked only for a line that
    fails here, so the error carries the schema's own wording."""
    if not isinstance(item, dict):
        return None, "expected a JSON object"
    for key in REQUIRED:
        if key not in item:
            return key, "missing (the official scorer requires it)"
    example_id, prediction, binary = item["example_id"], item["prediction"], item["binary_answer"]
    if isinstance(example_id, bool) or not isinstance(example_id, (int, str)):
        return "example_id", "expected an integer or a string"
    if prediction is not None and not isinstance(prediction, str):
        return "prediction", "expected a string or null"
    if binary is not None and not (isinstance(binary, str) and binary.lower() in ("", "yes", "no")):
        return "binary_answer", "expected yes, no, an empty string or null"
    if "no_answer_prob" in item:
        prob = item["no_answer_prob"]
        if isinstance(prob, bool) or not isinstance(prob, (int, float)):
            return "no_answer_prob", "expected a number"
        if not math.isfinite(prob):
            return "no_answer_prob", f"expected a finite number, got {prob}"
    return None


def read_language_file(path: Path, data: MKQAData) -> list[dict[str, Any]]:
    """The lines of one language's file, in file order, checked against the data's example ids.
    Under ``--input-rules official`` a repeated id is not refused: its last line wins, in the place
    of its first (mkqa_eval.py reads the lines into a dict, whose order is first insertion)."""
    position = data.position()
    first_line: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for line, item in iter_jsonl(path):
        record = f"line {line}"
        problem = _problem(item)
        if problem is not None:
            validate(item, SCHEMA, file=path, record=record)
            field, reason = problem
            raise InputError(reason, file=path, record=record, field=field)
        example_id = str(item["example_id"])
        if example_id not in position:
            if example_id in data.ids_beyond_limit:
                continue  # in the data file, but left out by --limit
            raise InputError(
                f"example id {example_id} is not in the MKQA data ({data.source})",
                file=path,
                record=record,
                field="example_id",
            )
        if example_id in first_line and data.input_rules == "official":
            records[index[example_id]] = item
            continue
        if example_id in first_line:
            raise InputError(
                f"example id {example_id} appears twice (first on line {first_line[example_id]})",
                file=path,
                record=record,
                field="example_id",
            )
        first_line[example_id] = line
        index[example_id] = len(records)
        records.append(item)
    missing = [example_id for example_id in data.example_ids if example_id not in first_line]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InputError(
            f"no prediction for {len(missing)} of the {len(data.example_ids)} examples: {shown}",
            file=path,
            field="example_id",
        )
    return records


#: How a language's predictions file may be named: the harness's ``en.jsonl``, and MKQA's own
#: ``en_prediction.jsonl`` (its repository's ``tests/testdata``).
NAME_SUFFIXES = (".jsonl", "_prediction.jsonl")


def _language_of_file(path: Path, data: MKQAData) -> str:
    """A single file's language: its name (``en.jsonl``, ``en_prediction.jsonl``), else the one
    language selected (``--langs``)."""
    stem = Path(path.name.removesuffix(".gz")).stem.removesuffix("_prediction")
    if stem in MKQA_LANGUAGES:
        if stem not in data.languages:
            raise InputError(
                f"the file is named for language '{stem}', which is not among the languages "
                f"scored ({' '.join(data.languages)})",
                file=path,
            )
        return stem
    if len(data.languages) == 1:
        return data.languages[0]
    raise InputError(
        "cannot tell the language of these predictions: name the file <lang>.jsonl "
        "(or <lang>_prediction.jsonl) or pass --langs LANG",
        file=path,
    )


def _language_files(folder: Path) -> dict[str, Path]:
    """Language -> its file in a predictions folder, looked up by the names a language's file may
    have (the folder is not listed: it may be a link to a large folder whose files come and go)."""
    out: dict[str, Path] = {}
    for lang in MKQA_LANGUAGES:
        found = [folder / f"{lang}{suffix}" for suffix in NAME_SUFFIXES if (folder / f"{lang}{suffix}").is_file()]
        if len(found) > 1:
            raise InputError(
                f"two files for language '{lang}' ({found[0].name}, {found[1].name}): keep one", file=folder
            )
        if found:
            out[lang] = found[0]
    return out


def read_predictions(path: Path, data: MKQAData) -> dict[str, list[dict[str, Any]]]:
    """Language -> its prediction lines, from a folder of ``<lang>.jsonl`` (or
    ``<lang>_prediction.jsonl``) files or one file.

    In a folder, languages without a file are skipped, as the official all-languages script
    does (the result then says the macro average is incomplete), unless the languages were
    named with ``--langs``; other files in it are not read."""
    if not path.is_dir():
        lang = _language_of_file(path, data)
        return _checked_language({lang: read_language_file(path, data)}, {lang: path}, data)
    files = _language_files(path)
    for lang, file in files.items():
        if lang not in data.file_languages:
            raise InputError(f"predictions for '{lang}', but the data has no {lang} answers ({data.source})", file=file)
    absent = [lang for lang in data.languages if lang not in files]
    if data.languages_chosen and absent:
        raise InputError(f"no {absent[0]}.jsonl for language '{absent[0]}' (named with --langs)", file=path)
    scored = [lang for lang in data.languages if lang in files]
    if not scored:
        raise InputError(
            f"no prediction files for the languages scored (expected <lang>.jsonl or "
            f"<lang>_prediction.jsonl for {' '.join(data.languages)})",
            file=path,
        )
    return _checked_language({lang: read_language_file(files[lang], data) for lang in scored}, files, data)


def _checked_language(
    read: dict[str, list[dict[str, Any]]], files: Mapping[str, Path], data: MKQAData
) -> dict[str, list[dict[str, Any]]]:
    """``read``, once no language's answers are written in a script its gold answers hardly use
    (see :func:`~harness.scoring.answer_language.foreign_script`): MKQA's example ids are the same in
    every language, so a file made for another language passes every other check. Binary answers
    are left out (yes/no is English in every language's file)."""
    for lang, records in read.items():
        answers = [record["prediction"] or "" for record in records if not record["binary_answer"]]
        golds = [gold for annotation in data.annotations[lang] for gold in annotation.golds]
        others = [other for other in data.file_languages if other != lang]
        foreign = foreign_script(answers, golds, others, what=f"the {lang} gold answers")
        if foreign is not None:
            refuse_or_warn(foreign, lang, file=files[lang], input_rules=data.input_rules)
    return read


def predicted_text(record: Mapping[str, Any]) -> str:
    """The text the official scorer compares: ``binary_answer`` (lower-cased) if given, else ``prediction``."""
    binary = record["binary_answer"]
    return (binary.lower() if binary else None) or record["prediction"] or ""


def aligned(records: list[dict[str, Any]], data: MKQAData, lang: str) -> tuple[list[str], list[float], list[int]]:
    """Predicted texts, no-answer scores and file positions, in data order."""
    position = data.position()
    n = len(data.example_ids)
    texts, probs, lines = [""] * n, [0.0] * n, [-1] * n
    for line, record in enumerate(records):
        i = position.get(str(record["example_id"]))
        if i is None or lines[i] >= 0:
            raise HarnessError(f"mkqa {lang}: predictions do not match the data (example {record['example_id']})")
        texts[i], probs[i], lines[i] = predicted_text(record), record.get("no_answer_prob", 0), line
    if len(records) != n:
        raise HarnessError(f"mkqa {lang}: {len(records)} predictions for {n} examples")
    return texts, probs, lines


def write_predictions(predictions: Mapping[str, list[dict[str, Any]]], folder: Path) -> None:
    """Write ``<lang>.jsonl`` files into ``folder`` (swapped into place as a whole)."""
    files = {}
    for lang in MKQA_LANGUAGES:
        if lang in predictions:
            lines = [json.dumps(record, ensure_ascii=False) for record in predictions[lang]]
            files[f"{lang}.jsonl"] = "".join(line + "\n" for line in lines).encode("utf-8")
    write_folder_atomic(folder, files)
