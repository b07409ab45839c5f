"""The leaderboard survives concurrent runs and prints tables and language-pair matrices."""

from __future__ import annotations

import dataclasses
import multiprocessing
from pathlib import Path

import pytest

from harness import leaderboard
from harness.errors import InputError
from harness.io import read_json
from harness.results import RunResult
from harness.validation import validate
from tests.harness.fakes import fake_result

ROWS = [
    {"split": "dev", "subset": "de-de", "languages": ["de", "de"], "metrics": {"f1": 70.0, "em": 60.0}, "count": 5},
    {"split": "dev", "subset": "de-en", "languages": ["de", "en"], "metrics": {"f1": 30.0, "em": 20.0}, "count": 5},
    {"split": "dev", "subset": "en-de", "languages": ["en", "de"], "metrics": {"f1": 40.0, "em": 35.0}, "count": 5},
    {"split": "dev", "subset": "en-en", "languages": ["en", "en"], "metrics": {"f1": 90.0, "em": 80.0}, "count": 5},
]


def result_for(label: str, score: float) -> RunResult:
    return fake_result(task="pairs", label=label, split="dev", languages=("de", "en"), metric="f1", score=score,
                       rows=ROWS, finished_at="2026-11-21T00:00:00+00:00")


def add_many(args: tuple[str, int, int]) -> None:
    path, worker, count = args
    for i in range(count):
        leaderboard.add_result(Path(path), result_for(f"w{worker}-{i}", float(i)), Path(f"r{worker}-{i}.json"))


def test_two_processes_updating_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(add_many, [(str(path), 0, 15), (str(path), 1, 15)])
    board = read_json(path)
    validate(board, "leaderboard", file=path)
    assert len(board["entries"]) == 30
    assert not list(tmp_path.glob(".board.json.*.tmp"))


def test_same_key_replaces_and_table_ranks_best_first(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("weak", 10.0), Path("a.json"))
    leaderboard.add_result(path, result_for("strong", 60.0), Path("b.json"))
    leaderboard.add_result(path, result_for("weak", 20.0), Path("c.json"))  # a re-run replaces
    board = leaderboard.load(path)
    assert sorted((e["model"]["label"], e["main_score"]) for e in board["entries"]) == [("strong", 60.0), ("weak", 20.0)]
    table = leaderboard.render(board).splitlines()
    assert table[0] == "pairs (dev) - main score: f1"
    assert table[3].split()[:3] == ["1", "strong", "60"] and table[4].split()[:3] == ["2", "weak", "20"]


def test_matrix_shows_first_language_as_rows(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("m", 1.0), Path("a.json"))
    lines = leaderboard.render_matrix(leaderboard.load(path), "pairs", "em").splitlines()
    assert lines[0] == "m - em (rows: first language, columns: second)"
    assert lines[1].split() == ["de", "en"]
    assert lines[3].split() == ["de", "60", "20"]
    assert lines[4].split() == ["en", "35", "80"]


def test_an_invalid_entry_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("ok", 1.0), Path("a.json"))
    before = path.read_bytes()
    good = result_for("bad", 2.0)
    bad = dataclasses.replace(good, rows=(dataclasses.replace(good.rows[0], metrics={}), *good.rows[1:]))
    with pytest.raises(InputError, match="does not match schema leaderboard"):
        leaderboard.add_result(path, bad, Path("b.json"))
    assert path.read_bytes() == before
