"""Planning a run: which tasks (names, suites, suite files), with which options, on which data.

Everything here happens before a model is loaded, so a mistake (an unknown task, a task the
model cannot run, missing data) stops the run before any work: the runner plans first, then
executes (:mod:`harness.running.execution`), then records (:mod:`harness.running.recording`).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data import home as datahome
from harness.definitions.protocols import PredictionSource
from harness.definitions.registry import Registry, load_target
from harness.definitions.specs import PluginInfo
from harness.definitions.task import DataRequest, Task, TaskData
from harness.definitions.validation import validate
from harness.errors import HarnessError
from harness.files.io import read_json
from harness.models.capabilities import declared
from harness.models.compose import ModelSource
from harness.options import bind_options, parse_named
from harness.running.settings import DataOptions
from harness.running.timing import PhaseTimer

#: What a result says its data was when no ``--data-dir`` was given.
DEMO_SOURCE = "built-in demo data"

#: The task option naming a folder of gold labels kept apart from the inputs (XTREME's test
#: labels, evaluate.py's ``--label_folder``): ``--labels`` (of a family run, ``validate --rescore``
#: and ``submit``) gives it to every task that declares it.
LABELS_OPTION = "labels"


def load_task(registry: Registry, text: str) -> tuple[Task[Any], PluginInfo]:
    """Instantiate the task named in ``text`` (``name:key=value,...``)."""
    named = parse_named(text)
    return task_with_options(registry, named.name, named.options)


def task_with_options(registry: Registry, name: str, options: Mapping[str, Any]) -> tuple[Task[Any], PluginInfo]:
    """Instantiate task ``name`` with ``options`` (strings as typed, or the values a result records)."""
    spec, plugin = registry.task(name)
    task_cls = load_target(spec, plugin, "task")
    return task_cls(**bind_options(task_cls, options, owner=f"task {name}")), plugin


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
    suite: dict[str, Any] = read_json(path)
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


def load_data(task: Task[Any], options: DataOptions) -> TaskData:
    """Load the requested data; without a folder, the task's benchmark from the data home when it
    is there (``harness data get``), else the task's demo data (:func:`announce_data` says which)."""
    meta = task.metadata
    split = options.split or meta.splits[0]
    if split not in meta.splits:
        raise HarnessError(f"unknown split '{split}' for task {meta.name} (splits: {', '.join(meta.splits)})")
    languages = task.check_languages(options.languages)
    data_dir = options.data_dir
    if data_dir is None:
        data_dir = None if options.demo else datahome.task_folder(meta, datahome.default_home(), split)
        if data_dir is None:
            return _demo_data(task, DataRequest(None, split, languages, options.limit))
    elif not data_dir.exists():
        raise HarnessError(f"--data-dir {data_dir} does not exist")
    if meta.data_subdir and (data_dir / meta.data_subdir).is_dir():
        data_dir = data_dir / meta.data_subdir  # a folder holding several benchmarks in their usual layout
    data: TaskData = task.load(DataRequest(data_dir, split, languages, options.limit))
    return data


def _get_hint(task: Task[Any]) -> str:
    """How to get a task's real files: ``harness data get NAME``, where its plugin declares them."""
    return f"`harness data get {task.metadata.data.name}`" if task.metadata.data is not None else ""


def _demo_data(task: Task[Any], request: DataRequest) -> TaskData:
    """The task's built-in demo data; one line when the task has none."""
    meta = task.metadata
    folder = task.demo_data_dir()
    if folder is None:
        get = _get_hint(task)
        raise HarnessError(
            f"task {meta.name} has no built-in demo data; "
            + (f"run {get}, or " if get else "")
            + "pass --data-dir with the benchmark files"
        )
    data: TaskData = task.load(DataRequest(folder, request.split, request.languages, request.limit))
    data.demo = True
    data.source = DEMO_SOURCE
    return data


def announce_data(tasks: Sequence[LoadedTask], options: DataOptions) -> None:
    """Say on stderr where each task's data comes from when no ``--data-dir`` named it: the data
    home's folder, or the demo data and how to get the real files. Called once every task's data
    has loaded, so nothing is said before a mistake is reported."""
    if options.data_dir is not None:
        return
    for loaded in tasks:
        name, data = loaded.name, loaded.data
        if data.demo:
            get = _get_hint(loaded.task)
            print(
                f"Using the built-in demo data for {name} (the real benchmark files: "
                + (f"{get} or " if get else "")
                + "--data-dir)",
                file=sys.stderr,
            )
        else:
            print(
                f"Using {data.source} for {name}, the data home's copy (pass --data-dir to use another)",
                file=sys.stderr,
            )


@dataclass
class LoadedTask:
    """A task with its data, the question limit it was loaded with, and the timer of its phases
    (loading the data is the first)."""

    task: Task[Any]
    plugin: PluginInfo
    data: TaskData
    limit: int | None
    timer: PhaseTimer

    @property
    def name(self) -> str:
        return self.task.metadata.name


def with_data(task: Task[Any], plugin: PluginInfo, options: DataOptions) -> LoadedTask:
    """The task with its data loaded (the first phase its timer records)."""
    timer = PhaseTimer(task.metadata.name)
    return LoadedTask(task, plugin, timer.time("load_data", lambda: load_data(task, options)), options.limit, timer)


def check_model(source: ModelSource, tasks: Sequence[Task[Any]]) -> None:
    """Stop before any work if the model cannot run one of the tasks (a model that replays
    predictions files runs any task)."""
    if PredictionSource in declared(source.cls):
        return
    for task in tasks:
        source.check(task.metadata.needs, task.metadata.name)


def with_checked_data(
    tasks: Sequence[tuple[Task[Any], PluginInfo]], source: ModelSource, data: DataOptions
) -> list[LoadedTask]:
    """``tasks`` checked against the model, then their data loaded."""
    check_model(source, [task for task, _ in tasks])
    loaded = [with_data(task, plugin, data) for task, plugin in tasks]
    announce_data(loaded, data)
    return loaded
