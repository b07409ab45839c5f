"""The library API: the harness from Python, on any model object.

    import harness
    outcomes = harness.evaluate("lareqa", my_sentence_transformer, label="my-e5")
    outcomes[0].main_score            # MainScore(metric='map', value=..., interval=(..., ...))

:func:`evaluate` takes what ``harness run`` takes, as keyword arguments named like its options
(``--data-dir`` is ``data_dir``, ``--no-cache`` is ``cache_dir=None``, ``--quiet`` is
``progress=False``), and the CLI calls it: one path for both. ``model`` is a registered name
with options (``"bm25:k1=1.2"``), a harness model instance, or any object with a capability's
methods (:mod:`harness.models.objects`: an ``encode(texts)``, a reader callable, a retriever).

Nothing is written unless asked: results, predictions and per-instance records come back in
memory; ``output_dir`` writes them in the results layout, ``leaderboard`` adds them to a
leaderboard file, and ``cache_dir`` keeps the vectors an encoder computed for the next run. The
CLI passes ``results/``, ``results/leaderboard.json`` and the default cache folder.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.definitions.registry import Registry, load_target
from harness.definitions.specs import Edition
from harness.definitions.task import InputRules
from harness.display.wording import COMMAND_LINE, reword_options
from harness.errors import HarnessError
from harness.models.generation import GenerationSettings
from harness.running.execution import Plan
from harness.running.recording import Outcome
from harness.running.run_options import keyword_of, keywords_doc, options_of
from harness.running.settings import DataOptions, ExecutionOptions, as_path, output_options
from harness.stats import DEFAULT_RESAMPLES

__all__ = ["Outcome", "Plan", "TaskInfo", "TaskOption", "describe_task", "evaluate", "plan", "score", "tasks"]


def _keyword_errors(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``'s errors name its keywords (``data_dir``), not the command line's flags
    (``--data-dir``) the checks inside word them with, unless the ``harness`` command called it;
    its docstring ends with its keywords' help, from their declaration
    (:data:`harness.running.run_options.RUN_OPTIONS`)."""
    keywords = set(inspect.signature(function).parameters)

    def keyword(flag: str) -> str | None:
        name = keyword_of(flag) or flag[2:].replace("-", "_")
        return name if name.split("=")[0] in keywords else None

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except HarnessError as error:
            if not COMMAND_LINE.get():
                reword_options(error, keyword)
            raise

    declared = [
        name
        for name in inspect.signature(function).parameters
        if name in {o.name for o in options_of(function=function.__name__)}
    ]
    if declared:
        wrapper.__doc__ = f"{inspect.cleandoc(function.__doc__ or '')}\n\n{keywords_doc(function.__name__, declared)}"
    return wrapper


@dataclass(frozen=True)
class TaskOption:
    """One option of a task (``TASK:name=value``), its default and its type as the task declares it."""

    name: str
    default: Any
    type: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "default": self.default, "type": self.type}


def _type_text(task_class: type, parameter: inspect.Parameter) -> str:
    """An option's type as a user writes its value: a ``Literal``'s choices (``concat|pair``), else
    the annotation as declared."""
    import typing

    try:
        hint = typing.get_type_hints(task_class.__init__).get(parameter.name)  # type: ignore[misc]  # the options a task class's __init__ declares
    except Exception:  # an annotation that does not resolve: show it as written
        hint = None
    if hint is not None and typing.get_origin(hint) is typing.Literal:
        return "|".join(str(choice) for choice in typing.get_args(hint))
    annotation = parameter.annotation
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


@dataclass(frozen=True)
class TaskInfo:
    """A task of the installed plugins, as :func:`tasks` lists it (and ``harness list TASK`` shows it)."""

    name: str
    summary: str
    languages: tuple[str, ...]
    #: The capability a model needs to run it (``Encoder``, ``Reader``, ``Retriever``, ...).
    needs: str
    main_metric: str
    plugin: str
    #: The capabilities whose models run it: ``needs`` and those the harness adapts to it.
    served_by: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    #: The scorer signature: the scorer, its metrics and the choices that change its numbers.
    scorer: str = ""
    options: tuple[TaskOption, ...] = ()
    #: The benchmark files it reads (``harness data get BENCHMARK``), per its plugin's manifest.
    benchmark: str | None = None
    data_files: tuple[str, ...] = ()
    reference: str = ""
    #: Benchmark editions' lists within ``languages`` (XTREME's 36 Tatoeba languages), each a whole run.
    editions: tuple[Edition, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "languages": list(self.languages),
            "editions": {edition.name: list(edition.languages) for edition in self.editions},
            "needs": self.needs,
            "served_by": list(self.served_by),
            "main_metric": self.main_metric,
            "splits": list(self.splits),
            "scorer": self.scorer,
            "options": [o.to_dict() for o in self.options],
            "benchmark": self.benchmark,
            "data_files": list(self.data_files),
            "reference": self.reference,
            "plugin": self.plugin,
        }


def describe_task(name: str, registry: Registry) -> TaskInfo:
    """Everything ``harness list TASK`` shows of one installed task: its class is imported (its
    options are its constructor's keywords) and its plugin's data manifest read."""
    from harness.data.home import resolve
    from harness.errors import RegistryError, did_you_mean
    from harness.models.capabilities import ADAPTERS

    if name not in registry.tasks.entries:
        raise RegistryError(f"unknown task '{name}'{did_you_mean(name, registry.tasks.entries)} (see harness list)")
    spec, plugin = registry.tasks.entries[name]
    task_class = load_target(spec, plugin, "task")
    meta = task_class.metadata
    served = (meta.needs.__name__, *(source.__name__ for source, _ in ADAPTERS.get(meta.needs, [])))
    options = tuple(
        TaskOption(p.name, None if p.default is inspect.Parameter.empty else p.default, _type_text(task_class, p))
        for p in list(inspect.signature(task_class.__init__).parameters.values())[1:]
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )
    files: tuple[str, ...] = ()
    if meta.data is not None:
        try:
            files = tuple(f.path for f in resolve(meta.data).expected())
        except HarnessError:  # a broken manifest is `harness data list`'s to report
            files = ()
    return TaskInfo(
        name,
        spec.summary,
        meta.languages,
        meta.needs.__name__,
        meta.main_metric,
        plugin.name,
        served_by=served,
        splits=meta.splits,
        scorer=meta.scorer,
        options=options,
        benchmark=None if meta.data is None else meta.data.name,
        data_files=files,
        reference=meta.reference,
        editions=meta.editions,
    )


@_keyword_errors
def tasks(
    *, languages: str | Iterable[str] | None = None, needs: str | type | None = None, registry: Registry | None = None
) -> list[TaskInfo]:
    """The installed tasks (like ``mteb.get_tasks``): those covering every language of
    ``languages`` (``"de,ja"`` or a list), and those a model with capability ``needs`` can run
    (``"Encoder"`` or the protocol class; an encoder also runs the tasks that need a Retriever)."""
    registry = registry or Registry.discover()
    wanted = set(_codes(languages))
    out = []
    for name, (spec, _) in sorted(registry.tasks.entries.items()):
        if not wanted <= set(spec.languages):
            continue
        info = describe_task(name, registry)
        if needs is not None and (needs if isinstance(needs, str) else needs.__name__) not in info.served_by:
            continue
        out.append(info)
    return out


@_keyword_errors
def evaluate(
    tasks: str | Sequence[str],
    model: object,
    *,
    model_args: str | dict[str, object] | None = None,
    label: str | None = None,
    data_dir: str | Path | None = None,
    split: str | None = None,
    langs: str | Iterable[str] | None = None,
    limit: int | None = None,
    labels: str | Path | None = None,
    device: str = "auto",
    batch_size: int | None = None,
    seed: int = 0,
    threads: int | None = None,
    cache_dir: str | Path | None = None,
    resume: bool = False,
    gen_kwargs: str | Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    log_samples: bool = False,
    output_dir: str | Path | None = None,
    leaderboard: str | Path | None = None,
    progress: bool = True,
    bootstrap: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
    command: Sequence[str] | None = None,
    registry: Registry | None = None,
) -> list[Outcome]:
    """Run ``model`` on ``tasks`` (a task, ``"xquad,mlqa"``, a suite name, ``@suite.json``, or a
    list of them) and score it as the official scripts do: one :class:`Outcome` per task, each
    with its typed result (main score with its interval, rows, provenance), per-instance records
    and predictions. ``model="@family.json"`` runs a suite with a model per task (XTREME), its
    runs then scored as one submission against ``labels`` (the last outcome).

    A generative model's decoding options (``gen_kwargs``: ``"max_new_tokens=64,temperature=0.7"``
    or a mapping; ``system_prompt``) are laid over each prompt template's and recorded with the
    result; ``log_samples`` keeps each rendered prompt's text in the per-instance records.
    """
    from harness.running import family, planning, runner

    registry = registry or Registry.discover()
    data = _data(data_dir, split, langs, limit)
    execution = ExecutionOptions(
        device=device,
        batch_size=batch_size,
        seed=seed,
        threads=threads,
        cache_dir=as_path(cache_dir),
        resume=resume,
        generation=GenerationSettings.parse(gen_kwargs, system_prompt),
        log_samples=log_samples,
    )
    output = output_options(
        output_dir, leaderboard, progress=progress, bootstrap=bootstrap, bootstrap_seed=bootstrap_seed, command=command
    )
    if isinstance(model, str) and model.startswith("@"):
        if model_args:
            raise HarnessError("model_args: a family names each task's model with its options; write them there")
        suite = planning.expand_suite(_task_text(tasks), registry)
        ran = family.run_family(
            suite,
            Path(model[1:]),
            labels=as_path(labels),
            data=data,
            execution=execution,
            output=output,
            registry=registry,
        )
        return [*ran.runs, *([ran.scored] if ran.scored is not None else [])]
    if labels is not None:
        raise HarnessError(
            "--labels go with a model family (@family.json); give a single task its labels as TASK:labels=DIR"
        )
    task_texts = planning.expand_tasks(_task_text(tasks), registry)
    return runner.run_suite(
        task_texts,
        model,
        data=data,
        execution=execution,
        output=output,
        model_args=model_args,
        label=label,
        registry=registry,
    )


@_keyword_errors
def plan(
    tasks: str | Sequence[str],
    model: object,
    *,
    model_args: str | dict[str, object] | None = None,
    data_dir: str | Path | None = None,
    split: str | None = None,
    langs: str | Iterable[str] | None = None,
    limit: int | None = None,
    labels: str | Path | None = None,
    device: str = "auto",
    batch_size: int | None = None,
    seed: int = 0,
    threads: int | None = None,
    cache_dir: str | Path | None = None,
    gen_kwargs: str | Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    log_samples: bool = False,
    registry: Registry | None = None,
) -> list[Plan]:
    """What :func:`evaluate` would do with the same arguments (``harness run --dry-run``): the
    model loaded and the data read, nothing encoded, predicted or written; one plan per model."""
    from harness.running import family, planning, runner

    registry = registry or Registry.discover()
    data = _data(data_dir, split, langs, limit)
    execution = ExecutionOptions(
        device=device,
        batch_size=batch_size,
        seed=seed,
        threads=threads,
        cache_dir=as_path(cache_dir),
        generation=GenerationSettings.parse(gen_kwargs, system_prompt),
        log_samples=log_samples,
    )
    if isinstance(model, str) and model.startswith("@"):
        suite = planning.expand_suite(_task_text(tasks), registry)
        return family.plan_family(
            suite, Path(model[1:]), labels=as_path(labels), data=data, execution=execution, registry=registry
        )
    task_texts = planning.expand_tasks(_task_text(tasks), registry)
    return [
        runner.plan_suite(task_texts, model, data=data, execution=execution, model_args=model_args, registry=registry)
    ]


@_keyword_errors
def score(
    task: str,
    predictions: str | Path,
    *,
    label: str | None = None,
    data_dir: str | Path | None = None,
    split: str | None = None,
    langs: str | Iterable[str] | None = None,
    limit: int | None = None,
    input_rules: InputRules = "strict",
    output_dir: str | Path | None = None,
    leaderboard: str | Path | None = None,
    bootstrap: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
    command: Sequence[str] | None = None,
    registry: Registry | None = None,
) -> Outcome:
    """Score a predictions file (or folder) made elsewhere, in the task's official format, as
    ``harness score`` does; ``label`` names it (default: the file name)."""
    from harness.running import runner

    path = Path(predictions)
    return runner.score(
        task,
        path,
        data=_data(data_dir, split, langs, limit),
        output=output_options(
            output_dir, leaderboard, progress=False, bootstrap=bootstrap, bootstrap_seed=bootstrap_seed, command=command
        ),
        registry=registry,
        input_rules=input_rules,
        label=label,
    )


def _task_text(tasks: str | Sequence[str]) -> str:
    return tasks if isinstance(tasks, str) else ",".join(tasks)


def _codes(languages: str | Iterable[str] | None) -> tuple[str, ...]:
    if languages is None:
        return ()
    items = languages.split(",") if isinstance(languages, str) else languages
    return tuple(code.strip() for code in items if code.strip())


def _data(
    data_dir: str | Path | None, split: str | None, langs: str | Iterable[str] | None, limit: int | None
) -> DataOptions:
    return DataOptions(data_dir=as_path(data_dir), split=split, languages=_codes(langs) or None, limit=limit)
