"""What a leaderboard file holds, as typed objects: the board, its entries and their model cards.

The JSON Schema ``schemas/leaderboard.schema.json`` stays the contract on disk; these classes are
how the code speaks about it, read and written through their fields' types
(:mod:`harness.files.records`). ``from_dict`` reads what ``to_dict`` writes, field for field and in
the same key order, so a file written by an older harness (format 1.0, before entries carried a
model card) loads and is written back unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import GetJsonSchemaHandler, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from harness.definitions.model import ModelIdentity
from harness.errors import HarnessError
from harness.files.io import sha256_text
from harness.files.records import OMITTED_IF_EMPTY, OMITTED_IF_NONE, JsonRecord, flatten_schema, in_order
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
class ModelCard(JsonRecord):
    """A submission's model card (schema ``submission``, ``model``): how the model was trained,
    how big it is, where to read about it and under which licence, shown with its entry so a
    reader can tell a zero-shot model from one trained on translated data."""

    name: str
    zero_shot: bool
    translated_training_data: bool
    link: Annotated[str | None, OMITTED_IF_NONE] = None
    parameters: Annotated[int | None, OMITTED_IF_NONE] = None
    training_languages: Annotated[tuple[str, ...] | None, OMITTED_IF_NONE] = None
    license: Annotated[str | None, OMITTED_IF_NONE] = None
    description: Annotated[str | None, OMITTED_IF_NONE] = None


@dataclass(frozen=True)
class LeaderboardEntry(JsonRecord):
    """One run on the board: its scope (what its number depends on besides the model), the model,
    the main score with its interval, the result's rows and the run it came from. On disk the
    scope's fields stand in the entry itself (:data:`_ENTRY_ORDER`), and the model is its key.

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
    main_interval: Annotated[Interval | None, OMITTED_IF_NONE] = None
    #: The result's diagnostics that are language x language matrices: name -> row -> column -> value.
    matrices: Annotated[dict[str, Matrix], OMITTED_IF_EMPTY] = field(default_factory=dict)
    card: Annotated[ModelCard | None, OMITTED_IF_NONE] = None

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

    @model_serializer(mode="wrap")
    def _flat(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The entry as the schema lays it out: the scope's fields in the entry, the model's key."""
        out = write(self)
        del out["model"]["details"]
        return in_order({**out.pop("scope"), **out}, _ENTRY_ORDER)

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, raw: Any) -> Any:
        """An entry of a file: its scope read from its own fields."""
        return {**raw, "scope": raw} if isinstance(raw, Mapping) and "scope" not in raw else raw

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The entry as its file lays it out: the scope's fields in it, the model's key (no details)."""
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        flatten_schema(schema, "scope", handler)
        model = handler.resolve_ref_schema(schema["properties"]["model"])
        schema["properties"]["model"] = {
            **model,
            "properties": {name: value for name, value in model["properties"].items() if name != "details"},
        }
        return ref


#: The order of an entry's keys on disk: the scope's fields after the key, the scorer signature
#: after the interval (as format 1.0 has it).
_ENTRY_ORDER = (
    "key",
    "task",
    "task_options",
    "split",
    "languages",
    "limit",
    "demo",
    "data_fingerprint",
    "model",
    "main_metric",
    "main_score",
    "higher_is_better",
    "rows",
    "run_id",
    "kind",
    "result_path",
    "finished_at",
    "harness_version",
    "main_interval",
    "scorer_signature",
    "matrices",
    "card",
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
class PairedDifference(JsonRecord):
    """Two runs' main scores compared question by question (``harness leaderboard pair``, as
    ``harness compare`` does: the paired bootstrap over the same questions, a sign-flip
    permutation test, exact or on random swaps). Where the board holds one for two entries
    ranked next to each other, their tie is decided by it (:attr:`tied`), not by whether their
    own intervals overlap: two models scored on the same questions can differ far beyond chance
    while each one's interval overlaps the other's. Keyed by the runs, and used only while its
    difference is still the two entries' main scores' (:meth:`Leaderboard.paired_difference`):
    a run that replaces an entry drops the comparisons of the run it replaces
    (:meth:`Leaderboard.with_entry`), even one of the same run id."""

    run_a: str
    run_b: str
    metric: str
    #: A's main score minus B's, and its paired bootstrap interval.
    difference: float
    interval: Interval
    p_permutation: float
    resamples: int
    seed: int
    confidence: float

    @property
    def tied(self) -> bool:
        """Whether the order of the two is not established: the interval of the difference holds
        0, or the permutation test's p-value is not below the interval's level (1 - confidence).
        Both must agree before an order is claimed: the percentile bootstrap is too narrow on few
        clusters, where the exact permutation test is not. The shipped board's two language
        models on a ``--limit 5`` sample of MLQA's G-XLT (5 groups of parallel questions: no
        permutation p can be below 2/32) differ by 2.25 F1, interval [1.02, 3.43], p 0.174."""
        level = 1 - self.confidence  # 0.05000000000000004 for 0.95: a p of 0.05 is not below it
        return self.interval[0] <= 0 <= self.interval[1] or self.p_permutation >= level * (1 - 1e-12)

    def oriented(self, run_a: str) -> PairedDifference:
        """This comparison with ``run_a`` first (the difference and its interval negated if need be)."""
        if run_a == self.run_a:
            return self
        low, high = self.interval
        return dataclasses.replace(
            self, run_a=self.run_b, run_b=self.run_a, difference=-self.difference, interval=(-high, -low)
        )


@dataclass(frozen=True)
class Leaderboard(JsonRecord):
    """The whole file: its entries, in the order they are stored (task, split, demo, key), and the
    paired comparisons of entries ranked next to each other, where someone made them
    (:mod:`harness.leaderboard.pairing`)."""

    entries: tuple[LeaderboardEntry, ...] = ()
    updated_at: str = field(default_factory=now_iso)
    paired: Annotated[tuple[PairedDifference, ...], OMITTED_IF_EMPTY] = ()

    def with_entry(self, entry: LeaderboardEntry) -> Leaderboard:
        """This board with ``entry`` added, replacing the entry it is comparable to (the same key,
        computed again: a stored key may be an older harness's), updated now; the comparisons of a
        replaced run are dropped with it."""
        replaced = {e.run_id for e in self.entries if e.comparable == entry.comparable}
        entries = [e for e in self.entries if e.comparable != entry.comparable] + [entry]
        entries.sort(key=lambda e: (e.scope.task, e.scope.split, e.scope.demo, e.key))
        runs = {e.run_id for e in entries} - replaced  # a run id is its configuration's: a re-run keeps it
        paired = tuple(p for p in self.paired if p.run_a in runs and p.run_b in runs)
        return Leaderboard(tuple(entries), now_iso(), paired)

    def with_paired(self, paired: tuple[PairedDifference, ...]) -> Leaderboard:
        """This board holding ``paired`` instead of its comparisons, updated now."""
        return Leaderboard(self.entries, now_iso(), paired)

    def paired_difference(self, a: LeaderboardEntry, b: LeaderboardEntry) -> PairedDifference | None:
        """The comparison of the two entries' runs, ``a`` first, if the board holds one that is
        still about their main scores (its metric theirs, its difference theirs to float noise):
        one made before either was scored again is ignored, not trusted."""
        for p in self.paired:
            if {p.run_a, p.run_b} == {a.run_id, b.run_id}:
                oriented = p.oriented(a.run_id)
                current = a.main_score - b.main_score
                if oriented.metric == a.main_metric == b.main_metric and math.isclose(
                    oriented.difference, current, rel_tol=1e-9, abs_tol=1e-12
                ):
                    return oriented
        return None

    def zero_shot(self) -> Leaderboard:
        """The entries whose model card says zero-shot (the page's filter)."""
        return dataclasses.replace(self, entries=tuple(e for e in self.entries if e.zero_shot))

    @model_serializer(mode="wrap")
    def _versioned(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The file: the format's version, when it was updated, the entries."""
        out = write(self)
        paired = {"paired": out["paired"]} if "paired" in out else {}
        return {"schema_version": SCHEMA_VERSION, "updated_at": out["updated_at"], "entries": out["entries"], **paired}

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The file: the format's version first."""
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        schema["properties"] = {"schema_version": {"const": SCHEMA_VERSION}, **schema["properties"]}
        schema["required"] = ["schema_version", *schema.get("required", ())]
        return ref
