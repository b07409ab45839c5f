"""``harness score xtreme``: XTREME's evaluate.py on a submission folder.

Expected numbers come from running the official script on XTREME's own mock submission:
``python evaluate.py --prediction_folder mock_test_data/predictions --label_folder
mock_test_data/labels --output_file out.json`` (google-research/xtreme at 838c13b, seqeval 1.2.2),
copied here from out.json with all their digits.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]

OFFICIAL_TASKS = {  # task: (avg_metric, {metric: average})
    "pawsx": (51.42857142857143, {"accuracy": 51.42857142857143}),
    "xnli": (30.666666666666668, {"accuracy": 30.666666666666668}),
    "panx": (
        57.50793650793652,
        {"f1": 57.50793650793652, "precision": 54.729166666666664, "recall": 62.750000000000014},
    ),
    "udpos": (
        70.39805810699043,
        {"f1": 70.39805810699043, "precision": 71.21832908642001, "recall": 69.71397801088123},
    ),
    "bucc2018": (55.0, {"f1": 55.0, "precision": 55.0, "recall": 55.0}),
    "tatoeba": (53.611111111111114, {"accuracy": 53.611111111111114}),
    "xquad": (78.61570247933884, {"exact_match": 77.27272727272727, "f1": 79.9586776859504}),
    "mlqa": (69.45578231292518, {"exact_match": 57.142857142857146, "f1": 81.76870748299321}),
    "tydiqa": (93.05555555555556, {"exact_match": 88.88888888888889, "f1": 97.22222222222223}),
}
OFFICIAL_GROUPS = {
    "all_task": 62.1932649076773,
    "classification": 41.04761904761905,
    "tagging": 63.95299730746348,
    "qa": 80.37568011593986,
    "retrieval": 54.30555555555556,
}


def mock(official_data: Path) -> Path:
    return official_data / "xtreme" / "mock_test_data"


def result(cwd: Path) -> dict:
    (path,) = list(Path(cwd).glob("results/**/result.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def rows_of(cwd: Path) -> dict[str, dict]:
    return {row["subset"]: row for row in result(cwd)["rows"]}


def submission(tmp_path: Path, source: Path, tasks: list[str]) -> tuple[Path, Path]:
    """Copies of some task folders of the mock labels and predictions."""
    for side in ("labels", "predictions"):
        for task in tasks:
            shutil.copytree(source / side / task, tmp_path / side / task)
    return tmp_path / "labels", tmp_path / "predictions"


def test_mock_submission_equals_evaluate_py(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        mock(official_data) / "predictions",
        "--quiet",
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    for task, (figure, averages) in OFFICIAL_TASKS.items():
        assert rows[task]["metrics"] == {**averages, "avg_metric": figure}, task
    for group, value in OFFICIAL_GROUPS.items():
        assert rows[group]["metrics"] == {"avg_metric": value}, group
    # A few per-language values of out.json, including seqeval's POS quirk and MLQA's normaliser.
    assert rows["udpos/ar"]["metrics"] == {
        "f1": 53.57142857142857,
        "precision": 53.57142857142857,
        "recall": 53.57142857142857,
    }
    assert rows["udpos/mr"]["metrics"]["f1"] == 87.99999999999999
    assert rows["tydiqa/id"]["metrics"] == {"exact_match": 0.0, "f1": 74.99999999999999}
    assert rows["bucc2018/zh"]["metrics"]["f1"] == 70.0
    assert rows["tatoeba/th"]["metrics"] == {"accuracy": 0.0}
    assert rows["udpos/ar"]["languages"] == ["ar"]
    # Mewsli-X is an XTREME-R task: XTREME ignores its folder, as evaluate.py does.
    assert not any(subset.startswith("mewslix") for subset in rows)
    outcome = result(tmp_path)
    interval = outcome["main_score"].pop("interval")  # the all_task row's bootstrap interval
    assert outcome["main_score"] == {"metric": "all_task", "value": 62.1932649076773}
    assert interval == rows["all_task"]["intervals"]["avg_metric"] and interval[0] < 62.1932649076773 < interval[1]
    assert outcome["task"]["options"] == {"xtreme_version": "xtreme"}
    assert "main score: all_task (%) = 62.1933" in out


def test_written_predictions_score_the_same(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # The result's predictions folder is the submission rewritten in the official formats (stripped lines,
    # tag files with a blank line after each sentence, JSON): scored again it gives the same numbers.
    code, _, err = harness_cli(
        "score",
        "xtreme",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        mock(official_data) / "predictions",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    first = result(tmp_path)
    shutil.move(tmp_path / "results", tmp_path / "first")
    written = tmp_path / "first" / Path(first["predictions"]["path"]).relative_to("results")
    code, _, err = harness_cli(
        "score",
        "xtreme",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        written,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    assert result(tmp_path)["rows"] == first["rows"]


def test_incomplete_submission_has_no_all_task(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    labels, predictions = submission(tmp_path, mock(official_data), ["pawsx", "xnli", "tatoeba"])
    code, out, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions, "--quiet")
    assert code == 0, err
    rows = rows_of(tmp_path)
    # Only complete groups: classification (pawsx, xnli); retrieval lacks bucc2018.
    assert {"all_task", "retrieval", "tagging", "qa"}.isdisjoint(rows)
    assert rows["classification"]["metrics"] == {"avg_metric": 41.04761904761905}
    outcome = result(tmp_path)
    # (51.42857142857143 + 30.666666666666668 + 53.611111111111114) / 3, not XTREME's all_task.
    assert outcome["main_score"]["metric"] == "incomplete_task_mean"
    assert outcome["main_score"]["value"] == pytest.approx(
        (51.42857142857143 + 30.666666666666668 + 53.611111111111114) / 3
    )
    assert outcome["diagnostics"]["tasks_missing"] == ["panx", "udpos", "bucc2018", "xquad", "mlqa", "tydiqa"]
    assert outcome["data"]["languages"] == ["pawsx", "xnli", "tatoeba"]  # the tasks, each with all its languages
    assert "incomplete submission" in out
    # The leaderboard keeps it apart from complete submissions' all_task.
    code, _, err = harness_cli(
        "score",
        "xtreme",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        mock(official_data) / "predictions",
        "--quiet",
        "--name",
        "complete",
    )
    assert code == 0, err
    code, board, err = harness_cli("leaderboard", "show", "--task", "xtreme")
    assert code == 0, err
    assert "xtreme (test) - main score: all_task" in board
    assert "xtreme (test) - main score: incomplete_task_mean" in board


def test_xtreme_r_mewslix(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # Official: evaluate.py --xtreme_version xtreme-r on a folder with only the mock mewslix task.
    labels, predictions = submission(tmp_path, mock(official_data), ["mewslix"])
    code, out, err = harness_cli(
        "score", "xtreme:xtreme_version=xtreme-r", "--data-dir", labels, "--predictions", predictions, "--quiet"
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["mewslix"]["metrics"] == {"map@20": 14.39025156130419, "avg_metric": 14.39025156130419}
    assert rows["mewslix/de"]["metrics"] == {"map@20": 50.0}  # gold entity ranked 2nd
    assert rows["mewslix/pl"]["metrics"] == {"map@20": 5.263157894736842}  # ranked 19th
    assert "all_task cannot be produced" in out


def test_xtreme_r_needs_its_extra_languages(official_data: Path, harness_cli: Cli) -> None:
    # The mock folder has no XTREME-R languages such as qu for panx; evaluate.py raises FileNotFoundError.
    code, _, err = harness_cli(
        "score",
        "xtreme:xtreme_version=xtreme-r",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        mock(official_data) / "predictions",
    )
    assert code == 2
    assert err.strip().endswith(
        "labels/panx/test-qu.tsv: missing: evaluate.py needs a file for every language of a task it scores"
    )


def test_oracle_copies_the_labels(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    labels, _ = submission(tmp_path / "in", mock(official_data), ["pawsx", "bucc2018", "tydiqa"])
    code, _, err = harness_cli("run", "xtreme", "oracle", "--data-dir", labels, "--quiet")
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["pawsx"]["metrics"]["avg_metric"] == 100.0
    assert rows["bucc2018"]["metrics"]["avg_metric"] == 100.0
    assert rows["tydiqa"]["metrics"] == {"exact_match": 100.0, "f1": 100.0, "avg_metric": 100.0}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def xcopa_submission(root: Path, predicted: dict[str, list[int]]) -> tuple[Path, Path]:
    from harness_xtreme.benchmark import XCOPA

    for lang in XCOPA:
        write(root / "labels" / "xcopa" / f"test-{lang}.jsonl", '{"label": 0}\n{"label": 1}\n')
        labels = predicted.get(lang, [0, 1])
        write(root / "predictions" / "xcopa" / f"test-{lang}.jsonl", "".join(f'{{"label": {x}}}\n' for x in labels))
    return root / "labels", root / "predictions"


def test_xcopa_accuracy_and_multi_choice_group(harness_cli: Cli, tmp_path: Path) -> None:
    # 11 languages of 2 questions; et gets both wrong (0), ht one (50), the 9 others both (100):
    # mean (0 + 50 + 900) / 11 = 86.3636...; multi_choice = xcopa's figure.
    labels, predictions = xcopa_submission(tmp_path, {"et": [1, 0], "ht": [0, 0]})
    code, _, err = harness_cli(
        "score", "xtreme:xtreme_version=xtreme-r", "--data-dir", labels, "--predictions", predictions, "--quiet"
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["xcopa/et"]["metrics"] == {"accuracy": 0.0}
    assert rows["xcopa/ht"]["metrics"] == {"accuracy": 50.0}
    assert rows["xcopa"]["metrics"]["avg_metric"] == pytest.approx(950 / 11)
    assert rows["multi_choice"]["metrics"] == {"avg_metric": rows["xcopa"]["metrics"]["avg_metric"]}


def bucc_submission(root: Path, predicted_de: str) -> tuple[Path, Path]:
    for lang in ("de", "fr", "ru", "zh"):
        gold = f"{lang}-1\ten-1\n{lang}-2\ten-2\n"
        write(root / "labels" / "bucc2018" / f"test-{lang}.tsv", gold)
        write(root / "predictions" / "bucc2018" / f"test-{lang}.tsv", predicted_de if lang == "de" else gold)
    return root / "labels", root / "predictions"


def test_bucc_pair_sets(harness_cli: Cli, tmp_path: Path) -> None:
    # de: 3 distinct predicted pairs (one repeated), 1 correct: P = 1/3, R = 1/2, F1 = 2PR/(P+R) = 0.4.
    labels, predictions = bucc_submission(tmp_path, "de-1\ten-1\nde-1\ten-1\nde-2\ten-3\nde-3\ten-2\n")
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions, "--quiet")
    assert code == 0, err
    metrics = rows_of(tmp_path)["bucc2018/de"]["metrics"]
    assert metrics == pytest.approx({"f1": 40.0, "precision": 100 / 3, "recall": 50.0})


@pytest.mark.parametrize(
    ("task", "lang", "text", "message"),
    [
        ("pawsx", "de", "1\n0\n", "pawsx/test-de.tsv: 2 lines, but the labels have 10"),
        ("tatoeba", "af", "[308]\n" + "1\n" * 9, "tatoeba/test-af.tsv: record line 1: expected a 0-based line number"),
        (
            "bucc2018",
            "fr",
            "fr-000000001 en-000000002\n",
            "bucc2018/test-fr.tsv: record line 1: expected source_id<TAB>",
        ),
        ("panx", "de", "O\n", "panx/test-de.tsv: 1 sentences, but the labels have"),
        ("xquad", "de", "[]", "xquad/test-de.json: expected a JSON object"),
    ],
)
def test_bad_prediction_files(
    official_data: Path, harness_cli: Cli, tmp_path: Path, task: str, lang: str, text: str, message: str
) -> None:
    labels, predictions = submission(tmp_path / "in", mock(official_data), [task])
    suffix = "json" if task == "xquad" else "tsv"
    write(predictions / task / f"test-{lang}.{suffix}", text)
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "results").exists()


def test_tag_count_mismatch_names_the_sentence(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    labels, predictions = submission(tmp_path / "in", mock(official_data), ["udpos"])
    file = predictions / "udpos" / "test-en.tsv"
    lines = file.read_text(encoding="utf-8").splitlines()
    file.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")  # drop the first tag of sentence 1
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions)
    assert code == 2
    assert "udpos/test-en.tsv: record sentence 1:" in err and "tags, but the labels have" in err


def test_missing_language_and_wrong_inputs(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    labels, predictions = submission(tmp_path / "in", mock(official_data), ["xnli"])
    (predictions / "xnli" / "test-sw.tsv").unlink()
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions)
    assert code == 2 and "xnli/test-sw.tsv: missing: evaluate.py needs a file for every language" in err
    code, _, err = harness_cli(
        "score", "xtreme", "--data-dir", labels, "--predictions", labels / "xnli" / "test-ar.tsv"
    )
    assert code == 2 and "an XTREME submission is a folder" in err
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", tmp_path)
    assert code == 2 and "none of the label folder's tasks (xnli) has a sub-folder here" in err
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions, "--langs", "de")
    assert code == 2 and "--langs cannot select some" in err
    code, _, err = harness_cli("score", "xtreme", "--data-dir", tmp_path, "--predictions", predictions)
    assert code == 2 and "no xtreme task folders" in err


def test_xtreme_r_scores_the_tasks_present_though_other_labels_are_incomplete(
    official_data: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    # Issue 11: the mock labels lack XTREME-R languages (panx/test-qu.tsv, ...), but a submission of only
    # mlqa is scored as evaluate.py --xtreme_version xtreme-r scores it: mlqa avg_metric 69.4558.
    predictions = tmp_path / "in" / "predictions"
    shutil.copytree(mock(official_data) / "predictions" / "mlqa", predictions / "mlqa")
    code, out, err = harness_cli(
        "score",
        "xtreme:xtreme_version=xtreme-r",
        "--data-dir",
        mock(official_data) / "labels",
        "--predictions",
        predictions,
        "--quiet",
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["mlqa"]["metrics"]["avg_metric"] == pytest.approx(69.4558, abs=5e-5)
    assert "note: panx: not scored, its label folder lacks test-qu.tsv" in out
    assert set(result(tmp_path)["diagnostics"]["tasks_missing"]) >= {"panx", "udpos", "tatoeba", "xquad"}


def test_real_xquad_answers_filed_under_another_language_are_refused(
    real_data: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    # XQuAD's files share their ids, so German answers filed as test-en.json pass every id check;
    # they are text of the German contexts of the same submission's labels, hardly of the English.
    from harness.scoring.span_file import read_span_file
    from harness_xtreme.benchmark import XQUAD

    for lang in XQUAD:
        label = write(
            tmp_path / "labels" / "xquad" / f"test-{lang}.json",
            (real_data / "xquad" / f"xquad.{lang}.json").read_text(encoding="utf-8"),
        )
        gold = {q.id: q.answers[0] for q in read_span_file(label)}
        swapped = {"de": "en", "en": "de"}.get(lang, lang)  # German and English filed under each other
        write(tmp_path / "predictions" / "xquad" / f"test-{swapped}.json", json.dumps(gold))
    code, _, err = harness_cli(
        "score", "xtreme", "--data-dir", tmp_path / "labels", "--predictions", tmp_path / "predictions", "--quiet"
    )
    assert code == 2
    assert err.startswith(
        f"error: {tmp_path / 'predictions' / 'xquad' / 'test-en.json'}: the answers look made "
        "for de, not en: 1190 of 1190 answers are text of the de contexts, "
    )
