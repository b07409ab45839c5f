"""Submissions from strangers: every number recomputed from predictions, never trusted.

A leaderboard maintainer receives predictions and a model card, or a finished ``result.json``.
:func:`rescore_result` recomputes a result from the predictions it names against the
maintainer's copy of the data (``harness validate --rescore``): a result whose scores were edited
("map 0.99 claimed, 0.0872 recomputed"), whose predictions changed after scoring, or whose data
differ from the maintainer's is refused in one line. :func:`take_submissions` processes
submission folders (``harness submit``): each is validated and scored from its predictions only,
and goes on the leaderboard whole or not at all, with a verdict per submission; one rejected
submission never costs the board an entry.

A submission folder holds ``submission.json`` (schema ``submission``): the model card and, per
entry, the task as written on the command line and the predictions in the benchmark's official
format, a path inside the folder.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import leaderboard
from harness.definitions.registry import Registry
from harness.definitions.task import Evaluation, InputRules, Task, main_cell
from harness.definitions.validation import validate
from harness.display.wording import reword_options
from harness.errors import HarnessError
from harness.files.io import read_json, sha256_path
from harness.options import format_named, parse_named
from harness.results.compare import read_table
from harness.results.instances import INSTANCES_FILE
from harness.results.provenance import describe_files
from harness.results.result import RESULT_FILE, RunResult, read_result
from harness.running.planning import load_data, task_with_options, with_labels
from harness.running.recording import Outcome, evaluation_intervals
from harness.running.runner import score
from harness.running.settings import DataOptions, OutputOptions
from harness.stats.bootstrap import BootstrapSettings, Interval, RowIntervals
from harness.stats.records import InstanceTable

MANIFEST = "submission.json"
#: Recomputed scores equal claimed ones up to float formatting (JSON round trips are exact, but a
#: claimed number may have been written by another harness version's arithmetic order).
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Rescored:
    """A result checked against its predictions: what was claimed and what was recomputed."""

    result_path: Path
    result: RunResult
    evaluation: Evaluation


def _predictions_path(result: RunResult, result_path: Path) -> Path:
    """The predictions a result names: its recorded path, else the same name beside the result
    (a result folder copied elsewhere)."""
    if result.predictions.path is None:
        raise HarnessError(f"{result_path}: predictions: the run kept them in memory only (no file to rescore)")
    recorded = Path(result.predictions.path)
    for candidate in (recorded, result_path.parent / recorded.name):
        if candidate.exists():
            return candidate
    raise HarnessError(f"{result_path}: predictions: {recorded} not found (nor beside the result)")


def _task(result: RunResult, registry: Registry, labels: Path | None) -> tuple[Task[Any], InputRules]:
    """The task with the result's options (and the maintainer's ``labels``, where the task takes
    them); ``input_rules`` is how predictions were read, not an option of the task."""
    options = dict(result.task.options)
    rules = options.pop("input_rules", "strict")
    return task_with_options(registry, result.task.name, with_labels(registry, result.task.name, options, labels))[
        0
    ], rules


def rescore_result(
    result_path: Path, data_dir: Path | None = None, registry: Registry | None = None, labels: Path | None = None
) -> Rescored:
    """Recompute ``result_path``'s scores from its predictions on the maintainer's data
    (``data_dir``, else the folder the result names; ``labels``, gold kept apart from the inputs
    such as XTREME's test labels); raise one line at the first difference."""
    result, _ = read_result(result_path)
    registry = registry or Registry.discover()
    predictions_path = _predictions_path(result, result_path)
    if sha256_path(predictions_path) != result.predictions.sha256:
        raise HarnessError(
            f"{result_path}: predictions: {predictions_path} changed after it was scored "
            "(its SHA-256 is not the one the result records)"
        )
    task, rules = _task(result, registry, labels)
    data_record = result.data
    source = None if data_record.demo else (data_dir or Path(data_record.source))
    data = load_data(
        task, DataOptions(data_dir=source, split=data_record.split, limit=data_record.limit, demo=data_record.demo)
    )
    if tuple(data.languages) != tuple(data_record.languages):  # the result was a --langs selection
        data = load_data(
            task,
            DataOptions(
                data_dir=source,
                split=data_record.split,
                languages=data_record.languages,
                limit=data_record.limit,
                demo=data_record.demo,
            ),
        )
    data.input_rules = rules
    claimed_files = sorted(f.sha256 for f in data_record.files)
    if sorted(f["sha256"] for f in describe_files(data.files)) != claimed_files:
        raise HarnessError(
            f"{result_path}: data.files: the data under {source or 'the demo'} are not the files "
            "the result was scored on (their SHA-256 differ)"
        )
    evaluation = task.evaluate(data, task.read_predictions(predictions_path, data))
    _compare(result, evaluation, _intervals(task, result, evaluation), result_path)
    return Rescored(result_path, result, evaluation)


def instance_table(
    result: RunResult, folder: Path, data_dir: Path | None = None, registry: Registry | None = None
) -> InstanceTable:
    """A result's per-instance records (for ``harness compare``): the file beside it where there
    is one, else those its predictions give when scored again on ``data_dir`` (a result on the
    shipped board, or one received, carries its predictions only, and a result is compared on
    nothing its own predictions do not score to)."""
    if result.instances is not None and (folder / INSTANCES_FILE).is_file():
        return read_table(result, folder)
    return InstanceTable.from_instances(rescore_result(folder / RESULT_FILE, data_dir, registry).evaluation.instances)


def _intervals(task: Task[Any], result: RunResult, evaluation: Evaluation) -> dict[str, RowIntervals]:
    """The rows' bootstrap intervals again, with the resamples and seed the result records."""
    if result.bootstrap is None or not evaluation.instances:
        return {}
    settings = BootstrapSettings(
        result.bootstrap.resamples,
        result.bootstrap.seed,
        result.bootstrap.confidence,
        resample_clusters=result.bootstrap.resample_clusters,
    )
    return evaluation_intervals(task, evaluation, settings)


def _differs(claimed: float | None, recomputed: float | None) -> bool:
    if claimed is None or recomputed is None:
        return claimed is not recomputed
    return not math.isclose(claimed, recomputed, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _number(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(_number, value)) + "]"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _compare(
    result: RunResult, evaluation: Evaluation, intervals: Mapping[str, Mapping[str, Interval]], result_path: Path
) -> None:
    """One line naming the first claimed number (score, count or interval bound) its predictions
    do not give."""

    def refuse(field_name: str, metric: str, claimed: Any, recomputed: Any) -> None:
        raise HarnessError(
            f"{result_path}: {field_name}: scores do not match their predictions: "
            f"{metric} {_number(claimed)} claimed, {_number(recomputed)} recomputed"
        )

    main = result.main_score
    if _differs(main.value, evaluation.main_score):
        refuse("main_score", main.metric, main.value, evaluation.main_score)
    if main.interval is not None:  # the interval of the row the main score is (as the runner takes it)
        cell = main_cell(evaluation.rows, main.metric, evaluation.main_score)
        interval = None if cell is None else intervals.get(cell[0], {}).get(cell[1])
        if interval is None or any(map(_differs, main.interval, interval)):
            refuse(
                "main_score",
                f"{main.metric} interval",
                list(main.interval),
                None if interval is None else list(interval),
            )
    recomputed = {row.subset: row for row in evaluation.rows}
    for index, row in enumerate(result.rows):
        again = recomputed.pop(row.subset, None)
        if again is None:
            raise HarnessError(f"{result_path}: rows[{index}]: subset '{row.subset}' is not in the recomputed scores")
        for metric, value in row.metrics.items():
            if metric not in again.metrics or _differs(value, again.metrics[metric]):
                refuse(f"rows[{index}] ({row.subset})", metric, value, again.metrics.get(metric))
        if row.count != again.count:
            refuse(f"rows[{index}] ({row.subset})", "count", row.count, again.count)
        for metric, claimed_interval in row.intervals.items():
            interval = intervals.get(row.subset, {}).get(metric)
            if interval is None or any(map(_differs, claimed_interval, interval)):
                refuse(
                    f"rows[{index}] ({row.subset})",
                    f"{metric} interval",
                    list(claimed_interval),
                    None if interval is None else list(interval),
                )
    if recomputed:
        raise HarnessError(
            f"{result_path}: rows: subset '{next(iter(recomputed))}' of the recomputed scores is missing"
        )


@dataclass
class Verdict:
    """What became of one submission."""

    submission: Path
    accepted: bool
    reason: str = ""
    outcomes: list[Outcome] = field(default_factory=list)


def submission_folders(paths: Sequence[Path]) -> list[Path]:
    """The submissions named: folders holding a ``submission.json``, or folders of such folders
    (a maintainer's inbox), in name order."""
    out: list[Path] = []
    for path in paths:
        if (path / MANIFEST).is_file():
            out.append(path)
        elif path.is_dir():
            inner = sorted(p for p in path.iterdir() if (p / MANIFEST).is_file())
            if not inner:
                raise HarnessError(f"{path}: no {MANIFEST} in it nor in any folder inside it")
            out.extend(inner)
        else:
            raise HarnessError(f"{path}: not a submission folder (no {MANIFEST})")
    return out


def _score_submission(
    folder: Path, data_dir: Path | None, output: OutputOptions, registry: Registry, labels: Path | None
) -> list[Outcome]:
    manifest_path = folder / MANIFEST
    manifest = read_json(manifest_path)
    validate(manifest, "submission", file=manifest_path)
    card = manifest["model"]
    outcomes = []
    for index, entry in enumerate(manifest["entries"]):
        predictions = (folder / entry["predictions"]).resolve()
        if not predictions.is_relative_to(folder.resolve()):
            raise HarnessError(
                f"{manifest_path}: entries[{index}].predictions: {entry['predictions']} is outside "
                "the submission folder"
            )
        task = parse_named(entry["task"])
        fields = {"--langs": f"{MANIFEST}'s entries[{index}].languages", "--split": f"entries[{index}].split"}
        try:
            outcomes.append(
                score(
                    format_named(task.name, with_labels(registry, task.name, task.options, labels)),
                    predictions,
                    data=DataOptions(
                        data_dir=data_dir,
                        split=entry.get("split"),
                        languages=tuple(entry["languages"]) if "languages" in entry else None,
                    ),
                    output=output,
                    registry=registry,
                    label=card["name"],
                    details={leaderboard.CARD_DETAIL: card},
                )
            )
        except HarnessError as error:  # a submission names its languages and split in its manifest, not as flags
            reword_options(error, fields.get)
            raise
    return outcomes


def take_submissions(
    paths: Sequence[Path],
    *,
    data_dir: Path | None,
    output: OutputOptions,
    registry: Registry | None = None,
    labels: Path | None = None,
) -> list[Verdict]:
    """Score every submission from its predictions (results under ``output.output_dir``; gold
    kept apart from the inputs in ``labels``, for the tasks that take it); put the accepted ones on
    the leaderboard ``output.leaderboard`` (each submission whole, after all its entries scored); a
    verdict per submission."""
    if output.leaderboard is None:
        raise HarnessError("submissions are taken onto a leaderboard: name one (drop --no-leaderboard)")
    board = output.leaderboard
    scoring = dataclasses.replace(output, leaderboard=None, show_progress=False)
    registry = registry or Registry.discover()
    verdicts = []
    for folder in submission_folders(paths):
        try:
            outcomes = _score_submission(folder, data_dir, scoring, registry, labels)
        except HarnessError as error:
            verdicts.append(Verdict(folder, False, str(error)))
            continue
        for outcome in outcomes:
            assert outcome.result is not None and outcome.result_path is not None  # scoring runs in one process
            leaderboard.add_result(board, outcome.result, outcome.result_path)
        verdicts.append(Verdict(folder, True, outcomes=outcomes))
    return verdicts
