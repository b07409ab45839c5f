"""The run result as typed objects: what ``harness run`` and ``harness score`` write, and what
the CLI and the leaderboard read.

The JSON Schema ``schemas/run-result.schema.json`` stays the contract on disk; these classes are
how the code speaks about it, so a misspelt key is an AttributeError where it is written, not a
KeyError (or a silently missing column) where it is read. :meth:`RunResult.from_dict` brings a
result written by an older harness up to :data:`SCHEMA_VERSION` first (see :data:`MIGRATIONS`),
so old result folders stay readable when the format moves on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from harness.definitions.model import ModelIdentity
from harness.definitions.specs import PluginInfo
from harness.definitions.task import ScoreRow
from harness.files.io import sha256_text
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


def _plugin_to_dict(plugin: PluginInfo | None) -> dict[str, Any] | None:
    if plugin is None:
        return None
    return {"name": plugin.name, "distribution": plugin.distribution, "version": plugin.version}


def _plugin_from_dict(raw: dict[str, Any] | None) -> PluginInfo | None:
    return None if raw is None else PluginInfo(raw["name"], raw["distribution"], raw["version"])


@dataclass(frozen=True)
class TaskRecord:
    """The task a result scores, with the options that change its numbers."""

    name: str
    plugin: PluginInfo
    options: dict[str, Any]
    main_metric: str
    higher_is_better: bool
    prediction_format: str
    reference: str
    #: The scorer signature (:meth:`harness.definitions.task.Task.scorer_signature`); None in older results.
    scorer_signature: str | None = None
    #: The scale of every score (rows, main score, intervals): ``percent`` (0-100) or ``fraction``
    #: (0-1), as the official scorer gives them (:attr:`harness.definitions.task.TaskMetadata.scale`); None
    #: in older results.
    scale: str | None = None
    #: Metrics that are no score on ``scale`` (:attr:`harness.definitions.task.TaskMetadata.unscaled`).
    unscaled: tuple[str, ...] = ()

    def unit(self, metric: str) -> str | None:
        """``metric``'s scale (``percent``, ``fraction``), None where it has none or none is recorded."""
        return None if metric in self.unscaled else self.scale

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "plugin": _plugin_to_dict(self.plugin),
            "options": self.options,
            "main_metric": self.main_metric,
            "higher_is_better": self.higher_is_better,
            "prediction_format": self.prediction_format,
            "reference": self.reference,
        }
        if self.scorer_signature is not None:
            out["scorer_signature"] = self.scorer_signature
        if self.scale is not None:
            out["scale"] = self.scale
        if self.unscaled:
            out["unscaled"] = list(self.unscaled)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TaskRecord:
        plugin = _plugin_from_dict(raw["plugin"])
        assert plugin is not None  # the schema requires a task's plugin
        return cls(
            raw["name"],
            plugin,
            raw["options"],
            raw["main_metric"],
            raw["higher_is_better"],
            raw["prediction_format"],
            raw["reference"],
            raw.get("scorer_signature"),
            raw.get("scale"),
            tuple(raw.get("unscaled", ())),
        )


@dataclass(frozen=True)
class ModelRecord:
    """The model (or predictions file) a result scores: its identity and the plugin it came from."""

    identity: ModelIdentity
    plugin: PluginInfo | None

    @property
    def label(self) -> str:
        return self.identity.label

    def to_dict(self) -> dict[str, Any]:
        return {**self.identity.as_dict(), "plugin": _plugin_to_dict(self.plugin)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelRecord:
        identity = ModelIdentity(raw["name"], raw["label"], raw["weights"], raw["options"], raw["details"])
        return cls(identity, _plugin_from_dict(raw["plugin"]))


@dataclass(frozen=True)
class FileRecord:
    """A data file read by a run: path, SHA-256 and size."""

    path: str
    sha256: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> FileRecord:
        return cls(raw["path"], raw["sha256"], raw["bytes"])


@dataclass(frozen=True)
class DataRecord:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "demo": self.demo,
            "split": self.split,
            "languages": list(self.languages),
            "limit": self.limit,
            "files": [f.to_dict() for f in self.files],
            "statistics": self.statistics,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> DataRecord:
        return cls(
            raw["source"],
            raw["demo"],
            raw["split"],
            tuple(raw["languages"]),
            raw["limit"],
            tuple(FileRecord.from_dict(f) for f in raw["files"]),
            raw["statistics"],
        )


@dataclass(frozen=True)
class MainScore:
    """The one number a result is ranked by."""

    metric: str
    value: float
    interval: Interval | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.metric, "value": self.value}
        if self.interval is not None:
            out["interval"] = list(self.interval)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MainScore:
        interval = raw.get("interval")
        return cls(raw["metric"], raw["value"], None if interval is None else (interval[0], interval[1]))


@dataclass(frozen=True)
class ResultRow:
    """The metrics of one subset on one split (a task's :class:`~harness.definitions.task.ScoreRow`, placed)."""

    split: str
    subset: str
    metrics: dict[str, float | None]
    count: int
    #: The languages the subset stands for; empty when the subset is not a language (``all``).
    languages: tuple[str, ...] = ()
    #: Bootstrap intervals of the metrics that have one (see :class:`BootstrapRecord`).
    intervals: dict[str, Interval] = field(default_factory=dict)
    #: What the intervals' resamples drew (:data:`INSTANCE` or the clusters' name); None without
    #: intervals, or in a file written before rows said (whose intervals drew instances).
    resampled: str | None = None

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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"split": self.split, "subset": self.subset, "metrics": self.metrics, "count": self.count}
        if self.languages:
            out["languages"] = list(self.languages)
        if self.intervals:
            out["intervals"] = {name: list(interval) for name, interval in self.intervals.items()}
        if self.resampled is not None:
            out["resampled"] = self.resampled
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ResultRow:
        """A row as written; ``resampled`` stays None where the file does not say (intervals written
        before rows recorded it drew instances within units), so such a file writes back unchanged."""
        intervals = {name: (low, high) for name, (low, high) in raw.get("intervals", {}).items()}
        return cls(
            raw["split"],
            raw["subset"],
            raw["metrics"],
            raw["count"],
            tuple(raw.get("languages", ())),
            intervals,
            raw.get("resampled"),
        )


@dataclass(frozen=True)
class PredictionsRecord:
    """Where the predictions a result scores are (None: kept in memory only, by the library API),
    in which format, and their hash."""

    path: str | None
    format: str
    sha256: str
    #: Unit -> file name inside the predictions folder, where the task says (see
    #: :meth:`harness.definitions.task.Task.prediction_files`); None: one file, or not said.
    files: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "format": self.format, "sha256": self.sha256}
        if self.files is not None:
            out["files"] = self.files
        return out


@dataclass(frozen=True)
class InstancesRecord:
    """The per-instance file beside the result (:mod:`harness.stats.records`): path, hash, lines."""

    path: str
    sha256: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "count": self.count}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> InstancesRecord:
        return cls(raw["path"], raw["sha256"], raw["count"])


@dataclass(frozen=True)
class BootstrapRecord:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            "method": self.method,
            "strata": self.strata,
            "resample_clusters": self.resample_clusters,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> BootstrapRecord:
        return cls(
            raw["resamples"],
            raw["seed"],
            raw["confidence"],
            raw["method"],
            raw["strata"],
            raw.get("resample_clusters", False),
        )


@dataclass(frozen=True)
class Provenance:
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
    phases_s: dict[str, float] | None = None
    resumed_units: tuple[str, ...] | None = None
    #: How the work was computed (batching, cache, precision, world size); runs only.
    execution: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "harness_version": self.harness_version,
            "git_commit": self.git_commit,
            "python": self.python,
            "packages": self.packages,
            "platform": self.platform,
            "plugins": self.plugins,
            "device": self.device,
            "seed": self.seed,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "wall_time_s": self.wall_time_s,
        }
        if self.phases_s is not None:
            out["phases_s"] = self.phases_s
        if self.resumed_units is not None:
            out["resumed_units"] = list(self.resumed_units)
        out["command"] = list(self.command)
        if self.execution is not None:
            out["execution"] = self.execution
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Provenance:
        resumed = raw.get("resumed_units")
        return cls(
            harness_version=raw["harness_version"],
            plugins=raw["plugins"],
            git_commit=raw["git_commit"],
            python=raw["python"],
            packages=raw["packages"],
            platform=raw["platform"],
            device=raw["device"],
            seed=raw["seed"],
            started_at=raw["started_at"],
            finished_at=raw["finished_at"],
            wall_time_s=raw["wall_time_s"],
            command=tuple(raw["command"]),
            phases_s=raw.get("phases_s"),
            resumed_units=None if resumed is None else tuple(resumed),
            execution=raw.get("execution"),
        )


@dataclass(frozen=True)
class RunResult:
    """One scored run of one model (or one predictions file) on one task."""

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
    instances: InstancesRecord | None = None
    bootstrap: BootstrapRecord | None = None

    def to_dict(self) -> dict[str, Any]:
        """The result as the schema lays it out on disk."""
        out = {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "kind": self.kind,
            "task": self.task.to_dict(),
            "model": self.model.to_dict(),
            "data": self.data.to_dict(),
            "main_score": self.main_score.to_dict(),
            "rows": [row.to_dict() for row in self.rows],
            "diagnostics": self.diagnostics,
            "notes": list(self.notes),
            "predictions": self.predictions.to_dict(),
            "provenance": self.provenance.to_dict(),
        }
        if self.instances is not None:
            out["instances"] = self.instances.to_dict()
        if self.bootstrap is not None:
            out["bootstrap"] = self.bootstrap.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunResult:
        """Read a result dict of any known version (migrated first); validate it against the
        schema before calling this where it comes from a user."""
        raw = migrate(raw)
        return cls(
            run_id=raw["run_id"],
            kind=raw["kind"],
            task=TaskRecord.from_dict(raw["task"]),
            model=ModelRecord.from_dict(raw["model"]),
            data=DataRecord.from_dict(raw["data"]),
            main_score=MainScore.from_dict(raw["main_score"]),
            rows=tuple(ResultRow.from_dict(r) for r in raw["rows"]),
            diagnostics=raw["diagnostics"],
            notes=tuple(raw["notes"]),
            predictions=PredictionsRecord(**raw["predictions"]),
            provenance=Provenance.from_dict(raw["provenance"]),
            schema_version=raw["schema_version"],
            instances=InstancesRecord.from_dict(raw["instances"]) if "instances" in raw else None,
            bootstrap=BootstrapRecord.from_dict(raw["bootstrap"]) if "bootstrap" in raw else None,
        )


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
