"""The leaderboard survives concurrent runs and prints tables and language-pair matrices."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import leaderboard
from harness.errors import InputError
from harness.io import read_json, sha256_text
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
    assert table[:3] == ["pairs (dev) - main score: f1", f"scope: no options; languages de,en; data {FINGERPRINT[:12]}",
                         "#  model   f1  count  date"]
    assert table[4].split() == ["1", "strong", "60", "5", "2026-11-21"]  # count: the first (summary) row's
    assert table[5].split() == ["2", "weak", "20", "5", "2026-11-21"]


#: The data fingerprint of fake_result's one data file.
FINGERPRINT = sha256_text("a" * 64)


def _variant(label: str, score: float, *, demo: bool = False, limit: int | None = None,
             languages: tuple[str, ...] = ("de", "en"), options: dict | None = None) -> RunResult:
    result = result_for(label, score)
    return dataclasses.replace(result, data=dataclasses.replace(result.data, demo=demo, limit=limit, languages=languages),
                               task=dataclasses.replace(result.task, options=options or {}))


def test_only_entries_of_one_scope_are_ranked_together(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for number, (label, score, variant) in enumerate([
        ("full-a", 20.0, {}), ("full-b", 30.0, {"languages": ("en", "de")}),  # one language set, either order
        ("demo", 90.0, {"demo": True}), ("limited", 80.0, {"limit": 3}), ("gxlt", 70.0, {"options": {"mode": "gxlt"}}),
        ("english", 60.0, {"languages": ("en",)}),
    ]):
        leaderboard.add_result(path, _variant(label, score, **variant), Path(f"{number}.json"))
    groups = leaderboard.ranked(leaderboard.load(path))
    assert [[(e["rank"], e["model"], e["main_score"]) for e in g["entries"]] for g in groups] == [
        [(1, "full-b", 30.0), (2, "full-a", 20.0)],  # full data first: no options, languages de,en
        [(1, "english", 60.0)],
        [(1, "gxlt", 70.0)],
        [(1, "limited", 80.0)],
        [(1, "demo", 90.0)],
    ]
    assert groups[0]["scope"] == {"task": "pairs", "task_options": {}, "split": "dev", "languages": ["de", "en"],
                                  "limit": None, "demo": False, "data_fingerprint": FINGERPRINT}
    text = leaderboard.render(leaderboard.load(path))
    assert [line for line in text.splitlines() if line.startswith("scope: ")] == [
        f"scope: no options; languages de,en; data {FINGERPRINT[:12]}",
        f"scope: no options; languages en; data {FINGERPRINT[:12]}",
        f"scope: mode=gxlt; languages de,en; data {FINGERPRINT[:12]}",
        f"scope: no options; languages de,en; data {FINGERPRINT[:12]}; limit 3 per language",
        "scope: no options; languages de,en; demo data"]


def test_a_scorer_signature_is_part_of_the_scope_where_an_entry_has_one() -> None:
    entry = {"task": "t", "task_options": {}, "split": "dev", "languages": ["en", "de"], "limit": None,
             "demo": False, "data_fingerprint": "f", "model": {"label": "m"}, "main_score": 1.0}
    assert "scorer_signature" not in leaderboard.scope(entry) and leaderboard.scope(entry)["languages"] == ["de", "en"]
    assert leaderboard.scope({**entry, "scorer_signature": "s1"}) == {**leaderboard.scope(entry), "scorer_signature": "s1"}
    assert leaderboard.scope({**entry, "scorer_signature": "s1"}) != leaderboard.scope({**entry, "scorer_signature": "s2"})


def test_show_json_gives_the_ranked_groups(harness_cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, _variant("a", 1.0), Path("a.json"))
    leaderboard.add_result(path, _variant("b", 2.0, demo=True), Path("b.json"))
    code, out, err = harness_cli("leaderboard", "show", "--json", "--leaderboard", path)
    assert code == 0, err
    groups = json.loads(out)
    assert [(g["scope"]["demo"], g["main_metric"], [(e["rank"], e["model"], e["main_score"], e["count"])
                                                    for e in g["entries"]]) for g in groups] == [
        (False, "f1", [(1, "a", 1.0, 5)]), (True, "f1", [(1, "b", 2.0, 5)])]


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
