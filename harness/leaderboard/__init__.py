"""The leaderboard: every run folded into one JSON file, safely, ranked by scope, shown as text
or as a page.

One module a concern:

* :mod:`~harness.leaderboard.entry` -- what the file holds: :class:`Leaderboard`, its
  :class:`LeaderboardEntry` objects and their :class:`ModelCard`, one schema (``leaderboard``);
* :mod:`~harness.leaderboard.storage` -- reading it, and adding a run under a lock with an atomic
  replace, so concurrent runs all land and nothing is left beside the file;
* :mod:`~harness.leaderboard.scope` -- what an entry's number depends on besides the model
  (:class:`Scope`), described in a line;
* :mod:`~harness.leaderboard.ranking` -- which entries rank together (one scope), in which
  order, and which ranks are statistical ties;
* :mod:`~harness.leaderboard.pairing` -- neighbours compared question by question
  (:class:`PairedDifference`), the sharper test of a tie, kept in the board;
* :mod:`~harness.leaderboard.rendering` -- text tables, a model's table across tasks, language
  matrices, ``--json`` and ``--csv``;
* :mod:`~harness.leaderboard.records` -- every number as a flat record (CSV, data frames);
* :mod:`~harness.leaderboard.reported` -- the papers' reported results, kept beside a board and
  shown apart from it (:class:`ReportedResult`);
* :mod:`~harness.leaderboard.page` -- the HTML page and the server of ``leaderboard page --serve``.
"""

from harness.leaderboard.entry import CARD_DETAIL, Leaderboard, LeaderboardEntry, ModelCard, PairedDifference
from harness.leaderboard.page import page, page_server
from harness.leaderboard.pairing import Pairing, neighbours, pair_neighbours
from harness.leaderboard.ranking import RankedEntry, RankedGroup, ranked, tie_marks
from harness.leaderboard.records import entry_records, reported_records, result_records
from harness.leaderboard.rendering import (
    board_csv,
    model_rows,
    render,
    render_json,
    render_matrix,
    render_model,
    render_reported,
)
from harness.leaderboard.reported import ReportedResult, load_reported, select
from harness.leaderboard.reported import folder_of as reported_folder
from harness.leaderboard.scope import Scope
from harness.leaderboard.storage import add_result, load, set_paired

__all__ = [
    "CARD_DETAIL",
    "Leaderboard",
    "LeaderboardEntry",
    "ModelCard",
    "PairedDifference",
    "Pairing",
    "RankedEntry",
    "RankedGroup",
    "ReportedResult",
    "Scope",
    "add_result",
    "board_csv",
    "entry_records",
    "load",
    "load_reported",
    "model_rows",
    "neighbours",
    "page",
    "page_server",
    "pair_neighbours",
    "ranked",
    "render",
    "render_json",
    "render_matrix",
    "render_model",
    "render_reported",
    "reported_folder",
    "reported_records",
    "result_records",
    "select",
    "set_paired",
    "tie_marks",
]
