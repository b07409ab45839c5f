"""``harness leaderboard pair`` compares each two neighbours as ``harness compare`` does, keeps the
comparisons in the board, reuses them, and leaves a pair whose files are gone to overlap."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness import leaderboard
from harness.files.io import read_json
from tests.harness.leaderboard.boards import paired_marks

Cli = Callable[..., tuple[int, str, str]]


def _board(harness_cli: Cli) -> Path:
    """Three BM25 runs on LAReQA's demo data whose k1 differ (three scores, one scope)."""
    for k1 in ("1.5", "0.5", "3"):
        code, _, err = harness_cli("run", "lareqa", f"bm25:k1={k1}", "--quiet")
        assert code == 0, err
    return Path("results/leaderboard.json")


def test_neighbours_are_compared_as_harness_compare_compares_them(harness_cli: Cli) -> None:
    board = _board(harness_cli)
    code, out, err = harness_cli("leaderboard", "pair", "--file", board)
    assert code == 0, err
    assert "2 of 2 pairs of neighbours compared question by question" in out
    raw = read_json(board)
    entries = {e["run_id"]: e for e in raw["entries"]}
    (group,) = leaderboard.ranked(leaderboard.load(board))
    assert len(raw["paired"]) == 2
    for above, here in zip(group.entries, group.entries[1:]):
        (stored,) = [p for p in raw["paired"] if {p["run_a"], p["run_b"]} == {above.entry.run_id, here.entry.run_id}]
        a, b = entries[stored["run_a"]], entries[stored["run_b"]]
        assert stored["difference"] == a["main_score"] - b["main_score"]  # the two main scores, paired
        # the interval and p of `harness compare A B` on the summary row's main metric
        code, out, err = harness_cli("compare", a["result_path"], b["result_path"], "--json")
        assert code == 0, err
        (row,) = [r for r in json.loads(out)["rows"] if r["subset"] == a["rows"][0]["subset"] and r["metric"] == "map"]
        assert (stored["interval"], stored["p_permutation"]) == (row["interval"], row["p_permutation"])
        assert (stored["resamples"], stored["seed"], stored["confidence"]) == (1000, 0, 0.95)
        assert here.paired_with_above is not None and here.paired_with_above.run_a == above.entry.run_id
    marks = [f"={e.tied_with}" if e.tied_with else str(e.rank) for e in group.entries]
    assert marks == paired_marks([e.entry.run_id for e in group.entries], raw["paired"])


def test_comparisons_are_kept_made_again_for_other_settings_and_left_to_overlap_without_files(
    harness_cli: Cli,
) -> None:
    board = _board(harness_cli)
    assert harness_cli("leaderboard", "pair", "--file", board)[0] == 0
    first = read_json(board)["paired"]
    code, out, _ = harness_cli("leaderboard", "pair", "--file", board)
    assert code == 0 and out.count("(kept)") == 2 and read_json(board)["paired"] == first
    code, out, _ = harness_cli("leaderboard", "pair", "--file", board, "--bootstrap-seed", "1")
    assert code == 0 and "(kept)" not in out
    assert [p["seed"] for p in read_json(board)["paired"]] == [1, 1]
    # the lowest entry's result file gone: its pair is not compared, the other is
    (group,) = leaderboard.ranked(leaderboard.load(board))
    Path(group.entries[-1].entry.result_path).unlink()
    code, out, _ = harness_cli("leaderboard", "pair", "--file", board)
    assert code == 0 and "not compared (not at hand: " in out and "overlap decides" in out
    (kept,) = read_json(board)["paired"]
    assert {kept["run_a"], kept["run_b"]} == {group.entries[0].entry.run_id, group.entries[1].entry.run_id}


def test_a_comparison_of_entries_no_longer_neighbours_goes(harness_cli: Cli) -> None:
    board = _board(harness_cli)
    (group,) = leaderboard.ranked(leaderboard.load(board))
    top, bottom = group.entries[0].entry, group.entries[-1].entry
    apart = leaderboard.PairedDifference(top.run_id, bottom.run_id, "map", 0.1, (0.05, 0.15), 0.001, 1000, 0, 0.95)
    assert leaderboard.set_paired(board, [apart]).paired == (apart,)  # as a board ranked otherwise once held
    assert harness_cli("leaderboard", "pair", "--file", board)[0] == 0
    pairs = {frozenset({p["run_a"], p["run_b"]}) for p in read_json(board)["paired"]}
    assert pairs == {frozenset({a.entry.run_id, b.entry.run_id}) for a, b in zip(group.entries, group.entries[1:])}
