"""Issue 31, item 13: what a researcher looks for -- one table across tasks for a model
(``leaderboard show --model``), the numbers as CSV (``--csv``) and as a data frame from Python
(``Outcome.records()``, ``Outcome.to_frame()``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest

import harness
from harness import leaderboard
from tests.harness.leaderboard.boards import result_for, variant

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """Two models on two tasks (one with two scopes), and a third model elsewhere."""
    path = tmp_path / "board.json"
    leaderboard.add_result(path, variant("ours", 50.0, interval=(48.0, 52.0)), Path("a.json"))
    leaderboard.add_result(path, variant("theirs", 60.0, interval=(58.0, 62.0)), Path("b.json"))
    leaderboard.add_result(
        path, variant("ours", 0.25, task="lareqa", languages=("de", "en"), interval=(0.2, 0.3)), Path("c.json")
    )
    leaderboard.add_result(path, variant("ours", 40.0, languages=("en",), interval=(39.0, 41.0)), Path("d.json"))
    leaderboard.add_result(path, result_for("other", 10.0), Path("e.json"))
    return path


def test_one_table_across_tasks_for_a_model(harness_cli: Cli, board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--model", "OURS", "--wide")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["model", "task", "main", "metric"]
    rows = [line.split("  ") for line in lines[2:]]
    assert len(rows) == 3 and all(row[0] == "ours" for row in rows)  # every entry of the model, no other model
    cells = [[cell.strip() for cell in line.split("  ") if cell.strip()] for line in lines[2:]]
    # task, the score in its metric's one format (f1: percent, two decimals) with its interval, and
    # its place in its scope
    assert [(c[1], c[3], c[4]) for c in cells] == [
        ("lareqa (dev)", "0.25 [0.20, 0.30]", "1 of 1"),
        ("pairs (dev)", "50.00 [48.00, 52.00]", "2 of 3"),
        ("pairs (dev)", "40.00 [39.00, 41.00]", "1 of 1"),
    ]
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--model", "nobody")
    assert code == 2 and out == ""
    assert "no entry of a model matching 'nobody'" in err and "ours" in err


def test_csv_holds_every_number_of_the_board(harness_cli: Cli, board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--csv")
    assert code == 0, err
    records = list(csv.DictReader(io.StringIO(out)))
    expected = [
        (e.model.label, e.scope.task, row.subset, metric, value)
        for e in leaderboard.load(board).entries
        for row in e.rows
        for metric, value in row.metrics.items()
    ]
    assert sorted((r["model"], r["task"], r["subset"], r["metric"], float(r["value"])) for r in records) == sorted(
        expected
    )
    assert {(r["model"], r["languages"]) for r in records if r["task"] == "pairs"} == {
        ("ours", "de,en"),
        ("ours", "en"),
        ("theirs", "de,en"),
        ("other", "de,en"),
    }  # each entry's scope beside it
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--csv", "--model", "theirs")
    assert {r["model"] for r in csv.DictReader(io.StringIO(out))} == {"theirs"}


def test_an_outcome_as_records_and_a_data_frame() -> None:
    pandas = pytest.importorskip("pandas")

    def first_words(question: str, context: str) -> str:
        return " ".join(context.split()[:3])

    [outcome] = harness.evaluate("xquad", first_words, langs="en,de", progress=False)
    records = outcome.records()
    result = outcome.result
    assert result is not None
    assert [(r["subset"], r["metric"], r["value"]) for r in records] == [
        (row.subset, metric, value) for row in result.rows for metric, value in row.metrics.items()
    ]
    assert {(r["task"], r["model"], r["languages"], r["kind"]) for r in records} == {
        ("xquad", result.model.label, "en,de", "run")
    }
    (main,) = [r for r in records if r["main"]]
    assert (main["metric"], main["value"], (main["low"], main["high"])) == (
        result.main_score.metric,
        result.main_score.value,
        result.main_score.interval,
    )
    frame = outcome.to_frame()
    assert list(frame.columns) == list(records[0])
    assert frame.equals(pandas.DataFrame(records))  # the records are what pandas reads as they are
