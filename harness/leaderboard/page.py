"""The leaderboard as one self-contained HTML page, written to a file or served on this machine.

The page (``page.html`` beside this module) is static: the board and its ranking are embedded in
it as JSON, so it ranks exactly as ``harness leaderboard show`` and shows exactly the board it
was made from, opens from disk, and can be mailed or published as one file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.entry import PAIR_AXES, Leaderboard
from harness.leaderboard.ranking import ranked
from harness.leaderboard.rendering import DECIMALS, card_summary, metric_units
from harness.leaderboard.reported import ReportedResult, folder_of, load_reported
from harness.leaderboard.storage import load

#: The page's HTML and script; :func:`page` puts a leaderboard's JSON where the marker is.
PAGE_TEMPLATE = Path(__file__).with_name("page.html")
PAGE_DATA_MARKER = "/*LEADERBOARD_JSON*/"
#: Characters written as JSON ``\u`` escapes inside the page's script element: with no ``<`` there,
#: no text in the leaderboard (a model named ``</script><img src=x onerror=...>``) can end the
#: element or open a comment (``>`` and ``&`` as well, as HTML-safe JSON writers do).
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def page_data(board: Leaderboard, reported: Sequence[ReportedResult] = ()) -> dict[str, Any]:
    """What the page embeds: the board as stored, its ranking by scope, the ranking of its
    zero-shot entries alone (the page's filter ranks them among themselves, with their own tie
    marks), the model cards in the words of ``leaderboard show`` (by entry key), what a
    language pair's two languages are, each metric's unit and its decimals (one format per
    metric, as ``leaderboard show``), and the papers' reported results (shown apart, unranked)."""
    return {
        "board": board.to_dict(),
        "groups": [group.to_dict() for group in ranked(board)],
        "zero_shot_groups": [group.to_dict() for group in ranked(board.zero_shot())],
        "cards": {entry.key: card_summary(entry.card) for entry in board.entries if entry.card is not None},
        "pair_axes": list(PAIR_AXES),
        "units": metric_units(board, reported),
        "decimals": DECIMALS,
        "reported": [result.to_dict() for result in reported],
    }


def page(board: Leaderboard, reported: Sequence[ReportedResult] = ()) -> str:
    """The self-contained HTML page of ``board``, with ``reported`` results apart."""
    data = json.dumps(page_data(board, reported), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    return template.replace(PAGE_DATA_MARKER, data.translate(_SCRIPT_SAFE), 1)


def page_server(path: Path, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """An HTTP server whose every GET of ``/`` answers the page of the leaderboard at ``path`` and
    of the reported results beside it, read afresh (a run finishing meanwhile shows on reload);
    anything else is 404. Nothing is bound beyond ``host`` (this machine by default)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                self.send_error(404)
                return
            try:
                body = page(load(path), load_reported(folder_of(path))).encode("utf-8")
            except HarnessError as exc:
                self.send_error(500, explain=str(exc))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            print(f"{self.address_string()} {format % args}", file=sys.stderr)

    try:
        return ThreadingHTTPServer((host, port), Handler)
    except (OSError, OverflowError) as exc:  # OverflowError: a port outside 0-65535
        raise HarnessError(f"cannot serve on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
