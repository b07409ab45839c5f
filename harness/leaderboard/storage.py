"""The leaderboard file: read and validated, and updated by many processes at once without loss.

An update holds an exclusive lock, reads the board, adds or replaces one entry, validates the
whole and replaces the file atomically: two runs finishing at once both land, and a crash or a
refused entry never leaves a broken (or half-written) board. Readers take no lock: the file they
open is always a complete one.

The lock is a ``flock`` on ``NAME.lock`` beside the board, and the holder deletes that file
before it lets go, so nothing is left beside a board once a command ends. Deleting a lock file
others may be waiting on is safe only because every writer, once it holds the lock, checks that
the file it locked is still the one at the path, and starts again when it is not (a holder
removed it meanwhile): exactly one process ever holds the lock of the file at the path.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from harness.definitions.validation import validate
from harness.errors import HarnessError
from harness.files.io import dump_json, read_json, remove_temporaries
from harness.leaderboard.entry import SCHEMA, Leaderboard, LeaderboardEntry, PairedDifference
from harness.results.result import RunResult

#: Seconds a writer waits for another to finish its update before it gives up.
LOCK_TIMEOUT_S = 120.0
#: Seconds between two tries for a held lock.
_RETRY_S = 0.01


def load(path: Path) -> Leaderboard:
    """Read and validate a leaderboard (an empty one if the file does not exist yet)."""
    if not path.exists():
        return Leaderboard()
    raw = read_json(path)
    validate(raw, SCHEMA, file=path)
    return Leaderboard.from_dict(raw)


def add_result(path: Path, result: RunResult, result_path: Path) -> LeaderboardEntry:
    """Fold one run result into the leaderboard at ``path`` (locked, atomic); return its entry."""
    entry = LeaderboardEntry.from_result(result, result_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        remove_temporaries(path.parent, path.name)  # of a run killed mid-update: every writer holds the lock
        raw = load(path).with_entry(entry).to_dict()
        validate(raw, SCHEMA, file=path)
        dump_json(raw, path)
    return entry


def set_paired(path: Path, paired: Sequence[PairedDifference], handled: Iterable[tuple[str, str]] = ()) -> Leaderboard:
    """Store ``paired`` in the board at ``path`` (locked, atomic): they replace the comparisons
    the board holds of the same runs and of the pairs of runs ``handled`` (compared, or found not
    comparable, by the caller); every other comparison it holds stays (another process's, made
    meanwhile); those of runs no longer on the board go. The board written."""
    made = {frozenset({p.run_a, p.run_b}) for p in paired} | {frozenset(pair) for pair in handled}
    with locked(path):
        remove_temporaries(path.parent, path.name)
        board = load(path)
        runs = {e.run_id for e in board.entries}
        kept = [p for p in board.paired if frozenset({p.run_a, p.run_b}) not in made]
        board = board.with_paired(tuple(p for p in [*kept, *paired] if p.run_a in runs and p.run_b in runs))
        raw = board.to_dict()
        validate(raw, SCHEMA, file=path)
        dump_json(raw, path)
    return board


@contextmanager
def locked(path: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the update lock of the board at ``path`` (see the module's docstring) for the block."""
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + timeout_s
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"{path}: another process has been updating it for {timeout_s:g} s "
                    f"(it holds {lock}); try again when it is done"
                ) from None
            time.sleep(_RETRY_S)
            continue
        if _is_at(fd, lock):
            break
        os.close(fd)  # its holder deleted it while this process waited: lock the file at the path now
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # while still held, so no waiter can hold a file that is gone
        os.close(fd)


def _is_at(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is the file at ``path`` (not one deleted or replaced since)."""
    try:
        here = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (here.st_dev, here.st_ino)
