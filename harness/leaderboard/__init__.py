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
* :mod:`~harness.leaderboard.rendering` -- text tables, language matrices and ``--json``;
* :mod:`~harness.leaderboard.page` -- the HTML page and the server of ``leaderboard page --serve``.
"""

from harness.leaderboard.entry import CARD_DETAIL, Leaderboard, LeaderboardEntry, ModelCard
from harness.leaderboard.page import page, page_server
from harness.leaderboard.ranking import RankedEntry, RankedGroup, ranked, tie_marks
from harness.leaderboard.rendering import render, render_json, render_matrix
from harness.leaderboard.scope import Scope
from harness.leaderboard.storage import add_result, load

__all__ = [
    "CARD_DETAIL", "Leaderboard", "LeaderboardEntry", "ModelCard", "RankedEntry", "RankedGroup", "Scope",
    "add_result", "load", "page", "page_server", "ranked", "render", "render_json", "render_matrix", "tie_marks",
]
