"""What a leaderboard number depends on besides the model (its :class:`Scope`), and how a scope
is described in the title of its table.

A number depends on more than the model: the task's options, the split, the languages, the
data, ``--limit``, the scorer (issue 13). Every entry carries its scope; only entries of the same
scope rank together (:mod:`~harness.leaderboard.ranking`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any

from harness.files.records import OMITTED_IF_NONE, JsonRecord

#: Most languages a scope's description names one by one (more are counted).
NAMED_LANGUAGES = 8


@dataclass(frozen=True)
class Scope(JsonRecord):
    """What an entry's number depends on besides the model: task and its options, split, language
    set, limit, demo data or not, data fingerprint, and the scorer signature where the entry has
    one. Demo and ``--limit`` runs thus never rank with full runs, nor MLQA XLT with G-XLT, nor a
    subset of languages with all of them."""

    task: str
    task_options: dict[str, Any]
    split: str
    #: In the order the run listed them (the file keeps it); :meth:`canonical` sorts them.
    languages: tuple[str, ...]
    limit: int | None
    demo: bool
    data_fingerprint: str
    scorer_signature: Annotated[str | None, OMITTED_IF_NONE] = None

    def canonical(self) -> Scope:
        """This scope as ranking compares it: the languages are a set (``--langs de,en`` ranks
        with ``--langs en,de``), so sorted."""
        return dataclasses.replace(self, languages=tuple(sorted(self.languages)))

    def order(self) -> tuple[Any, ...]:
        """Tables in reading order: by task and split; full data, then ``--limit``, then demo runs;
        no options before options; more languages before fewer."""
        return (
            self.task,
            self.split,
            self.demo,
            self.limit or 0,
            _options(self.task_options),
            -len(self.languages),
            self.languages,
            json.dumps(self.to_dict(), sort_keys=True),
        )

    def describe(self) -> str:
        """One line saying what the scope is, for the title of its table."""
        parts = [
            _options(self.task_options) or "no options",
            coverage(self.languages, task_languages(self.task)),
            "demo data" if self.demo else f"data {self.data_fingerprint[:12]}",
        ]
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
        return f"{len(languages)} languages" if len(languages) > NAMED_LANGUAGES else "languages " + ",".join(languages)
    missing = sorted(declared - set(languages))
    text = f"incomplete: {len(languages)} of {len(declared)} languages"
    if len(missing) <= NAMED_LANGUAGES:
        return f"{text} (missing {','.join(missing)})"
    if len(languages) <= NAMED_LANGUAGES:
        return f"{text} (only {','.join(languages)})"
    return text


@cache
def task_languages(task: str) -> frozenset[str] | None:
    """The languages a task declares (from the installed plugins' light metadata), or None for a
    task no installed plugin knows (a board from elsewhere)."""
    from harness.definitions.registry import Registry

    entry = Registry.discover().tasks.entries.get(task)
    return None if entry is None else frozenset(entry[0].languages)
