"""Model families: one model per task of a suite, for benchmarks that fine-tune one checkpoint per
task and score them together.

XTREME fine-tunes a pretrained encoder separately for each task (a classifier on MultiNLI for
XNLI, another on PAWS for PAWS-X, a tagger per tagging task, a reader on SQuAD for the three QA
tasks) and uses the encoder itself for retrieval; its score averages over all of them. One model
object cannot be all of these, so a suite is run with a *family*, a JSON file
(``schemas/model-family.schema.json``) naming the model of each task::

    {"name": "mbert",
     "models": {"xnli": "hf-classifier:path=xnli", "pawsx": "hf-classifier:path=pawsx",
                "panx": "hf-tagger:path=panx", "udpos": "hf-tagger:path=udpos",
                "xquad,mlqa,tydiqa": "hf-reader:path=squad",
                "bucc2018,tatoeba": "hf-encoder:path=bert-base-multilingual-cased"}}

Tasks that share a model run together (loaded once, one encoding queue). Relative paths in the
options a model declares as paths are taken relative to the family file, so a family folder can be
moved or shared whole. Each task's run is an ordinary run; a suite with a ``scored_by`` task (XTREME's
``evaluate.py``) then has the folder of exactly those runs scored as one submission, whose model
is the family.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness.definitions.model import ModelIdentity
from harness.definitions.registry import Registry, load_target
from harness.definitions.validation import validate
from harness.errors import HarnessError, InputError
from harness.files.io import read_json
from harness.models.compose import resolve_model
from harness.models.distributed import current_world
from harness.options import bind_options, format_named, parse_named, path_options
from harness.running.execution import Plan
from harness.running.planning import LoadedTask, SuiteRun, check_model, load_task, with_data, with_labels
from harness.running.recording import Outcome
from harness.running.runner import plan_suite, run_suite, score
from harness.running.settings import DataOptions, ExecutionOptions, OutputOptions

#: The schema of a family file.
FAMILY_SCHEMA = "model-family"


@dataclass(frozen=True)
class ModelFamily:
    """A family file, read: its name and the model (as command-line text) of each task it names."""

    name: str
    file: Path
    models: dict[str, str]

    @classmethod
    def read(cls, path: Path, registry: Registry) -> ModelFamily:
        """Read and check ``path``: every key a registered task named once, every model a
        registered model with valid options (nothing is loaded yet)."""
        document = read_json(path)
        validate(document, FAMILY_SCHEMA, file=path)
        models: dict[str, str] = {}
        for key, text in document["models"].items():
            for task in key.split(","):
                if task not in registry.tasks.entries:
                    raise InputError(f"'{task}' is no task of the installed plugins", file=path, field=f"models.{key}")
                if task in models:
                    raise InputError(f"task '{task}' is given a model twice", file=path, field=f"models.{key}")
            try:
                model = _relative_to(text, path.parent, registry)
            except HarnessError as exc:
                raise InputError(str(exc), file=path, field=f"models.{key}") from None
            models.update(dict.fromkeys(key.split(","), model))
        return cls(document["name"], path, models)

    def groups(self, task_texts: Sequence[str]) -> list[tuple[str, list[str]]]:
        """``task_texts`` grouped by their model, in the order the tasks come: each group runs as
        one suite with its model loaded once. Refuses (before any work) a task the family
        does not cover."""
        missing = [text for text in task_texts if parse_named(text).name not in self.models]
        if missing:
            names = ", ".join(parse_named(text).name for text in missing)
            raise InputError(
                f"models: no model for {names} (a family names the model of every task it runs)", file=self.file
            )
        groups: dict[str, list[str]] = {}
        for text in task_texts:
            groups.setdefault(self.models[parse_named(text).name], []).append(text)
        return list(groups.items())


def _relative_to(text: str, folder: Path, registry: Registry) -> str:
    """``text`` with the relative values of its path options made relative to ``folder``, its
    options checked."""
    named = parse_named(text)
    spec, plugin = registry.model(named.name)
    model_cls = load_target(spec, plugin, "model")
    paths = path_options(model_cls)
    options = {
        key: str(folder / value) if key in paths and not Path(value).expanduser().is_absolute() else value
        for key, value in named.options.items()
    }
    bind_options(model_cls, options, owner=f"model {named.name}")  # a wrong option stops the suite before it starts
    return format_named(named.name, options)


@dataclass
class FamilyOutcome:
    """A model family's runs of a suite's tasks, and those runs scored as one submission."""

    runs: list[Outcome]
    scored: Outcome | None


@dataclass
class _FamilyPlan:
    """A family run checked and its data loaded: the tasks of each model, in order."""

    family: ModelFamily
    groups: list[tuple[str, list[str], list[LoadedTask]]]
    data: DataOptions


def _family_plan(
    suite: SuiteRun, family_path: Path, labels: Path | None, data: DataOptions, registry: Registry
) -> _FamilyPlan:
    """Everything a family run can get wrong, found before any model is loaded: the family file,
    a task it has no model for, a model that cannot run its task, every task's data. A suite
    scored as one reads every task's split that its scoring task scores (XTREME's test)."""
    family = ModelFamily.read(family_path, registry)
    if suite.scored_by is not None:
        if data.split is None:
            data = replace(data, split=load_task(registry, suite.scored_by)[0].metadata.splits[0])
        if labels is None:
            raise HarnessError(
                f"this suite is scored as one submission by {suite.scored_by}, against gold labels kept "
                "apart from the inputs: pass --labels DIR (see the task's documentation for its layout)"
            )
        if data.languages or data.limit:
            raise HarnessError(
                f"--langs/--limit: this suite is scored as one submission by {suite.scored_by}, which "
                "needs every language of every task, whole; run the tasks on their own to cut them"
            )
    texts = [_with_labels(text, labels, registry) for text in suite.tasks]
    groups = []
    for model_text, members in family.groups(texts):
        tasks = [load_task(registry, text) for text in members]
        check_model(resolve_model(model_text, registry), [task for task, _ in tasks])
        groups.append((model_text, members, tasks))
    return _FamilyPlan(
        family,
        [
            (model_text, members, [with_data(task, plugin, data) for task, plugin in tasks])
            for model_text, members, tasks in groups
        ],
        data,
    )


def _with_labels(text: str, labels: Path | None, registry: Registry) -> str:
    named = parse_named(text)
    return format_named(named.name, with_labels(registry, named.name, named.options, labels))


def plan_family(
    suite: SuiteRun,
    family_path: Path,
    *,
    labels: Path | None = None,
    data: DataOptions | None = None,
    execution: ExecutionOptions | None = None,
    registry: Registry | None = None,
) -> list[Plan]:
    """What :func:`run_family` would do (``--dry-run``): one plan per model of the family."""
    registry = registry or Registry.discover()
    plan = _family_plan(suite, family_path, labels, data or DataOptions(), registry)
    return [
        plan_suite(members, model_text, data=plan.data, execution=execution, registry=registry, loaded=loaded)
        for model_text, members, loaded in plan.groups
    ]


def run_family(
    suite: SuiteRun,
    family_path: Path,
    *,
    labels: Path | None = None,
    data: DataOptions | None = None,
    execution: ExecutionOptions | None = None,
    output: OutputOptions | None = None,
    registry: Registry | None = None,
) -> FamilyOutcome:
    """Run a suite with a model family (:mod:`harness.running.family`): each task with its own model, the
    tasks that share a model as one suite (loaded once, one encoding queue); then, when the suite
    has a ``scored_by`` task, the folder of exactly these runs is scored as one submission by it
    (XTREME's group scores and ``all_task``), against ``labels``.

    Each run is an ordinary run (its result, predictions and leaderboard entry, ``--resume``
    as usual); the scoring's model is the family, identified by its members' identities.
    """
    registry = registry or Registry.discover()
    output = output or OutputOptions()
    plan = _family_plan(suite, family_path, labels, data or DataOptions(), registry)
    runs: list[Outcome] = []
    for model_text, members, loaded in plan.groups:
        runs.extend(
            run_suite(
                members,
                model_text,
                data=plan.data,
                execution=execution,
                output=output,
                registry=registry,
                loaded=loaded,
            )
        )
    if suite.scored_by is None or not current_world().is_main:
        return FamilyOutcome(runs, None)
    assert labels is not None  # _family_plan refused a scored suite without labels
    return FamilyOutcome(runs, _score_runs(suite.scored_by, runs, plan, labels, output, registry))


def _score_runs(
    task_text: str, runs: Sequence[Outcome], plan: _FamilyPlan, labels: Path, output: OutputOptions, registry: Registry
) -> Outcome:
    """Score the folder of exactly ``runs`` (their results and predictions, in the results
    layout) with ``task_text``: earlier runs in the output folder take no part."""
    family = plan.family
    results = [(run.result, run.result_path) for run in runs if run.result is not None and run.result_path is not None]
    identity = ModelIdentity(
        name="model-family",
        label=family.name,
        options={"members": {result.task.name: result.model.identity.key() for result, _ in results}},
        details={
            "family": str(family.file),
            "models": family.models,
            "runs": {result.task.name: str(path) for result, path in results},
        },
    )
    assert output.output_dir is not None  # a family's runs are scored from their folders
    with tempfile.TemporaryDirectory(prefix="harness-family-") as folder:
        for result, path in results:
            run_dir = path.parent
            copy = Path(folder) / run_dir.relative_to(output.output_dir)
            copy.mkdir(parents=True)
            shutil.copy2(path, copy / path.name)
            assert result.predictions.path is not None  # written beside the result
            predictions = Path(result.predictions.path)
            (shutil.copytree if predictions.is_dir() else shutil.copy2)(predictions, copy / predictions.name)
        return score(
            task_text,
            Path(folder),
            data=DataOptions(data_dir=labels, split=plan.data.split),
            output=output,
            registry=registry,
            identity=identity,
        )
