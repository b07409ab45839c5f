"""MLQA scored as facebookresearch/MLQA's mlqa_evaluation_v1.py: real dev files, XTREME's fixture,
G-XLT matrices, single files and folders, demo pairs, and bad input through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness_mlqa.metadata import MLQA_LANGUAGES
from harness_mlqa.task import mlqa

Cli = Callable[..., tuple[int, str, str]]
PAIRS = [f"{c}-{q}" for c in MLQA_LANGUAGES for q in MLQA_LANGUAGES]


def test_mlqa_unknown_language_is_an_error() -> None:
    with pytest.raises(HarnessError, match="unknown MLQA answer language 'fr'"):
        mlqa("fr")


def test_mlqa_normaliser_is_the_multilingual_one() -> None:
    from harness.scoring.normalize import multilingual

    assert all(mlqa(lang) is multilingual(lang) for lang in MLQA_LANGUAGES)


def result(cwd: Path) -> dict:
    (path,) = list(Path(cwd).glob("results/**/result.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def rows(cwd: Path) -> dict[str, dict]:
    return {row["subset"]: row for row in result(cwd)["rows"]}


def dev_file(real_data: Path, pair: str) -> Path:
    context, question = pair.split("-")
    return real_data / "mlqa" / "MLQA_V1" / "dev" / f"dev-context-{context}-question-{question}.json"


def first_answers(path: Path) -> dict[str, str]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {qa["id"]: qa["answers"][0]["text"] for a in doc["data"] for p in a["paragraphs"] for qa in p["qas"]}


# -- real dev data ---------------------------------------------------------------------------------

#: Spanish-context files hold the question 60184cb268780854f89dc022bbf2ccf2c8eea2ac whose gold
#: answer "una" normalises to "" (Spanish article): EM 1 but F1 0 for the gold answer, and EM 1
#: for an empty prediction. Questions per file: es-en 500, es-es 500, es-ar 161, es-vi 189.
UNA_FILES = {"es-en": 500, "es-es": 500, "es-ar": 161, "es-vi": 189}


def test_real_gxlt_gold_answers_all_49_files(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # The official scorer on gold answers (python mlqa_evaluation_v1.py dev-context-c-question-q.json
    # gold.json c, for all 49 files) gives EM 100 / F1 100 except the four files holding "una":
    # F1 = 100 * (n - 1) / n: es-en and es-es 99.8, es-ar 99.37888198757764, es-vi 99.47089947089947.
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "oracle", "--data-dir", real_data / "mlqa", "--quiet")
    assert code == 0, err
    got = rows(tmp_path)
    for pair in PAIRS:
        n = UNA_FILES.get(pair)
        expected_f1 = 100.0 if n is None else 100.0 * (n - 1) / n
        assert got[pair]["metrics"] == {"f1": expected_f1, "exact_match": 100.0}, pair
        assert got[pair]["languages"] == pair.split("-")
    assert got["es-es"]["metrics"]["f1"] == 99.8 and got["es-ar"]["metrics"]["f1"] == 99.37888198757764
    assert got["gxlt"]["count"] == sum(got[p]["count"] for p in PAIRS if p[:2] != p[3:])
    assert got["en-en"]["count"] == 1148 and got["es-de"]["count"] == 196  # the release's counts


def test_real_gxlt_empty_answers_all_49_files(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # Empty predictions score F1 0 everywhere and EM 0 except the "una" question (EM 1 of n).
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "empty", "--data-dir", real_data / "mlqa", "--quiet")
    assert code == 0, err
    got = rows(tmp_path)
    for pair in PAIRS:
        n = UNA_FILES.get(pair)
        assert got[pair]["metrics"] == {"f1": 0.0, "exact_match": 0.0 if n is None else 100.0 / n}, pair
    assert got["es-es"]["metrics"]["exact_match"] == 0.2


def test_real_xlt_oracle_default_mode(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # --data-dir may name MLQA_V1 itself; XLT = the 7 same-language files and their mean.
    code, out, err = harness_cli("run", "mlqa", "oracle", "--data-dir", real_data / "mlqa" / "MLQA_V1", "--quiet")
    assert code == 0, err
    got = rows(tmp_path)
    assert list(got) == ["mean", *MLQA_LANGUAGES]
    assert got["es"]["metrics"]["f1"] == 99.8 and got["en"]["metrics"]["f1"] == 100.0
    assert got["mean"]["metrics"]["f1"] == pytest.approx((6 * 100 + 99.8) / 7)
    assert result(tmp_path)["main_score"]["value"] == got["mean"]["metrics"]["f1"]
    assert result(tmp_path)["task"]["options"] == {"mode": "xlt"}


def perturbed(path: Path) -> dict[str, str]:
    """Question i (file order): i%4 == 0 drops the last word, 1 prefixes "The ", upper-cases and
    adds "!", 2 is left unanswered, 3 is the gold answer."""
    out = {}
    for i, (qid, gold) in enumerate(first_answers(path).items()):
        if i % 4 == 0:
            out[qid] = " ".join(gold.split()[:-1])
        elif i % 4 == 1:
            out[qid] = "The " + gold.upper() + "!"
        elif i % 4 == 3:
            out[qid] = gold
    return out


#: `python mlqa_evaluation_v1.py dev-context-c-question-q.json perturbed.json c` printed these.
OFFICIAL_PERTURBED = {
    "es-en": {"exact_match": 25.0, "f1": 58.904062812099724},
    "zh-zh": {"exact_match": 25.0, "f1": 47.376516631182895},
    "ar-de": {"exact_match": 24.63768115942029, "f1": 59.73827211925177},
    "vi-hi": {"exact_match": 24.858757062146893, "f1": 61.94650518259769},
}


@pytest.mark.parametrize("pair", sorted(OFFICIAL_PERTURBED))
def test_real_single_file_equals_official_to_the_last_digit(
    real_data: Path, harness_cli: Cli, tmp_path: Path, pair: str
) -> None:
    # One file is one G-XLT cell (mlqa:mode=gxlt --langs c-q) or one XLT language (mlqa --langs c).
    context, question = pair.split("-")
    task, langs, subset = ("mlqa", context, context) if context == question else ("mlqa:mode=gxlt", pair, pair)
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps(perturbed(dev_file(real_data, pair)), ensure_ascii=False), encoding="utf-8")
    code, _, err = harness_cli(
        "score", task, "--langs", langs, "--predictions", predictions, "--data-dir", real_data / "mlqa", "--quiet"
    )
    assert code == 0, err
    got = rows(tmp_path)
    assert got[subset]["metrics"] == {
        "f1": OFFICIAL_PERTURBED[pair]["f1"],
        "exact_match": OFFICIAL_PERTURBED[pair]["exact_match"],
    }
    assert result(tmp_path)["data"]["languages"] == [langs]
    assert any("had no prediction" in note for note in result(tmp_path)["notes"])


def test_xtreme_mock_mlqa(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # XTREME's fixture in its layout (test-{lang}.json). `python mlqa_evaluation_v1.py
    # labels/mlqa/test-$l.json predictions/mlqa/test-$l.json $l` prints en EM 0 F1 60.0,
    # es EM 0 F1 26.66666666666667, de EM 0 F1 85.71428571428571, ar/hi/vi/zh 100/100; the
    # means are XTREME's evaluate_test.py numbers, EM 57.142857..., F1 81.768707...
    mock = real_data / "xtreme" / "mock_test_data"
    code, _, err = harness_cli(
        "score",
        "mlqa",
        "--split",
        "test",
        "--data-dir",
        mock / "labels" / "mlqa",
        "--predictions",
        mock / "predictions" / "mlqa",
        "--quiet",
    )
    assert code == 0, err
    got = rows(tmp_path)
    assert got["en"]["metrics"] == {"f1": 60.0, "exact_match": 0.0}
    assert got["es"]["metrics"] == {"f1": 26.66666666666667, "exact_match": 0.0}
    assert got["de"]["metrics"] == {"f1": 85.71428571428571, "exact_match": 0.0}
    assert got["mean"]["metrics"]["exact_match"] == pytest.approx(400 / 7)
    assert got["mean"]["metrics"]["f1"] == pytest.approx((60.0 + 26.66666666666667 + 85.71428571428571 + 400) / 7)
    assert f"{got['mean']['metrics']['exact_match']:.6f}" == "57.142857"
    assert f"{got['mean']['metrics']['f1']:.6f}" == "81.768707"


def test_real_gxlt_with_tiny_reader_prints_matrix(
    real_data: Path, tiny_reader_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    code, _, err = harness_cli(
        "run",
        "mlqa:mode=gxlt",
        f"hf-reader:path={tiny_reader_dir},max_length=128,stride=32",
        "--data-dir",
        real_data / "mlqa",
        "--limit",
        "2",
        "--quiet",
    )
    assert code == 0, err
    got = rows(tmp_path)
    cells = [row for row in got.values() if len(row.get("languages", [])) == 2]
    assert len(cells) == 49 and all(row["count"] == 2 for row in cells)
    off_diagonal = [row["metrics"]["f1"] for row in cells if row["languages"][0] != row["languages"][1]]
    assert got["gxlt"]["metrics"]["f1"] == pytest.approx(sum(off_diagonal) / 42)
    predictions = Path(result(tmp_path)["predictions"]["path"])
    assert len(list(predictions.glob("dev-context-*-question-*.json"))) == 49
    code, out, err = harness_cli("leaderboard", "show", "--task", "mlqa", "--matrix", "f1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split() == list(MLQA_LANGUAGES)
    matrix = {line.split()[0]: line.split()[1:] for line in lines[3:10]}
    assert list(matrix) == list(MLQA_LANGUAGES)
    for context in MLQA_LANGUAGES:
        for question, cell in zip(MLQA_LANGUAGES, matrix[context]):
            value = got[f"{context}-{question}"]["metrics"]["f1"]
            assert float(cell) == pytest.approx(value, abs=0.006 if value > 1 else 0.00006)


def test_real_prediction_folder_round_trip(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # A run's predictions folder is the official format: scoring it again gives the same rows.
    code, _, err = harness_cli(
        "run",
        "mlqa",
        "oracle",
        "--data-dir",
        real_data / "mlqa",
        "--langs",
        "es,zh",
        "--quiet",
        "--output-dir",
        "first",
    )
    assert code == 0, err
    (path,) = list(Path(tmp_path).glob("first/**/result.json"))
    first = json.loads(path.read_text(encoding="utf-8"))
    folder = Path(first["predictions"]["path"])
    assert sorted(p.name for p in folder.iterdir()) == [
        "dev-context-es-question-es.json",
        "dev-context-zh-question-zh.json",
    ]
    code, _, err = harness_cli(
        "score", "mlqa", "--data-dir", real_data / "mlqa", "--langs", "es,zh", "--predictions", folder, "--quiet"
    )
    assert code == 0, err
    assert result(tmp_path)["rows"] == first["rows"]


# -- demo data (always runs) -----------------------------------------------------------------------


def test_demo_pairs_take_context_from_c_and_question_from_q(harness_cli: Cli, tmp_path: Path) -> None:
    from harness.definitions.task import DataRequest
    from harness.demo import parallel_qa_dir
    from harness_mlqa.task import MLQA

    task = MLQA(mode="gxlt")
    data = task.load(DataRequest(parallel_qa_dir(), "dev", task.check_languages(["de-en"])))
    (unit,) = data.units.values()
    de = json.loads((parallel_qa_dir() / "de.json").read_text(encoding="utf-8"))["data"][0]["paragraphs"][0]
    en = json.loads((parallel_qa_dir() / "en.json").read_text(encoding="utf-8"))["data"][0]["paragraphs"][0]
    assert (unit.name, unit.file_name, unit.languages) == ("de-en", "dev-context-de-question-en.json", ("de", "en"))
    assert unit.questions[0].context == de["context"]
    assert unit.questions[0].question == en["qas"][0]["question"]
    assert unit.questions[0].answers == (de["qas"][0]["answers"][0]["text"],)
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "oracle", "--quiet")
    assert code == 0, err
    got = rows(tmp_path)
    assert [name for name in got if "-" in name] == PAIRS
    assert got["gxlt"]["count"] == 42 * 24


def test_replaying_a_predictions_folder_is_the_submission_path(harness_cli: Cli, tmp_path: Path) -> None:
    # `harness run mlqa:mode=gxlt predictions:file=FOLDER` scores a folder of official files like
    # `harness score`; here the folder written by the empty model, so every cell is 0.
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "empty", "--langs", "en,de", "--quiet", "--output-dir", "first")
    assert code == 0, err
    (path,) = list(Path(tmp_path).glob("first/**/result.json"))
    folder = Path(json.loads(path.read_text(encoding="utf-8"))["predictions"]["path"])
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", f"predictions:file={folder}", "--langs", "en,de", "--quiet")
    assert code == 0, err
    replayed = result(tmp_path)
    assert replayed["model"]["weights"] == f"sha256:{replayed['predictions']['sha256']}"
    assert {row["subset"]: row["metrics"]["f1"] for row in replayed["rows"]} == {
        "gxlt": 0.0,
        "xlt": 0.0,
        "en-en": 0.0,
        "en-de": 0.0,
        "de-en": 0.0,
        "de-de": 0.0,
    }


def test_gxlt_language_selection_gives_pairs_among_them(harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "empty", "--langs", "ar,zh", "--quiet")
    assert code == 0, err
    assert list(rows(tmp_path)) == ["gxlt", "xlt", "ar-ar", "ar-zh", "zh-ar", "zh-zh"]
    assert result(tmp_path)["data"]["languages"] == ["ar", "zh"]


# -- bad input -------------------------------------------------------------------------------------


def demo_answers(lang: str = "en") -> dict[str, str]:
    from harness.demo import parallel_qa_dir

    return first_answers(parallel_qa_dir() / f"{lang}.json")


def write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def test_predictions_not_an_object(harness_cli: Cli, tmp_path: Path) -> None:
    preds = write(tmp_path / "preds.json", list(demo_answers().values()))
    code, out, err = harness_cli("score", "mlqa", "--langs", "en", "--predictions", preds)
    assert code == 2 and out == ""
    assert err.strip() == f"error: {preds}: expected a JSON object {{question_id: answer}}, got list"
    assert not (tmp_path / "results").exists()


def test_non_string_answer(harness_cli: Cli, tmp_path: Path) -> None:
    answers = demo_answers()
    answers["demo-etna-3"] = 2013
    preds = write(tmp_path / "preds.json", answers)
    code, _, err = harness_cli("score", "mlqa", "--langs", "en", "--predictions", preds)
    assert code == 2
    assert err.strip() == (
        f"error: {preds}: field 'demo-etna-3': does not match schema span-qa-predictions: 2013 is not of type 'string'"
    )


def test_ids_from_another_file(harness_cli: Cli, tmp_path: Path) -> None:
    preds = write(tmp_path / "preds.json", {**demo_answers(), "bc05f276f966ee2a28d92ad7da46ae82defb3c57": "525"})
    code, _, err = harness_cli("score", "mlqa", "--langs", "en", "--predictions", preds)
    assert code == 2
    assert err.strip() == (
        f"error: {preds}: field 'bc05f276f966ee2a28d92ad7da46ae82defb3c57': not a question of "
        "dev-context-en-question-en.json (1 such id(s): predictions for another file?)"
    )


def test_real_ids_from_another_file(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # English XLT predictions handed in as the German file: most English ids are not German questions.
    preds = write(tmp_path / "en.json", first_answers(dev_file(real_data, "en-en")))
    code, _, err = harness_cli(
        "score", "mlqa", "--langs", "de", "--predictions", preds, "--data-dir", real_data / "mlqa"
    )
    assert code == 2
    assert "not a question of dev-context-de-question-de.json" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("task", "langs", "message"),
    [
        ("mlqa", "en,xx", "error: unknown language 'xx' for task mlqa (languages: en, es, de, ar, hi, vi, zh)"),
        (
            "mlqa:mode=gxlt",
            "es-fr",
            "error: unknown language 'fr' for task mlqa (languages: en, es, de, ar, hi, vi, zh)",
        ),
        ("mlqa", "es-en", "error: 'es-en' is a (context, question) pair, a G-XLT cell: use mlqa:mode=gxlt"),
        (
            "mlqa:mode=gxlt",
            "es",
            "error: G-XLT needs a cross-language pair: select two or more languages or a pair such as "
            "es-en (same-language files are XLT: mlqa --langs es)",
        ),
        ("mlqa:mode=both", "es", "error: task mlqa: option 'mode' must be one of xlt, gxlt, got 'both'"),
    ],
)
def test_bad_language_selection(harness_cli: Cli, task: str, langs: str, message: str) -> None:
    code, _, err = harness_cli("run", task, "oracle", "--langs", langs)
    assert code == 2
    assert err.strip().splitlines()[-1] == message


def test_one_file_for_many_files_and_missing_folder_file(harness_cli: Cli, tmp_path: Path) -> None:
    preds = write(tmp_path / "preds.json", demo_answers())
    code, _, err = harness_cli("score", "mlqa", "--langs", "en,de", "--predictions", preds)
    assert code == 2
    assert err.strip() == (
        f"error: {preds}: one predictions file answers one data file, but 2 are selected (en, de): "
        "choose one with --langs, or pass a folder with one file per data file "
        "(e.g. dev-context-en-question-en.json)"
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    write(folder / "dev-context-en-question-en.json", demo_answers())
    code, _, err = harness_cli("score", "mlqa", "--langs", "en,de", "--predictions", folder)
    assert code == 2
    assert err.strip() == (
        f"error: {folder / 'dev-context-de-question-de.json'}: missing: a predictions folder "
        "holds one file per data file, named like it"
    )


def test_no_mlqa_files(harness_cli: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    code, _, err = harness_cli("run", "mlqa", "oracle", "--data-dir", empty)
    assert code == 2
    assert err.strip() == (
        f"error: no MLQA dev files in {empty}: expected MLQA_V1/dev/dev-context-en-question-en.json "
        "(the official release) or dev-en.json (XTREME's layout)"
    )


def test_context_and_question_language_flags_name_one_pair(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps(perturbed(dev_file(real_data, "es-en")), ensure_ascii=False), encoding="utf-8")
    code, _, err = harness_cli(
        "score",
        "mlqa:mode=gxlt",
        "--context-lang",
        "es",
        "--question-lang",
        "en",
        "--predictions",
        predictions,
        "--data-dir",
        real_data / "mlqa",
        "--quiet",
    )
    assert code == 0, err
    assert rows(tmp_path)["es-en"]["metrics"]["f1"] == OFFICIAL_PERTURBED["es-en"]["f1"]
    code, _, err = harness_cli("score", "mlqa:mode=gxlt", "--context-lang", "es", "--predictions", predictions)
    assert code == 2 and "--context-lang and --question-lang go together" in err


def test_real_answers_for_another_context_language_are_refused_naming_it(real_data: Path, tmp_path: Path) -> None:
    # MLQA's ids are shared across its files (the 512 de-de ids are among the 1,148 en-en ones), so
    # German answers scored as English pass the id check; they are text of the German contexts.
    # Every language's gold answers pass as predictions for it.
    from harness.definitions.task import DataRequest
    from harness.errors import InputError
    from harness_mlqa.task import MLQA

    task = MLQA()
    full = task.load(DataRequest(real_data / "mlqa", "dev"))
    gold = task.reference_predictions(full, "gold")
    for lang in MLQA_LANGUAGES:
        file = tmp_path / f"{lang}.json"
        file.write_text(json.dumps(gold[lang], ensure_ascii=False), encoding="utf-8")
        assert task.read_predictions(file, task.load(DataRequest(real_data / "mlqa", "dev", (lang,)))) == {
            lang: gold[lang]
        }
    english = task.load(DataRequest(real_data / "mlqa", "dev", ("en",)))
    for lang in MLQA_LANGUAGES[1:]:
        count = len(gold[lang])
        with pytest.raises(
            InputError,
            match=f"json: the answers look made for {lang}, not en: {count} of {count} "
            f"answers are text of the {lang} contexts",
        ):
            task.read_predictions(tmp_path / f"{lang}.json", english)


def test_real_spanish_gold_una_is_explained_in_one_note(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # MLQA's Spanish normaliser deletes "una"; one es dev question's only gold answer is "una", so
    # the gold answers score F1 499/500 = 99.8 there, and 160/161 and 188/189 in es-ar and es-vi.
    code, out, err = harness_cli(
        "run",
        "mlqa:mode=gxlt",
        "oracle",
        "--data-dir",
        real_data / "mlqa",
        "--quiet",
        "--bootstrap",
        "0",
        "--langs",
        "es,ar,vi",
    )
    assert code == 0, err
    assert rows(tmp_path)["es-ar"]["metrics"]["f1"] == pytest.approx(100 * 160 / 161)
    notes = [line for line in out.splitlines() if "empties" in line]
    assert notes == [
        "note: 3 question(s) have only gold answers that the official normaliser empties (e.g. 'una'), "
        "so no answer scores F1 on them; the highest F1 possible: es-es 99.8, es-ar 99.3789, "
        "es-vi 99.4709"
    ]


def test_real_gxlt_answers_in_the_question_language_are_scored_another_context_language_refused(
    real_data: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    """A generator asked in English about German contexts may answer in English, and its names
    and numbers are then text of the parallel English contexts: that is no file made for en (a
    Gemma G-XLT run was refused on re-scoring for 2 such answers of 3). Answers that are text of a
    third language's contexts still give a file away."""
    ids = set(first_answers(dev_file(real_data, "de-en")))
    english = {q: a for q, a in first_answers(dev_file(real_data, "en-en")).items() if q in ids}
    spanish = {q: a for q, a in first_answers(dev_file(real_data, "es-es")).items() if q in ids}
    assert len(english) == len(ids) and len(spanish) > 100  # the de-en ids are among en-en's (and many es-es's)
    for name, answers, refused_as in (("english", english, None), ("spanish", spanish, "es")):
        predictions = tmp_path / f"{name}.json"
        predictions.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
        code, _, err = harness_cli(
            "score", "mlqa:mode=gxlt", "--context-lang", "de", "--question-lang", "en", "--predictions", predictions,
            "--data-dir", real_data / "mlqa", "--quiet", "--no-leaderboard",
        )  # fmt: skip
        if refused_as is None:
            assert code == 0, err
        else:
            assert code == 2 and f"the answers look made for {refused_as}, not de: " in err
