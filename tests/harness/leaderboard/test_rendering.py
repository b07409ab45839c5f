"""``harness leaderboard show``: tables ranked best first, lines that fit the terminal, language
matrices that name their axes, and each submission's model card with its entry."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import leaderboard
from tests.harness.leaderboard.boards import CARD, FINGERPRINT, result_for, variant

Cli = Callable[..., tuple[int, str, str]]


def test_the_table_ranks_best_first(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("weak", 20.0), Path("a.json"))
    leaderboard.add_result(path, result_for("strong", 60.0), Path("b.json"))
    table = leaderboard.render(leaderboard.load(path)).splitlines()
    assert table[:3] == [
        "pairs (dev) - main score: f1 (percent)",
        f"scope: no options; languages de,en; data {FINGERPRINT[:12]}",
        "#  model   f1 [95% interval]  count  date",
    ]
    assert table[4].split() == ["1", "strong", "60.00", "5", "2026-11-21"]  # count: the first (summary) row's
    assert table[5].split() == ["2", "weak", "20.00", "5", "2026-11-21"]


def test_tied_ranks_are_marked(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for label, score, interval in (("a", 2.0, (1.0, 2.5)), ("b", 1.0, (0.5, 1.5)), ("c", 0.0, (-1.0, 0.5))):
        leaderboard.add_result(path, variant(label, score, interval=interval), Path(f"{label}.json"))
    lines = leaderboard.render(leaderboard.load(path)).splitlines()[4:]
    assert [line.split()[0] for line in lines] == ["=1", "=1", "=1"]  # a overlaps b, b overlaps c


#: A scope whose line is long: options, a subset of the task's languages, a scorer signature.
LONG_SCOPE = {
    "task": "xquad",
    "languages": ("en",),
    "options": {"input_rules": "official", "mode": "long-option"},
    "scorer": "squad-v1.1|norm:ascii-english|em+f1|avg:mean",
}


def test_scope_lines_fit_the_terminal(harness_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, variant("a model with a long name", 50.0, **LONG_SCOPE), Path("a.json"))
    description = (
        f"input_rules=official,mode=long-option; incomplete: 1 of 12 languages (only en); data "
        f"{FINGERPRINT[:12]}; scorer squad-v1.1|norm:ascii-english|em+f1|avg:mean"
    )
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", path)
    assert code == 0, err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    scope = lines[1 : lines.index(next(line for line in lines if line.startswith("#")))]
    assert len(scope) > 1 and all(line.startswith("  ") for line in scope[1:])  # continuations indented
    assert " ".join(line.strip() for line in scope) == f"scope: {description}"
    code, out, _ = harness_cli("leaderboard", "show", "--leaderboard", path, "--wide")
    assert f"scope: {description}" in out.splitlines()  # --wide: one line, as wide as it is


def test_an_incomplete_run_says_what_it_lacks_once(harness_cli: Cli, tmp_path: Path) -> None:
    """XQuAD declares 12 languages; a run on English alone is 1 of them (not "1 of 12 languages
    (missing 11 of them)", which says the count twice)."""
    path = tmp_path / "board.json"
    leaderboard.add_result(path, variant("m", 1.0, task="xquad", languages=("en",)), Path("a.json"))
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", path)
    assert code == 0, err
    assert out.splitlines()[1] == f"scope: no options; incomplete: 1 of 12 languages (only en); data {FINGERPRINT[:12]}"


def test_a_matrix_title_names_the_context_and_question_axes(harness_cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("m", 1.0), Path("a.json"))
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", path, "--task", "pairs", "--matrix", "em")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "m - em (rows: context language, columns: question language)"
    assert lines[1].split() == ["de", "en"]
    assert lines[3].split() == ["de", "60", "20"]  # the de-en row (context de, question en) is 20
    assert lines[4].split() == ["en", "35", "80"]


TRANSLATE_TRAIN = {"name": "tt", "zero_shot": False, "translated_training_data": True, "parameters": 1_234_567_890}


def _board_with_cards(path: Path) -> None:
    leaderboard.add_result(path, variant("zero-shot model", 60.0, card=CARD), Path("a.json"))
    leaderboard.add_result(path, variant("translate-train model", 50.0, card=TRANSLATE_TRAIN), Path("b.json"))
    leaderboard.add_result(path, variant("a run", 40.0), Path("c.json"))


def test_show_gives_each_submissions_model_card(harness_cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    _board_with_cards(path)
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", path, "--wide")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[lines.index("model cards:") :] == [
        "model cards:",
        "  zero-shot model: zero-shot; 118M parameters; licence apache-2.0; https://example.org/model",
        "  translate-train model: translate-train; 1.23B parameters",
    ]


def test_show_json_gives_each_entrys_card(harness_cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    _board_with_cards(path)
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", path, "--json")
    assert code == 0, err
    (group,) = json.loads(out)
    assert [(e["rank"], e["model"], e["card"]) for e in group["entries"]] == [
        (1, "zero-shot model", CARD),
        (2, "translate-train model", TRANSLATE_TRAIN),
        (3, "a run", None),
    ]


def test_show_json_gives_the_ranked_groups(harness_cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, variant("a", 1.0), Path("a.json"))
    leaderboard.add_result(path, variant("b", 2.0, demo=True), Path("b.json"))
    code, out, err = harness_cli("leaderboard", "show", "--json", "--leaderboard", path)
    assert code == 0, err
    groups = json.loads(out)
    assert [
        (
            g["scope"]["demo"],
            g["main_metric"],
            [(e["rank"], e["model"], e["main_score"], e["count"]) for e in g["entries"]],
        )
        for g in groups
    ] == [(False, "f1", [(1, "a", 1.0, 5)]), (True, "f1", [(1, "b", 2.0, 5)])]


def test_a_submitted_card_reaches_the_board(harness_cli: Cli, tmp_path: Path) -> None:
    """The whole way: `harness submit` records the card with the result, the entry keeps it and
    `leaderboard show` prints it; no lock file is left beside the board."""
    code, _, err = harness_cli("run", "lareqa", "bm25", "--quiet", "--no-leaderboard", "--output-dir", "run")
    assert code == 0, err
    (rankings,) = Path("run").glob("**/predictions.jsonl")
    folder = tmp_path / "inbox" / "one"
    folder.mkdir(parents=True)
    shutil.copy(rankings, folder / "rankings.jsonl")
    (folder / "submission.json").write_text(
        json.dumps({"model": CARD, "entries": [{"task": "lareqa", "predictions": "rankings.jsonl"}]}), encoding="utf-8"
    )
    board = tmp_path / "boards" / "board.json"
    code, _, err = harness_cli("submit", folder, "--output-dir", "intake", "--leaderboard", board, "--quiet")
    assert code == 0, err
    assert sorted(p.name for p in board.parent.iterdir()) == ["board.json"]
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--wide")
    assert code == 0, err
    assert out.splitlines()[-2:] == [
        "model cards:",
        "  a model: zero-shot; 118M parameters; licence apache-2.0; https://example.org/model",
    ]
