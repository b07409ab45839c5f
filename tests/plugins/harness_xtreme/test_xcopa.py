"""XCOPA with a tiny multiple-choice checkpoint: XTREME-R's question text, the run's accuracy from
its own prediction files counted by hand, the same figure read back by `harness score xtreme`,
the dev split's labels from its val files, and bad input in one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from harness_xtreme.benchmark import XCOPA
from harness_xtreme.xcopa import question_text
from tests.plugins.harness_hf.tiny_heads import build_tiny_head
from tests.plugins.harness_xtreme.test_labelled import error_line, label_lines

Cli = Callable[..., tuple[int, str, str]]


def test_question_text_is_run_xcopa_s() -> None:
    assert question_text("My body cast a shadow over the grass.", "cause") == (
        "My body cast a shadow over the grass. What was the cause?"
    )


def write_xcopa(folder: Path, split: str, lang: str, labels: Sequence[int]) -> None:
    """An XCOPA file as the download script leaves it (test labels set to 0)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "premise": f"{lang} premise {n}",
                "choice1": f"first {n} {'a ' * (n % 4)}",
                "choice2": f"second {n}",
                "question": ["cause", "effect"][n % 2],
                "label": 0 if split == "test" else label,
                "idx": n,
            }
        )
        for n, label in enumerate(labels)
    ]
    (folder / f"{split}-{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_labels(labels: Path, gold: dict[str, list[int]]) -> Path:
    """A label folder in the submission layout: ``xcopa/test-{lang}.jsonl``, ``{"label": n}`` a line."""
    (labels / "xcopa").mkdir(parents=True, exist_ok=True)
    for lang, choices in gold.items():
        (labels / "xcopa" / f"test-{lang}.jsonl").write_text(
            "".join(json.dumps({"label": c}) + "\n" for c in choices), encoding="utf-8"
        )
    return labels


def test_run_scores_as_a_submission(tmp_path: Path, harness_cli: Cli) -> None:
    gold = {
        lang: [(n * 7 + len(lang) * number) % 3 % 2 for n in range(6 + number)] for number, lang in enumerate(XCOPA)
    }
    labels = write_labels(tmp_path / "labels", gold)
    for lang, choices in gold.items():
        write_xcopa(tmp_path / "data" / "xcopa", "test", lang, choices)
    model = build_tiny_head(tmp_path / "model", "AutoModelForMultipleChoice", ["0", "1"], seed=5)
    code, out, err = harness_cli(
        "run",
        f"xcopa:labels={labels}",
        f"hf-multiple-choice:path={model}",
        "--data-dir",
        tmp_path / "data",
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    run = json.loads(out)["results"][0]["result"]
    rows = {row["subset"]: row["metrics"] for row in run["rows"]}
    predictions = Path(run["predictions"]["path"]) / "xcopa"
    accuracy = {}
    for lang in XCOPA:
        chosen = [json.loads(line)["label"] for line in label_lines(predictions / f"test-{lang}.jsonl")]
        accuracy[lang] = 100 * sum(a == b for a, b in zip(chosen, gold[lang])) / len(gold[lang])
        assert rows[lang]["accuracy"] == pytest.approx(accuracy[lang], abs=1e-9)
    assert rows["mean"]["accuracy"] == pytest.approx(sum(accuracy.values()) / len(XCOPA), abs=1e-9)
    assert 0 < rows["mean"]["accuracy"] < 100
    code, out, err = harness_cli(
        "score",
        "xtreme:xtreme_version=xtreme-r",
        "--predictions",
        predictions.parent,
        "--data-dir",
        labels,
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "scored",
    )
    assert code == 0, err
    scored = {row["subset"]: row["metrics"] for row in json.loads(out)["results"][0]["result"]["rows"]}
    assert scored["xcopa"]["avg_metric"] == rows["mean"]["accuracy"]
    assert scored["multi_choice"]["avg_metric"] == rows["mean"]["accuracy"]

    # the maintainer's side: the run rescored, and its predictions taken as a submission, both
    # with the label folder kept apart from the inputs (--labels); without it, one line
    result = tmp_path / run["predictions"]["path"].removesuffix("predictions") / "result.json"
    code, out, err = harness_cli("validate", "--rescore", result, "--labels", labels)
    assert code == 0 and "rows are what its predictions score" in out, err
    code, _, err = harness_cli("validate", "--rescore", result)
    assert code == 2 and "give the task a label folder, xcopa:labels=DIR" in error_line(err)
    submission = tmp_path / "submission"
    shutil.copytree(predictions.parent, submission / "predictions")
    (submission / "submission.json").write_text(
        json.dumps(
            {
                "model": {"name": "tiny", "zero_shot": True, "translated_training_data": False},
                "entries": [{"task": "xcopa", "predictions": "predictions"}],
            }
        ),
        encoding="utf-8",
    )
    code, out, err = harness_cli(
        "submit",
        submission,
        "--data-dir",
        tmp_path / "data",
        "--labels",
        labels,
        "--json",
        "--bootstrap",
        "0",
        "--leaderboard",
        tmp_path / "board.json",
    )
    assert code == 0, err
    (verdict,) = json.loads(out)["verdicts"]
    assert verdict["accepted"], verdict


def test_dev_labels_and_bad_input(tmp_path: Path, harness_cli: Cli) -> None:
    data = tmp_path / "data" / "xcopa"
    for lang in XCOPA:
        write_xcopa(data, "val", lang, [0, 1, 1, 0])
    model = build_tiny_head(tmp_path / "model", "AutoModelForMultipleChoice", ["0", "1"], seed=6)

    def run(*extra: object) -> tuple[int, str, str]:
        return harness_cli(
            "run",
            "xcopa",
            f"hf-multiple-choice:path={model}",
            "--data-dir",
            tmp_path / "data",
            "--device",
            "cpu",
            "--quiet",
            "--no-leaderboard",
            *extra,
        )

    code, out, err = run("--split", "dev", "--langs", "et")
    assert code == 0, err
    (result,) = list((tmp_path / "results").glob("xcopa/*/*/result.json"))
    assert json.loads(result.read_text())["data"]["statistics"] == {"examples": {"et": 4}}

    file = data / "val-qu.jsonl"
    good = file.read_text(encoding="utf-8")
    file.write_text(good.replace('"question": "cause"', '"question": "why"', 1), encoding="utf-8")
    code, _, err = run("--split", "dev", "--langs", "qu")
    assert (
        code == 2
        and error_line(err)
        == f"error: {file}: record line 1: field 'question': expected 'cause' or 'effect', got 'why'"
    )
    file.write_text(good.replace('"label": 1', '"label": 2', 1), encoding="utf-8")
    code, _, err = run("--split", "dev", "--langs", "qu")
    assert (
        code == 2
        and error_line(err) == f"error: {file}: record line 2: field 'label': expected the choice 0 or 1, got 2"
    )
    file.write_text(good.replace('"label": 1', '"label": true', 1), encoding="utf-8")
    code, _, err = run("--split", "dev", "--langs", "qu")
    assert code == 2 and "expected the choice 0 or 1, got True" in error_line(err)
    write_xcopa(data, "test", "qu", [0, 0])
    code, _, err = run("--langs", "qu")
    assert code == 2 and "give the task a label folder, xcopa:labels=DIR" in error_line(err)
    code, _, err = run("--langs", "en")
    assert code == 2 and error_line(err).startswith("error: unknown language 'en' for task xcopa in xtreme-r")
