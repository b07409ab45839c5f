"""Recording a run or a scoring: the predictions in the task's own format, the per-instance
records, the rows' bootstrap intervals, the validated result, and its leaderboard entry.

A run and a scoring (``harness score``: predictions made elsewhere) end here alike. Without an
output folder (the library API's default) nothing is written: the result is built all the same,
its predictions' digest taken from a temporary copy, and returned in memory.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from harness import leaderboard
from harness.definitions.model import ModelIdentity
from harness.definitions.specs import PluginInfo
from harness.definitions.task import Evaluation, Task, TaskData, main_cell
from harness.definitions.validation import validate
from harness.display.tables import format_score
from harness.files.io import dump_json, remove_temporaries, sha256_path, sha256_text
from harness.models.generation import answer_counts, answer_notes, with_sample
from harness.models.prompting import PromptedTask
from harness.results.instances import write_instances
from harness.results.layout import RunFolder
from harness.results.provenance import environment, now_iso
from harness.results.result import (
    RESULT_SCHEMA,
    BootstrapRecord,
    DataRecord,
    FileRecord,
    InstancesRecord,
    MainScore,
    ModelRecord,
    PredictionsRecord,
    Provenance,
    ResultRow,
    RunResult,
    TaskRecord,
)
from harness.running.planning import LoadedTask
from harness.running.settings import OutputOptions
from harness.running.timing import Clock
from harness.stats.bootstrap import BootstrapSettings, RowIntervals, row_intervals
from harness.stats.records import Instance, InstanceTable

#: The note of a result whose model is an in-memory object with nothing to fingerprint.
NOT_REPRODUCIBLE = (
    "The model is a Python object with no weights to fingerprint: this run cannot be reproduced "
    "from its identity alone."
)
DEMO_NOTE = "Scored on the built-in demo data: not comparable with published numbers."


@dataclass
class Outcome:
    """What a run or a scoring produced: the result (None on ranks other than 0), the evaluation
    with its per-instance records, the predictions, and the result file when one was written."""

    result: RunResult | None
    evaluation: Evaluation
    predictions: dict[str, Any]
    resumed_units: list[str]
    result_path: Path | None = None

    @property
    def main_score(self) -> MainScore | None:
        """The main score with its interval (None on ranks other than 0)."""
        return None if self.result is None else self.result.main_score

    @property
    def instances(self) -> list[Instance]:
        """One record per scored question, from which every row's number is reproduced."""
        return self.evaluation.instances

    def records(self) -> list[dict[str, Any]]:
        """The result's numbers as flat records, one per (subset, metric), with the run's scope,
        interval and count beside each (:mod:`harness.leaderboard.records`): what
        ``pandas.DataFrame`` reads as it is, and ``harness leaderboard show --csv`` writes."""
        from harness.leaderboard.records import ordered, result_records

        if self.result is None:
            return []
        return ordered(result_records(self.result, None if self.result_path is None else str(self.result_path)))

    def to_frame(self) -> Any:
        """:meth:`records` as a ``pandas.DataFrame`` (pandas is not a dependency: one line where it
        is not installed)."""
        from harness.leaderboard.records import to_frame

        return to_frame(self.records())


@dataclass
class Scored:
    """A task's predictions and their evaluation, with what made them: ready to be recorded."""

    kind: Literal["run", "score"]
    loaded: LoadedTask
    identity: ModelIdentity
    model_plugin: PluginInfo | None
    predictions: dict[str, Any]
    evaluation: Evaluation
    resumed: list[str]
    #: The device it ran on and the seed, for the provenance; how the suite ran (None: a scoring).
    device: str = "cpu"
    seed: int = 0
    execution: dict[str, Any] | None = None
    reproducible: bool = True


def scorer_signature(task: Task[Any], data: TaskData) -> str:
    """The task's scorer signature, marked when predictions were read under the official rules."""
    signature = task.scorer_signature()
    return signature if data.input_rules == "strict" else f"{signature}|input:{data.input_rules}"


def task_options(task: Task[Any], data: TaskData) -> dict[str, Any]:
    """The task's options as results and the leaderboard record them: ``input_rules`` is one
    when predictions were read under the official scripts' rules, so such a score is never
    mistaken for (nor replaces) the strict one."""
    extra = {} if data.input_rules == "strict" else {"input_rules": data.input_rules}
    return {**task.options(), **extra}


def run_id(
    kind: Literal["run", "score"], loaded: LoadedTask, identity: ModelIdentity, files: list[dict[str, Any]]
) -> str:
    """A hash of everything that decides the scores: the same configuration, the same id."""
    task, data = loaded.task, loaded.data
    key = json.dumps(
        [
            kind,
            task.metadata.name,
            task_options(task, data),
            identity.name,
            identity.weights,
            identity.options,
            [f["sha256"] for f in files],
            data.split,
            list(data.languages),
            loaded.limit,
        ],
        sort_keys=True,
        default=str,
    )
    return sha256_text(key)[:16]


def evaluation_intervals(
    task: Task[Any], evaluation: Evaluation, settings: BootstrapSettings
) -> dict[str, RowIntervals]:
    """The rows' bootstrap intervals, from the evaluation's per-instance records and the task's
    statistics (a run's, and a rescore's of a submitted result)."""
    table = InstanceTable.from_instances(evaluation.instances)
    return row_intervals(table, task.statistics(table), settings)


@dataclass
class _Files:
    """What the result says of the files written beside it (paths None when nothing is kept)."""

    predictions: PredictionsRecord
    instances: InstancesRecord | None


def record(
    scored: Scored,
    run: str,
    files: list[dict[str, Any]],
    folder: RunFolder | None,
    output: OutputOptions,
    clock: Clock,
    phases: dict[str, float],
) -> Outcome:
    """Write the predictions in the task's format and the per-instance records (into ``folder``;
    None: nowhere), compute the intervals, then the validated result and its leaderboard entry."""
    evaluation = scored.evaluation
    report_generation(scored)
    report_answer_script(evaluation)
    written = _write_files(scored, folder)
    intervals: dict[str, RowIntervals] = {}
    bootstrap = None
    if evaluation.instances:
        start = time.perf_counter()
        intervals = evaluation_intervals(scored.loaded.task, evaluation, output.bootstrap)
        if intervals:
            phases = {**phases, "bootstrap": time.perf_counter() - start}
            settings = output.bootstrap
            bootstrap = BootstrapRecord(settings.resamples, settings.seed, settings.confidence)
    provenance = _provenance(scored, clock, phases, output.command)
    result = _build_result(scored, run, files, written, intervals, bootstrap, provenance)
    path = None if folder is None else write_result(result, folder, output.leaderboard)
    return Outcome(result, evaluation, scored.predictions, scored.resumed, path)


def report_generation(scored: Scored) -> None:
    """What a generative run must say beside its scores (``diagnostics.generation`` and notes under
    the table): the prompt (and whether it is the task's default), where the shots came from, the
    decoding options, the answers that came back empty or cut and why, per unit (never a silent
    0), and with several samples, the main score of each and their spread."""
    task, data, evaluation = scored.loaded.task, scored.loaded.data, scored.evaluation
    if not isinstance(task, PromptedTask) or task.prompting.template is None:
        return
    by_unit: dict[str, list[object]] = {}
    for instance in evaluation.instances:
        by_unit.setdefault(instance.unit, []).append(instance.prediction)
    counts = answer_counts(by_unit)
    if not counts:  # predictions made elsewhere (harness score): nothing generated here
        return
    choice, name = task.prompting, task.metadata.name
    assert choice.template is not None  # checked above
    options = choice.request_options()
    report: dict[str, Any] = {
        "prompt": choice.template.label,
        "default_prompt": choice.defaulted,
        "options": {**asdict(options), "stop": list(options.stop), "samples": choice.settings.samples},
        "shots": {"k": choice.shots, "seed": choice.seed, "source": task.shot_source(data) if choice.shots else None},
        "answers": {unit: asdict(c) for unit, c in counts.items()},
    }
    decoding = (
        "greedy"
        if options.temperature == 0
        else f"sampled (temperature {options.temperature:g}, top-p {options.top_p:g}, seed {options.seed})"
    )
    notes = [
        f"Generated with {choice.describe(name)}; {decoding}, {options.max_new_tokens} new tokens"
        f"{f' after a {options.reasoning_tokens}-token trace budget' if options.reasoning_tokens else ''}, "
        f"stop at {', '.join(json.dumps(s) for s in options.stop) or 'the end of sequence only'}"
        f"{'; with a system prompt' if options.system is not None else ''}."
    ]
    if choice.shots:
        notes.append(f"Shots: {choice.shots} per question from {task.shot_source(data)}.")
    notes += answer_notes(counts, options)
    if choice.settings.samples > 1:
        scores = [evaluation.main_score] + [
            task.evaluate(data, with_sample(scored.predictions, k)).main_score
            for k in range(1, choice.settings.samples)
        ]
        spread = statistics.stdev(scores)
        report["samples"] = {"main_scores": scores, "mean": statistics.fmean(scores), "std": spread}
        notes.append(
            f"Main score over {len(scores)} samples: mean {format_score(statistics.fmean(scores))}, "
            f"std {format_score(spread)} (the main score above is the first sample's)."
        )
    evaluation.diagnostics["generation"] = report
    evaluation.notes.extend(notes)


#: Below this share of answers in the script of the language scored, the table says so.
LOW_SCRIPT_SHARE = 0.8


def report_answer_script(evaluation: Evaluation) -> None:
    """A note under the table where few answers are written in the script of the language scored
    (``diagnostics.answer_script``, see :func:`harness.scoring.answer_language.script_share`): a model
    answering Japanese questions in English scores low F1 for a reason the table should say."""
    shares = evaluation.diagnostics.get("answer_script")
    if not isinstance(shares, dict):
        return
    low = {lang: share for lang, share in shares.items() if share is not None and share < LOW_SCRIPT_SHARE}
    if low:
        listed = ", ".join(f"{lang} {share:.0%}" for lang, share in low.items())
        evaluation.notes.append(
            f"Few answers are written in the script of the language scored: {listed} of the "
            "answers with letters (diagnostics.answer_script): the model may answer in another "
            "language."
        )


def _write_files(scored: Scored, folder: RunFolder | None) -> _Files:
    """The predictions (and per-instance records) in ``folder``, or digested in a temporary one."""
    meta = scored.loaded.task.metadata
    with _folder(folder) as target:
        remove_temporaries(target.path)  # left by a killed run or scoring of this run id
        path = target.predictions(meta.prediction_file)
        scored.loaded.task.write_predictions(scored.loaded.data, scored.predictions, path)
        keep = folder is not None
        predictions = PredictionsRecord(
            str(path) if keep else None,
            meta.prediction_format,
            sha256_path(path),
            scored.loaded.task.prediction_files(scored.loaded.data) or None,
        )
        instances = None
        if keep and scored.evaluation.instances:
            write_instances(scored.evaluation.instances, target.instances)
            instances = InstancesRecord(
                str(target.instances), sha256_path(target.instances), len(scored.evaluation.instances)
            )
    return _Files(predictions, instances)


@contextmanager
def _folder(folder: RunFolder | None) -> Iterator[RunFolder]:
    if folder is not None:
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="harness-predictions-") as temporary:
        yield RunFolder(Path(temporary))


def _provenance(scored: Scored, clock: Clock, phases: dict[str, float], command: tuple[str, ...]) -> Provenance:
    env = environment()
    plugins = {scored.loaded.plugin.name: scored.loaded.plugin.version}
    if scored.model_plugin is not None:
        plugins[scored.model_plugin.name] = scored.model_plugin.version
    return Provenance(
        harness_version=env["harness_version"],
        plugins=plugins,
        git_commit=env["git_commit"],
        python=env["python"],
        packages=env["packages"],
        platform=env["platform"],
        device=scored.device,
        seed=scored.seed,
        started_at=clock.started,
        finished_at=now_iso(),
        wall_time_s=round(clock.wall(), 3),
        phases_s={k: round(v, 3) for k, v in phases.items()},
        resumed_units=tuple(scored.resumed),
        command=tuple(command),
        execution=scored.execution or None,
    )


def _build_result(
    scored: Scored,
    run: str,
    files: list[dict[str, Any]],
    written: _Files,
    intervals: dict[str, RowIntervals],
    bootstrap: BootstrapRecord | None,
    provenance: Provenance,
) -> RunResult:
    task, data, evaluation = scored.loaded.task, scored.loaded.data, scored.evaluation
    meta = task.metadata
    main_metric = evaluation.main_metric or meta.main_metric
    cell = main_cell(evaluation.rows, main_metric, evaluation.main_score)
    row_intervals = None if cell is None else intervals.get(cell[0])
    main_interval = None if cell is None or row_intervals is None else row_intervals.get(cell[1])
    notes = [
        *evaluation.notes,
        *([DEMO_NOTE] if data.demo else []),
        *([] if scored.reproducible else [NOT_REPRODUCIBLE]),
    ]
    return RunResult(
        run_id=run,
        kind=scored.kind,
        task=TaskRecord(
            meta.name,
            scored.loaded.plugin,
            task_options(task, data),
            main_metric,
            meta.higher_is_better,
            meta.prediction_format,
            meta.reference,
            scorer_signature(task, data),
            meta.scale,
            meta.unscaled,
        ),
        model=ModelRecord(scored.identity, scored.model_plugin),
        data=DataRecord(
            data.source,
            data.demo,
            data.split,
            tuple(data.languages),
            scored.loaded.limit,
            tuple(FileRecord.from_dict(f) for f in files),
            data.statistics,
        ),
        main_score=MainScore(main_metric, evaluation.main_score, main_interval),
        rows=tuple(ResultRow.from_score(row, data.split, intervals.get(row.subset)) for row in evaluation.rows),
        diagnostics=evaluation.diagnostics,
        notes=tuple(notes),
        predictions=written.predictions,
        provenance=provenance,
        instances=written.instances,
        bootstrap=bootstrap,
    )


def write_result(result: RunResult, folder: RunFolder, leaderboard_path: Path | None) -> Path:
    """Validate and write the result (and its leaderboard entry); the predictions are written."""
    on_disk = result.to_dict()
    validate(on_disk, RESULT_SCHEMA, file=folder.result)
    dump_json(on_disk, folder.result)
    if leaderboard_path is not None:
        leaderboard.add_result(leaderboard_path, result, folder.result)
    return folder.result
