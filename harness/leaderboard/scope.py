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


@dataclass(frozen=True)
class DeclaredLanguages:
    """The language lists that make a run of a task whole: all the task's languages, and each
    edition's list within them (XTREME's 36 Tatoeba languages within XTREME-R's 41)."""

    all: frozenset[str]
    editions: tuple[tuple[str, frozenset[str]], ...] = ()

    def edition_of(self, languages: frozenset[str]) -> str | None:
        """The edition whose list ``languages`` is, if any."""
        return next((name for name, listed in self.editions if listed == languages), None)

    def smallest_above(self, languages: frozenset[str]) -> tuple[str | None, frozenset[str]] | None:
        """The smallest whole list (an edition's, by name, or all, named None) that ``languages``
        is part of and falls short of: what a run on them left out."""
        above = [(name, listed) for name, listed in (*self.editions, (None, self.all)) if languages < listed]
        return min(above, key=lambda item: len(item[1]), default=None)


def coverage(languages: Sequence[str], declared: DeclaredLanguages | None) -> str:
    """The languages of a scope: ``languages de,en`` (``12 languages`` when there are many), with
    the edition's name where they are an edition's list (``36 languages (XTREME)``), or, where a
    run left out some of a whole list (the smallest it falls short of), ``incomplete: N of M
    languages`` naming the missing ones, or where they are many the ones there (one rule for every
    task; a task no installed plugin knows declares None)."""
    run = frozenset(languages)
    listed = f"{len(languages)} languages" if len(languages) > NAMED_LANGUAGES else "languages " + ",".join(languages)
    if declared is None:
        return listed
    edition = declared.edition_of(run)
    if edition is not None:
        return f"{listed} ({edition})"
    above = declared.smallest_above(run)
    if above is None:
        return listed
    name, whole = above
    missing = sorted(whole - run)
    whose = f"{name}'s " if name else ""
    text = f"incomplete: {len(languages)} of {whose}{len(whole)} languages"
    if len(missing) <= NAMED_LANGUAGES:
        return f"{text} (missing {','.join(missing)})"
    if len(languages) <= NAMED_LANGUAGES:
        return f"{text} (only {','.join(languages)})"
    return text


@cache
def task_languages(task: str) -> DeclaredLanguages | None:
    """The languages a task declares, with its editions' lists (from the installed plugins' light
    metadata), or None for a task no installed plugin knows (a board from elsewhere)."""
    from harness.definitions.registry import Registry

    entry = Registry.discover().tasks.entries.get(task)
    if entry is None:
        return None
    spec = entry[0]
    return DeclaredLanguages(frozenset(spec.languages), tuple((e.name, frozenset(e.languages)) for e in spec.editions))
