"""XQuAD: the SQuAD v1.1 scorer on every language, real files, XTREME's fixture, demo data."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_squad.metadata import XQUAD_LANGUAGES

Cli = Callable[..., tuple[int, str, str]]


def result_rows(cwd: Path) -> dict[str, dict]:
    (path,) = list(Path(cwd).glob("results/**/result.json"))
    return {row["subset"]: row for row in json.loads(path.read_text(encoding="utf-8"))["rows"]}


@pytest.mark.parametrize(("model", "expected"), [("oracle", 100.0), ("empty", 0.0)])
def test_real_xquad_gold_and_empty(
    real_data: Path, harness_cli: Cli, tmp_path: Path, model: str, expected: float
) -> None:
    # The SQuAD v1.1 scorer gives gold 100/100 and empty 0/0 on all 12 files
    # (official-metrics.md 2.4; checked with XTREME's third_party/evaluate_squad.py on each xquad.{lang}.json).
    code, _, err = harness_cli("run", "xquad", model, "--data-dir", real_data / "xquad", "--quiet")
    assert code == 0, err
    rows = result_rows(tmp_path)
    assert set(rows) == {"mean", *XQUAD_LANGUAGES}
    for lang in XQUAD_LANGUAGES:
        assert rows[lang]["metrics"] == {"f1": expected, "exact_match": expected}
        assert rows[lang]["count"] == 1190
    assert rows["mean"]["count"] == 12 * 1190


def test_xtreme_mock_xquad(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # XTREME's fixture in its own layout (test-{lang}.json, 11 languages). Per-language values printed
    # by `python evaluate_squad.py labels/xquad/test-$l.json predictions/xquad/test-$l.json`
    # (google-research/xtreme third_party/evaluate_squad.py); XTREME's averages: EM 77.27, F1 79.96.
    mock = real_data / "xtreme" / "mock_test_data"
    code, out, err = harness_cli(
        "score",
        "xquad",
        "--data-dir",
        mock / "labels" / "xquad",
        "--predictions",
        mock / "predictions" / "xquad",
        "--quiet",
    )
    assert code == 0, err
    rows = result_rows(tmp_path)
    official = {
        "ar": (100.0, 100.0),
        "de": (100.0, 100.0),
        "el": (100.0, 100.0),
        "en": (100.0, 100.0),
        "es": (50.0, 54.54545454545454),
        "hi": (100.0, 100.0),
        "ru": (100.0, 100.0),
        "th": (50.0, 50.0),
        "tr": (50.0, 50.0),
        "vi": (100.0, 100.0),
        "zh": (0.0, 25.0),
    }
    for lang, (em, f1) in official.items():
        assert (rows[lang]["metrics"]["exact_match"], rows[lang]["metrics"]["f1"]) == (em, f1)
    assert rows["mean"]["metrics"]["exact_match"] == pytest.approx(850 / 11)  # (7*100 + 3*50 + 0) / 11
    assert rows["mean"]["metrics"]["f1"] == pytest.approx((700 + 54.54545454545454 + 50 + 50 + 25) / 11)
    assert round(rows["mean"]["metrics"]["f1"], 2) == 79.96


def test_demo_xquad_single_language_file(harness_cli: Cli, tmp_path: Path) -> None:
    # One file answers one language (--langs de): the demo's 24 German questions with their gold
    # answers, except demo-printing-3 (gold "mehr als zweihundert") answered "mehr als 200":
    # 2 of 3 tokens shared, P = R = 2/3, F1 = 2/3; and demo-etna-2 (gold "3.300 Metern") answered
    # "3300 Metern!": punctuation is deleted, so it is an exact match. EM 23/24, F1 (23 + 2/3)/24.
    doc = json.loads((Path(__file__).parents[3] / "harness/demo/parallel-qa/de.json").read_text(encoding="utf-8"))
    answers = {qa["id"]: qa["answers"][0]["text"] for a in doc["data"] for p in a["paragraphs"] for qa in p["qas"]}
    answers.update({"demo-printing-3": "mehr als 200", "demo-etna-2": "3300 Metern!"})
    predictions = tmp_path / "de.json"
    predictions.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    code, _, err = harness_cli("score", "xquad", "--langs", "de", "--predictions", predictions, "--quiet")
    assert code == 0, err
    rows = result_rows(tmp_path)
    assert set(rows) == {"mean", "de"}
    assert rows["de"]["metrics"]["exact_match"] == pytest.approx(100 * 23 / 24)
    assert rows["de"]["metrics"]["f1"] == pytest.approx(100 * (23 + 2 / 3) / 24)


def test_malformed_data_file_names_record_and_field(harness_cli: Cli, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    doc = {
        "version": "1.1",
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "abc",
                        "qas": [
                            {"id": "1", "question": "q?", "answers": [{"text": "a", "answer_start": 0}]},
                            {"id": "2", "answers": [{"text": "b", "answer_start": 1}]},
                        ],
                    }
                ],
            }
        ],
    }
    (data / "xquad.en.json").write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = harness_cli("run", "xquad", "oracle", "--data-dir", data, "--quiet")
    assert code == 2
    assert err.strip() == (
        f"error: {data / 'xquad.en.json'}: record data[0].paragraphs[0].qas[1]: "
        "field 'question': expected str, got NoneType"
    )


def _gold_file(harness_cli: Cli, data_dir: Path | None, lang: str, folder: Path) -> Path:
    """The oracle's answers for one language's file, as a predictions file made elsewhere."""
    data = ["--data-dir", data_dir] if data_dir else []
    code, _, err = harness_cli(
        "run",
        "xquad",
        "oracle",
        *data,
        "--langs",
        lang,
        "--no-leaderboard",
        "--quiet",
        "--bootstrap",
        "0",
        "--output-dir",
        folder,
    )
    assert code == 0, err
    (path,) = list(folder.glob(f"xquad/oracle/*/predictions/*.{lang}.json")) or list(
        folder.glob(f"xquad/oracle/*/predictions/{lang}.json")
    )
    return path


def test_demo_answers_for_another_language_are_refused_naming_it(harness_cli: Cli, tmp_path: Path) -> None:
    # The demo set's 24 ids are the same in every language, so German answers pass the id check
    # when English is scored; they are text of the German contexts, hardly of the English ones.
    german = _gold_file(harness_cli, None, "de", tmp_path / "gold")
    code, out, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", german, "--quiet")
    assert (code, out) == (2, "")
    assert (
        err.startswith(
            f"error: {german}: the answers look made for de, not en: 24 of 24 answers are text of the de contexts, "
        )
        and err.count("\n") == 1
    )
    assert not list(tmp_path.glob("results/**/result.json"))
    code, out, err = harness_cli(
        "score", "xquad", "--langs", "en", "--predictions", german, "--quiet", "--input-rules", "official"
    )
    assert code == 0
    assert err.startswith(f"warning: {german}: the answers look made for de, not en: ")
    assert "scored as given (--input-rules official)" in err


def test_demo_script_names_the_language_when_no_other_file_is_at_hand(harness_cli: Cli, tmp_path: Path) -> None:
    from harness.demo import parallel_qa_dir

    only_english = tmp_path / "en-only"
    only_english.mkdir()
    (only_english / "xquad.en.json").write_bytes((parallel_qa_dir() / "en.json").read_bytes())
    russian = _gold_file(harness_cli, None, "ru", tmp_path / "gold")
    code, _, err = harness_cli("score", "xquad", "--data-dir", only_english, "--predictions", russian, "--quiet")
    assert code == 2
    assert err.startswith(f"error: {russian}: the answers look made for ru, not en: ")
    assert "of the answers' letters are Cyrillic, 0.0% of those of the en contexts" in err


def test_real_xquad_gold_answers_pass_and_other_languages_are_named(real_data: Path, tmp_path: Path) -> None:
    # The gold answers of every language are accepted as predictions for it; scored as English,
    # every other language's are refused naming that language, and English's scored as each
    # other language likewise (official-metrics.md: the 12 files share their 1,190 ids).
    from harness.definitions.task import DataRequest
    from harness.errors import InputError
    from harness_squad.xquad import XQuAD

    task, folder = XQuAD(), real_data / "xquad"
    full = task.load(DataRequest(folder, "test"))
    gold = task.reference_predictions(full, "gold")
    for lang in XQUAD_LANGUAGES:
        file = tmp_path / f"{lang}.json"
        file.write_text(json.dumps(gold[lang], ensure_ascii=False), encoding="utf-8")
    one = {lang: task.load(DataRequest(folder, "test", (lang,))) for lang in XQUAD_LANGUAGES}
    for lang in XQUAD_LANGUAGES:
        assert task.read_predictions(tmp_path / f"{lang}.json", one[lang]) == {lang: gold[lang]}
    for made, scored in [
        *((lang, "en") for lang in XQUAD_LANGUAGES if lang != "en"),
        *(("en", lang) for lang in XQUAD_LANGUAGES if lang != "en"),
    ]:
        with pytest.raises(
            InputError,
            match=f"json: the answers look made for {made}, not {scored}: 1190 of 1190 "
            f"answers are text of the {made} contexts",
        ):
            task.read_predictions(tmp_path / f"{made}.json", one[scored])


def test_real_xquad_german_file_scored_as_english_is_refused(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # The case: `harness score xquad --langs en --predictions xquad.de.pred.json` exited 0.
    german = _gold_file(harness_cli, real_data / "xquad", "de", tmp_path / "gold")
    code, _, err = harness_cli(
        "score", "xquad", "--langs", "en", "--predictions", german, "--data-dir", real_data / "xquad", "--quiet"
    )
    assert code == 2
    assert err.startswith(
        f"error: {german}: the answers look made for de, not en: 1190 of 1190 answers are text of the de contexts, "
    )


def test_gold_answers_the_normaliser_empties_are_explained_in_a_note(harness_cli: Cli, tmp_path: Path) -> None:
    # SQuAD's normaliser deletes articles: the gold "The" becomes nothing, and F1 against nothing is
    # 0 for any answer; so the gold answers score F1 (0 + 1 + 1) / 3 = 66.67, and the note says why.
    data = tmp_path / "data"
    data.mkdir()
    qas = [
        {"id": qid, "question": "q?", "answers": [{"text": text, "answer_start": 0}]}
        for qid, text in [("1", "The"), ("2", "tower"), ("3", "Paris")]
    ]
    doc = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "The tower in Paris", "qas": qas}]}]}
    (data / "xquad.en.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = harness_cli("run", "xquad", "oracle", "--data-dir", data, "--quiet", "--bootstrap", "0")
    assert code == 0, err
    assert rows_of_result(out)["en"]["metrics"]["f1"] == pytest.approx(200 / 3)
    assert (
        "note: 1 question(s) have only gold answers that the official normaliser empties (e.g. 'The'), so no "
        "answer scores F1 on them; the highest F1 possible: en 66.6667\n"
    ) in out


def rows_of_result(out: str) -> dict[str, dict]:
    path = Path(out.split("result: ")[1].splitlines()[0])
    return {row["subset"]: row for row in json.loads(path.read_text(encoding="utf-8"))["rows"]}
