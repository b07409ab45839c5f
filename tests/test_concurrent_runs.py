"""Identical runs started at the same moment (a retried job, two terminals, a scheduler that
launches duplicates) into one output folder and one leaderboard: every process ends with exit 0
and no traceback, every result is valid and names its own predictions, and the leaderboard holds
one entry for the configuration.

Before run folders were claimed with an exclusive ``mkdir`` (:mod:`harness.results.layout`), processes
starting within the same second computed the same folder and one removed or renamed what another
was writing (``FileNotFoundError: .../.predictions.<random>.tmp``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results.result import read_result

CHECKOUT = Path(__file__).resolve().parent.parent
#: Processes per round: enough to start several within one second on a 2-core machine.
PROCESSES = 6


def _start_together(folder: Path, args: list[str]) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))}
    command = [
        sys.executable,
        "-m",
        "harness",
        *args,
        "--quiet",
        "--no-cache",
        "--bootstrap",
        "0",
        "--output-dir",
        str(folder / "out"),
        "--leaderboard",
        str(folder / "board.json"),
    ]
    return [
        subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]


@pytest.mark.parametrize(
    "args, rounds",
    [
        (["run", "mkqa", "oracle"], 2),  # predictions written as a folder (one file per language)
        (["run", "lareqa", "bm25", "--langs", "de,en"], 1),  # predictions written as one file
    ],
    ids=["folder", "file"],
)
def test_identical_runs_at_once_all_land(tmp_path: Path, args: list[str], rounds: int) -> None:
    for _ in range(rounds):
        processes = _start_together(tmp_path, args)
        for process in processes:
            out, err = process.communicate(timeout=600)
            assert process.returncode == 0 and "Traceback" not in err, err
    results = sorted((tmp_path / "out").rglob("result.json"))
    assert len(results) == rounds * PROCESSES  # each run its own folder
    for path in results:
        result, folder = read_result(path)
        assert Path(result.predictions.path).parent == folder and Path(result.predictions.path).exists()
    assert len({read_result(path)[0].run_id for path in results}) == 1  # one configuration
    board = json.loads((tmp_path / "board.json").read_text(encoding="utf-8"))
    assert len(board["entries"]) == 1
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.rglob(".*.tmp"))
