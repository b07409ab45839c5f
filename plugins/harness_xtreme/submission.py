"""Score a whole XTREME (or XTREME-R) submission folder as ``google-research/xtreme:evaluate.py``.

``harness score xtreme --predictions PREDICTIONS --data-dir LABELS`` reads two folders of the
same layout, one sub-folder per task with ``test-{lang}.{json,jsonl,tsv}`` per language, and:

* scores every task that has a folder in **both** (others are skipped, as officially); such a
  task needs a file for every one of its languages in both folders;
* per language, the task's metrics (see :mod:`harness_xtreme.kinds`): accuracy (PAWS-X, XNLI,
  XCOPA, Tatoeba), seqeval span F1/precision/recall (PAN-X, UD-POS), pair-set F1 (BUCC), SQuAD
  v1.1 EM/F1 (XQuAD, TyDiQA-GoldP) or MLQA EM/F1 with the file's language (MLQA), map@20
  (Mewsli-X, XTREME-R);
* per task, the unweighted mean of each metric over its languages and the task's figure
  ``avg_metric``: the mean of average EM and average F1 for QA, average F1 for tagging and
  BUCC, average accuracy for classification and Tatoeba, average map@20 for Mewsli-X;
* per group (classification, tagging, qa, retrieval; XTREME-R adds multi_choice) whose tasks
  are all scored, the mean of their ``avg_metric``;
* ``all_task``, the mean over every task of the version, only when every task is scored.

Result rows: ``all_task`` and the groups (metric ``avg_metric``), one row per task (its average
metrics and ``avg_metric``), then one row per task and language, named ``task/lang``. The main
score is ``all_task``; a submission without every task has no ``all_task``, and its main score
is then ``incomplete_task_mean``, the mean ``avg_metric`` of the tasks it has, named so that it
is never mistaken for XTREME's score. XTREME-R's ``all_task`` cannot be reached at all: its task
list includes LAReQA, which ``evaluate.py`` lists with no languages and no metric (LAReQA's
mAP@20 comes from ``evaluate_retrieval.py``; see the ``lareqa`` task).

Sums run in the official order (languages as listed, groups' tasks as listed), so the floats are
the official ones. ``all_task`` is the exception: ``evaluate.py`` sums over a Python *set* of task
names, whose order -- and so the last bit of the sum -- depends on string hashing; the harness
sums exactly (:func:`math.fsum`), which is what most orders give (XTREME's mock submission:
62.1932649076773, as the official script printed it under every hash seed tried).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.plugin import (
    Clusters,
    DataRequest,
    Evaluation,
    HarnessError,
    InputError,
    RunContext,
    ScoreRow,
    Task,
    TaskData,
)
from harness.plugin.formats import read_result, task_results
from harness.plugin.io import write_folder_atomic
from harness.plugin.scoring import Instance, InstanceTable, Macro, RowStatistics, Statistic
from harness.plugin.tasks import refuse_foreign_answers
from harness_xtreme.benchmark import GROUPS, PARALLEL, TASKS, TaskDef, Version, task_defs
from harness_xtreme.kinds import KINDS, check_classes, example_count
from harness_xtreme.metadata import ALL_TASK, XTREME_SUBMISSION
from harness_xtreme.metrics import mean

INCOMPLETE = "incomplete_task_mean"
FIGURE = "avg_metric"


@dataclass
class LabelledTask:
    """A task of the label folder: its definition and, per language, the parsed labels."""

    definition: TaskDef
    labels: dict[str, Any]


@dataclass
class SubmissionData(TaskData):
    version: Version = "xtreme"
    tasks: dict[str, LabelledTask] = field(default_factory=dict)
    #: Tasks whose label sub-folder lacks a language's file, with that file: not loaded, since
    #: evaluate.py scores only the tasks a submission holds; refused only if it holds them.
    incomplete: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskScore:
    """One scored task: metrics per language, their means, and the task's figure."""

    per_language: dict[str, dict[str, float]]
    averages: dict[str, float]
    figure: float
    count: int


@dataclass(frozen=True)
class RunPredictions:
    """The predictions of one ``harness run`` of a task in a results folder: where they are, and
    the file of each unit (language) as the run's result records it."""

    folder: Path
    files: dict[str, str]

    def file(self, definition: TaskDef, lang: str) -> Path:
        """A language's file: the one the result names, else the submission's name (as the
        XTREME plugin's own tasks write them), which the error for a missing file then names."""
        names = [self.files[lang]] if lang in self.files else []
        names += [f"{definition.name}/{definition.file_name(lang)}", definition.file_name(lang)]
        paths = [self.folder / name for name in names]
        return next((path for path in paths if path.is_file()), paths[-1])


def run_predictions(folder: Path, definition: TaskDef) -> RunPredictions | None:
    """The predictions of the one run of a task in a results folder (the core's layout,
    :func:`harness.results.layout.task_results`; of re-runs of one configuration, the newest), or None
    when ``folder`` is a submission's task folder (it has the first language's file)."""
    if (folder / definition.file_name(definition.languages[0])).is_file():
        return None
    results = [read_result(path) for path in task_results(folder)]
    results.sort(key=lambda run: run[0].provenance.finished_at)
    if len({result.run_id for result, _ in results}) > 1:
        named = ", ".join(str(run.relative_to(folder)) for _, run in results)
        raise InputError(
            f"{len(results)} runs of {definition.name} ({named}): a results folder is read as a "
            "submission when it holds one run configuration per task (re-runs of it: the newest counts)",
            file=folder,
        )
    if not results:
        return None
    result, run = results[-1]
    if result.predictions.path is None:
        raise InputError("the run kept its predictions in memory only", file=run)
    # beside its result, wherever the results folder was copied
    return RunPredictions(run / Path(result.predictions.path).name, result.predictions.files or {})


def exact_mean(values: Sequence[float]) -> float:
    """The mean from the exact sum (:func:`math.fsum`): ``all_task`` (see the module docstring)."""
    return math.fsum(values) / len(values)


def _subfolders(folder: Path) -> set[str]:
    return {entry.name for entry in folder.iterdir() if entry.is_dir()}


def score_task(task: LabelledTask, predictions: Mapping[str, Any]) -> TaskScore:
    """One task as ``evaluate.py`` scores it: each of its languages, the means over them in the
    official order, and the task's figure (``avg_metric``)."""
    definition = task.definition
    kind = KINDS[definition.kind]
    per_language = {
        lang: kind.score(definition.name, lang, task.labels[lang], predictions[lang]) for lang in definition.languages
    }
    names = next(iter(per_language.values()))
    averages = {metric: mean([per_language[lang][metric] for lang in definition.languages]) for metric in names}
    if definition.score_metric == "em_f1":
        figure = (averages["exact_match"] + averages["f1"]) / 2
    else:
        assert definition.score_metric is not None  # only XTREME-R's LAReQA has none: evaluate.py never scores it
        figure = averages[definition.score_metric]
    return TaskScore(per_language, averages, figure, sum(example_count(x) for x in task.labels.values()))


class XtremeSubmission(Task[SubmissionData]):
    """XTREME's ``evaluate.py`` over a submission folder: per-language, task, group and overall scores."""

    metadata = XTREME_SUBMISSION

    def __init__(self, xtreme_version: Version = "xtreme") -> None:
        """``xtreme_version``: which benchmark's task list, languages and groups (evaluate.py's
        ``--xtreme_version``)."""
        self.xtreme_version = xtreme_version

    def options(self) -> dict[str, str]:
        return {"xtreme_version": self.xtreme_version}

    def scorer_signature(self) -> str:
        """The official signature, marked ``|xtreme-r`` for XTREME-R's tasks, groups and metrics."""
        signature = super().scorer_signature()
        return signature if self.xtreme_version == "xtreme" else f"{signature}|{self.xtreme_version}"

    def check_languages(self, languages: Sequence[str] | None) -> tuple[str, ...]:
        if languages:
            raise HarnessError(
                "task xtreme scores every language of each task, as evaluate.py does: --langs cannot select some"
            )
        return self.metadata.languages

    # -- data ---------------------------------------------------------------------------------

    def load(self, request: DataRequest) -> SubmissionData:
        """The label folder: every task of the version that has a sub-folder, all its languages."""
        assert request.data_dir is not None
        if request.limit:
            raise HarnessError("task xtreme scores whole files, as evaluate.py does: --limit cannot cut them")
        folder = request.data_dir
        present = _subfolders(folder)
        definitions = task_defs(self.xtreme_version)
        data = SubmissionData(
            split=request.split, languages=(), files=[], statistics={}, source=str(folder), version=self.xtreme_version
        )
        for name, definition in definitions.items():
            if name not in present:
                continue
            if not definition.languages:  # XTREME-R's lareqa: nothing to read, nothing evaluate.py scores
                continue
            paths = {lang: folder / name / definition.file_name(lang) for lang in definition.languages}
            absent = next((path for path in paths.values() if not path.is_file()), None)
            if absent is not None:
                data.incomplete[name] = absent
                continue
            labels = {lang: KINDS[definition.kind].read_labels(path, lang) for lang, path in paths.items()}
            if definition.classes:
                for lang, path in paths.items():
                    check_classes(path, labels[lang], definition.classes)
            data.files.extend(paths.values())
            data.tasks[name] = LabelledTask(definition, labels)
        if not data.tasks and data.incomplete:
            path = next(iter(data.incomplete.values()))
            raise InputError("missing: evaluate.py needs a file for every language of a task it scores", file=path)
        if not data.tasks:
            raise HarnessError(f"no {self.xtreme_version} task folders ({', '.join(definitions)}) in {folder}")
        # What the run covers is tasks, each with all its languages: recorded where other tasks record
        # languages, so the leaderboard shows "pawsx,xnli,..." rather than forty language codes.
        data.languages = tuple(data.tasks)
        data.statistics = {
            "tasks": {
                name: {lang: example_count(labels) for lang, labels in task.labels.items()}
                for name, task in data.tasks.items()
            }
        }
        return data

    # -- prediction ---------------------------------------------------------------------------

    def units(self, data: SubmissionData) -> list[str]:
        return list(data.tasks)

    def predict(self, model: Any, data: SubmissionData, unit: str, context: RunContext) -> Any:
        raise HarnessError(
            "task xtreme scores submission folders (harness score xtreme, or the predictions and "
            "oracle models); run the models on the individual tasks"
        )

    def reference_predictions(self, data: SubmissionData, kind: str) -> dict[str, dict[str, Any]]:
        """``gold``: the labels themselves, in each task's prediction form."""
        if kind != "gold":
            return super().reference_predictions(data, kind)
        return {
            name: {lang: KINDS[task.definition.kind].gold(labels) for lang, labels in task.labels.items()}
            for name, task in data.tasks.items()
        }

    # -- scoring ------------------------------------------------------------------------------

    def evaluate(self, data: SubmissionData, predictions: Mapping[str, Mapping[str, Any]]) -> Evaluation:
        """Official scores of every task present in both folders, then groups and ``all_task``.

        The task's main metric depends on the submission: ``all_task`` when every task of the
        version is scored, else ``incomplete_task_mean`` (set on this task object before the
        result is written, so the result and the leaderboard name the number for what it is).
        """
        scores = {name: score_task(task, predictions[name]) for name, task in data.tasks.items() if name in predictions}
        version_tasks = [task.name for task in TASKS[data.version]]
        summary: list[ScoreRow] = []
        complete = set(scores) == set(version_tasks)
        if complete:
            summary.append(
                ScoreRow(
                    ALL_TASK,
                    {FIGURE: exact_mean([s.figure for s in scores.values()])},
                    sum(s.count for s in scores.values()),
                )
            )
        for group, members in GROUPS[data.version].items():
            if all(member in scores for member in members):
                summary.append(
                    ScoreRow(
                        group,
                        {FIGURE: mean([scores[m].figure for m in members])},
                        sum(scores[m].count for m in members),
                    )
                )
        task_rows = [
            ScoreRow(name, {**score.averages, FIGURE: score.figure}, score.count, data.tasks[name].definition.languages)
            for name, score in scores.items()
        ]
        language_rows = [
            ScoreRow(f"{name}/{lang}", metrics, example_count(data.tasks[name].labels[lang]), (lang,))
            for name, score in scores.items()
            for lang, metrics in score.per_language.items()
        ]
        missing = [name for name in version_tasks if name not in scores]
        instances = [
            Instance(item.id, f"{name}/{lang}", (lang,), item.gold, item.prediction, item.values)
            for name in scores
            for lang, labels in data.tasks[name].labels.items()
            for item in KINDS[data.tasks[name].definition.kind].items(name, lang, labels, predictions[name][lang])
        ]
        evaluation = Evaluation(
            main_score=0.0,
            rows=summary + task_rows + language_rows,
            diagnostics={"xtreme_version": data.version, "tasks_scored": list(scores), "tasks_missing": missing},
            instances=instances,
        )
        if complete:
            evaluation.main_score = summary[0].score(FIGURE)
            evaluation.main_metric = ALL_TASK
        else:
            evaluation.main_score = mean([scores[n].figure for n in version_tasks if n in scores])
            evaluation.main_metric = INCOMPLETE
            evaluation.notes.append(
                f"incomplete submission: no {', '.join(missing)}, so there is no all_task; the main score "
                f"{INCOMPLETE} is the mean avg_metric of the {len(scores)} task(s) scored, not XTREME's score"
            )
        for name, path in data.incomplete.items():
            evaluation.notes.append(f"{name}: not scored, its label folder lacks {path.name}")
        unscorable = [task.name for task in TASKS[data.version] if not task.languages]
        if unscorable:
            evaluation.notes.append(
                f"{', '.join(unscorable)}: listed by evaluate.py with no languages and no metric, "
                f"so never scored there, and {data.version}'s all_task cannot be produced"
            )
        return evaluation

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """The rows as :meth:`evaluate` computes them, from the items of each ``task/lang`` unit:
        each language's metrics (its kind's, :mod:`harness_xtreme.records`), each task's means over
        its languages and ``avg_metric``, the groups' means and ``all_task`` (an exact sum). A task
        with a language that has no items (a BUCC file with no pairs) has no statistics. A row that
        holds a parallel task resamples its items with their translations; the others, within languages."""
        definitions = task_defs(self.xtreme_version)
        tasks = dict.fromkeys(unit.partition("/")[0] for unit in table.units)
        rows: RowStatistics = {}
        figures: dict[str, Statistic] = {}
        for name in tasks:
            definition = definitions[name]
            units = [f"{name}/{lang}" for lang in definition.languages]
            if any(unit not in table.units for unit in units):
                continue
            per_language = [KINDS[definition.kind].statistics(unit) for unit in units]
            # dict(row): a row of UnitStatistics as a row of Statistics (a dict's value type is invariant)
            rows.update((unit, dict(row)) for unit, row in zip(units, per_language))
            clusters = self.clusters_of([name])
            averages: dict[str, Statistic] = {
                metric: Macro(tuple(row[metric] for row in per_language), mean, clusters=clusters)
                for metric in per_language[0]
            }
            if definition.score_metric == "em_f1":
                figures[name] = Macro((averages["exact_match"], averages["f1"]), mean, clusters=clusters)
            else:
                figures[name] = averages[str(definition.score_metric)]
            rows[name] = {**averages, FIGURE: figures[name]}
        summary: RowStatistics = {}
        if set(figures) == {task.name for task in TASKS[self.xtreme_version]}:
            summary[ALL_TASK] = {FIGURE: Macro(tuple(figures.values()), exact_mean, clusters=self.clusters_of(figures))}
        for group, members in GROUPS[self.xtreme_version].items():
            if all(member in figures for member in members):
                summary[group] = {
                    FIGURE: Macro(tuple(figures[m] for m in members), mean, clusters=self.clusters_of(members))
                }
        return {**summary, **rows}

    def clusters_of(self, tasks: Iterable[str]) -> Clusters | None:
        """The clusters a row over ``tasks`` resamples: items with their translations where one of
        the tasks is parallel; None (within languages, as before) where none is."""
        return self.metadata.clusters if any(task in PARALLEL for task in tasks) else None

    # -- prediction files ---------------------------------------------------------------------

    def read_predictions(self, path: Path, data: SubmissionData) -> dict[str, dict[str, Any]]:
        """A submission folder: the tasks that the label folder also has, each with every language.
        A task's folder may instead hold one ``harness run`` of it (a results folder, ``--output-dir``),
        so that runs of the tasks, each with its own fine-tuned model, score together as one
        submission: groups and ``all_task`` through this same scorer."""
        if not path.is_dir():
            raise InputError(
                "an XTREME submission is a folder with one sub-folder per task "
                "(pawsx/test-de.tsv, xquad/test-en.json, ...)",
                file=path,
            )
        present = _subfolders(path)
        unlabelled = next((name for name in data.incomplete if name in present), None)
        if unlabelled is not None:
            raise InputError(
                "missing: evaluate.py needs a file for every language of a task it scores",
                file=data.incomplete[unlabelled],
            )
        common = [name for name in data.tasks if name in present]
        if not common:
            raise InputError(
                f"none of the label folder's tasks ({', '.join(data.tasks)}) has a sub-folder here", file=path
            )
        out: dict[str, dict[str, Any]] = {}
        for name in common:
            task = data.tasks[name]
            kind = KINDS[task.definition.kind]
            out[name] = {}
            files: dict[str, Path] = {}
            run = run_predictions(path / name, task.definition)
            for lang, labels in task.labels.items():
                file = path / name / task.definition.file_name(lang) if run is None else run.file(task.definition, lang)
                if not file.is_file():
                    raise InputError(
                        "missing: evaluate.py needs a file for every language of a task it scores", file=file
                    )
                read = kind.read_predictions
                if data.input_rules == "official" and kind.read_official is not None:
                    read = kind.read_official
                out[name][lang] = read(file, labels)
                files[lang] = file
                if task.definition.classes:
                    check_classes(file, out[name][lang], task.definition.classes)
            if task.definition.kind == "qa":  # the languages' files share their question ids
                refuse_foreign_answers(
                    task.labels, out[name], files, input_rules=data.input_rules, languages=tuple(task.labels)
                )
        return out

    def write_predictions(self, data: SubmissionData, predictions: Mapping[str, Mapping[str, Any]], path: Path) -> None:
        """The scored tasks' files, in the submission layout."""
        files = {
            f"{name}/{data.tasks[name].definition.file_name(lang)}": KINDS[data.tasks[name].definition.kind].write(
                value
            )
            for name, by_language in predictions.items()
            for lang, value in by_language.items()
        }
        write_folder_atomic(path, files)
