"""One runner for every task and model, in three steps a reader can name:

1. **plan** (:mod:`harness.running.planning`): the tasks and their options, the model, the data; every
   mistake is found before any work;
2. **execute** (:mod:`harness.running.execution`): the model loaded once, the texts of all tasks encoded
   in one shared queue, each task predicted unit by unit (saved, for ``--resume``);
3. **record** (:mod:`harness.running.recording`): predictions, per-instance records, intervals, the
   validated result and its leaderboard entry, in the run's folder (:mod:`harness.results.layout`).

``harness score`` takes steps 1 and 3 without a model: the task reads a predictions file in its
official format, so predictions made anywhere are scored by the same code. The library API
(:mod:`harness.api`) and the CLI both call these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.definitions.model import ModelIdentity
from harness.definitions.registry import Registry
from harness.definitions.task import InputRules, RunContext
from harness.errors import HarnessError, InputError
from harness.files.io import remove_temporaries, sha256_file, sha256_values
from harness.models.compose import ModelSource, resolve_model
from harness.models.generation import GenerationService, plan_generation
from harness.models.prompting import PromptedTask, task_requests
from harness.results.layout import (
    RunFolder,
    claim_run_folder,
    configuration_folder,
    discard_if_empty,
    latest_run_folder,
    model_folder,
)
from harness.results.provenance import describe_files, git_commit
from harness.running.execution import LoadedModel, Plan, Session, predict_units, prepare_model
from harness.running.planning import LoadedTask, load_task, with_checked_data, with_data
from harness.running.recording import Outcome, Scored, record, run_id
from harness.running.settings import DataOptions, ExecutionOptions, OutputOptions
from harness.running.timing import Clock, PhaseTimer


def run(task_text: str, model: object, **options: object) -> Outcome:
    """Run ``model`` on one task; see :func:`run_suite` for the options."""
    return run_suite([task_text], model, **options)[0]  # type: ignore[arg-type]


def run_suite(
    task_texts: Sequence[str],
    model: object,
    *,
    data: DataOptions | None = None,
    execution: ExecutionOptions | None = None,
    output: OutputOptions | None = None,
    model_args: str | dict[str, object] | None = None,
    label: str | None = None,
    registry: Registry | None = None,
    loaded: Sequence[LoadedTask] | None = None,
) -> list[Outcome]:
    """Run one model on several tasks: the model is loaded once, and the texts of all tasks are
    encoded in one shared queue (deduplicated, cached, length-batched) before the tasks run.

    ``model`` is a registered name (options as ``name:key=value`` and ``model_args``), a harness
    model, or a Python object providing a capability (``label`` names it); ``loaded`` are tasks
    whose data a family run loaded and checked up front. Each task gets its own result and, when
    ``output`` names folders, its own result folder and leaderboard entry. Under torchrun every
    rank runs this; encoding is shared out and only rank 0 writes.
    """
    execution = execution or ExecutionOptions()
    output = output or OutputOptions()
    session = _open(
        task_texts,
        model,
        model_args,
        label,
        data or DataOptions(),
        execution,
        output,
        registry or Registry.discover(),
        loaded,
    )
    session.prefetch()
    return [_run_task(session, task, execution.resume, output) for task in session.tasks]


def plan_suite(
    task_texts: Sequence[str],
    model: object,
    *,
    data: DataOptions | None = None,
    execution: ExecutionOptions | None = None,
    output: OutputOptions | None = None,
    model_args: str | dict[str, object] | None = None,
    registry: Registry | None = None,
    loaded: Sequence[LoadedTask] | None = None,
) -> Plan:
    """What :func:`run_suite` would do with the same arguments (``--dry-run``): the model is
    loaded and the data read, but nothing is encoded, predicted or written."""
    execution = execution or ExecutionOptions()
    session = _open(
        task_texts,
        model,
        model_args,
        None,
        data or DataOptions(),
        execution,
        output or OutputOptions(),
        registry or Registry.discover(),
        loaded,
    )
    plan = session.plan()
    service = session.model.service
    if isinstance(service, GenerationService):  # each prompted task's prompts, tokens, budget and time
        context = RunContext(runtime=session.runtime, show_progress=False)
        for entry, task in zip(plan.tasks, session.tasks):
            if isinstance(task.task, PromptedTask):
                entry["generation"] = plan_generation(
                    service, task_requests(task.task, task.data, context), seed=execution.seed
                )
    return plan


def _open(
    task_texts: Sequence[str],
    model: object,
    model_args: str | dict[str, object] | None,
    label: str | None,
    data: DataOptions,
    execution: ExecutionOptions,
    output: OutputOptions,
    registry: Registry,
    loaded: Sequence[LoadedTask] | None,
) -> Session:
    """Plan (check outputs, runtime, tasks against the model, load the data), then load the model."""
    output.check()
    git_commit()  # read now (it is cached): a run of hours records the code it started with, not an edit since
    if execution.resume and output.output_dir is None:
        raise HarnessError("resume continues a run saved in an output folder: give the output folder too")
    runtime = execution.runtime(registry)  # checks device, batch size, threads and the cache folder
    clock, shared = Clock(), PhaseTimer("shared")
    named = [load_task(registry, text) for text in task_texts] if loaded is None else []
    source: ModelSource = resolve_model(model, registry, model_args, label)
    tasks = list(loaded) if loaded is not None else with_checked_data(named, source, data)
    typed = model if isinstance(model, str) else None
    session = Session(
        tasks,
        prepare_model(source, runtime, shared, typed=typed, show_progress=output.show_progress),
        runtime,
        shared=shared,
        clock=clock,
    )
    for loaded_task in session.tasks:  # the prompt and generation options fixed before the run id is taken
        if isinstance(loaded_task.task, PromptedTask) and not session.model.replay:
            loaded_task.task.prepare_prompting(
                session.model.capability(loaded_task), execution.generation, execution.log_samples
            )
    return session


def _run_task(session: Session, loaded: LoadedTask, resume: bool, output: OutputOptions) -> Outcome:
    """Predict the task unit by unit, evaluate, and record the result (rank 0 only); a plain
    encoder's vectors also serve the task's :meth:`~harness.definitions.task.Task.vector_analyses`."""
    task, data, timer, world = loaded.task, loaded.data, loaded.timer, session.world
    files = timer.time("hash_data", lambda: describe_files(data.files))
    identity = session.model.identity
    run = run_id("run", loaded, identity, files)
    folder = _run_folder(output, loaded, session.model, run, resume=resume, main=world.is_main)
    try:
        units = predict_units(loaded, session, run, folder, show_progress=output.show_progress)
        evaluation = timer.time("evaluate", lambda: task.evaluate(data, units.predictions))
    except BaseException:
        if folder is not None and output.output_dir is not None:
            discard_if_empty(folder, output.output_dir)
        raise
    ranks = session.gather_stats()  # every rank's work, gathered on every rank under torchrun
    if not world.is_main:
        return Outcome(None, evaluation, units.predictions, units.resumed)
    service = session.model.encoding
    if service is not None:
        evaluation.diagnostics.update(timer.time("vector_analyses", lambda: task.vector_analyses(data, service)))
    runtime, model = session.runtime, session.model
    scored = Scored(
        "run",
        loaded,
        identity,
        model.plugin,
        units.predictions,
        evaluation,
        units.resumed,
        device=runtime.device_used,
        seed=runtime.seed,
        execution=session.execution_record(ranks),
        reproducible=model.model.reproducible,
    )
    return record(scored, run, files, folder, output, session.clock, {**session.shared.phases, **timer.phases})


def _run_folder(
    output: OutputOptions, loaded: LoadedTask, model: LoadedModel, run: str, *, resume: bool, main: bool
) -> RunFolder | None:
    """The run's folder (None without an output folder): with ``resume`` the newest folder of the
    same run id (every rank reads its saved units, so all ranks skip the same ones), else a new
    folder claimed by rank 0 alone."""
    if output.output_dir is None:
        return None
    parent = configuration_folder(output.output_dir, loaded.name, model_folder(model.typed, model.identity.label))
    if resume:
        earlier = latest_run_folder(parent, run)
        if earlier is not None:
            if main:
                remove_temporaries(earlier.parts)  # what a killed run of this run id was writing
            return earlier
    return claim_run_folder(parent, run) if main else None


def file_identity(
    predictions_file: Path,
    label: str | None = None,
    details: dict[str, object] | None = None,
    read: Mapping[str, Any] | None = None,
) -> ModelIdentity:
    """A predictions file as the "model" of a scoring: its name (or ``label``) and its digest;
    ``details`` join it (a submission's model card). A folder's digest is that of the predictions
    ``read`` from it: the task reads a folder by the file names it expects, and a folder is never
    walked (it may be a link to a large folder whose files come and go, ``/tmp``)."""
    if predictions_file.is_dir():
        if read is None:
            raise ValueError("a predictions folder's identity is that of the predictions read from it")
        digest = sha256_values(read)
    else:
        try:
            digest = sha256_file(predictions_file)
        except OSError as exc:  # gone or unreadable since it was read
            raise InputError(f"cannot read: {exc.strerror or exc}", file=predictions_file) from None
    return ModelIdentity(
        name="predictions-file",
        label=label or predictions_file.stem,
        weights=f"sha256:{digest}",
        options={},
        details={"predictions": str(predictions_file), **(details or {})},
    )


def score(
    task_text: str,
    predictions_file: Path,
    *,
    data: DataOptions | None = None,
    output: OutputOptions | None = None,
    registry: Registry | None = None,
    input_rules: InputRules = "strict",
    identity: ModelIdentity | None = None,
    label: str | None = None,
    details: dict[str, object] | None = None,
) -> Outcome:
    """Score a predictions file written elsewhere, in the task's official format, read under
    ``input_rules`` (see :attr:`~harness.definitions.task.TaskData.input_rules`). The model is the file
    (:func:`file_identity`, with ``label`` and ``details``) unless ``identity`` says what made the
    predictions."""
    output = output or OutputOptions()
    output.check()
    task, plugin = load_task(registry or Registry.discover(), task_text)
    clock = Clock()
    loaded = with_data(task, plugin, data or DataOptions())
    loaded.data.input_rules = input_rules
    if not predictions_file.exists():
        raise HarnessError(f"predictions file {predictions_file} does not exist")
    timer = loaded.timer
    predictions = timer.time("read_predictions", lambda: task.read_predictions(predictions_file, loaded.data))
    evaluation = timer.time("evaluate", lambda: task.evaluate(loaded.data, predictions))
    if input_rules == "official":
        evaluation.notes.append(
            "read under --input-rules official: input refused by default (unknown ids, "
            "repeated ids, ...) was scored as the official script scores it"
        )
    identity = identity or file_identity(predictions_file, label, details, predictions)
    files = timer.time("hash_data", lambda: describe_files(loaded.data.files))
    run = run_id("score", loaded, identity, files)
    folder = (
        None
        if output.output_dir is None
        else claim_run_folder(
            configuration_folder(output.output_dir, loaded.name, model_folder(None, identity.label)), run
        )
    )
    scored = Scored("score", loaded, identity, None, predictions, evaluation, [])
    return record(scored, run, files, folder, output, clock, timer.phases)
