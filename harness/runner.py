"""One runner for every task and model: resolve plugins, load data, predict unit by unit
(saving each unit so ``--resume`` can skip it), score, write the result and the leaderboard.

``harness score`` takes the same path without a model: the task reads a predictions file in its
official format and scores it, so predictions made anywhere are scored by the same code.
"""

from __future__ import annotations

import inspect
import json
import logging
import random
import re
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness import leaderboard
from harness.cache import default_root
from harness.distributed import World, current_world
from harness.capabilities import declared, provide
from harness.compose import ModelChoice, encoding_service, resolve_model
from harness.encoding import EncodingPlan, EncodingRequest, EncodingService
from harness.errors import HarnessError, InputError
from harness.io import check_folder, dump_json, json_bytes, read_json, remove_temporaries, sha256_path, sha256_text
from harness.locations import DEFAULT_LEADERBOARD, DEFAULT_OUTPUT_DIR
from harness.model import Model, ModelIdentity, Runtime, apply_threads, default_threads
from harness.protocols import PredictionSource
from harness.options import bind_options, parse_named
from harness.provenance import describe_files, environment, now_iso
from harness.registry import PluginInfo, Registry, load_target
from harness.results import (
    BootstrapRecord, DataRecord, FileRecord, InstancesRecord, Interval, MainScore, ModelRecord, PredictionsRecord,
    RESULT_SCHEMA, Provenance, ResultRow, RunResult, TaskRecord,
)
from harness.stats.bootstrap import BootstrapSettings, row_intervals
from harness.stats.records import INSTANCES_FILE, InstanceTable, write_instances
from harness.task import DataRequest, Evaluation, InputRules, RunContext, Task, TaskData, main_cell
from harness.validation import validate

log = logging.getLogger("harness.runner")

DEMO_SOURCE = "built-in demo data"


@dataclass
class DataOptions:
    """Which data a run or a scoring reads."""

    data_dir: Path | None = None
    split: str | None = None
    languages: tuple[str, ...] | None = None
    limit: int | None = None


@dataclass
class OutputOptions:
    """Where results go."""

    output_dir: Path = DEFAULT_OUTPUT_DIR
    leaderboard: Path | None = DEFAULT_LEADERBOARD
    show_progress: bool = True
    command: tuple[str, ...] = field(default_factory=lambda: tuple(sys.argv))
    #: The bootstrap behind the rows' intervals (``resamples=0``: no intervals).
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)


@dataclass
class Outcome:
    """What a run produced (``result`` and ``result_path`` are None on ranks other than 0)."""

    result: RunResult | None
    evaluation: Evaluation
    resumed_units: list[str]
    result_path: Path | None = None


def load_task(registry: Registry, text: str) -> tuple[Task, PluginInfo]:
    """Instantiate the task named in ``text`` (``name:key=value,...``)."""
    named = parse_named(text)
    return task_with_options(registry, named.name, named.options)


def task_with_options(registry: Registry, name: str, options: Mapping[str, Any]) -> tuple[Task, PluginInfo]:
    """Instantiate task ``name`` with ``options`` (strings as typed, or the values a result records)."""
    spec, plugin = registry.task(name)
    task_cls = load_target(spec, plugin, "task")
    return task_cls(**bind_options(task_cls, options, owner=f"task {name}")), plugin


#: The task option naming a folder of gold labels kept apart from the inputs (XTREME's test
#: labels, evaluate.py's ``--label_folder``): ``--labels`` (of a family run, ``validate --rescore``
#: and ``submit``) gives it to every task that declares it.
LABELS_OPTION = "labels"


def with_labels(registry: Registry, name: str, options: Mapping[str, Any], labels: Path | None) -> dict[str, Any]:
    """``options`` of task ``name`` with ``labels=LABELS`` added when the task declares that
    option and ``options`` do not set it."""
    if labels is None or LABELS_OPTION in options:
        return dict(options)
    spec, plugin = registry.task(name)
    if LABELS_OPTION not in inspect.signature(load_target(spec, plugin, "task")).parameters:
        return dict(options)
    return {**options, LABELS_OPTION: str(labels)}


def split_task_list(text: str) -> list[str]:
    """``lareqa:candidates=pair,save_top_k=5,mlqa`` -> ``["lareqa:candidates=pair,save_top_k=5", "mlqa"]``:
    a comma starts a new task unless what follows is another ``key=value`` option."""
    items: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if items and "=" in piece and ":" not in piece.split("=", 1)[0]:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def expand_tasks(text: str, registry: Registry) -> list[str]:
    """Tasks named on the command line: task names, suite names, or ``@suite.json`` files."""
    if text.startswith("@"):
        items = [item for entry in _suite_file(Path(text[1:]))["tasks"] for item in split_task_list(entry)]
    else:
        items = split_task_list(text)
    out: list[str] = []
    for item in items:
        name = item.split(":", 1)[0]
        if name not in registry.tasks.entries and name in registry.suites.entries:
            out.extend(registry.suite(name)[0].tasks)
        else:
            out.append(item)
    if not out:
        raise HarnessError(f"no task named in '{text}'")
    return out


def _suite_file(path: Path) -> dict[str, Any]:
    suite = read_json(path)
    validate(suite, "suite", file=path)
    return suite


@dataclass(frozen=True)
class SuiteRun:
    """The tasks a model family runs, and the task that then scores the folder of their runs as
    one submission (a suite's ``scored_by``), if any."""

    tasks: list[str]
    scored_by: str | None = None


def expand_suite(text: str, registry: Registry) -> SuiteRun:
    """What a model family runs: as :func:`expand_tasks`, except that a name which is both a task
    and a suite is the suite (``xtreme`` is the task that scores a submission folder, and the
    suite that runs a family over XTREME's tasks and scores their runs with that task)."""
    if text.startswith("@"):
        suite = _suite_file(Path(text[1:]))
        return SuiteRun(expand_tasks(",".join(suite["tasks"]), registry), suite.get("scored_by"))
    if text in registry.suites.entries:
        spec = registry.suite(text)[0]
        return SuiteRun(expand_tasks(",".join(spec.tasks), registry), spec.scored_by)
    return SuiteRun(expand_tasks(text, registry))


def load_data(task: Task, options: DataOptions) -> TaskData:
    """Load the requested data, or the task's demo data when no folder is given."""
    meta = task.metadata
    split = options.split or meta.splits[0]
    if split not in meta.splits:
        raise HarnessError(f"unknown split '{split}' for task {meta.name} (splits: {', '.join(meta.splits)})")
    if options.limit is not None and options.limit < 1:
        raise HarnessError("--limit must be a positive number")
    languages = task.check_languages(options.languages)
    data_dir = options.data_dir
    demo = data_dir is None
    if demo:
        data_dir = task.demo_data_dir()
        if data_dir is None:
            raise HarnessError(f"task {meta.name} has no built-in demo data; pass --data-dir with the benchmark files")
    elif not data_dir.exists():
        raise HarnessError(f"--data-dir {data_dir} does not exist")
    elif meta.data_subdir and (data_dir / meta.data_subdir).is_dir():
        data_dir = data_dir / meta.data_subdir  # a folder holding several benchmarks in their usual layout
    data = task.load(DataRequest(data_dir, split, languages, options.limit))
    if demo:
        data.demo = True
        data.source = DEMO_SOURCE
    return data


def check_output(output: OutputOptions) -> None:
    """Refuse output places that cannot be written before any work is done."""
    check_folder(output.output_dir, "--output-dir")
    if output.leaderboard is not None:
        if output.leaderboard.is_dir():
            raise HarnessError(f"--leaderboard {output.leaderboard} is a folder, not a file")
        check_folder(output.leaderboard.parent, "--leaderboard's folder")


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def scorer_signature(task: Task, data: TaskData) -> str:
    """The task's scorer signature, marked when predictions were read under the official rules."""
    signature = task.scorer_signature()
    return signature if data.input_rules == "strict" else f"{signature}|input:{data.input_rules}"


def task_options(task: Task, data: TaskData) -> dict[str, Any]:
    """The task's options as results and the leaderboard record them: ``input_rules`` is one
    when predictions were read under the official scripts' rules, so such a score is never
    mistaken for (nor replaces) the strict one."""
    extra = {} if data.input_rules == "strict" else {"input_rules": data.input_rules}
    return {**task.options(), **extra}


def _run_id(
    task: Task, identity: ModelIdentity, data: TaskData, limit: int | None, files: list[dict[str, Any]], kind: str
) -> str:
    key = json.dumps(
        [kind, task.metadata.name, task_options(task, data), identity.name, identity.weights, identity.options,
         [f["sha256"] for f in files], data.split, list(data.languages), limit],
        sort_keys=True, default=str,
    )
    return sha256_text(key)[:16]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _build_result(
    *, kind: Literal["run", "score"], run_id: str, task: Task, task_plugin: PluginInfo, identity: ModelIdentity,
    model_plugin: PluginInfo | None, data: TaskData, limit: int | None, files: list[dict[str, Any]],
    evaluation: Evaluation, predictions_path: Path, runtime: Runtime, started: str, wall: float,
    phases: dict[str, float], resumed: list[str], command: tuple[str, ...], execution: dict[str, Any] | None = None,
    intervals: dict[str, dict[str, Interval]] | None = None, instances: InstancesRecord | None = None,
    bootstrap: BootstrapRecord | None = None,
) -> RunResult:
    meta = task.metadata
    intervals = intervals or {}
    env = environment()
    plugins = {task_plugin.name: task_plugin.version}
    if model_plugin is not None:
        plugins[model_plugin.name] = model_plugin.version
    main_metric = evaluation.main_metric or meta.main_metric
    cell = main_cell(evaluation.rows, main_metric, evaluation.main_score)
    main_interval = None if cell is None else intervals.get(cell[0], {}).get(cell[1])
    demo_note = ["Scored on the built-in demo data: not comparable with published numbers."] if data.demo else []
    return RunResult(
        run_id=run_id,
        kind=kind,
        task=TaskRecord(meta.name, task_plugin, task_options(task, data), main_metric, meta.higher_is_better,
                        meta.prediction_format, meta.reference, scorer_signature(task, data)),
        model=ModelRecord(identity, model_plugin),
        data=DataRecord(data.source, data.demo, data.split, tuple(data.languages), limit,
                        tuple(FileRecord.from_dict(f) for f in files), data.statistics),
        main_score=MainScore(main_metric, evaluation.main_score, main_interval),
        rows=tuple(ResultRow.from_score(row, data.split, intervals.get(row.subset)) for row in evaluation.rows),
        diagnostics=evaluation.diagnostics,
        notes=tuple(evaluation.notes + demo_note),
        predictions=PredictionsRecord(str(predictions_path), meta.prediction_format, sha256_path(predictions_path)),
        provenance=Provenance(
            harness_version=env["harness_version"], plugins=plugins, git_commit=env["git_commit"],
            python=env["python"], packages=env["packages"], platform=env["platform"], device=runtime.device_used,
            seed=runtime.seed, started_at=started, finished_at=now_iso(), wall_time_s=round(wall, 3),
            phases_s={k: round(v, 3) for k, v in phases.items()}, resumed_units=tuple(resumed),
            command=tuple(command), execution=execution or None,
        ),
        instances=instances,
        bootstrap=bootstrap,
    )


def write_result(result: RunResult, run_dir: Path, output: OutputOptions) -> Path:
    """Validate and write result (and leaderboard entry); the predictions file is already written."""
    result_path = run_dir / "result.json"
    on_disk = result.to_dict()
    validate(on_disk, RESULT_SCHEMA, file=result_path)
    dump_json(on_disk, result_path)
    if output.leaderboard is not None:
        leaderboard.add_result(output.leaderboard, result, result_path)
    return result_path


class _Timer:
    """Seconds per phase (recorded in the result's provenance), each phase logged as it ends
    (``harness -v``); ``label`` says whose phases they are (a task, or the shared work)."""

    def __init__(self, label: str = "run") -> None:
        self.label = label
        self.phases: dict[str, float] = {}

    def time(self, name: str, fn: Callable[[], Any], detail: str = "") -> Any:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            seconds = time.perf_counter() - start
            self.phases[name] = self.phases.get(name, 0.0) + seconds
            log.info("%s: %s%s %.2f s", self.label, name, f" {detail}" if detail else "", seconds)


@dataclass
class Plan:
    """What a run would do (``--dry-run``): tasks, data, device, and the encoding work."""

    model: str
    device: str
    precision: str
    world_size: int
    tasks: list[dict[str, Any]]
    encoding: EncodingPlan | None


def run(task_text: str, model_text: str, **options: Any) -> Outcome:
    """Run ``model`` on one task; see :func:`run_suite` for the options."""
    return run_suite([task_text], model_text, **options)[0]


@dataclass
class _Prepared:
    """A suite ready to run or to describe: tasks with their data, the model loaded once, and
    the shared encoding queue when the model is a plain encoder."""

    tasks: list[tuple[Task, PluginInfo]]
    datas: list[TaskData]
    timers: list[_Timer]
    model: Model
    model_plugin: PluginInfo
    identity: ModelIdentity
    replay: bool
    service: EncodingService | None
    requests: list[EncodingRequest]
    runtime: Runtime
    data_options: DataOptions
    output: OutputOptions
    world: World
    shared: _Timer
    started: str
    t0: float


def _prepare(
    task_texts: Sequence[str],
    model_text: str,
    *,
    data: DataOptions | None = None,
    output: OutputOptions | None = None,
    model_args: str | None = None,
    device: str = "auto",
    batch_size: int | None = None,
    seed: int = 0,
    threads: int | None = None,
    cache: bool = True,
    cache_dir: Path | None = None,
    registry: Registry | None = None,
    loaded: Sequence[LoadedTask] | None = None,
) -> _Prepared:
    """Resolve the tasks and the model, check the model can run every task before any work,
    load the data (unless ``loaded``, tasks whose data a family run loaded and checked up
    front), then the model (once), and collect the texts every task will encode."""
    data_options = data or DataOptions()
    output = output or OutputOptions()
    check_output(output)
    if cache:
        check_folder(cache_dir or default_root(), "--cache-dir")
    runtime = Runtime(device_request=device, batch_size=batch_size, seed=seed,  # checks them before any work
                      cache_dir=(cache_dir or default_root()) if cache else None,
                      threads=default_threads() if threads is None else threads)
    registry = registry or Registry.discover()
    started, t0, shared = now_iso(), time.perf_counter(), _Timer("shared")

    instances = [load_task(registry, text) for text in task_texts] if loaded is None else []
    choice = resolve_model(model_text, registry, model_args)
    if loaded is None:
        check_model(choice, [task for task, _ in instances])
        loaded = [with_data(task, plugin, data_options) for task, plugin in instances]
    replay = PredictionSource in declared(choice.cls)
    tasks = [(item.task, item.plugin) for item in loaded]
    datas = [item.data for item in loaded]
    timers = [item.timer for item in loaded]

    model = shared.time("load_model", lambda: choice.instantiate(runtime))
    apply_threads(runtime)  # once torch is imported, if the model needed it
    identity = model.identity()
    service = None if replay else encoding_service(model, runtime, identity, show_progress=output.show_progress)
    requests = [r for (task, _), task_data in zip(tasks, datas) for r in task.encoding_requests(task_data)]
    return _Prepared(tasks, datas, timers, model, choice.plugin, identity, replay, service, requests, runtime,
                     data_options, output, current_world(), shared, started, t0)


@dataclass
class LoadedTask:
    """A task with its data, and the timer of its phases (loading the data is the first)."""

    task: Task
    plugin: PluginInfo
    data: TaskData
    timer: _Timer


def with_data(task: Task, plugin: PluginInfo, options: DataOptions) -> LoadedTask:
    """The task with its data loaded (the first phase its timer records)."""
    timer = _Timer(task.metadata.name)
    return LoadedTask(task, plugin, timer.time("load_data", lambda: load_data(task, options)), timer)


def check_model(choice: ModelChoice, tasks: Sequence[Task]) -> None:
    """Stop before any work if the model cannot run one of the tasks (a model that replays
    predictions files runs any task)."""
    if PredictionSource in declared(choice.cls):
        return
    for task in tasks:
        choice.check(task.metadata.needs, task.metadata.name)


def plan_suite(task_texts: Sequence[str], model_text: str, **options: Any) -> Plan:
    """What :func:`run_suite` would do with the same arguments (``--dry-run``): the model is
    loaded and the data read, but nothing is encoded, predicted or written."""
    return _plan(_prepare(task_texts, model_text, **options))


def _plan(p: _Prepared) -> Plan:
    # "auto" for a model that never imported torch runs on the CPU: importing torch to say so
    # would cost seconds; a device asked for by name is checked as the run would check it
    resolve = p.runtime.device_request != "auto" or "torch" in sys.modules
    return Plan(
        model=p.identity.label, device=p.runtime.device if resolve else p.runtime.device_used, precision=p.model.precision, world_size=p.world.size,
        tasks=[{"task": task.metadata.name, "options": task.options(), "source": d.source, "split": d.split,
                "languages": list(d.languages), "units": task.units(d), "statistics": d.statistics}
               for (task, _), d in zip(p.tasks, p.datas)],
        encoding=p.service.plan(p.requests, seed=p.runtime.seed) if p.service is not None else None,
    )


def run_suite(task_texts: Sequence[str], model_text: str, *, resume: bool = False, **options: Any) -> list[Outcome]:
    """Run one model on several tasks: the model is loaded once, and the texts of all tasks are
    encoded in one shared queue (deduplicated, cached, length-batched) before the tasks run.

    ``options`` are :func:`_prepare`'s (data, output, model_args, device, batch_size, seed, threads,
    cache, cache_dir, registry); ``resume`` reuses the units an interrupted run of the same run id saved.
    Each task writes its own validated result, predictions and leaderboard entry. Under torchrun
    every rank runs this; encoding is shared out and only rank 0 writes.
    """
    p = _prepare(task_texts, model_text, **options)
    service, model, runtime, world = p.service, p.model, p.runtime, p.world
    if service is not None:
        p.shared.time("encode_shared", lambda: service.prefetch(p.requests))
    _seed_everything(runtime.seed)

    outcomes = []
    for (task, task_plugin), task_data, timer in zip(p.tasks, p.datas, p.timers):
        capability = model if p.replay else provide(service or model, task.metadata.needs, model_name=model.name,
                                                    task_name=task.metadata.name)
        outcomes.append(_run_task(
            task, task_plugin, task_data, capability, replay=p.replay, identity=p.identity,
            model_plugin=p.model_plugin, limit=p.data_options.limit, runtime=runtime, output=p.output,
            resume=resume, world=world, timer=timer, shared=p.shared, started=p.started, t0=p.t0, vectors=service,
            typed_model=model_text,
            execution=lambda: {"world_size": world.size, "device": runtime.device_used, "precision": model.precision,
                               "threads": runtime.threads,
                               "batch_size": service.stats.batch_size if service else runtime.batch_size,
                               "suite": [t.metadata.name for t, _ in p.tasks],
                               "encoding": service.stats.as_dict() if service else None},
        ))
    return outcomes


def _run_task(
    task: Task, task_plugin: PluginInfo, task_data: TaskData, capability: Any, *, replay: bool,
    identity: ModelIdentity, model_plugin: PluginInfo, limit: int | None, runtime: Runtime, output: OutputOptions,
    resume: bool, world: World, timer: _Timer, shared: _Timer, started: str, t0: float,
    execution: Callable[[], dict[str, Any]], vectors: EncodingService | None = None, typed_model: str | None = None,
) -> Outcome:
    """Predict unit by unit (saving each), evaluate, and write the result (rank 0 only);
    ``vectors``, when the model is an encoder, serves the task's :meth:`Task.vector_analyses`."""
    files = timer.time("hash_data", lambda: describe_files(task_data.files))
    run_id = _run_id(task, identity, task_data, limit, files, "run")
    run_dir = _run_dir(output, task, identity, run_id, typed_model=typed_model, resume=resume)
    parts_dir = run_dir / "parts"
    if world.is_main:
        remove_temporaries(parts_dir)  # what a killed run of this run id was writing
        if not resume and parts_dir.exists():
            shutil.rmtree(parts_dir)
    saved = _saved_parts(parts_dir, run_id, task.units(task_data)) if resume else {}
    world.barrier()  # every rank knows which units are saved before rank 0 saves more
    context = RunContext(runtime=runtime, show_progress=output.show_progress and world.is_main)
    predictions: dict[str, Any] = {}
    resumed: list[str] = []
    if replay:
        predictions = timer.time("predict", lambda: capability.predictions_for(task, task_data))
    for unit in [] if replay else task.units(task_data):
        if unit in saved:
            predictions[unit] = saved[unit]
            resumed.append(unit)
            continue
        predictions[unit] = timer.time("predict", lambda: task.predict(capability, task_data, unit, context),
                                       detail=unit)
        if world.is_main:
            dump_json({"run_id": run_id, "unit": unit, "predictions": predictions[unit],
                       "sha256": _part_digest(run_id, unit, predictions[unit])},
                      parts_dir / f"{_slug(unit)}.json", indent=None)

    evaluation = timer.time("evaluate", lambda: task.evaluate(task_data, predictions))
    if not world.is_main:
        return Outcome(None, evaluation, resumed)
    if vectors is not None:
        evaluation.diagnostics.update(timer.time("vector_analyses", lambda: task.vector_analyses(task_data, vectors)))
    return _record(
        kind="run", run_id=run_id, run_dir=run_dir, task=task, task_plugin=task_plugin, data=task_data,
        predictions=predictions, evaluation=evaluation, identity=identity, model_plugin=model_plugin, limit=limit,
        files=files, runtime=runtime, output=output, started=started, t0=t0,
        phases={**shared.phases, **timer.phases}, resumed=resumed, execution=execution(),
    )


def _run_dir(output: OutputOptions, task: Task, identity: ModelIdentity, run_id: str, *, typed_model: str | None,
             resume: bool) -> Path:
    """``<output>/<task>/<model as typed>--<model label>/<run id>-<UTC time>``: the model's folder
    says what the user asked for and what it resolved to, and a configuration run again gets a
    folder of its own instead of overwriting the earlier run. The run id (a hash of everything
    that decides the scores) leads the name, so ``--resume`` continues the newest folder of the
    same configuration."""
    label = _slug(identity.label)
    model = label if typed_model is None or _slug(typed_model).lower() == label.lower() else (
        f"{_slug(typed_model)}--{label}")
    parent = output.output_dir / _slug(task.metadata.name) / model
    if resume:
        earlier = sorted(p.name for p in parent.glob(f"{run_id}*") if p.is_dir()) if parent.is_dir() else []
        if earlier:
            return parent / earlier[-1]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name, number = f"{run_id}-{stamp}", 1
    while (parent / name).exists():  # two runs within one second
        number += 1
        name = f"{run_id}-{stamp}-{number}"
    return parent / name


def _record(
    *, kind: Literal["run", "score"], run_id: str, run_dir: Path, task: Task, task_plugin: PluginInfo,
    data: TaskData, predictions: dict[str, Any], evaluation: Evaluation, identity: ModelIdentity,
    model_plugin: PluginInfo | None, limit: int | None, files: list[dict[str, Any]], runtime: Runtime,
    output: OutputOptions, started: str, t0: float, phases: dict[str, float], resumed: list[str],
    execution: dict[str, Any] | None = None,
) -> Outcome:
    """The end of a run and of a scoring alike: write the predictions in the task's format, then
    the validated result and its leaderboard entry."""
    predictions_path = run_dir / task.metadata.prediction_file
    remove_temporaries(run_dir)  # left by a killed run or scoring of this run id
    task.write_predictions(data, predictions, predictions_path)
    instances, intervals, bootstrap = None, {}, None
    if evaluation.instances:
        instances_path = run_dir / INSTANCES_FILE
        write_instances(evaluation.instances, instances_path)
        instances = InstancesRecord(str(instances_path), sha256_path(instances_path), len(evaluation.instances))
        settings = output.bootstrap
        start = time.perf_counter()
        intervals = evaluation_intervals(task, evaluation, settings)
        if intervals:
            phases = {**phases, "bootstrap": time.perf_counter() - start}
            bootstrap = BootstrapRecord(settings.resamples, settings.seed, settings.confidence)
    result = _build_result(
        kind=kind, run_id=run_id, task=task, task_plugin=task_plugin, identity=identity, model_plugin=model_plugin,
        data=data, limit=limit, files=files, evaluation=evaluation, predictions_path=predictions_path,
        runtime=runtime, started=started, wall=time.perf_counter() - t0, phases=phases, resumed=resumed,
        command=output.command, execution=execution, intervals=intervals, instances=instances, bootstrap=bootstrap,
    )
    return Outcome(result, evaluation, resumed, write_result(result, run_dir, output))


def evaluation_intervals(task: Task, evaluation: Evaluation, settings: BootstrapSettings
                         ) -> dict[str, dict[str, Interval]]:
    """The rows' bootstrap intervals, from the evaluation's per-instance records and the task's
    statistics (a run's, and a rescore's of a submitted result)."""
    table = InstanceTable.from_instances(evaluation.instances)
    return row_intervals(table, task.statistics(table), settings)


def _part_digest(run_id: str, unit: str, predictions: Any) -> str:
    """Checksum of a saved unit: a unit file whose content is not what this run wrote (edited,
    or from another version) is recomputed rather than trusted."""
    return sha256_text(run_id, unit, json_bytes(predictions, indent=None).decode("utf-8"))


def _saved_parts(parts_dir: Path, run_id: str, units: Sequence[str]) -> dict[str, Any]:
    """Units an earlier, interrupted run of the same run id finished. A unit file that is cut
    short, not this run's, or not what the run wrote is dropped with a warning, so its unit is
    predicted again: resuming never stops on, nor trusts, a damaged part."""
    saved = {}
    for path in sorted(parts_dir.glob("*.json")) if parts_dir.exists() else []:
        try:
            part = read_json(path)
        except InputError as exc:
            problem = exc.reason
        else:
            problem = _part_problem(part, run_id, units)
            if problem is None:
                saved[part["unit"]] = part["predictions"]
                continue
        warnings.warn(f"{path}: {problem}; that unit is predicted again", RuntimeWarning, stacklevel=2)
        path.unlink(missing_ok=True)
    return saved


def _part_problem(part: Any, run_id: str, units: Sequence[str]) -> str | None:
    """Why a parsed unit file cannot be reused, or None."""
    if not isinstance(part, dict) or not {"run_id", "unit", "predictions", "sha256"} <= part.keys():
        return "not a unit file of this harness version"
    if part["run_id"] != run_id:
        return "a unit of another run"
    if part["unit"] not in units:
        return f"unit {part['unit']!r} is not a unit of this run"
    if part["sha256"] != _part_digest(run_id, part["unit"], part["predictions"]):
        return "its content does not match its checksum"
    return None


def score(
    task_text: str,
    predictions_file: Path,
    *,
    data: DataOptions | None = None,
    output: OutputOptions | None = None,
    label: str | None = None,
    registry: Registry | None = None,
    input_rules: InputRules = "strict",
    details: dict[str, Any] | None = None,
    identity: ModelIdentity | None = None,
) -> Outcome:
    """Score a predictions file written elsewhere, in the task's official format, read under
    ``input_rules`` (see :attr:`TaskData.input_rules`); ``details`` join the result's model
    details (a submission's model card). The model is the file (its name and digest) unless
    ``identity`` says what made the predictions (a model family's runs)."""
    data_options = data or DataOptions()
    output = output or OutputOptions()
    check_output(output)
    registry = registry or Registry.discover()
    task, task_plugin = load_task(registry, task_text)
    started, t0, timer = now_iso(), time.perf_counter(), _Timer(task.metadata.name)
    task_data = timer.time("load_data", lambda: load_data(task, data_options))
    task_data.input_rules = input_rules
    if not predictions_file.exists():
        raise HarnessError(f"predictions file {predictions_file} does not exist")
    predictions = timer.time("read_predictions", lambda: task.read_predictions(predictions_file, task_data))
    evaluation = timer.time("evaluate", lambda: task.evaluate(task_data, predictions))
    if input_rules == "official":
        evaluation.notes.append("read under --input-rules official: input refused by default (unknown ids, "
                                "repeated ids, ...) was scored as the official script scores it")
    if identity is None:
        identity = ModelIdentity(
            name="predictions-file", label=label or predictions_file.stem,
            weights=f"sha256:{sha256_path(predictions_file)}", options={},
            details={"predictions": str(predictions_file), **(details or {})},
        )
    files = timer.time("hash_data", lambda: describe_files(task_data.files))
    run_id = _run_id(task, identity, task_data, data_options.limit, files, "score")
    return _record(
        kind="score", run_id=run_id, run_dir=_run_dir(output, task, identity, run_id, typed_model=None, resume=False),
        task=task,
        task_plugin=task_plugin, data=task_data, predictions=predictions, evaluation=evaluation, identity=identity,
        model_plugin=None, limit=data_options.limit, files=files, runtime=Runtime(device_request="cpu"),
        output=output, started=started, t0=t0, phases=timer.phases, resumed=[],
    )
