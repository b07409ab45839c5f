"""Runs of XTREME's tasks, each with its own tiny checkpoint, written to one results folder, score
as one submission through ``harness score xtreme``: group scores and ``all_task`` from the runs'
own figures (and, for the tasks not run here, the official mock figures)."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_xtreme.benchmark import UDPOS_TAGS, XNLI_CLASSES, task_defs
from tests.plugins.harness_hf.tiny_heads import build_tiny_head
from tests.plugins.harness_xtreme.test_labelled import error_line, label_lines, tag_sentences, write_pairs, write_words
from tests.plugins.harness_xtreme.test_submission import OFFICIAL_TASKS

Cli = Callable[..., tuple[int, str, str]]
RUN = {
    "xnli": ("hf-classifier", "AutoModelForSequenceClassification", XNLI_CLASSES),
    "pawsx": ("hf-classifier", "AutoModelForSequenceClassification", ["LABEL_0", "LABEL_1"]),
    "panx": (
        "hf-tagger",
        "AutoModelForTokenClassification",
        ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"],
    ),
    "udpos": ("hf-tagger", "AutoModelForTokenClassification", list(UDPOS_TAGS)),
}
COPIED = ("bucc2018", "tatoeba", "xquad", "mlqa", "tydiqa")


def main_row(folder: Path, subset: str = "mean") -> dict:
    (result,) = list(folder.glob("*/*/result.json"))
    return next(row for row in json.loads(result.read_text())["rows"] if row["subset"] == subset)


def test_a_results_folder_scores_as_a_submission(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    mock = official_data / "xtreme" / "mock_test_data"
    labels = mock / "labels"
    data, results = tmp_path / "data", tmp_path / "results"
    figures = {}
    for task, (model, head, names) in RUN.items():
        for lang in task_defs("xtreme")[task].languages:
            file = labels / task / f"test-{lang}.tsv"
            if model == "hf-classifier":
                write_pairs(data / task, "test", lang, len(label_lines(file)))
            else:
                write_words(data / task, "test", lang, [len(s) for s in tag_sentences(file)])
        model_dir = build_tiny_head(tmp_path / f"{task}-model", head, names, seed=len(task))
        code, out, err = harness_cli(
            "run",
            f"{task}:labels={labels}",
            f"{model}:path={model_dir}",
            "--data-dir",
            data,
            "--device",
            "cpu",
            "--quiet",
            "--no-leaderboard",
            "--output-dir",
            results,
        )
        assert code == 0, err
        row = main_row(results / task)
        figures[task] = row["metrics"]["accuracy" if model == "hf-classifier" else "f1"]
    for task in COPIED:
        shutil.copytree(mock / "predictions" / task, results / task)
        figures[task] = OFFICIAL_TASKS[task][0]

    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--predictions",
        results,
        "--data-dir",
        labels,
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "scored",
    )
    assert code == 0, err
    scored = tmp_path / "scored" / "xtreme"
    for task in RUN:
        assert main_row(scored, task)["metrics"]["avg_metric"] == figures[task]
    assert main_row(scored, "classification")["metrics"]["avg_metric"] == pytest.approx(
        (figures["pawsx"] + figures["xnli"]) / 2
    )
    assert main_row(scored, "tagging")["metrics"]["avg_metric"] == pytest.approx(
        (figures["udpos"] + figures["panx"]) / 2
    )
    assert main_row(scored, "all_task")["metrics"]["avg_metric"] == pytest.approx(math.fsum(figures.values()) / 9)

    # a second run of a task: which one is meant cannot be told, so it is refused in one line
    model_dir = build_tiny_head(tmp_path / "xnli-other", "AutoModelForSequenceClassification", XNLI_CLASSES, seed=9)
    code, out, err = harness_cli(
        "run",
        f"xnli:labels={labels}",
        f"hf-classifier:path={model_dir}",
        "--data-dir",
        data,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        results,
    )
    assert code == 0, err
    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--predictions",
        results,
        "--data-dir",
        labels,
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "scored-again",
    )
    assert code == 2 and "2 runs of xnli" in error_line(err)
