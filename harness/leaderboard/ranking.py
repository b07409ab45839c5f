"""Which entries rank together, in which order, and which ranks are statistical ties.

Only entries of the same :class:`~harness.leaderboard.scope.Scope` are ranked together, one
group per scope and main metric; the text tables, ``--json`` and the page all show these groups,
so they rank alike.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.leaderboard.entry import Leaderboard, LeaderboardEntry, PairedDifference
from harness.leaderboard.scope import Scope
from harness.stats.bootstrap import Interval


@dataclass(frozen=True)
class RankedEntry:
    """An entry at its place: its rank, the rank its statistical tie starts at (None if none), and
    its paired comparison with the entry ranked just above it where the board holds one (that
    entry first: the difference is above minus here)."""

    rank: int
    tied_with: int | None
    entry: LeaderboardEntry
    paired_with_above: PairedDifference | None = None

    def to_dict(self) -> dict[str, Any]:
        entry = self.entry
        return {
            "rank": self.rank,
            "model": entry.model.label,
            "main_score": entry.main_score,
            "main_interval": None if entry.main_interval is None else list(entry.main_interval),
            "count": entry.count,
            "finished_at": entry.finished_at,
            "key": entry.key,
            "tied_with": self.tied_with,
            "paired_with_above": None if self.paired_with_above is None else self.paired_with_above.to_dict(),
            "card": None if entry.card is None else entry.card.to_dict(),
        }


@dataclass(frozen=True)
class RankedGroup:
    """The entries of one scope and main metric, best first."""

    scope: Scope
    main_metric: str
    higher_is_better: bool
    entries: tuple[RankedEntry, ...]

    @property
    def description(self) -> str:
        return self.scope.describe()

    def to_dict(self) -> dict[str, Any]:
        """As ``harness leaderboard show --json`` prints it and the page reads it."""
        return {
            "scope": self.scope.to_dict(),
            "description": self.description,
            "main_metric": self.main_metric,
            "higher_is_better": self.higher_is_better,
            "entries": [e.to_dict() for e in self.entries],
        }


def ranked(board: Leaderboard, task: str | None = None) -> list[RankedGroup]:
    """The entries (of ``task``, or all) grouped by scope and main metric (a task whose main metric
    depends on the run, such as XTREME's all_task and the mean of an incomplete submission, never
    ranks the two together), best first (equal scores: the earlier run first); groups in :meth:`Scope.order`: full-data runs before
    ``--limit`` runs before demo runs."""
    groups: dict[str, list[LeaderboardEntry]] = {}
    for entry in board.entries:
        if task is None or entry.scope.task == task:
            groups.setdefault(
                json.dumps([entry.scope.canonical().to_dict(), entry.main_metric], sort_keys=True), []
            ).append(entry)
    out = []
    for members in groups.values():
        first = members[0]
        members.sort(key=lambda e: e.finished_at)  # equal scores: the earlier run first
        members.sort(key=lambda e: e.main_score, reverse=first.higher_is_better)
        paired = [None] + [board.paired_difference(above, here) for above, here in itertools.pairwise(members)]
        marks = tie_marks([e.main_interval for e in members], paired)
        out.append(
            RankedGroup(
                first.scope.canonical(),
                first.main_metric,
                first.higher_is_better,
                tuple(
                    RankedEntry(rank, tied, entry, evidence)
                    for rank, (entry, tied, evidence) in enumerate(zip(members, marks, paired), start=1)
                ),
            )
        )
    out.sort(key=lambda g: g.scope.order() + (g.main_metric,))
    return out


def tie_marks(
    intervals: Sequence[Interval | None], paired: Sequence[PairedDifference | None] | None = None
) -> list[int | None]:
    """Statistically tied ranks of entries ranked best first. Two neighbours are tied where the
    paired comparison of the two (``paired[i]``: entry ``i`` with entry ``i - 1``) does not
    establish their order (:attr:`PairedDifference.tied`), and where there is none, where their
    own main-score intervals overlap; ties chain (1 tied with 2, 2 with 3: all three tied). Each
    entry's mark is the rank its tie starts at (shown as "=2"), or None where it is tied with
    neither neighbour; an entry with no interval (no bootstrap) and no paired comparison is
    never tied. Overlap of two intervals is the
    conservative reading (it leaves many real differences "tied"); a paired comparison over the
    same questions is the sharp one. Either way a tie says the order is not established, not
    that the models are equal."""
    marks: list[int | None] = [None] * len(intervals)
    start = 0
    for i in range(1, len(intervals)):
        above, here = intervals[i - 1], intervals[i]
        evidence = paired[i] if paired is not None else None
        if evidence is not None:
            tied = evidence.tied
        else:
            tied = above is not None and here is not None and here[0] <= above[1] and above[0] <= here[1]
        if tied:
            marks[start] = marks[i] = start + 1
        else:
            start = i
    return marks
