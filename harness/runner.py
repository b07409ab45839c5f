"""One runner for every task and model: resolve plugins, load data, predict unit by unit
(saving each unit so ``--resume`` can skip it), score, write the result and the leaderboard.

``harness score`` takes the same path without a model: the task reads a predictions file in its
official format and scores it, so predictions made anywhere are scored by the same code.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness import leaderboard
from harness.capabilities import provide
from harness.errors import HarnessError, RegistryError
from harness.io import dump_json, read_json, sha256_path, sha256_text
from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import PredictionSource
from harness.options import bind_options, parse_named
from harness.provenance import describe_files, environment, now_iso
from harness.registry import PluginInfo, Registry
from harness.task import DataRequest, Evaluation, RunContext, Task, TaskData
from harness.validation import validate

RESULT_SCHEMA = "run-result"
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

    output_dir: Path = Path("results")
    leaderboard: Path | None = Path("leaderboard/leaderboard.json")
    show_progress: bool = True
    command: tuple[str, ...] = field(default_factory=lambda: tuple(sys.argv))


@dataclass
class Outcome:
    """What a run produced."""

    result: dict[str, Any]
    result_path: Path
    evaluation: Evaluation
    resumed_units: list[str]


def _load_target(spec: Any, plugin: PluginInfo, kind: str) -> Any:
    try:
        return spec.load()
    except Exception as exc:  # report which plugin is broken, keep the message to one line
        raise RegistryError(f"{kind} '{spec.name}' from {plugin} failed to import: {type(exc).__name__}: {exc}") from exc


def load_task(registry: Registry, text: str) -> tuple[Task, PluginInfo]:
    """Instantiate the task named in ``text`` (``name:key=value,...``)."""
    named = parse_named(text)
    spec, plugin = registry.task(named.name)
    task_cls = _load_target(spec, plugin, "task")
    task = task_cls(**bind_options(task_cls, named.options, owner=f"task {named.name}"))
    return task, plugin


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
    data = task.load(DataRequest(data_dir, split, languages, options.limit))
    if demo:
        data.demo = True
        data.source = DEMO_SOURCE
    return data


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def _run_id(
    task: Task, identity: dict[str, Any], data: TaskData, limit: int | None, files: list[dict[str, Any]], kind: str
) -> str:
    key = json.dumps(
        [kind, task.metadata.name, task.options(), identity["name"], identity["weights"], identity["options"],
         [f["sha256"] for f in files], data.split, list(data.languages), limit],
        sort_keys=True, default=str,
    )
    return sha256_text(key)[:16]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _plugin_dict(plugin: PluginInfo | None) -> dict[str, Any] | None:
    if plugin is None:
        return None
    return {"name": plugin.name, "distribution": plugin.distribution, "version": plugin.version}


def _build_result(
    *, kind: str, run_id: str, task: Task, task_plugin: PluginInfo, identity: dict[str, Any],
    model_plugin: PluginInfo | None, data: TaskData, limit: int | None, files: list[dict[str, Any]],
    evaluation: Evaluation, predictions_path: Path, runtime: Runtime, started: str, wall: float,
    phases: dict[str, float], resumed: list[str], command: tuple[str, ...],
) -> dict[str, Any]:
    meta = task.metadata
    env = environment()
    plugins = {task_plugin.name: task_plugin.version}
    if model_plugin is not None:
        plugins[model_plugin.name] = model_plugin.version
    return {
        "schema_version": "1.0",
        "run_id": run_id,
        "kind": kind,
        "task": {
            "name": meta.name, "plugin": _plugin_dict(task_plugin), "options": task.options(),
            "main_metric": meta.main_metric, "higher_is_better": meta.higher_is_better,
            "prediction_format": meta.prediction_format, "reference": meta.reference,
        },
        "model": {**identity, "plugin": _plugin_dict(model_plugin)},
        "data": {
            "source": data.source, "demo": data.demo, "split": data.split, "languages": list(data.languages),
            "limit": limit, "files": files, "statistics": data.statistics,
        },
        "main_score": {"metric": meta.main_metric, "value": evaluation.main_score},
        "rows": [row.as_dict(data.split) for row in evaluation.rows],
        "diagnostics": evaluation.diagnostics,
        "notes": evaluation.notes + (["Scored on the built-in demo data: not comparable with published numbers."] if data.demo else []),
        "predictions": {"path": str(predictions_path), "format": meta.prediction_format, "sha256": sha256_path(predictions_path)},
        "provenance": {
            **{k: env[k] for k in ("harness_version", "git_commit", "python", "packages", "platform")},
            "plugins": plugins, "device": runtime.device_used, "seed": runtime.seed,
            "started_at": started, "finished_at": now_iso(), "wall_time_s": round(wall, 3),
            "phases_s": {k: round(v, 3) for k, v in phases.items()}, "resumed_units": resumed,
            "command": list(command),
        },
    }


def _finish(result: dict[str, Any], run_dir: Path, output: OutputOptions) -> Path:
    """Validate and write result (and leaderboard entry); the predictions file is already written."""
    result_path = run_dir / "result.json"
    validate(result, RESULT_SCHEMA, file=result_path)
    dump_json(result, result_path)
    if output.leaderboard is not None:
        leaderboard.add_result(output.leaderboard, result, result_path)
    return result_path


class _Timer:
    def __init__(self) -> None:
        self.phases: dict[str, float] = {}

    def time(self, name: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.perf_counter() - start


def run(
    task_text: str,
    model_text: str,
    *,
    data: DataOptions | None = None,
    output: OutputOptions | None = None,
    model_args: str | None = None,
    device: str = "auto",
    batch_size: int | None = None,
    seed: int = 0,
    resume: bool = False,
    registry: Registry | None = None,
) -> Outcome:
    """Run ``model`` on ``task`` and write a validated result, predictions and leaderboard entry."""
    data_options = data or DataOptions()
    output = output or OutputOptions()
    registry = registry or Registry.discover()
    started, t0, timer = now_iso(), time.perf_counter(), _Timer()

    task, task_plugin = load_task(registry, task_text)
    named = parse_named(model_text, model_args)
    model_spec, model_plugin = registry.model(named.name)
    model_cls = _load_target(model_spec, model_plugin, "model")
    needs = task.metadata.needs
    replay = issubclass(model_cls, PredictionSource)
    if not replay:
        provide(model_cls, needs, model_name=named.name, task_name=task.metadata.name)
    model_options = bind_options(model_cls, named.options, owner=f"model {named.name}")
    task_data = timer.time("load_data", lambda: load_data(task, data_options))

    runtime = Runtime(device_request=device, batch_size=batch_size, seed=seed)
    model: Model = timer.time("load_model", lambda: model_cls(runtime=runtime, **model_options))
    model.name = named.name
    identity = model.identity().as_dict()
    capability = model if replay else provide(model, needs, model_name=named.name, task_name=task.metadata.name)
    _seed_everything(seed)

    files = timer.time("hash_data", lambda: describe_files(task_data.files))
    run_id = _run_id(task, identity, task_data, data_options.limit, files, "run")
    run_dir = output.output_dir / _slug(task.metadata.name) / _slug(identity["label"]) / run_id
    parts_dir = run_dir / "parts"
    if not resume and parts_dir.exists():
        shutil.rmtree(parts_dir)
    context = RunContext(runtime=runtime, show_progress=output.show_progress)
    predictions: dict[str, Any] = {}
    resumed: list[str] = []
    if replay:
        predictions = timer.time("predict", lambda: capability.predictions_for(task, task_data))
    for unit in [] if replay else task.units(task_data):
        part_path = parts_dir / f"{_slug(unit)}.json"
        if resume and part_path.exists():
            saved = read_json(part_path)
            if isinstance(saved, dict) and saved.get("run_id") == run_id and saved.get("unit") == unit:
                predictions[unit] = saved["predictions"]
                resumed.append(unit)
                continue
        predictions[unit] = timer.time("predict", lambda: task.predict(capability, task_data, unit, context))
        dump_json({"run_id": run_id, "unit": unit, "predictions": predictions[unit]}, part_path, indent=None)

    evaluation = timer.time("evaluate", lambda: task.evaluate(task_data, predictions))
    predictions_path = run_dir / task.metadata.prediction_file
    task.write_predictions(task_data, predictions, predictions_path)
    result = _build_result(
        kind="run", run_id=run_id, task=task, task_plugin=task_plugin, identity=identity,
        model_plugin=model_plugin, data=task_data, limit=data_options.limit, files=files,
        evaluation=evaluation, predictions_path=predictions_path, runtime=runtime, started=started,
        wall=time.perf_counter() - t0, phases=timer.phases, resumed=resumed, command=output.command,
    )
    result_path = _finish(result, run_dir, output)
    return Outcome(result, result_path, evaluation, resumed)


def score(
    task_text: str,
    predictions_file: Path,
    *,
    data: DataOptions | None = None,
    output: OutputOptions | None = None,
    label: str | None = None,
    registry: Registry | None = None,
) -> Outcome:
    """Score a predictions file written elsewhere, in the task's official format."""
    data_options = data or DataOptions()
    output = output or OutputOptions()
    registry = registry or Registry.discover()
    started, t0, timer = now_iso(), time.perf_counter(), _Timer()

    task, task_plugin = load_task(registry, task_text)
    task_data = timer.time("load_data", lambda: load_data(task, data_options))
    if not predictions_file.exists():
        raise HarnessError(f"predictions file {predictions_file} does not exist")
    predictions = timer.time("read_predictions", lambda: task.read_predictions(predictions_file, task_data))
    evaluation = timer.time("evaluate", lambda: task.evaluate(task_data, predictions))
    digest = sha256_path(predictions_file)
    identity = ModelIdentity(
        name="predictions-file", label=label or predictions_file.stem, weights=f"sha256:{digest}",
        options={}, details={"predictions": str(predictions_file)},
    ).as_dict()
    files = timer.time("hash_data", lambda: describe_files(task_data.files))
    run_id = _run_id(task, identity, task_data, data_options.limit, files, "score")
    run_dir = output.output_dir / _slug(task.metadata.name) / _slug(identity["label"]) / run_id
    predictions_path = run_dir / task.metadata.prediction_file
    task.write_predictions(task_data, predictions, predictions_path)
    result = _build_result(
        kind="score", run_id=run_id, task=task, task_plugin=task_plugin, identity=identity, model_plugin=None,
        data=task_data, limit=data_options.limit, files=files, evaluation=evaluation,
        predictions_path=predictions_path, runtime=Runtime(device_request="cpu"), started=started,
        wall=time.perf_counter() - t0, phases=timer.phases, resumed=[], command=output.command,
    )
    result_path = _finish(result, run_dir, output)
    return Outcome(result, result_path, evaluation, [])
