"""Leaderboard intake: results re-scored from their predictions, submissions scored and judged.

Independent figures: demo BM25 on LAReQA scores mAP 0.1357 (issue 13's own report of it), gold
MLQA answers score F1 = EM = 100 by definition, and XTREME's mock submission scores all_task
62.1932649076773 under the official evaluate.py (tests/plugins/harness_xtreme/test_submission.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

Cli = Callable[..., tuple[int, str, str]]

CARD = {
    "name": "a model",
    "zero_shot": True,
    "translated_training_data": False,
    "license": "apache-2.0",
    "parameters": 118_000_000,
    "training_languages": ["en"],
    "link": "https://example.org/model",
}


def run_result(harness_cli: Cli, tmp_path: Path, *args: str, output: str = "out") -> Path:
    code, _, err = harness_cli(*args, "--quiet", "--no-leaderboard", "--output-dir", output)
    assert code == 0, err
    (path,) = (tmp_path / output).glob("**/result.json")
    return path


def test_a_result_rescores_to_its_own_numbers_and_a_forged_one_is_refused(harness_cli: Cli, tmp_path: Path) -> None:
    path = run_result(harness_cli, tmp_path, "run", "lareqa", "bm25")
    code, out, err = harness_cli("validate", "--rescore", str(path))
    assert code == 0 and "are what its predictions score" in out, err
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert round(raw["main_score"]["value"], 4) == 0.1357
    raw["main_score"]["value"] = 0.99
    forged = path.with_name("forged.json")
    forged.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = harness_cli("validate", "--rescore", str(forged))
    assert code == 2
    assert err.strip() == (
        f"error: {forged}: main_score: scores do not match their predictions: "
        f"map 0.99 claimed, {raw['rows'][0]['metrics']['map']:.6g} recomputed"
    )
    # a row edited alone is caught too, and named
    raw = json.loads(path.read_text(encoding="utf-8"))
    subset = raw["rows"][3]["subset"]
    raw["rows"][3]["metrics"]["map"] += 0.01
    forged.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = harness_cli("validate", "--rescore", str(forged))
    assert code == 2 and f"rows[3] ({subset}): scores do not match" in err and err.count("\n") == 1


def test_a_forged_interval_is_refused(harness_cli: Cli, tmp_path: Path) -> None:
    path = run_result(harness_cli, tmp_path, "run", "lareqa", "bm25")
    raw = json.loads(path.read_text(encoding="utf-8"))
    low, high = raw["rows"][1]["intervals"]["map"]
    raw["rows"][1]["intervals"]["map"] = [low, high + 0.05]  # a narrower claim would be just as false
    forged = path.with_name("forged.json")
    forged.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = harness_cli("validate", "--rescore", str(forged))
    assert code == 2 and f"rows[1] ({raw['rows'][1]['subset']}): scores do not match" in err
    assert f"map interval [{low:.6g}, {high + 0.05:.6g}] claimed, [{low:.6g}, {high:.6g}] recomputed" in err
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["main_score"]["interval"] = [0.0, 1.0]
    forged.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = harness_cli("validate", "--rescore", str(forged))
    assert code == 2 and "main_score: scores do not match their predictions: map interval [0, 1] claimed" in err


def test_predictions_changed_after_scoring_are_refused(harness_cli: Cli, tmp_path: Path) -> None:
    path = run_result(harness_cli, tmp_path, "run", "lareqa", "bm25")
    predictions = path.with_name("predictions.jsonl")
    lines = predictions.read_text(encoding="utf-8").splitlines()
    predictions.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    code, _, err = harness_cli("validate", "--rescore", str(path))
    assert code == 2 and "predictions" in err and "changed after it was scored" in err


def submission(folder: Path, entries: list[dict], card: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "submission.json").write_text(json.dumps({"model": card or CARD, "entries": entries}), encoding="utf-8")
    return folder


def verdicts(out: str) -> dict[str, str]:
    """Submission folder name -> its verdict line."""
    return {
        line.split()[1].rstrip(":").rsplit("/", 1)[-1]: line
        for line in out.splitlines()
        if line.startswith(("accepted", "rejected"))
    }


def test_an_inbox_of_five_submissions_gets_a_verdict_each(harness_cli: Cli, tmp_path: Path) -> None:
    # predictions made elsewhere (demo data): LAReQA rankings of BM25 and gold MLQA answers
    lareqa = run_result(harness_cli, tmp_path, "run", "lareqa", "bm25").with_name("predictions.jsonl")
    mlqa_run = run_result(harness_cli, tmp_path, "run", "mlqa", "oracle", output="out-mlqa").parent
    (mlqa,) = [p for p in mlqa_run.iterdir() if p.name.startswith("predictions")]
    inbox = tmp_path / "inbox"
    good = submission(inbox / "1-lareqa", [{"task": "lareqa", "predictions": "rankings.jsonl"}])
    shutil.copy(lareqa, good / "rankings.jsonl")
    gold = submission(inbox / "2-mlqa", [{"task": "mlqa", "predictions": mlqa.name}], card={**CARD, "name": "gold"})
    (shutil.copytree if mlqa.is_dir() else shutil.copy)(mlqa, gold / mlqa.name)
    no_card = submission(
        inbox / "3-no-card", [{"task": "lareqa", "predictions": "rankings.jsonl"}], card={"name": "anonymous"}
    )
    shutil.copy(lareqa, no_card / "rankings.jsonl")
    foreign = submission(inbox / "4-foreign-id", [{"task": "lareqa", "predictions": "rankings.jsonl"}])
    extra = json.dumps({"question_id": "nosuch_en", "ranking": []})
    (foreign / "rankings.jsonl").write_text(lareqa.read_text(encoding="utf-8") + extra + "\n", encoding="utf-8")
    submission(inbox / "5-escape", [{"task": "lareqa", "predictions": "../1-lareqa/rankings.jsonl"}])
    # the board already holds an entry, which no rejection may cost it
    board = tmp_path / "board.json"
    code, _, err = harness_cli(
        "run", "lareqa:candidates=sentence", "bm25", "--quiet", "--output-dir", "out2", "--leaderboard", str(board)
    )
    assert code == 0, err

    code, out, err = harness_cli("submit", str(inbox), "--output-dir", "intake", "--leaderboard", str(board), "--quiet")
    assert code == 2 and err.strip() == "error: 3 of 5 submissions rejected (verdicts above)"
    lines = verdicts(out)
    assert lines["1-lareqa"].startswith("accepted") and lines["1-lareqa"].endswith("lareqa map 0.1357"), out
    assert lines["2-mlqa"].startswith("accepted") and lines["2-mlqa"].endswith("mlqa f1 100"), out
    assert lines["3-no-card"].startswith("rejected") and "submission.json" in lines["3-no-card"]
    assert "zero_shot" in lines["3-no-card"]
    assert lines["4-foreign-id"].startswith("rejected") and "nosuch_en" in lines["4-foreign-id"]
    assert lines["5-escape"].startswith("rejected") and "outside the submission folder" in lines["5-escape"]
    entries = json.loads(board.read_text(encoding="utf-8"))["entries"]
    assert sorted((e["task"], e["task_options"].get("candidates"), e["model"]["label"]) for e in entries) == [
        ("lareqa", "concat", "a model"),
        ("lareqa", "sentence", "BM25"),
        ("mlqa", None, "gold"),
    ]
    # the card is recorded with the result, the numbers only ever recomputed
    results = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "intake").glob("**/result.json")]
    assert {r["model"]["details"]["card"]["name"] for r in results} == {"a model", "gold"}


def test_the_xtreme_mock_submission_is_accepted_with_evaluate_pys_numbers(
    official_data: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    mock = official_data / "xtreme" / "mock_test_data"
    folder = submission(tmp_path / "inbox" / "mock", [{"task": "xtreme", "predictions": "predictions"}])
    shutil.copytree(mock / "predictions", folder / "predictions")
    board = tmp_path / "board.json"
    code, out, err = harness_cli(
        "submit", str(folder), "--data-dir", str(mock / "labels"), "--leaderboard", str(board), "--quiet"
    )
    assert code == 0, err
    assert verdicts(out)["mock"].endswith("xtreme all_task 62.1933")
    (entry,) = json.loads(board.read_text(encoding="utf-8"))["entries"]
    assert entry["main_score"] == 62.1932649076773 and entry["model"]["label"] == "a model"
    low, high = entry["main_interval"]  # the all_task row's interval (its metric is avg_metric)
    assert low < 62.1932649076773 < high
    # the accepted result stands a rescore against the maintainer's labels, interval included
    code, _, err = harness_cli("validate", "--rescore", entry["result_path"], "--data-dir", str(mock / "labels"))
    assert code == 0, err
