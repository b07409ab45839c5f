"""The official numbers on the official 6-example MKQA file (3 answerable, 3 No Answer in every
language; vendored in tests/fixtures/mkqa/, and ``../shared/data/mkqa/`` with real data), and
rounding on a larger constructed file.

Expected values come from the official scorer, apple/ml-mkqa@651b8cc, run under /tmp as
``python mkqa_eval.py -a tests/testdata/test_mkqa.jsonl.gz -p PREDICTIONS -l en -v``
(and its ``pytest tests/test_mkqa_eval.py``: 3 passed), or are worked out in the comments.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.task import DataRequest
from harness_mkqa.data import MKQAData
from harness_mkqa.languages import MKQA_LANGUAGES
from harness_mkqa.task import MKQA

OFFICIAL_EN = {  # the official end-to-end test's expectation, plus what -v adds
    "best_em": 66.67,
    "best_f1": 80.95,
    "best_answerable_em": 33.33,
    "best_answerable_f1": 61.9,
    "best_unanswerable_em": 100.0,
    "best_f1_threshold": -6.91,
    "exact_match": 16.67,
    "f1": 30.95,
    "answerable_exact_match": 33.33,
    "answerable_f1": 61.9,
    "unanswerable_exact_match": 0.0,
}


@pytest.fixture
def mkqa_dir(official_data: Path) -> Path:
    return official_data / "mkqa"


def load(path: Path, languages: tuple[str, ...] = MKQA_LANGUAGES) -> MKQAData:
    return MKQA().load(DataRequest(path, "test", languages))


def rows(evaluation: Any) -> dict[str, dict[str, float | None]]:
    return {row.subset: row.metrics for row in evaluation.rows}


def test_official_english_predictions(mkqa_dir: Path) -> None:
    task = MKQA()
    data = load(mkqa_dir / "test_mkqa.jsonl.gz", ("en",))
    predictions = task.read_predictions(mkqa_dir / "official-test-fixture" / "en_prediction.jsonl", data)
    evaluation = task.evaluate(data, predictions)
    en = rows(evaluation)["en"]
    assert {k: en[k] for k in OFFICIAL_EN} == OFFICIAL_EN
    # The probabilities are distinct, so the order-independent sweep agrees.
    assert (en["best_f1_tie_robust"], en["best_em_tie_robust"]) == (80.95, 66.67)
    # One language is not the official macro average.
    assert evaluation.rows[0].subset == "incomplete: 1 of 26 languages"
    assert evaluation.main_score == 80.95
    assert any(note.startswith("1 of 26 languages (only en): the main score") for note in evaluation.notes)


def test_gold_answers_score_100_in_every_language(mkqa_dir: Path) -> None:
    task = MKQA()
    data = load(mkqa_dir / "test_mkqa.jsonl.gz")
    evaluation = task.evaluate(data, task.reference_predictions(data, "gold"))
    table = rows(evaluation)
    assert list(table) == ["macro", *MKQA_LANGUAGES]
    for subset, metrics in table.items():
        assert metrics.pop("best_f1_threshold") == 0.0, subset
        assert set(metrics.values()) == {100.0}, subset
    assert evaluation.main_score == 100.0
    assert evaluation.notes == []


def test_empty_predictions_score_the_no_answer_share(mkqa_dir: Path) -> None:
    # 3 of 6 examples are No Answer in every language: abstaining scores 3/6 = 50.
    task = MKQA()
    data = load(mkqa_dir / "test_mkqa.jsonl.gz")
    evaluation = task.evaluate(data, task.reference_predictions(data, "empty"))
    for lang in MKQA_LANGUAGES:
        metrics = rows(evaluation)[lang]
        assert (metrics["best_f1"], metrics["best_em"]) == (50.0, 50.0), lang
        assert (metrics["best_answerable_f1"], metrics["best_unanswerable_em"]) == (0.0, 100.0), lang
    assert evaluation.main_score == 50.0


def _lines(data: MKQAData, text_of: Any) -> list[dict[str, Any]]:
    return [
        {"example_id": raw, "prediction": text_of(raw, annotation), "binary_answer": None, "no_answer_prob": 0}
        for raw, annotation in zip(data.raw_ids, data.annotations["en"])
    ]


def test_a_wrong_string_everywhere(mkqa_dir: Path) -> None:
    # best_f1 50 (abstaining everywhere is best: threshold stays 0.0) but best_em 0 (threshold 0.0
    # applied: every example answered with "zzz qqq"). Official output for wrong.jsonl:
    # best_em 0.0, best_f1 50.0, best_f1_threshold 0.0.
    task = MKQA()
    data = load(mkqa_dir / "test_mkqa.jsonl.gz")
    predictions = {
        lang: [{"example_id": raw, "prediction": "zzz qqq", "binary_answer": None} for raw in data.raw_ids]
        for lang in MKQA_LANGUAGES
    }
    evaluation = task.evaluate(data, predictions)
    for lang in MKQA_LANGUAGES:
        metrics = rows(evaluation)[lang]
        assert (metrics["best_f1"], metrics["best_em"], metrics["best_f1_threshold"]) == (50.0, 0.0, 0.0), lang
        # The variant measures EM where it abstains: everywhere, 3 of 6.
        assert (metrics["best_f1_tie_robust"], metrics["best_em_tie_robust"]) == (50.0, 50.0), lang


def test_line_order_of_tied_probabilities(mkqa_dir: Path) -> None:
    # All no_answer_prob 0; the 3 answerable examples answered with their gold text, the 3 No-Answer
    # examples with "zzz". Official output: answerable lines first best_f1 100.0, last 50.0;
    # best_em 50.0 both times (threshold 0: everything answered, 3 of 6 right).
    task = MKQA()
    data = load(mkqa_dir / "test_mkqa.jsonl.gz", ("en",))
    lines = _lines(data, lambda raw, a: a.reference if a.answerable else "zzz")
    answerable_first = sorted(lines, key=lambda line: line["prediction"] == "zzz")
    answerable_last = sorted(lines, key=lambda line: line["prediction"] != "zzz")
    first = task.evaluate(data, {"en": answerable_first})
    last = task.evaluate(data, {"en": answerable_last})
    en_first, en_last = rows(first)["en"], rows(last)["en"]
    assert (en_first["best_f1"], en_last["best_f1"]) == (100.0, 50.0)
    assert (en_first["best_em"], en_last["best_em"]) == (50.0, 50.0)
    # Thresholds can only answer the tie as a whole: 3 - 3 + 3 = 3 of 6, or abstain: 3 of 6.
    assert en_first["best_f1_tie_robust"] == en_last["best_f1_tie_robust"] == 50.0
    assert en_first["best_em_tie_robust"] == en_last["best_em_tie_robust"] == 50.0
    assert any("en (best_f1 100.0 vs 50.0" in note for note in first.notes)


def test_two_roundings_as_the_official_script(tmp_path: Path) -> None:
    # 4,000 answerable examples, the first 1,933 answered exactly, all prob 0: every metric is
    # 1933/4000 = 48.325%. The official script rounds best_f1 with Python's round (48.33) and the
    # means with numpy's (48.32). Official output for this file (built the same way):
    # best_em 48.32, best_f1 48.33, exact_match 48.32, best_unanswerable_em NaN.
    path = tmp_path / "mkqa.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for i in range(4000):
            answers = [{"type": "entity", "text": f"answer {i}"}]
            handle.write(
                json.dumps({"example_id": i, "query": "q", "queries": {"en": "q"}, "answers": {"en": answers}}) + "\n"
            )
    task = MKQA()
    data = load(tmp_path)
    predictions = {
        "en": [
            {
                "example_id": i,
                "prediction": f"answer {i}" if i < 1933 else "wrong",
                "binary_answer": None,
                "no_answer_prob": 0.0,
            }
            for i in range(4000)
        ]
    }
    en = rows(task.evaluate(data, predictions))["en"]
    assert (en["best_f1"], en["best_em"], en["exact_match"]) == (48.33, 48.32, 48.32)
    assert en["best_unanswerable_em"] is None


def test_no_answer_baseline_through_the_cli(mkqa_dir: Path, harness_cli: Any) -> None:
    # Abstaining everywhere scores the No-Answer share, 3 of 6, in all 26 languages: the official
    # macro average (every language present) is 50.
    code, out, err = harness_cli("run", "mkqa", "no-answer", "--data-dir", mkqa_dir / "test_mkqa.jsonl.gz", "--quiet")
    assert code == 0, err
    result = json.loads(Path(out.split("result: ")[1].splitlines()[0]).read_text(encoding="utf-8"))
    assert result["rows"][0]["subset"] == "macro" and result["rows"][0]["count"] == 6 * 26
    low, high = result["main_score"].pop("interval")
    assert result["main_score"] == {"metric": "best_f1", "value": 50.0} and low < 50.0 < high
    assert {row["metrics"]["best_em"] for row in result["rows"]} == {50.0}
    assert result["notes"] == []


def test_one_data_root_serves_mkqa_under_its_official_file_names(
    official_data: Path, harness_cli: Any, tmp_path: Path
) -> None:
    # The folder of every benchmark (its mkqa/ holds the official test file, test_mkqa.jsonl.gz) is
    # --data-dir for MKQA as for the others; so is a copy of apple/ml-mkqa (dataset/mkqa.jsonl.gz).
    code, out, err = harness_cli("run", "mkqa", "no-answer", "--data-dir", official_data, "--quiet", "--no-leaderboard")
    assert code == 0, err
    result = json.loads(Path(out.split("result: ")[1].splitlines()[0]).read_text(encoding="utf-8"))
    assert result["main_score"]["value"] == 50.0 and result["data"]["source"].endswith("mkqa/test_mkqa.jsonl.gz")
    release = tmp_path / "ml-mkqa" / "dataset" / "mkqa.jsonl.gz"
    release.parent.mkdir(parents=True)
    release.write_bytes((official_data / "mkqa" / "test_mkqa.jsonl.gz").read_bytes())
    code, out, err = harness_cli(
        "run", "mkqa", "no-answer", "--data-dir", release.parents[1], "--quiet", "--no-leaderboard"
    )
    assert code == 0, err
    assert f"({release}, split test)" in out
