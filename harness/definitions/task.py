"""The base of task plugins: load data, predict in resumable units, score, read/write predictions.

A task reads like the evaluation section of its paper: what the data is (:meth:`Task.load`),
what a model must produce (:meth:`Task.predict`, one *unit* at a time, e.g. one language, so
a long run can be resumed), and how the official scorer turns predictions into numbers
(:meth:`Task.evaluate`). :meth:`Task.read_predictions` and :meth:`Task.write_predictions` speak
the benchmark's own prediction format, so ``harness score`` works on predictions made anywhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from harness.definitions.model import Runtime
from harness.definitions.protocols import CAPABILITIES
from harness.definitions.specs import NAME, BenchmarkRef, Edition, TaskSpec, check_fields, check_name, declaration_error
from harness.display.progress import Progress
from harness.errors import HarnessError
from harness.stats.clusters import Clusters

if TYPE_CHECKING:  # annotations only: plugins' metadata modules import this one while listing
    from harness.definitions.protocols import Encoder, EncodingRequest
    from harness.stats.records import Instance, InstanceTable
    from harness.stats.statistics import RowStatistics


@dataclass(frozen=True)
class TaskMetadata:
    """What a task is, for ``harness list``, results and the leaderboard."""

    name: str
    description: str
    reference: str
    languages: tuple[str, ...]
    splits: tuple[str, ...]
    main_metric: str
    needs: type
    prediction_format: str
    prediction_file: str = "predictions.json"
    #: Where the files usually sit below a folder of several benchmarks (e.g. "lareqa/xquad-r"),
    #: so one ``--data-dir`` serves a suite.
    data_subdir: str = ""
    unit: str = "language"
    higher_is_better: bool = True
    #: The scorer signature (like sacrebleu's): the scorer and the options that change its numbers,
    #: e.g. ``mlqa|norm:mlqa-context|f1``. Two numbers are compared only under the same signature;
    #: a task whose options change the scorer extends it in :meth:`Task.scorer_signature`.
    scorer: str = ""
    #: The scale of every score it reports, as its official scorer gives them: ``percent`` (0-100:
    #: F1, EM, accuracy, R@kt) or ``fraction`` (0-1: LAReQA's mAP); tables, results and the
    #: leaderboard say it beside each number (see :func:`harness.display.tables.unit_label`). None: not
    #: declared, and then not shown.
    scale: Literal["percent", "fraction"] | None = None
    #: Metrics that are no score on that scale (MKQA's ``best_f1_threshold``, a no-answer logit).
    unscaled: tuple[str, ...] = ()
    #: How instances group across units where the data is parallel; None where each instance is
    #: independent of the other units' (TyDi QA's questions were written in each language).
    clusters: Clusters | None = None
    #: The benchmark whose official files this task reads, as its plugin's data manifest declares
    #: them (``harness data get``; ``harness run`` without ``--data-dir`` then finds them in the data
    #: home); None for a task with no files to fetch.
    data: BenchmarkRef | None = None
    #: The editions whose lists are part of :attr:`languages` (a run on one is whole); () where a
    #: whole run is one on all of them.
    editions: tuple[Edition, ...] = ()

    def __post_init__(self) -> None:
        """Refuse what a plugin got wrong as it loads, in one line naming the task and the field (the
        registry reports the plugin as broken and keeps the others): otherwise a wrong capability
        surfaces mid-run, and a task with no language or split is listed and never runs."""
        owner = f"task '{self.name}'"
        check_fields(self, owner)
        check_name(self.name, owner)
        for name in ("description", "reference", "main_metric", "prediction_format", "prediction_file", "unit"):
            if not getattr(self, name).strip():
                raise declaration_error(owner, name, "must not be empty")
        for name, what in (("languages", "language"), ("splits", "split")):
            values: tuple[str, ...] = getattr(self, name)
            if not values:
                raise declaration_error(owner, name, f"names no {what}")
            for index, value in enumerate(values):
                if value in values[:index]:
                    raise declaration_error(owner, name, f"'{value}' is listed twice")
                if not NAME.fullmatch(value):
                    raise declaration_error(
                        owner,
                        name,
                        f"'{value}' is not a {what} as the command line takes it (letters, digits, '.', '_', '-')",
                    )
        for edition in self.editions:
            outside = [lang for lang in edition.languages if lang not in self.languages]
            if not edition.languages or outside:
                problem = f"{outside[0]} is not one of the task's languages" if outside else "names no language"
                raise declaration_error(owner, "editions", f"{edition.name}: {problem}")
        if self.needs not in CAPABILITIES:
            raise declaration_error(
                owner,
                "needs",
                f"{self.needs.__name__} is not a capability (capabilities: "
                f"{', '.join(c.__name__ for c in CAPABILITIES)})",
            )

    def spec(self, target: str) -> TaskSpec:
        """The registry's entry for this task, ``target`` naming its class (``module:Class``).

        ``harness list`` shows the spec's summary and languages; taking them from here keeps one
        declaration per task. Plugins declare their metadata in a module that imports nothing
        heavy, so that listing stays fast.
        """
        return TaskSpec(self.name, target, self.description, self.languages, self.editions)


@dataclass(frozen=True)
class DataRequest:
    """Which data to load: a folder in the official layout (or the demo data), split, subset."""

    data_dir: Path | None
    split: str
    languages: tuple[str, ...] | None = None
    limit: int | None = None


#: See :attr:`TaskData.input_rules`.
InputRules = Literal["strict", "official"]


@dataclass
class TaskData:
    """Loaded data plus what a result records about it.

    ``files`` are hashed into the result's provenance; ``statistics`` (question and candidate
    counts, per language) go into the result as they are.
    """

    split: str
    languages: tuple[str, ...]
    files: list[Path]
    statistics: dict[str, Any]
    source: str
    demo: bool = False
    #: How prediction files are read: ``strict`` (the default) refuses input that hides a mistake
    #: (an id of no question, a key given twice...); ``official`` scores it as the official script
    #: does (``harness score --input-rules official``; recorded with the task's options).
    input_rules: InputRules = "strict"


@dataclass(frozen=True)
class ScoreRow:
    """The metrics of one subset (a language, a language pair, or ``all``)."""

    subset: str
    #: None where the subset has no example the metric counts (MKQA's official script prints NaN).
    metrics: Mapping[str, float | None]
    count: int
    languages: tuple[str, ...] = ()

    def score(self, metric: str) -> float:
        """The metric's value, for a task reading back a number it computed itself."""
        value = self.metrics[metric]
        if value is None:
            raise ValueError(f"subset {self.subset} has no {metric}")
        return value


@dataclass
class Evaluation:
    """Scores: the main score, one row per subset, and task-specific diagnostics.

    ``main_metric`` names the main score when it is not the task's usual one (e.g. a partial
    submission that cannot produce the benchmark's overall figure)."""

    main_score: float
    rows: list[ScoreRow]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    main_metric: str | None = None
    #: One record per scored question (see :mod:`harness.stats.records`): the evidence behind
    #: the rows, written beside the result, and what intervals and paired tests resample.
    instances: list[Instance] = field(default_factory=list)


class RowCells(Protocol):
    """A row's subset and metrics: a task's :class:`ScoreRow`, or a result's row as written."""

    @property
    def subset(self) -> str: ...

    @property
    def metrics(self) -> Mapping[str, float | None]: ...


def main_cell(rows: Sequence[RowCells], metric: str, value: float) -> tuple[str, str] | None:
    """The (subset, metric) of the row cell the main score is, for its interval: a row with the
    main metric at that value, else the row named after the main metric (XTREME's ``all_task``
    row, whose metric is ``avg_metric``) at that value; None when no row holds it."""
    for row in rows:
        if row.metrics.get(metric) == value:
            return row.subset, metric
    for row in rows:
        if row.subset == metric:
            for name, number in row.metrics.items():
                if number == value:
                    return row.subset, name
    return None


@dataclass
class RunContext:
    """What the runner gives a task while it predicts.

    ``shared`` memoises work that several units need (e.g. one candidate-pool index for every
    question language) and is only built if some unit actually runs.
    """

    runtime: Runtime
    show_progress: bool = True
    _memo: dict[str, Any] = field(default_factory=dict)

    def shared(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def progress(self, total: int, description: str) -> Progress:
        return Progress(total, description, enabled=self.show_progress)


DataT = TypeVar("DataT", bound=TaskData)


class Task(ABC, Generic[DataT]):
    """Base class of task plugins. Options are keyword arguments of ``__init__``."""

    metadata: ClassVar[TaskMetadata]

    def options(self) -> dict[str, Any]:
        """The options that change the scores (recorded in results). Override if any."""
        return {}

    def scorer_signature(self) -> str:
        """The scorer and its options as one short string (default: the metadata's ``scorer``)."""
        return self.metadata.scorer or self.metadata.name

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """How each row metric is computed from the per-question values of :attr:`Evaluation.instances`
        (subset -> metric -> :class:`~harness.stats.statistics.Statistic`), for bootstrap intervals
        and paired comparisons; rows and metrics left out get none. ``table`` holds the instances
        by unit, so that the rows can be declared from the units present."""
        return {}

    def demo_data_dir(self) -> Path | None:
        """The built-in demo data used when no ``--data-dir`` is given, if the task has some."""
        return None

    def encoding_requests(self, data: DataT) -> list[EncodingRequest]:
        """The texts this task will encode with an Encoder model, declared up front so that a
        suite encodes the texts of all its tasks in one deduplicated, length-batched queue."""
        return []

    def vector_analyses(self, data: DataT, encoder: Encoder) -> dict[str, Any]:
        """Analyses of the vectors themselves (e.g. a language-ID probe), added to the result's
        diagnostics. The runner calls this once predictions are scored, and only when the model is
        an encoder: ``encoder`` gives the vectors of the texts :meth:`encoding_requests` declared,
        already encoded for the run, so asking again costs nothing. None by default."""
        return {}

    def reference_predictions(self, data: DataT, kind: str) -> dict[str, Any]:
        """Predictions of a reference model: ``gold`` (the correct answers) or ``empty`` (nothing).

        They are sanity rows: gold must score what the official scorer gives the gold answers,
        empty its floor. Tasks override this for the kinds they support.
        """
        raise HarnessError(f"task {self.metadata.name} has no '{kind}' reference predictions")

    def check_languages(self, languages: Sequence[str] | None) -> tuple[str, ...]:
        """Validate a ``--langs`` selection against the task's languages."""
        if not languages:
            return self.metadata.languages
        unknown = [lang for lang in languages if lang not in self.metadata.languages]
        if unknown:
            raise HarnessError(
                f"unknown language '{unknown[0]}' for task {self.metadata.name} "
                f"(languages: {', '.join(self.metadata.languages)})"
            )
        return tuple(languages)

    @abstractmethod
    def load(self, request: DataRequest) -> DataT:
        """Read the benchmark files (official layout) for the requested split and languages."""

    @abstractmethod
    def units(self, data: DataT) -> list[str]:
        """The resumable parts of a run, in order (e.g. question languages)."""

    @abstractmethod
    def predict(self, model: Any, data: DataT, unit: str, context: RunContext) -> Any:
        """Run the model on one unit; return JSON-serialisable predictions for it."""

    @abstractmethod
    def evaluate(self, data: DataT, predictions: Mapping[str, Any]) -> Evaluation:
        """Score predictions (unit -> predictions) exactly as the official scorer does."""

    @abstractmethod
    def read_predictions(self, path: Path, data: DataT) -> dict[str, Any]:
        """Read a prediction file in the task's documented format into unit -> predictions."""

    @abstractmethod
    def write_predictions(self, data: DataT, predictions: Mapping[str, Any], path: Path) -> None:
        """Write unit -> predictions in the task's documented format (atomically)."""

    def prediction_files(self, data: DataT) -> dict[str, str]:
        """Where :meth:`write_predictions` puts each unit's predictions inside its folder (unit ->
        file name), recorded in the result so that a reader of a results folder (a submission
        scorer) finds a unit's file without knowing how this task names it; empty when the
        predictions are one file."""
        return {}
