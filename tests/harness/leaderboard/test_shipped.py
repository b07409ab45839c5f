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
from harness.results.result import read_result
from harness.running.intake import rescore_result

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
