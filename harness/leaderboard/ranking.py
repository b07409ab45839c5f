"""Which entries rank together (their scope), in which order, and which ranks are statistical ties.

A number depends on more than the model: the task's options, the split, the languages, the
data, ``--limit``, the scorer (issue 13). Only entries that agree on all of it are ranked
together, one group per scope and main metric; the text tables, ``--json`` and the page all show
these groups, so they rank alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from harness.leaderboard.entry import Leaderboard, LeaderboardEntry
from harness.results import Interval

#: Most languages a scope's description names one by one (more are counted).
NAMED_LANGUAGES = 8


@dataclass(frozen=True)
class Scope:
    """What an entry's number depends on besides the model: task and its options, split, language
    set, limit, demo data or not, data fingerprint, and the scorer signature where the entry has
    one. Demo and ``--limit`` runs thus never rank with full runs, nor MLQA XLT with G-XLT, nor a
    subset of languages with all of them."""

    task: str
    task_options: dict[str, Any]
    split: str
    #: Sorted: a set (``--langs de,en`` is ``--langs en,de``).
    languages: tuple[str, ...]
    limit: int | None
    demo: bool
    data_fingerprint: str
    scorer_signature: str | None = None

    @classmethod
    def of(cls, entry: LeaderboardEntry) -> Scope:
        return cls(entry.task, entry.task_options, entry.split, tuple(sorted(entry.languages)), entry.limit,
                   entry.demo, entry.data_fingerprint, entry.scorer_signature)

    def to_dict(self) -> dict[str, Any]:
        out = {"task": self.task, "task_options": self.task_options, "split": self.split,
               "languages": list(self.languages), "limit": self.limit, "demo": self.demo,
               "data_fingerprint": self.data_fingerprint}
        if self.scorer_signature is not None:
            out["scorer_signature"] = self.scorer_signature
        return out

    def order(self) -> tuple[Any, ...]:
        """Tables in reading order: by task and split; full data, then ``--limit``, then demo runs;
        no options before options; more languages before fewer."""
        return (self.task, self.split, self.demo, self.limit or 0, _options(self.task_options),
                -len(self.languages), self.languages, json.dumps(self.to_dict(), sort_keys=True))

    def describe(self) -> str:
        """One line saying what the scope is, for the title of its table."""
        parts = [_options(self.task_options) or "no options", coverage(self.languages, _task_languages(self.task)),
                 "demo data" if self.demo else f"data {self.data_fingerprint[:12]}"]
        if self.limit:
            parts.append(f"limit {self.limit} per language")
        if self.scorer_signature is not None:
            parts.append(f"scorer {self.scorer_signature}")
        return "; ".join(parts)


def _options(options: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def coverage(languages: Sequence[str], declared: frozenset[str] | None) -> str:
    """The languages of a scope: ``languages de,en`` (``12 languages`` when there are many), or,
    where a run left out some of the task's ``declared`` languages, ``incomplete: N of M
    languages`` naming the missing ones, or where they are many the ones there (one rule for
    every task; a task no installed plugin knows declares None)."""
    if declared is None or not set(languages) < declared:
        return (f"{len(languages)} languages" if len(languages) > NAMED_LANGUAGES
                else "languages " + ",".join(languages))
    missing = sorted(declared - set(languages))
    text = f"incomplete: {len(languages)} of {len(declared)} languages"
    if len(missing) <= NAMED_LANGUAGES:
        return f"{text} (missing {','.join(missing)})"
    if len(languages) <= NAMED_LANGUAGES:
        return f"{text} (only {','.join(languages)})"
    return text


@cache
def _task_languages(task: str) -> frozenset[str] | None:
    """The languages a task declares (from the installed plugins' light metadata), or None for a
    task no installed plugin knows (a board from elsewhere)."""
    from harness.registry import Registry

    entry = Registry.discover().tasks.entries.get(task)
    return None if entry is None else frozenset(entry[0].languages)


@dataclass(frozen=True)
class RankedEntry:
    """An entry at its place: its rank, and the rank its statistical tie starts at (None if none)."""

    rank: int
    tied_with: int | None
    entry: LeaderboardEntry

    def to_dict(self) -> dict[str, Any]:
        entry = self.entry
        return {"rank": self.rank, "model": entry.model.label, "main_score": entry.main_score,
                "main_interval": None if entry.main_interval is None else list(entry.main_interval),
                "count": entry.count, "finished_at": entry.finished_at, "key": entry.key, "tied_with": self.tied_with,
                "card": None if entry.card is None else entry.card.to_dict()}


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
        return {"scope": self.scope.to_dict(), "description": self.description, "main_metric": self.main_metric,
                "higher_is_better": self.higher_is_better, "entries": [e.to_dict() for e in self.entries]}


def ranked(board: Leaderboard, task: str | None = None) -> list[RankedGroup]:
    """The entries (of ``task``, or all) grouped by scope and main metric (a task whose main metric
    depends on the run, such as XTREME's all_task and the mean of an incomplete submission, never
    ranks the two together), best first; groups in :meth:`Scope.order`: full-data runs before
    ``--limit`` runs before demo runs."""
    groups: dict[str, list[LeaderboardEntry]] = {}
    for entry in board.entries:
        if task is None or entry.task == task:
            groups.setdefault(json.dumps([Scope.of(entry).to_dict(), entry.main_metric], sort_keys=True),
                              []).append(entry)
    out = []
    for members in groups.values():
        first = members[0]
        members.sort(key=lambda e: e.main_score, reverse=first.higher_is_better)
        marks = tie_marks([e.main_interval for e in members])
        out.append(RankedGroup(Scope.of(first), first.main_metric, first.higher_is_better, tuple(
            RankedEntry(rank, tied, entry) for rank, (entry, tied) in enumerate(zip(members, marks), start=1))))
    out.sort(key=lambda g: g.scope.order() + (g.main_metric,))
    return out


def tie_marks(intervals: Sequence[Interval | None]) -> list[int | None]:
    """Statistically tied ranks of entries ranked best first, from their main-score intervals:
    an entry whose interval overlaps the interval of the entry ranked just above it is tied with
    it, and ties chain (1 overlaps 2, 2 overlaps 3: all three tied). Each entry's mark is the rank
    its tie starts at (shown as "=2"), or None where it is tied with neither neighbour; an entry
    with no interval (no bootstrap) is never tied. Overlap of two intervals is a conservative
    reading: it says the ranking between the two is not established, not that the models are equal."""
    marks: list[int | None] = [None] * len(intervals)
    start = 0
    for i in range(1, len(intervals)):
        above, here = intervals[i - 1], intervals[i]
        if above is not None and here is not None and here[0] <= above[1] and above[0] <= here[1]:
            marks[start] = marks[i] = start + 1
        else:
            start = i
    return marks
