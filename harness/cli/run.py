"""``harness run`` and ``harness score``: :func:`harness.api.evaluate` (or :func:`harness.api.plan`)
and :func:`harness.api.score` with the command's options, their flags made from the run options'
declaration (:mod:`harness.running.run_options`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import add_options, given_keywords, output_keywords, plugins
from harness.cli.report import print_plan, report_all
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.definitions.registry import Registry


def add_parsers(commands: Any) -> None:
    """The ``run`` and ``score`` commands, under the top parser's ``commands``."""
    run = commands.add_parser("run", help="run a model on tasks and score it")
    run.add_argument("task", help="task(s): name[:key=value,...], comma-separated; suite names; or @suite.json")
    run.add_argument(
        "model",
        help="model name, optionally with options: name:key=value,...; or @family.json, "
        "a model per task (a suite such as xtreme fine-tunes one per task: see schemas/"
        "model-family.schema.json)",
    )
    add_options(run, "run")

    score = commands.add_parser("score", help="score a predictions file made elsewhere, without a model")
    score.add_argument("task", help="task name, optionally with options: name:key=value,...")
    score.add_argument("--predictions", type=Path, required=True, help="predictions in the task's official format")
    add_options(score, "score")


def run(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """``harness run``: :func:`harness.api.evaluate` (or :func:`harness.api.plan`) with the options."""
    from harness import api

    registry = plugins()
    if args.task in registry.suites.entries and args.task in registry.tasks.entries and not args.model.startswith("@"):
        _check_task_not_suite(args, registry)
    common = {
        **given_keywords(args, "plan"),
        **_data_keywords(args),
        "cache_dir": _cache_dir(args),
        "registry": registry,
    }
    if args.dry_run:
        for number, plan in enumerate(api.plan(args.task, args.model, **common)):
            if number:
                print()
            print_plan(plan)
        return
    output = output_keywords(args, argv)
    outcomes = api.evaluate(args.task, args.model, resume=args.resume, progress=not args.quiet, **common, **output)
    report_all([o for o in outcomes if o.result_path is not None], output["leaderboard"], args)  # rank 0 reports


def score(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """``harness score``: :func:`harness.api.score` with the options."""
    from harness import api

    output = output_keywords(args, argv)
    outcome = api.score(
        args.task,
        args.predictions,
        label=args.name,
        input_rules=args.input_rules,
        registry=plugins(),
        **_data_keywords(args),
        **output,
    )
    report_all([outcome], output["leaderboard"], args)


def _data_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The API's data keyword arguments, from the data options."""
    return {**given_keywords(args, "score", "data"), "langs": _languages_option(args)}


def _languages_option(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--langs``, or the one pair ``--context-lang``/``--question-lang`` name."""
    if args.context_lang or args.question_lang:
        if not (args.context_lang and args.question_lang) or args.langs:
            raise HarnessError("--context-lang and --question-lang go together, and replace --langs")
        return (f"{args.context_lang}-{args.question_lang}",)
    langs: tuple[str, ...] | None = args.langs
    return langs


def _cache_dir(args: argparse.Namespace) -> Path | None:
    """The embedding cache of a run: ``--cache-dir``, the default folder, or none (``--no-cache``)."""
    from harness.models.cache import default_root

    return None if args.no_cache else (args.cache_dir or default_root())


def _check_task_not_suite(args: argparse.Namespace, registry: Registry) -> None:
    """A name that is a task and a suite is the task with one model; a model that cannot run the
    task was meant for the suite, which runs with a model family: say so."""
    from harness.models.compose import resolve_model
    from harness.running.planning import check_model, load_task

    try:
        check_model(resolve_model(args.model, registry, args.model_args), [load_task(registry, args.task)[0]])
    except HarnessError as exc:
        raise HarnessError(
            f"{exc} (with one model, {args.task} is the task; the suite {args.task} runs a model "
            f"family: harness run {args.task} @family.json --labels DIR)"
        ) from None
