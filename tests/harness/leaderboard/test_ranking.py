"""Only entries of one scope rank together, best first, with statistical ties marked; a scope
says which languages it covers, and which of the task's it lacks, once."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness import leaderboard
from harness.leaderboard import Leaderboard, LeaderboardEntry, PairedDifference, ranked
from harness.leaderboard.scope import DeclaredLanguages, coverage
from tests.harness.leaderboard.boards import FINGERPRINT, variant


def test_only_entries_of_one_scope_are_ranked_together(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for number, (label, score, scope) in enumerate(
        [
            ("full-a", 20.0, {}),
            ("full-b", 30.0, {"languages": ("en", "de")}),  # one language set, either order
            ("demo", 90.0, {"demo": True}),
            ("limited", 80.0, {"limit": 3}),
            ("gxlt", 70.0, {"options": {"mode": "gxlt"}}),
            ("english", 60.0, {"languages": ("en",)}),
        ]
    ):
        leaderboard.add_result(path, variant(label, score, **scope), Path(f"{number}.json"))
    groups = leaderboard.ranked(leaderboard.load(path))
    assert [[(e.rank, e.entry.model.label, e.entry.main_score) for e in g.entries] for g in groups] == [
        [(1, "full-b", 30.0), (2, "full-a", 20.0)],  # full data first: no options, languages de,en
        [(1, "english", 60.0)],
        [(1, "gxlt", 70.0)],
        [(1, "limited", 80.0)],
        [(1, "demo", 90.0)],
    ]
    assert groups[0].scope.to_dict() == {
        "task": "pairs",
        "task_options": {},
        "split": "dev",
        "languages": ["de", "en"],
        "limit": None,
        "demo": False,
        "data_fingerprint": FINGERPRINT,
    }
    assert [g.description for g in groups] == [
        f"no options; languages de,en; data {FINGERPRINT[:12]}",
        f"no options; languages en; data {FINGERPRINT[:12]}",
        f"mode=gxlt; languages de,en; data {FINGERPRINT[:12]}",
        f"no options; languages de,en; data {FINGERPRINT[:12]}; limit 3 per language",
        "no options; languages de,en; demo data",
    ]


def test_a_scorer_signature_is_part_of_the_scope_where_an_entry_has_one() -> None:
    entry = LeaderboardEntry.from_result(variant("m", 1.0, languages=("en", "de")), Path("r.json"))
    assert entry.scope.languages == ("en", "de")  # as the run listed them: the file keeps that order
    scope = entry.scope.canonical()
    assert "scorer_signature" not in scope.to_dict() and scope.languages == ("de", "en")
    signed = dataclasses.replace(scope, scorer_signature="s1")
    assert signed.to_dict() == {**scope.to_dict(), "scorer_signature": "s1"}
    assert signed != dataclasses.replace(scope, scorer_signature="s2")
    assert signed.describe().endswith("; scorer s1")


def test_the_same_languages_in_another_order_rank_together() -> None:
    board = Leaderboard(
        tuple(
            LeaderboardEntry.from_result(variant(label, score, languages=languages), Path("r.json"))
            for label, score, languages in (("a", 1.0, ("en", "de")), ("b", 2.0, ("de", "en")))
        )
    )
    (group,) = ranked(board)
    assert [e.entry.model.label for e in group.entries] == ["b", "a"] and group.scope.languages == ("de", "en")


def test_a_group_in_json_names_each_entry_with_its_card(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    card = {"name": "c", "zero_shot": False, "translated_training_data": True}
    leaderboard.add_result(path, variant("a", 1.0, interval=(0.5, 1.5), card=card), Path("a.json"))
    leaderboard.add_result(path, variant("b", 2.0, interval=(1.0, 3.0)), Path("b.json"))
    (group,) = leaderboard.ranked(leaderboard.load(path))
    keys = [e.entry.key for e in group.entries]
    assert group.to_dict()["entries"] == [
        {
            "rank": 1,
            "model": "b",
            "main_score": 2.0,
            "main_interval": [1.0, 3.0],
            "count": 5,
            "finished_at": "2026-11-21T00:00:00+00:00",
            "key": keys[0],
            "tied_with": 1,
            "paired_with_above": None,
            "card": None,
        },
        {
            "rank": 2,
            "model": "a",
            "main_score": 1.0,
            "main_interval": [0.5, 1.5],
            "count": 5,
            "finished_at": "2026-11-21T00:00:00+00:00",
            "key": keys[1],
            "tied_with": 1,
            "paired_with_above": None,
            "card": card,
        },
    ]


def test_tie_marks_chain_overlapping_neighbours_only() -> None:
    # ranked best first: 2 overlaps 3, 3 overlaps 4 (so 2-4 are one tie, though 2 and 4 do not
    # overlap), 5 touches 4's interval only at a shared end point, 6 has no interval, 7 none above
    intervals = [(9, 10), (6, 8), (5, 6.5), (4, 5.5), (3, 4), None, (3, 4)]
    assert leaderboard.tie_marks(intervals) == [None, 2, 2, 2, 2, None, None]
    assert leaderboard.tie_marks([]) == []
    assert leaderboard.tie_marks([(1, 2)]) == [None]


def paired(
    run_a: str, run_b: str, interval: tuple[float, float], p: float, difference: float = 0.1
) -> PairedDifference:
    return PairedDifference(run_a, run_b, "f1", difference, interval, p, 1000, 0, 0.95)


@pytest.mark.parametrize(
    ("interval", "p", "tied"),
    [
        ((0.1, 0.3), 0.001, False),  # both tests establish the order
        ((-0.1, 0.3), 0.001, True),  # the interval holds 0
        ((0.0, 0.3), 0.001, True),  # ... at its end
        ((1.02, 3.43), 0.174, True),  # the permutation test does not (MLQA G-XLT, 5 clusters, shipped)
        ((0.1, 0.3), 0.05, True),  # p not below 1 - 0.95
        ((-0.3, -0.1), 0.01, False),  # the other way round: ordered too
    ],
)
def test_a_paired_comparison_establishes_an_order_only_where_both_its_tests_do(
    interval: tuple[float, float], p: float, tied: bool
) -> None:
    assert paired("a", "b", interval, p).tied is tied


def _entry(label: str, score: float, *, run: str | None = None, card: dict[str, Any] | None = None) -> LeaderboardEntry:
    result = dataclasses.replace(variant(label, score, interval=(score - 1, score + 1), card=card), run_id=run or label)
    return LeaderboardEntry.from_result(result, Path(f"{label}.json"))


def test_a_paired_comparison_reads_the_same_from_either_entry_while_it_is_about_their_scores() -> None:
    a, b, c = _entry("a", 2.0), _entry("b", 1.8), _entry("c", 1.0)
    stored = paired("a", "b", (0.1, 0.3), 0.01, difference=0.2)
    board = Leaderboard((a, b, c), paired=(stored,))
    assert board.paired_difference(a, b) == stored
    flipped = board.paired_difference(b, a)
    assert flipped is not None and (flipped.run_a, flipped.run_b) == ("b", "a")
    assert (flipped.difference, flipped.interval) == (-0.2, (-0.3, -0.1)) and not flipped.tied
    assert board.paired_difference(a, c) is None
    # b scored again under the same run id (a run id names a configuration): the comparison is stale
    rescored = dataclasses.replace(b, main_score=1.5)
    assert Leaderboard((a, rescored, c), paired=(stored,)).paired_difference(a, rescored) is None
    assert board.with_entry(rescored).paired == ()  # and the board drops it as the entry is replaced


def test_neighbours_of_the_zero_shot_view_are_neighbours_too() -> None:
    zero_shot = {"name": "z", "zero_shot": True, "translated_training_data": False}
    board = Leaderboard(
        (_entry("a", 3.0, card=zero_shot), _entry("b", 2.0), _entry("c", 1.0, card=zero_shot), _entry("d", 0.5))
    )
    pairs = [(above.model.label, below.model.label) for above, below in leaderboard.neighbours(board)]
    assert pairs == [("a", "b"), ("b", "c"), ("c", "d"), ("a", "c")]  # a and c: next to each other when filtered


def test_storing_comparisons_keeps_those_of_other_pairs_made_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for label, score in (("a", 3.0), ("b", 2.5), ("c", 2.0)):
        leaderboard.add_result(path, dataclasses.replace(variant(label, score), run_id=label), Path(f"{label}.json"))
    other = paired("b", "c", (0.2, 0.8), 0.001, difference=0.5)
    leaderboard.set_paired(path, [other])  # another process's comparison, stored first
    mine = paired("a", "b", (0.2, 0.8), 0.001, difference=0.5)
    assert leaderboard.set_paired(path, [mine], [("a", "b")]).paired == (other, mine)
    # a pair handled again and found not comparable loses its old comparison
    assert leaderboard.set_paired(path, [], [("c", "b")]).paired == (mine,)


def test_paired_comparisons_decide_the_ties_of_neighbours_where_given() -> None:
    # every interval overlaps its neighbours': by overlap alone all four are one tie
    intervals = [(0.40, 0.60), (0.35, 0.55), (0.30, 0.50), (0.28, 0.48)]
    assert leaderboard.tie_marks(intervals) == [1, 1, 1, 1]
    ordered, tied = paired("x", "y", (0.02, 0.08), 0.001), paired("x", "y", (-0.01, 0.05), 0.2)
    # 2 is below 1 question by question; 3 tied with 2 by its comparison; 4 has none: overlap with 3
    assert leaderboard.tie_marks(intervals, [None, ordered, tied, None]) == [None, 2, 2, 2]
    assert leaderboard.tie_marks(intervals, [None, ordered, ordered, ordered]) == [None, None, None, None]
    # a comparison that does not establish the order ties neighbours whose intervals are apart
    assert leaderboard.tie_marks([(0.9, 1.0), (0.1, 0.2)], [None, tied]) == [1, 1]


def test_the_board_ranks_with_its_comparisons_and_drops_those_of_replaced_runs(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for label, score, interval in (("a", 3.0, (2.0, 4.0)), ("b", 2.5, (1.5, 3.5)), ("c", 2.0, (1.0, 3.0))):
        result = dataclasses.replace(variant(label, score, interval=interval), run_id=f"run-{label}")
        leaderboard.add_result(path, result, Path(f"{label}.json"))
    board = leaderboard.load(path)
    run = {e.model.label: e.run_id for e in board.entries}
    ([*overlap],) = [[e.tied_with for e in g.entries] for g in ranked(board)]
    assert overlap == [1, 1, 1]
    # stored below-first: the ranking orients it (above minus here)
    written = leaderboard.set_paired(path, (paired(run["b"], run["a"], (-0.7, -0.3), 0.001, difference=-0.5),))
    assert leaderboard.load(path) == written  # validated, and read back unchanged
    (group,) = ranked(written)
    assert [e.tied_with for e in group.entries] == [None, 2, 2]  # a above b question by question; b, c overlap
    above = group.entries[1].paired_with_above
    assert above is not None and (above.run_a, above.difference, above.interval) == (run["a"], 0.5, (0.3, 0.7))
    assert group.to_dict()["entries"][1]["paired_with_above"]["difference"] == 0.5
    # a run replacing b takes b's comparison away with it: overlap decides again
    leaderboard.add_result(
        path, dataclasses.replace(variant("b", 2.6, interval=(1.6, 3.6)), run_id="run-b2"), Path("b2.json")
    )
    replaced = leaderboard.load(path)
    assert replaced.paired == () and [e.tied_with for e in ranked(replaced)[0].entries] == [1, 1, 1]


TWELVE = frozenset(["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"])


@pytest.mark.parametrize(
    ("languages", "expected"),
    [
        (["en"], "incomplete: 1 of 12 languages (only en)"),
        (sorted(TWELVE - {"hi", "zh"}), "incomplete: 10 of 12 languages (missing hi,zh)"),
        (["de", "en", "es", "ru", "zh"], "incomplete: 5 of 12 languages (missing ar,el,hi,ro,th,tr,vi)"),
        (["ar", "de", "el"], "incomplete: 3 of 12 languages (only ar,de,el)"),
        (sorted(TWELVE), "12 languages"),
        (["de", "en"], "languages de,en"),  # a task no installed plugin knows
    ],
)
def test_coverage_names_what_a_run_lacks_once(languages: list[str], expected: str) -> None:
    assert coverage(languages, None if languages == ["de", "en"] else DeclaredLanguages(TWELVE)) == expected


def test_coverage_of_many_of_many_languages_is_counted() -> None:
    declared = frozenset(f"l{i:02}" for i in range(40))
    assert coverage(sorted(declared)[:20], DeclaredLanguages(declared)) == "incomplete: 20 of 40 languages"


#: Two editions of one task, as XTREME's 36 and XTREME-R's 41 Tatoeba languages: OLD's ten, NEW's twelve.
EDITIONS = DeclaredLanguages(TWELVE, (("OLD", TWELVE - {"hi", "zh"}), ("NEW", TWELVE)))


@pytest.mark.parametrize(
    ("languages", "expected"),
    [
        (sorted(TWELVE - {"hi", "zh"}), "10 languages (OLD)"),  # whole, not "incomplete: 10 of 12"
        (sorted(TWELVE), "12 languages (NEW)"),
        (sorted(TWELVE - {"hi", "zh", "ar"}), "incomplete: 9 of OLD's 10 languages (missing ar)"),  # the smallest above
        (sorted(TWELVE - {"zh"}), "incomplete: 11 of NEW's 12 languages (missing zh)"),
        (sorted(TWELVE - {"zh", "ar"}), "incomplete: 10 of NEW's 12 languages (missing ar,zh)"),  # not OLD's list
    ],
)
def test_coverage_of_an_editions_list_is_whole_and_names_the_edition(languages: list[str], expected: str) -> None:
    assert coverage(languages, EDITIONS) == expected


def test_equal_scores_rank_the_earlier_run_first() -> None:
    late, early = (
        dataclasses.replace(LeaderboardEntry.from_result(variant(label, 50.0), Path("r.json")), finished_at=at)
        for label, at in (("late", "2026-11-22T10:00:00+00:00"), ("early", "2026-11-21T10:00:00+00:00"))
    )
    for entries in ((late, early), (early, late)):
        (group,) = ranked(Leaderboard(entries))
        assert [e.entry.model.label for e in group.entries] == ["early", "late"]
