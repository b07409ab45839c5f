"""Where the harness writes when the user names no place (a module of its own, so the command
line can show the defaults without importing the runner).

Results and the leaderboard go under ``results/`` in the folder the command runs in, never into
the harness's own source tree: a run in a git checkout must not modify tracked files (its later
results would record a ``+dirty`` commit), and ``results/`` is git-ignored there. The committed
``leaderboard/leaderboard.json`` of the repository is an example, never a default target.
"""

from __future__ import annotations

from pathlib import Path

#: ``harness run`` and ``harness score`` write ``<task>/<model>/<run-id>/`` folders here (``--output-dir``).
DEFAULT_OUTPUT_DIR = Path("results")
#: The leaderboard every run updates (``--leaderboard``), and the one ``harness leaderboard`` reads.
DEFAULT_LEADERBOARD = DEFAULT_OUTPUT_DIR / "leaderboard.json"
