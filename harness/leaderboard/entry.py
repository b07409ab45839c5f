"""What a leaderboard file holds, as typed objects: the board, its entries and their model cards.

The JSON Schema ``schemas/leaderboard.schema.json`` stays the contract on disk; these classes are
how the code speaks about it. ``from_dict`` reads what ``to_dict`` writes, field for field and in
the same key order, so a file written by an older harness (format 1.0, before entries carried a
model card) loads and is written back unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.definitions.model import ModelIdentity
from harness.errors import HarnessError
from harness.files.io import sha256_text
from harness.leaderboard.scope import Scope
from harness.results.provenance import now_iso
from harness.results.result import ResultRow, RunResult
from harness.stats.bootstrap import Interval

#: The schema every leaderboard file is checked against (``schemas/leaderboard.schema.json``).
SCHEMA = "leaderboard"
#: The format version written (the schema's ``schema_version`` constant).
SCHEMA_VERSION = "1.0"
#: Where a result keeps the model card of a submission, among its model's ``details``
#: (:func:`harness.running.intake.take_submissions` puts it there; the entry shows it).
CARD_DETAIL = "card"
#: What the two languages of a language-pair row are, in order: the core's convention for
#: ``ResultRow.languages`` (``--langs context-question``), named on every matrix shown.
PAIR_AXES = ("context", "question")

Matrix = dict[str, dict[str, float]]


@dataclass(frozen=True)
class ModelCard:
    """A submission's model card (schema ``submission``, ``model``): how the model was trained,
    how big it is, where to read about it and under which licence, shown with its entry so a
    reader can tell a zero-shot model from one trained on translated data."""

    name: str
    zero_shot: bool
    translated_training_data: bool
    link: str | None = None
    parameters: int | None = None
    training_languages: tuple[str, ...] | None = None
    license: str | None = None
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is not None:
                out[item.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelCard:
        languages = raw.get("training_languages")
        return cls(**{**raw, "training_languages": None if languages is None else tuple(languages)})


@dataclass(frozen=True)
class LeaderboardEntry:
    """One run on the board: its scope (what its number depends on besides the model), the model,
    the main score with its interval, the result's rows and the run it came from.

    ``key`` names what makes scores comparable (task and options, split, data, language set,
    limit, model identity): a run of an entry's key replaces it, any other run adds one."""

    key: str
    scope: Scope
    #: The model part of the key (:meth:`ModelIdentity.key`: no ``details``).
    model: ModelIdentity
    main_metric: str
    main_score: float
    higher_is_better: bool
    rows: tuple[ResultRow, ...]
    run_id: str
    kind: Literal["run", "score"]
    result_path: str
    finished_at: str
    harness_version: str
    main_interval: Interval | None = None
    #: The result's diagnostics that are language x language matrices: name -> row -> column -> value.
    matrices: dict[str, Matrix] = field(default_factory=dict)
    card: ModelCard | None = None

    @property
    def count(self) -> int | None:
        """The number of questions the summary (first) row rests on."""
        return self.rows[0].count if self.rows else None

    @property
    def comparable(self) -> str:
        """:attr:`key` as this harness computes it from the entry's fields. A stored key may differ:
        an older harness hashed the languages in the order the run listed them."""
        return _key(self.scope, self.model)

    @property
    def zero_shot(self) -> bool | None:
        """Whether the model card says the model saw English task data only; None without a card."""
        return None if self.card is None else self.card.zero_shot

    @classmethod
    def from_result(cls, result: RunResult, result_path: Path) -> LeaderboardEntry:
        data, task = result.data, result.task
        model = result.model.identity
        scope = Scope(
            task.name,
            task.options,
            data.split,
            data.languages,
            data.limit,
            data.demo,
            data.fingerprint,
            task.scorer_signature,
        )
        bare = ModelIdentity(model.name, model.label, model.weights, model.options)
        card = model.details.get(CARD_DETAIL)
        if card is not None:  # a plugin's own card under the board's key would fail later, in a traceback
            names = {item.name for item in dataclasses.fields(ModelCard)}
            required = {item.name for item in dataclasses.fields(ModelCard) if item.default is dataclasses.MISSING}
            if not isinstance(card, dict) or not required <= card.keys() <= names:
                raise HarnessError(
                    f"{result_path}: model.details.{CARD_DETAIL}: not a model card (the fields are "
                    f"{', '.join(sorted(names))}; {', '.join(sorted(required))} required)"
                )
        return cls(
            key=_key(scope, bare),
            scope=scope,
            model=bare,
            main_metric=result.main_score.metric,
            main_score=result.main_score.value,
            higher_is_better=task.higher_is_better,
            rows=result.rows,
            run_id=result.run_id,
            kind=result.kind,
            result_path=str(result_path),
            finished_at=result.provenance.finished_at,
            harness_version=result.provenance.harness_version,
            main_interval=result.main_score.interval,
            matrices={name: value for name, value in result.diagnostics.items() if _is_matrix(value)},
            card=None if card is None else ModelCard.from_dict(card),
        )

    def to_dict(self) -> dict[str, Any]:
        """The entry as the schema lays it out (optional fields only where set)."""
        scope = self.scope.to_dict()
        signature = scope.pop("scorer_signature", None)  # written after the interval, as format 1.0 has it
        out: dict[str, Any] = {
            "key": self.key,
            **scope,
            "model": self.model.key(),
            "main_metric": self.main_metric,
            "main_score": self.main_score,
            "higher_is_better": self.higher_is_better,
            "rows": [row.to_dict() for row in self.rows],
            "run_id": self.run_id,
            "kind": self.kind,
            "result_path": self.result_path,
            "finished_at": self.finished_at,
            "harness_version": self.harness_version,
        }
        if self.main_interval is not None:
            out["main_interval"] = list(self.main_interval)
        if signature is not None:
            out["scorer_signature"] = signature
        if self.matrices:
            out["matrices"] = self.matrices
        if self.card is not None:
            out["card"] = self.card.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LeaderboardEntry:
        """An entry of a validated file."""
        interval, card = raw.get("main_interval"), raw.get("card")
        return cls(
            key=raw["key"],
            scope=Scope.from_dict(raw),
            model=ModelIdentity(**raw["model"]),
            main_metric=raw["main_metric"],
            main_score=raw["main_score"],
            higher_is_better=raw["higher_is_better"],
            rows=tuple(ResultRow.from_dict(row) for row in raw["rows"]),
            run_id=raw["run_id"],
            kind=raw["kind"],
            result_path=raw["result_path"],
            finished_at=raw["finished_at"],
            harness_version=raw["harness_version"],
            main_interval=None if interval is None else (interval[0], interval[1]),
            matrices=raw.get("matrices", {}),
            card=None if card is None else ModelCard.from_dict(card),
        )


def _key(scope: Scope, model: ModelIdentity) -> str:
    """The key of an entry: its scope's task and options, split, data, language set and limit,
    and the model's identity (not the demo flag, implied by the data, nor the scorer signature:
    a run scored by a newer scorer replaces its entry)."""
    return sha256_text(
        json.dumps(
            [
                scope.task,
                scope.task_options,
                scope.split,
                scope.data_fingerprint,
                sorted(scope.languages),
                scope.limit,
                model.key(),
            ],
            sort_keys=True,
        )
    )[:16]


def _is_matrix(value: Any) -> bool:
    """Whether a diagnostic is a language x language matrix: ``{row: {column: number}}`` (any
    task's: the leaderboard names no benchmark)."""
    return (
        isinstance(value, dict)
        and bool(value)
        and all(
            isinstance(row, dict)
            and row
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in row.values())
            for row in value.values()
        )
    )


@dataclass(frozen=True)
class Leaderboard:
    """The whole file: its entries, in the order they are stored (task, split, demo, key)."""

    entries: tuple[LeaderboardEntry, ...] = ()
    updated_at: str = field(default_factory=now_iso)

    def with_entry(self, entry: LeaderboardEntry) -> Leaderboard:
        """This board with ``entry`` added, replacing the entry it is comparable to (the same key,
        computed again: a stored key may be an older harness's), updated now."""
        entries = [e for e in self.entries if e.comparable != entry.comparable] + [entry]
        entries.sort(key=lambda e: (e.scope.task, e.scope.split, e.scope.demo, e.key))
        return Leaderboard(tuple(entries), now_iso())

    def zero_shot(self) -> Leaderboard:
        """The entries whose model card says zero-shot (the page's filter)."""
        return dataclasses.replace(self, entries=tuple(e for e in self.entries if e.zero_shot))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "updated_at": self.updated_at,
            "entries": [entry.to_dict() for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Leaderboard:
        """A board of a validated file."""
        return cls(tuple(LeaderboardEntry.from_dict(e) for e in raw["entries"]), raw["updated_at"])
