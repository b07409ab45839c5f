"""The run result as typed objects: what ``harness run`` and ``harness score`` write, and what
the CLI and the leaderboard read.

The JSON Schema ``schemas/run-result.schema.json`` stays the contract on disk; these classes are
how the code speaks about it, so a misspelt key is an AttributeError where it is written, not a
KeyError (or a silently missing column) where it is read. :meth:`RunResult.from_dict` brings a
result written by an older harness up to :data:`SCHEMA_VERSION` first (see :data:`MIGRATIONS`),
so old result folders stay readable when the format moves on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Self, cast

from pydantic import GetJsonSchemaHandler, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from harness.definitions.model import ModelIdentity
from harness.definitions.specs import PluginInfo
from harness.definitions.task import ScoreRow
from harness.files.io import sha256_text
from harness.files.records import (
    OMITTED_IF_EMPTY,
    OMITTED_IF_NONE,
    JsonRecord,
    flatten_schema,
    from_json_value,
    in_order,
)
from harness.stats.bootstrap import INSTANCE, Interval, RowIntervals

#: The version :meth:`RunResult.to_dict` writes (the schema's ``schema_version`` constant).
SCHEMA_VERSION = "1.0"
#: The version of a result that carries no ``schema_version`` (the first format, before it had one).
UNVERSIONED = "0"


def _add_version(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 0 is version 1.0 without the ``schema_version`` field."""
    return {"schema_version": "1.0", **raw}


#: For each old version, the step that brings a result one version forward: (new version, step).
MIGRATIONS: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    UNVERSIONED: ("1.0", _add_version),
}


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring a result dict of any known version up to :data:`SCHEMA_VERSION`, step by step."""
    version = raw.get("schema_version", UNVERSIONED)
    while version != SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise ValueError(
                f"unknown run-result schema_version '{version}' (this harness reads up to {SCHEMA_VERSION})"
            )
        version, step = MIGRATIONS[version]
        raw = step(raw)
    return raw


@dataclass(frozen=True)
class TaskRecord(JsonRecord):
    """The task a result scores, with the options that change its numbers."""

    name: str
    plugin: PluginInfo
    options: dict[str, Any]
    main_metric: str
    higher_is_better: bool
    prediction_format: str
    reference: str
    #: The scorer signature (:meth:`harness.definitions.task.Task.scorer_signature`); None in older results.
    scorer_signature: Annotated[str | None, OMITTED_IF_NONE] = None
    #: The scale of every score (rows, main score, intervals): ``percent`` (0-100) or ``fraction``
    #: (0-1), as the official scorer gives them (:attr:`harness.definitions.task.TaskMetadata.scale`); None
    #: in older results.
    scale: Annotated[str | None, OMITTED_IF_NONE] = None
    #: Metrics that are no score on ``scale`` (:attr:`harness.definitions.task.TaskMetadata.unscaled`).
    unscaled: Annotated[tuple[str, ...], OMITTED_IF_EMPTY] = ()

    def unit(self, metric: str) -> str | None:
        """``metric``'s scale (``percent``, ``fraction``), None where it has none or none is recorded."""
        return None if metric in self.unscaled else self.scale


@dataclass(frozen=True)
class ModelRecord(JsonRecord):
    """The model (or predictions file) a result scores: its identity and the plugin it came from
    (on disk the identity's fields and ``plugin`` side by side)."""

    identity: ModelIdentity
    plugin: PluginInfo | None

    @property
    def label(self) -> str:
        return self.identity.label

    @model_serializer(mode="wrap")
    def _flat(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = write(self)
        return {**out["identity"], "plugin": out["plugin"]}

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, raw: Any) -> Any:
        if isinstance(raw, Mapping) and "identity" not in raw:
            return {"identity": {k: v for k, v in raw.items() if k != "plugin"}, "plugin": raw.get("plugin")}
        return raw

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        ref = handler(core)
        flatten_schema(handler.resolve_ref_schema(ref), "identity", handler)
        return ref


@dataclass(frozen=True)
class FileRecord(JsonRecord):
    """A data file read by a run: path, SHA-256 and size."""

    path: str
    sha256: str
    bytes: int


@dataclass(frozen=True)
class DataRecord(JsonRecord):
    """Which data a result was computed on."""

    source: str
    demo: bool
    split: str
    languages: tuple[str, ...]
    limit: int | None
    files: tuple[FileRecord, ...]
    statistics: dict[str, Any]

    @property
    def fingerprint(self) -> str:
        """One hash of the data files' hashes: equal fingerprints, equal data."""
        return sha256_text(*(f.sha256 for f in self.files))


@dataclass(frozen=True)
class MainScore(JsonRecord):
    """The one number a result is ranked by."""

    metric: str
    value: float
    interval: Annotated[Interval | None, OMITTED_IF_NONE] = None


@dataclass(frozen=True)
class ResultRow(JsonRecord):
    """The metrics of one subset on one split (a task's :class:`~harness.definitions.task.ScoreRow`, placed).

    Read as written: ``resampled`` stays None where the file does not say (intervals written before
    rows recorded it drew instances within units), so such a file writes back unchanged."""

    split: str
    subset: str
    metrics: dict[str, float | None]
    count: int
    #: The languages the subset stands for; empty when the subset is not a language (``all``).
    languages: Annotated[tuple[str, ...], OMITTED_IF_EMPTY] = ()
    #: Bootstrap intervals of the metrics that have one (see :class:`BootstrapRecord`).
    intervals: Annotated[dict[str, Interval], OMITTED_IF_EMPTY] = field(default_factory=dict)
    #: What the intervals' resamples drew (:data:`INSTANCE` or the clusters' name); None without
    #: intervals, or in a file written before rows said (whose intervals drew instances).
    resampled: Annotated[str | None, OMITTED_IF_NONE] = None

    @property
    def resampling(self) -> str | None:
        """What the intervals' resamples drew, rows from before it was recorded included
        (:data:`INSTANCE`); None without intervals."""
        return (self.resampled or INSTANCE) if self.intervals else None

    @classmethod
    def from_score(cls, row: ScoreRow, split: str, intervals: RowIntervals | None = None) -> ResultRow:
        if not intervals:
            return cls(split, row.subset, cast(dict[str, float | None], row.metrics), row.count, row.languages)
        return cls(
            split,
            row.subset,
            cast(dict[str, float | None], row.metrics),
            row.count,
            row.languages,
            dict(intervals),
            intervals.resampled,
        )


@dataclass(frozen=True)
class PredictionsRecord(JsonRecord):
    """Where the predictions a result scores are (None: kept in memory only, by the library API),
    in which format, and their hash."""

    path: str | None
    format: str
    sha256: str
    #: Unit -> file name inside the predictions folder, where the task says (see
    #: :meth:`harness.definitions.task.Task.prediction_files`); None: one file, or not said.
    files: Annotated[dict[str, str] | None, OMITTED_IF_NONE] = None


@dataclass(frozen=True)
class InstancesRecord(JsonRecord):
    """The per-instance file beside the result (:mod:`harness.stats.records`): path, hash, lines."""

    path: str
    sha256: str
    count: int


@dataclass(frozen=True)
class BootstrapRecord(JsonRecord):
    """How the rows' intervals were computed: percentile bootstrap, ``resamples`` draws from a
    generator seeded with ``seed``, each unit's resample keeping its size (``strata``); rows over
    parallel data draw the task's clusters whole where ``resample_clusters`` (each row's
    ``resampled`` says what it drew), else every row draws instances within units."""

    resamples: int
    seed: int
    confidence: float
    method: str = "percentile"
    strata: str = "unit"
    #: False in results written before clusters were resampled (the field was not there).
    resample_clusters: bool = True

    @model_validator(mode="before")
    @classmethod
    def _before_clusters(cls, raw: Any) -> Any:
        """A file without ``resample_clusters`` was written before clusters were resampled."""
        if isinstance(raw, Mapping) and "resample_clusters" not in raw:
            return {**raw, "resample_clusters": False}
        return raw


@dataclass(frozen=True)
class Provenance(JsonRecord):
    """Where a number came from: versions, platform, device, seed, times and the command."""

    harness_version: str
    plugins: dict[str, str | None]
    git_commit: str | None
    python: str
    packages: dict[str, str | None]
    platform: str
    device: str
    seed: int
    started_at: str
    finished_at: str
    wall_time_s: float
    command: tuple[str, ...]
    #: Seconds per phase (loading, encoding, predicting, scoring); None where a result lacks it.
    phases_s: Annotated[dict[str, float] | None, OMITTED_IF_NONE] = None
    resumed_units: Annotated[tuple[str, ...] | None, OMITTED_IF_NONE] = None
    #: How the work was computed (batching, cache, precision, world size); runs only.
    execution: Annotated[dict[str, Any] | None, OMITTED_IF_NONE] = None

    @model_serializer(mode="wrap")
    def _ordered(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return in_order(write(self), _PROVENANCE_ORDER)


#: The order of a result's provenance keys on disk (the first format's, kept).
_PROVENANCE_ORDER = (
    "harness_version",
    "git_commit",
    "python",
    "packages",
    "platform",
    "plugins",
    "device",
    "seed",
    "started_at",
    "finished_at",
    "wall_time_s",
    "phases_s",
    "resumed_units",
    "command",
    "execution",
)


@dataclass(frozen=True)
class RunResult(JsonRecord):
    """One scored run of one model (or one predictions file) on one task; :meth:`to_dict` is the
    result as the schema lays it out on disk, ``schema_version`` first."""

    run_id: str
    kind: Literal["run", "score"]
    task: TaskRecord
    model: ModelRecord
    data: DataRecord
    main_score: MainScore
    rows: tuple[ResultRow, ...]
    diagnostics: dict[str, Any]
    notes: tuple[str, ...]
    predictions: PredictionsRecord
    provenance: Provenance
    schema_version: str = field(default=SCHEMA_VERSION)
    #: The per-instance records and the bootstrap behind the intervals; None where not written.
    instances: Annotated[InstancesRecord | None, OMITTED_IF_NONE] = None
    bootstrap: Annotated[BootstrapRecord | None, OMITTED_IF_NONE] = None

    @model_serializer(mode="wrap")
    def _version_first(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = write(self)
        return {"schema_version": out.pop("schema_version"), **out}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Self:
        """Read a result dict of any known version (migrated first); validate it against the
        schema before calling this where it comes from a user."""
        return from_json_value(cls, migrate(dict(raw)))


#: The name of a run's result file in its folder.
RESULT_FILE = "result.json"
#: The JSON Schema every run result is checked against (``schemas/run-result.schema.json``).
RESULT_SCHEMA = "run-result"


def read_result(path: Path) -> tuple[RunResult, Path]:
    """A result file read, migrated to the current version, validated against its schema (one
    line naming file and field where it is not one), and the folder it lies in; ``path`` is the
    file or its run folder. Every reader of results given by a user (compare, rescore) reads here."""
    from harness.definitions.validation import validate
    from harness.files.io import read_json

    file = path / RESULT_FILE if path.is_dir() else path
    raw = read_json(file)
    if isinstance(raw, dict):
        raw = migrate(raw)
    validate(raw, RESULT_SCHEMA, file=file)
    return RunResult.from_dict(raw), file.parent
