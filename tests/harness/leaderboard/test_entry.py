"""Entries as typed objects: made from a run result, read from and written to the file format
unchanged (a board written before the package split loads and is written back as it was)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness import leaderboard
from harness.errors import HarnessError
from harness.files.io import read_json, sha256_text
from harness.leaderboard import Leaderboard, LeaderboardEntry, ModelCard, Scope
from harness.results.result import ResultRow
from tests.harness.leaderboard.boards import CARD, FINGERPRINT, ROWS, variant

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: A board the harness wrote before the leaderboard became a package (format 1.0, no model cards):
#: an entry with an interval, a scorer signature and a matrix, a plain one, a demo --limit one.
OLD_BOARD = FIXTURES / "leaderboard" / "version-1.0.json"
#: The shipped board of the repository, of real runs.
EXAMPLE_BOARD = Path(__file__).resolve().parents[3] / "leaderboard" / "leaderboard.json"


@pytest.mark.parametrize("path", [OLD_BOARD, EXAMPLE_BOARD], ids=["fixture", "example"])
def test_a_board_of_the_earlier_format_loads_and_writes_back_unchanged(path: Path) -> None:
    raw = read_json(path)
    board = leaderboard.load(path)
    assert json.dumps(board.to_dict()) == json.dumps(raw)  # the same fields, values and key order
    if path == OLD_BOARD:  # format 1.0 had no cards (the shipped board's runs carry theirs)
        assert all(entry.card is None for entry in board.entries)


def test_adding_to_an_old_board_keeps_its_entries_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    path.write_bytes(OLD_BOARD.read_bytes())
    old = read_json(OLD_BOARD)["entries"]
    leaderboard.add_result(path, variant("new", 1.0, card=CARD), Path("new.json"))
    entries = read_json(path)["entries"]
    assert [e for e in entries if e["model"]["label"] != "new"] == old
    (new,) = [e for e in entries if e["model"]["label"] == "new"]
    assert new["card"] == CARD


def test_the_entry_of_a_result() -> None:
    result = variant("m", 55.0, options={"mode": "gxlt"}, interval=(50.0, 60.0), scorer="sig", card=CARD)
    entry = LeaderboardEntry.from_result(result, Path("runs/m/result.json"))
    model = result.model.identity
    assert (
        entry.key
        == sha256_text(
            json.dumps(
                [
                    "pairs",
                    {"mode": "gxlt"},
                    "dev",
                    FINGERPRINT,
                    ["de", "en"],
                    None,
                    {"name": "m", "label": "m", "weights": None, "options": {}},
                ],
                sort_keys=True,
            )
        )[:16]
    )
    assert entry.model == type(model)(model.name, model.label, model.weights, model.options)  # no details
    assert entry.scope == Scope("pairs", {"mode": "gxlt"}, "dev", ("de", "en"), None, False, FINGERPRINT, "sig")
    assert (entry.main_score, entry.main_interval, entry.result_path, entry.count) == (
        55.0,
        (50.0, 60.0),
        "runs/m/result.json",
        5,
    )
    assert entry.rows == tuple(ResultRow.from_dict(row) for row in ROWS)
    assert entry.card == ModelCard(
        name="a model",
        zero_shot=True,
        translated_training_data=False,
        link="https://example.org/model",
        parameters=118_000_000,
        training_languages=("en",),
        license="apache-2.0",
    )
    assert entry.zero_shot is True and entry.to_dict()["card"] == CARD
    assert LeaderboardEntry.from_dict(entry.to_dict()) == entry


def test_a_run_has_no_card_and_no_zero_shot_verdict() -> None:
    entry = LeaderboardEntry.from_result(variant("m", 1.0), Path("r.json"))
    assert entry.card is None and entry.zero_shot is None and "card" not in entry.to_dict()


def test_the_zero_shot_board_keeps_the_entries_whose_card_says_so() -> None:
    not_zero_shot = {**CARD, "name": "tt", "zero_shot": False, "translated_training_data": True}
    entries = [
        LeaderboardEntry.from_result(variant(label, 1.0, card=card, languages=(label,)), Path("r.json"))
        for label, card in (("zs", CARD), ("tt", not_zero_shot), ("run", None))
    ]
    board = Leaderboard(tuple(entries), "2026-11-21T00:00:00+00:00")
    assert [e.model.label for e in board.zero_shot().entries] == ["zs"]
    assert board.zero_shot().updated_at == board.updated_at


def test_a_run_of_the_same_languages_in_another_order_replaces_the_entry() -> None:
    """The key hashes the language set; an entry an older harness keyed by the run's order (MLQA's
    en,es,de,...) is still replaced by a run of the same languages."""
    first = LeaderboardEntry.from_result(variant("m", 1.0, languages=("en", "de")), Path("a.json"))
    model = {"name": "m", "label": "m", "weights": None, "options": {}}
    legacy = sha256_text(json.dumps(["pairs", {}, "dev", FINGERPRINT, ["en", "de"], None, model], sort_keys=True))[:16]
    assert (
        first.key
        == sha256_text(json.dumps(["pairs", {}, "dev", FINGERPRINT, ["de", "en"], None, model], sort_keys=True))[:16]
        != legacy
    )
    old = dataclasses.replace(first, key=legacy)
    again = LeaderboardEntry.from_result(variant("m", 2.0, languages=("de", "en")), Path("b.json"))
    board = Leaderboard((old,), "2026-11-21T00:00:00+00:00").with_entry(again)
    assert [(e.main_score, e.result_path) for e in board.entries] == [(2.0, "b.json")]
    other = LeaderboardEntry.from_result(variant("m", 3.0, languages=("de",)), Path("c.json"))
    assert len(board.with_entry(other).entries) == 2  # another language set: another entry


def test_a_plugins_own_card_under_the_boards_key_is_one_line(tmp_path: Path) -> None:
    """A model whose identity details hold some other card under ``card`` (the packaged language
    models' own card did) is refused naming the result and the field, not in a TypeError."""
    own = {"title": "Gemma 3 270M", "parameters": "270M"}
    with pytest.raises(HarnessError, match=r"^run\.json: model\.details\.card: not a model card \(the fields are "):
        leaderboard.add_result(tmp_path / "board.json", variant("x", 1.0, card=own), Path("run.json"))
    assert not (tmp_path / "board.json").exists()
