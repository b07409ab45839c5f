"""``harness run`` / ``harness score`` on MKQA through the command line: the demo set, round
trips through the official prediction folder, and bad input (one line, exit code 2, nothing
written)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_mkqa.task import MKQA

Cli = Callable[..., tuple[int, str, str]]

DEMO_LANGUAGES = ("ar", "de", "en", "es", "ru", "th", "vi", "zh_cn")


def result_of(out: str) -> dict[str, Any]:
    path = re.search(r"^result: (.+)$", out, re.M)
    assert path, out
    return json.loads(Path(path.group(1)).read_text(encoding="utf-8"))


def predictions_of(out: str) -> Path:
    path = re.search(r"^predictions: (.+)$", out, re.M)
    assert path, out
    return Path(path.group(1))


def demo_lines(lang: str = "en") -> list[dict[str, Any]]:
    """Gold predictions for the demo set in one language, as official prediction lines."""
    path = MKQA().demo_data_dir() / "mkqa.jsonl"
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        example = json.loads(raw)
        text = example["answers"][lang][0]["text"] or ""
        lines.append({"example_id": example["example_id"], "prediction": text, "binary_answer": None})
    return lines


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def test_demo_runs_show_the_incomplete_macro(harness_cli: Cli) -> None:
    code, out, err = harness_cli("run", "mkqa", "oracle", "--quiet")
    assert code == 0, err
    result = result_of(out)
    assert result["data"]["languages"] == list(DEMO_LANGUAGES)
    assert result["rows"][0]["subset"] == "incomplete: 8 of 26 languages"
    # gold answers: every resample scores 100 too
    assert result["main_score"] == {"metric": "best_f1", "value": 100.0, "interval": [100.0, 100.0]}
    assert any(
        n.startswith("8 of 26 languages (only ar de en es ru th vi zh_cn): the main score") for n in result["notes"]
    )
    assert sorted(p.name for p in predictions_of(out).iterdir()) == [f"{lang}.jsonl" for lang in DEMO_LANGUAGES]
    # The No-Answer baseline scores the No-Answer share: 4 of the demo's 30 examples = 13.33.
    code, out, err = harness_cli("run", "mkqa", "no-answer", "--quiet")
    assert code == 0, err
    result = result_of(out)
    assert result["main_score"]["value"] == 13.33
    en = next(row["metrics"] for row in result["rows"] if row["subset"] == "en")
    assert (en["best_f1"], en["best_em"], en["best_answerable_f1"], en["best_unanswerable_em"]) == (
        13.33,
        13.33,
        0.0,
        100.0,
    )
    # 2 unanswerable + 2 long_answer, each abstained on: 100 in both.
    assert result["diagnostics"]["answer_types"]["en"]["long_answer"]["best_f1"] == 100.0
    assert result["diagnostics"]["answer_types"]["all"]["entity"] == {
        "count": 88,
        "best_em": 0.0,
        "best_f1": 0.0,
        "exact_match": 0.0,
        "f1": 0.0,
    }


def test_written_predictions_score_again_and_replay(harness_cli: Cli) -> None:
    code, out, err = harness_cli("run", "mkqa", "empty", "--quiet", "--no-leaderboard")
    assert code == 0, err
    folder = predictions_of(out)
    first = result_of(out)
    code, out, err = harness_cli("score", "mkqa", "--predictions", folder, "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["rows"] == first["rows"]
    code, out, err = harness_cli("run", "mkqa", f"predictions:file={folder}", "--quiet", "--no-leaderboard")
    assert code == 0, err
    replay = result_of(out)
    assert replay["rows"] == first["rows"]
    # The replayed folder's content hash identifies the "model"; the run rewrites the same bytes.
    assert replay["model"]["weights"] == "sha256:" + replay["predictions"]["sha256"]


def test_single_file_needs_its_language(harness_cli: Cli, tmp_path: Path) -> None:
    preds = write_lines(tmp_path / "mine.jsonl", demo_lines("en"))
    code, out, err = harness_cli("score", "mkqa", "--predictions", preds, "--langs", "en", "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["main_score"]["value"] == 100.0
    code, _, err = harness_cli("score", "mkqa", "--predictions", preds, "--no-leaderboard")
    assert code == 2
    assert err.strip() == (
        f"error: {preds}: cannot tell the language of these predictions: name the file "
        "<lang>.jsonl (or <lang>_prediction.jsonl) or pass --langs LANG"
    )
    named = write_lines(tmp_path / "en.jsonl", demo_lines("en"))
    code, out, err = harness_cli("score", "mkqa", "--predictions", named, "--no-leaderboard")
    assert code == 0, err


def test_mkqas_own_file_name_is_recognised(harness_cli: Cli, tmp_path: Path) -> None:
    """Issue 31, item 8: ``en_prediction.jsonl``, as MKQA's repository names its test predictions."""
    named = write_lines(tmp_path / "en_prediction.jsonl", demo_lines("en"))
    code, out, err = harness_cli("score", "mkqa", "--predictions", named, "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["main_score"]["value"] == 100.0
    folder = tmp_path / "folder"
    write_lines(folder / "en_prediction.jsonl", demo_lines("en"))
    write_lines(folder / "english.jsonl", demo_lines("en"))  # not a language's name: not read
    code, out, err = harness_cli("score", "mkqa", "--predictions", folder, "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["main_score"]["value"] == 100.0


def _bad(tmp_path: Path, lines: list[Any], name: str = "en.jsonl") -> Path:
    return write_lines(tmp_path / "preds" / name, lines)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda lines: lines[:2] + [{**lines[2], "example_id": 12345}] + lines[3:],
            "record line 3: field 'example_id': example id 12345 is not in the MKQA data",
        ),
        (lambda lines: lines[:-2], "field 'example_id': no prediction for 2 of the 30 examples: "),
        (
            lambda lines: lines + [lines[4]],
            "record line 31: field 'example_id': example id {id4} appears twice (first on line 5)",
        ),
        (lambda lines: lines[:1] + ['{"example_id": 1, "prediction": '] + lines[1:], "record line 2: malformed JSON: "),
        (
            lambda lines: [{**lines[0], "binary_answer": "maybe"}] + lines[1:],
            "record line 1: field 'binary_answer': does not match schema mkqa-predictions: ",
        ),
        (
            lambda lines: [{k: v for k, v in lines[0].items() if k != "binary_answer"}] + lines[1:],
            "record line 1: does not match schema mkqa-predictions: 'binary_answer' is a required property",
        ),
        (
            lambda lines: [lines[0], {**lines[1], "prediction": 5}] + lines[2:],
            "record line 2: field 'prediction': does not match schema mkqa-predictions: 5 is not of type",
        ),
        (
            lambda lines: [
                lines[0],
                '{"example_id": 1, "prediction": "", "binary_answer": null, "no_answer_prob": NaN}',
            ],
            "record line 2: field 'no_answer_prob': expected a finite number, got nan",
        ),
        (
            lambda lines: [{**lines[0], "no_answer_prob": None}] + lines[1:],
            "record line 1: field 'no_answer_prob': does not match schema mkqa-predictions: None is not of type 'number'",
        ),
    ],
)
def test_bad_prediction_lines(
    harness_cli: Cli, tmp_path: Path, edit: Callable[[list[Any]], list[Any]], expected: str
) -> None:
    lines = demo_lines("en")
    preds = _bad(tmp_path, edit(lines))
    code, out, err = harness_cli("score", "mkqa", "--predictions", preds.parent, "--no-leaderboard")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"error: {preds}: "), err
    assert expected.format(id4=lines[4]["example_id"]) in err
    assert not Path("results").exists()


def test_bad_prediction_folders(harness_cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    write_lines(folder / "en.jsonl", demo_lines("en"))
    write_lines(folder / "en_prediction.jsonl", demo_lines("en"))
    code, _, err = harness_cli("score", "mkqa", "--predictions", folder)
    assert code == 2 and "two files for language 'en' (en.jsonl, en_prediction.jsonl): keep one" in err
    (folder / "en_prediction.jsonl").unlink()
    write_lines(folder / "fr.jsonl", demo_lines("en"))
    code, _, err = harness_cli("score", "mkqa", "--predictions", folder)
    assert code == 2 and "predictions for 'fr', but the data has no fr answers" in err
    (folder / "fr.jsonl").unlink()
    code, _, err = harness_cli("score", "mkqa", "--predictions", folder, "--langs", "en,de")
    assert code == 2 and err.strip() == f"error: {folder}: no de.jsonl for language 'de' (named with --langs)"
    code, _, err = harness_cli("score", "mkqa", "--predictions", folder, "--langs", "xx")
    assert code == 2 and "unknown language 'xx' for task mkqa" in err
    # A folder with only some languages is scored, with the incomplete note.
    code, out, err = harness_cli("score", "mkqa", "--predictions", folder, "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["rows"][0]["subset"] == "incomplete: 1 of 26 languages"
    assert not Path("leaderboard").exists()


def _data_file(path: Path, examples: list[dict[str, Any]]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for example in examples:
            handle.write(json.dumps(example, ensure_ascii=False) + "\n")
    return path


def test_bad_data(harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", tmp_path)
    assert code == 2 and err.strip() == (
        f"error: no MKQA file in {tmp_path} (looked for mkqa.jsonl.gz, dataset/mkqa.jsonl.gz, mkqa.jsonl, "
        "test_mkqa.jsonl.gz, tests/testdata/test_mkqa.jsonl.gz; pass the file itself as --data-dir to read a file "
        "with another name)"
    )
    good = {
        "example_id": 1,
        "query": "q",
        "queries": {"en": "q", "fr": "q"},
        "answers": {"en": [{"type": "entity", "text": "a"}], "fr": [{"type": "entity", "text": "a"}]},
    }
    uneven = _data_file(
        tmp_path / "mkqa.jsonl.gz", [good, {**good, "example_id": 2, "answers": {"en": good["answers"]["en"]}}]
    )
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", tmp_path)
    assert code == 2 and err.strip() == (
        f"error: {uneven}: record line 2: field 'answers.fr': language 'fr' is "
        "missing here (every example must have the same languages)"
    )
    odd_type = {**good, "answers": {"en": [{"type": "person", "text": "a"}], "fr": good["answers"]["fr"]}}
    _data_file(uneven, [odd_type])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", uneven)
    assert code == 2 and "record line 1: field 'answers.en[0].type': unknown answer type 'person'" in err
    _data_file(uneven, [{**good, "answers": {**good["answers"], "en": []}}])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", uneven)
    assert code == 2 and "record line 1: field 'answers.en': expected a non-empty list of answers" in err
    _data_file(uneven, [good, good])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", uneven)
    assert code == 2 and "record line 2: field 'example_id': example id 1 appears twice (first on line 1)" in err
    _data_file(uneven, [good])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", uneven, "--langs", "de")
    assert code == 2 and "language 'de' is not in" in err
    assert not Path("results").exists()


def test_a_model_without_the_capability(harness_cli: Cli) -> None:
    code, _, err = harness_cli("run", "mkqa", "bm25")
    assert code == 2
    assert (
        err.strip().splitlines()[-1]
        == "error: model bm25 cannot run task mkqa: mkqa needs an OpenDomainQA or a Generator"
    )


def test_limit_ignores_predictions_beyond_it(harness_cli: Cli, tmp_path: Path) -> None:
    preds = write_lines(tmp_path / "en.jsonl", demo_lines("en"))
    code, out, err = harness_cli("score", "mkqa", "--predictions", preds, "--limit", "5", "--no-leaderboard")
    assert code == 0, err
    en = result_of(out)["rows"][1]
    assert (en["subset"], en["count"], en["metrics"]["best_f1"]) == ("en", 5, 100.0)


@pytest.mark.parametrize(
    "answer, field",
    [
        ({"type": "entity"}, "answers.en[0].text"),
        ({"type": "date", "text": None}, "answers.en[0].text"),
    ],
)
def test_a_typed_gold_answer_needs_its_text(harness_cli: Cli, tmp_path: Path, answer: dict, field: str) -> None:
    # Issue 11: only long_answer and unanswerable answers have no text (null) in MKQA.
    good = {"example_id": 1, "query": "q", "queries": {"en": "q"}, "answers": {"en": [{"type": "entity", "text": "a"}]}}
    path = _data_file(tmp_path / "mkqa.jsonl.gz", [good, {**good, "example_id": 2, "answers": {"en": [answer]}}])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", path)
    assert code == 2 and err.splitlines()[-1].startswith(f"error: {path}: record line 2: field '{field}': ")
    textless = {**good, "example_id": 3, "answers": {"en": [{"type": "unanswerable", "text": None}]}}
    _data_file(path, [good, textless])
    code, _, err = harness_cli("run", "mkqa", "oracle", "--data-dir", path, "--no-leaderboard", "--quiet")
    assert code == 0, err


@pytest.mark.parametrize(("lang", "script"), [("ru", "Cyrillic"), ("ar", "Arabic"), ("th", "Thai"), ("zh_cn", "Han")])
def test_answers_in_another_languages_script_are_refused_naming_it(
    harness_cli: Cli, tmp_path: Path, lang: str, script: str
) -> None:
    # MKQA's example ids are the same in every language: only the answers tell a file made for
    # another language. Their letters are in a script the English gold answers do not use.
    preds = write_lines(tmp_path / "mine.jsonl", demo_lines(lang))
    code, out, err = harness_cli("score", "mkqa", "--predictions", preds, "--langs", "en", "--no-leaderboard")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {preds}: the answers look made for {lang}, not en: ")
    assert f"of the answers' letters are {script}, 0.0% of those of the en gold answers" in err
    code, out, err = harness_cli(
        "score", "mkqa", "--predictions", preds, "--langs", "en", "--no-leaderboard", "--input-rules", "official"
    )
    assert code == 0, err
    assert err.startswith(f"warning: {preds}: the answers look made for {lang}, not en: ")


def test_every_languages_gold_answers_pass_as_its_predictions(harness_cli: Cli, tmp_path: Path) -> None:
    for lang in DEMO_LANGUAGES:
        write_lines(tmp_path / "gold" / f"{lang}.jsonl", demo_lines(lang))
    code, out, err = harness_cli("score", "mkqa", "--predictions", tmp_path / "gold", "--no-leaderboard")
    assert code == 0, err
    assert result_of(out)["main_score"]["value"] == 100.0
