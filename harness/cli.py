"""The ``harness`` command: list, run, score, validate and show the leaderboard.

Every user mistake ends as one line on stderr and exit code 2 (see :mod:`harness.errors`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.definitions.registry import DISABLE_PLUGINS_ENV, PLUGINS_ENV
from harness.display.tables import format_score, format_table, terminal_width, unit_label
from harness.display.wording import COMMAND_LINE
from harness.errors import HarnessError, InputError, did_you_mean, one_line
from harness.files.locations import DEFAULT_LEADERBOARD, DEFAULT_OUTPUT_DIR

if TYPE_CHECKING:
    from harness.definitions.model import Model
    from harness.definitions.registry import Registry
    from harness.leaderboard import Leaderboard
    from harness.running.recording import Outcome
    from harness.stats.paired import RowComparison


class _Parser(argparse.ArgumentParser):
    """argparse whose refusals are the one line (exit code 2) of every user mistake, and whose
    unknown command gets a did-you-mean, like an unknown task or model (argparse prints its usage
    over several lines and lists the choices)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # `--lang de` must not run as `--langs de`
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Refuse an unknown option where it is met, with the full name it was probably meant to
        be (prefix matching is off: an abbreviation is an unknown option); the top parser would
        only say "unrecognized arguments" without knowing the command's options."""
        namespace, extras = super().parse_known_args(args, namespace)
        for extra in extras:
            if extra.startswith("-") and len(extra) > 1:
                name = extra.split("=", 1)[0]
                self.error(f"unknown option '{name}'{did_you_mean(name, self._option_string_actions, 0.6)}")
        return namespace, extras

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if isinstance(action, argparse._SubParsersAction) and value not in action.choices:
            what = (action.metavar or "command").lower()
            self.exit(2, f"error: unknown {what} '{one_line(value)}'{did_you_mean(value, action.choices)} "
                         f"(known: {', '.join(action.choices)})\n")
        super()._check_value(action, value)

    def error(self, message: str) -> Any:
        self.exit(2, f"error: {self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def _languages(text: str) -> tuple[str, ...]:
    languages = tuple(lang.strip() for lang in text.split(",") if lang.strip())
    if not languages:  # an empty list must not mean "all languages"
        raise argparse.ArgumentTypeError(f"no language code in '{text}' (leave --langs out for all languages)")
    return languages


def _add_data_arguments(parser: argparse.ArgumentParser) -> Any:
    """The data options of run and score; returns their group, for options of one command."""
    group = parser.add_argument_group("data")
    group.add_argument("--data-dir", type=Path, help="folder with the benchmark files in their official layout "
                       "(default: the benchmark in the data home, `harness data get`, else the task's built-in "
                       "demo data)")
    group.add_argument("--split", help="data split (default: the task's first split)")
    group.add_argument("--langs", type=_languages, help="comma-separated language codes (default: all); a "
                       "language pair as first-second, e.g. es-en (context-question)")
    group.add_argument("--context-lang", help="with --question-lang: the one (context, question) pair of a "
                       "cross-lingual task, same as --langs CONTEXT-QUESTION")
    group.add_argument("--question-lang", help="see --context-lang")
    group.add_argument("--limit", type=int, help="only the first N questions per language (quick checks; "
                       "recorded in the result and the leaderboard)")
    return group


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR,
                       help=f"where results go (default: {DEFAULT_OUTPUT_DIR}/ in the current folder)")
    group.add_argument("--leaderboard", type=Path, default=DEFAULT_LEADERBOARD,
                       help=f"leaderboard file to update (default: {DEFAULT_LEADERBOARD} in the current folder)")
    group.add_argument("--no-leaderboard", action="store_true", help="do not update the leaderboard")
    group.add_argument("--quiet", action="store_true", help="no progress bars")
    group.add_argument("--json", action="store_true", help="print the results as JSON on stdout (one object: "
                       "results, each with its result file's content and path), not tables")
    _add_width_argument(parser)


def _add_width_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true", help="print tables whole (default: fitted to the terminal, "
                        "100 columns when not a terminal, long cells cut with …)")


def _width(args: argparse.Namespace) -> int | None:
    return None if getattr(args, "wide", False) else terminal_width()


def _resamples(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: the number of resamples is 0 (none) or more")
    return value


def _add_statistics_arguments(parser: argparse.ArgumentParser, default: int = 1000) -> None:
    group = parser.add_argument_group("statistics")
    group.add_argument("--bootstrap", type=_resamples, default=default, metavar="N",
                       help=f"bootstrap resamples behind the 95%% intervals (default: {default}; 0: no intervals)")
    group.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the resampling (default: 0)")


def _bootstrap_settings(args: argparse.Namespace) -> Any:
    from harness.stats.bootstrap import BootstrapSettings

    return BootstrapSettings(resamples=args.bootstrap, seed=args.bootstrap_seed)


def _add_cache_arguments(parser: Any, with_switch: bool = True) -> None:
    parser.add_argument("--cache-dir", type=Path, help="embedding cache folder (default: $HARNESS_CACHE_DIR "
                        "or ~/.cache/xlqa-harness)")
    if with_switch:
        parser.add_argument("--no-cache", action="store_true", help="neither read nor write the embedding cache")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="harness", description="Score models on cross-lingual QA benchmarks exactly as the official scripts do.",
        epilog="--plugin, -v and --log-level may also follow the command (harness run ... -v)."
    )
    parser.add_argument("--version", action="version", version=f"xlqa-harness {__version__}")
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help=f"also load this plugin module, installed or not (repeatable; same as ${PLUGINS_ENV}); "
                        f"${DISABLE_PLUGINS_ENV} lists plugins not to load")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="say what the harness does on stderr (-v: steps and timings, -vv: debug)")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                        help="the same by name (overrides -v)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("list", help="list tasks, models and suites from installed plugins, or show one task")
    listing.add_argument("name", nargs="?", metavar="TASK", help="show this task: languages, splits, scorer, options "
                         "with their defaults, the capability a model needs, its data files")
    listing.add_argument("--json", action="store_true", help="machine-readable output (tasks with their options, "
                         "capabilities and data files)")
    _add_width_argument(listing)

    run = commands.add_parser("run", help="run a model on tasks and score it")
    run.add_argument("task", help="task(s): name[:key=value,...], comma-separated; suite names; or @suite.json")
    run.add_argument("model", help="model name, optionally with options: name:key=value,...; or @family.json, "
                     "a model per task (a suite such as xtreme fine-tunes one per task: see schemas/"
                     "model-family.schema.json)")
    run.add_argument("--model-args", help="model options as a JSON object (merged over name:key=value)")
    _add_data_arguments(run).add_argument(
        "--labels", type=Path, help="with a model family: gold labels kept apart from the inputs (XTREME's test "
        "labels, evaluate.py's label folder), given to every task that takes a labels option and used to score "
        "the suite's runs as one submission")
    execution = run.add_argument_group("execution")
    execution.add_argument("--device", default="auto", help="auto (a GPU when torch sees one), cpu or cuda")
    execution.add_argument("--batch-size", type=int, help="batch size for models that batch (default: the model's)")
    execution.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    execution.add_argument("--threads", type=int, help="CPU threads for the model (default: the cores this "
                           "process may use, shared by the ranks of a torchrun on this machine)")
    execution.add_argument("--resume", action="store_true", help="reuse the units an interrupted run already saved")
    execution.add_argument("--dry-run", action="store_true",
                           help="print the plan (tasks, unique texts, estimated tokens, cache hits, device) and stop")
    generation = run.add_argument_group("generation (generative models)")
    generation.add_argument("--gen-kwargs", help="decoding options over the prompt template's, as lm-eval's "
                            "--gen_kwargs: max_new_tokens=64,temperature=0.7,top_p=0.9,seed=1,samples=4,"
                            "reasoning_tokens=512,stop=\\n (stop repeated for several; or a JSON object); "
                            "recorded in the result and the scorer signature")
    generation.add_argument("--system-prompt", help="the system prompt of a chat model (lm-eval's --system_instruction)")
    generation.add_argument("--log-samples", action="store_true",
                            help="keep each rendered prompt's text in instances.jsonl (its SHA-256 is always kept)")
    _add_cache_arguments(execution)
    _add_output_arguments(run)
    _add_statistics_arguments(run)

    score = commands.add_parser("score", help="score a predictions file made elsewhere, without a model")
    score.add_argument("task", help="task name, optionally with options: name:key=value,...")
    score.add_argument("--predictions", type=Path, required=True, help="predictions in the task's official format")
    score.add_argument("--name", help="label for the leaderboard (default: the predictions file name)")
    score.add_argument("--input-rules", choices=("strict", "official"), default="strict",
                       help="strict (default): refuse predictions that hide a mistake (ids of no question, ids "
                       "given twice, ...); official: score them as the official script does (recorded in the "
                       "result and the leaderboard as the task option input_rules=official)")
    _add_data_arguments(score)
    _add_output_arguments(score)
    _add_statistics_arguments(score)

    compare = commands.add_parser("compare", help="compare two runs on the same questions: differences, paired "
                                  "bootstrap intervals, permutation and McNemar tests")
    compare.add_argument("result_a", type=Path, help="a result.json (or its run folder)")
    compare.add_argument("result_b", type=Path, help="another result of the same task on the same data")
    _add_statistics_arguments(compare)
    compare.add_argument("--holm", action="store_true", help="Holm-adjust the per-language p-values, metric by metric")
    compare.add_argument("--json", action="store_true", help="machine-readable output")

    board = commands.add_parser("leaderboard", help="show the leaderboard")
    board_commands = board.add_subparsers(dest="board_command", required=True, metavar="ACTION")
    show = board_commands.add_parser("show", help="print the leaderboard as tables")
    show.add_argument("--file", "--leaderboard", dest="file", type=Path, default=DEFAULT_LEADERBOARD,
                      help=f"the leaderboard file (default: {DEFAULT_LEADERBOARD})")
    show.add_argument("--task", help="only this task")
    _add_width_argument(show)
    show.add_argument("--json", action="store_true", help="machine-readable output: the ranked groups, one per "
                      "scope (task, options, split, languages, limit, demo, data, scorer)")
    show.add_argument("--matrix", nargs="?", const="", metavar="METRIC",
                      help="print language-pair rows (e.g. MLQA G-XLT) as a matrix of METRIC (needs --task)")
    show.add_argument("--model", help="one table across tasks for the models whose label contains MODEL (any case)")
    show.add_argument("--csv", action="store_true", help="every number as CSV, one line per entry, subset and metric "
                      "(with --task, --model, --reported)")
    show.add_argument("--reported", action="store_true", help="also the papers' reported results (reported/*.json "
                      "beside the leaderboard file): shown apart, never ranked with the entries, not re-scored")
    page = board_commands.add_parser("page", help="write a self-contained HTML page of a leaderboard file, or "
                                     "serve it on this machine")
    page.add_argument("--leaderboard", "--file", dest="file", type=Path, default=DEFAULT_LEADERBOARD,
                      help=f"the leaderboard file (default: {DEFAULT_LEADERBOARD})")
    target = page.add_mutually_exclusive_group()
    target.add_argument("--output", type=Path, help="the HTML file to write (default: index.html beside the "
                        "leaderboard file)")
    target.add_argument("--serve", action="store_true", help="serve the page at http://127.0.0.1:PORT/ until "
                        "interrupted, read afresh on every reload")
    page.add_argument("--port", type=int, default=8000, help="with --serve (default: 8000)")

    cache = commands.add_parser("cache", help="the on-disk embedding cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    info = cache_commands.add_parser("info", help="cached models, entries and sizes")
    info.add_argument("--verify", action="store_true",
                      help="also encode a seeded sample of each shard again with the model that wrote it (loaded "
                      "as a run loads it) and compare: shards that disagree are listed and removed, exit status 2")
    _add_cache_arguments(info, with_switch=False)
    clear = cache_commands.add_parser("clear", help="delete cached embeddings")
    clear.add_argument("--model", help="only the model with this label (as `cache info` shows it)")
    _add_cache_arguments(clear, with_switch=False)

    validate = commands.add_parser("validate", help="check a result, leaderboard or predictions file (JSON or JSON "
                                   "lines) against its JSON Schema")
    validate.add_argument("file", type=Path, help="the file to check")
    validate.add_argument("--schema", help="schema name, a harness or plugin one (default: the schema the file "
                          "fits, the harness's own first; for JSON lines, the one its first line fits)")
    validate.add_argument("--rescore", action="store_true", help="a result: also recompute its scores from the "
                          "predictions it names, on the data of --data-dir (default: the folder it names), and refuse "
                          "any number they do not give")
    validate.add_argument("--data-dir", type=Path, help="with --rescore: the maintainer's copy of the benchmark files")
    validate.add_argument("--labels", type=Path, help="with --rescore: gold labels kept apart from the inputs "
                          "(XTREME's test labels: LABELS/{task}/test-{lang}.*), for the tasks that take them")

    submit = commands.add_parser("submit", help="leaderboard intake: score submission folders from their "
                                 "predictions and add the accepted ones")
    submit.add_argument("submissions", type=Path, nargs="+", metavar="FOLDER",
                        help="a submission folder (with submission.json) or a folder of them")
    submit.add_argument("--data-dir", type=Path, help="the benchmark files every submission is scored against "
                        "(default: the data home's, `harness data get`, else the tasks' demo data)")
    submit.add_argument("--labels", type=Path, help="gold labels kept apart from the inputs (XTREME's test labels: "
                        "LABELS/{task}/test-{lang}.*), for the tasks that take them")
    _add_output_arguments(submit)
    _add_statistics_arguments(submit)
    from harness.data import command as datacommand

    datacommand.add_parser(commands)
    _describe_commands(parser)
    _add_global_arguments_after(parser)
    return parser


def _add_global_arguments_after(parser: argparse.ArgumentParser) -> None:
    """The global options (-v, --log-level, --plugin) after the command too (``harness run ... -v``):
    every command's parser takes them into their own fields, which :func:`_globals` adds to the
    top parser's (a command's parser would otherwise overwrite them)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():  # not in each command's --help: `harness --help` says them
                sub.add_argument("--plugin", action="append", dest="plugin_after", default=argparse.SUPPRESS,
                                 help=argparse.SUPPRESS)
                sub.add_argument("-v", "--verbose", action="count", dest="verbose_after", default=argparse.SUPPRESS,
                                 help=argparse.SUPPRESS)
                sub.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                                 dest="log_level_after", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
                _add_global_arguments_after(sub)


def _globals(args: argparse.Namespace) -> None:
    """The global options given after the command, merged into those given before it."""
    args.verbose += getattr(args, "verbose_after", 0)
    args.plugin = [*args.plugin, *getattr(args, "plugin_after", [])]
    args.log_level = getattr(args, "log_level_after", None) or args.log_level


def _describe_commands(parser: argparse.ArgumentParser) -> None:
    """Each command's one-line help also heads its own ``--help`` page (argparse shows a
    command's ``help`` only in its parent's list)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                sub.description = sub.description or (helps.get(name) or "").capitalize()
                _describe_commands(sub)


def _cmd_list(args: argparse.Namespace) -> None:
    from harness.definitions.registry import Registry

    registry = Registry.discover()
    if args.name is not None:
        _show_task(args, registry)
        return
    if args.json:
        from harness.api import describe_task

        print(json.dumps({
            "tasks": {n: describe_task(n, registry).to_dict() for n in sorted(registry.tasks.entries)},
            "models": {n: {"summary": s.summary, "plugin": p.name} for n, (s, p) in sorted(registry.models.entries.items())},
            "suites": {n: {"tasks": list(s.tasks), "scored_by": s.scored_by, "plugin": p.name}
                       for n, (s, p) in sorted(registry.suites.entries.items())},
            "broken": [{"plugin": b.plugin.name, "reason": b.reason} for b in registry.broken],
            "conflicts": registry.conflicts(),
        }, indent=1, ensure_ascii=False))
        return
    print("Tasks:")
    width = _width(args)
    print(format_table(["name", "languages", "plugin", "summary"],
                       [[n, ",".join(s.languages), p.name, s.summary]
                        for n, (s, p) in sorted(registry.tasks.entries.items())], width))
    print("\nModels:")
    print(format_table(["name", "plugin", "summary"],
                       [[n, p.name, s.summary] for n, (s, p) in sorted(registry.models.entries.items())], width))
    if registry.suites.entries:
        print("\nSuites:")
        print(format_table(["name", "tasks", "scored as one by", "plugin"],
                           [[n, ",".join(s.tasks), s.scored_by or "-", p.name]
                            for n, (s, p) in sorted(registry.suites.entries.items())], width))
        if any(s.scored_by for s, _ in registry.suites.entries.values()):
            print("A suite scored as one runs with a model family: harness run SUITE @family.json --labels DIR")
    for line in registry.conflicts():
        print(f"warning: {line}", file=sys.stderr)


def _show_task(args: argparse.Namespace, registry: Registry) -> None:
    """``harness list TASK``: one task, all a user needs to run it (a task browser's page)."""
    from harness.api import describe_task

    info = describe_task(args.name, registry)
    if args.json:
        print(json.dumps({info.name: info.to_dict()}, indent=1, ensure_ascii=False, default=str))
        return
    print(f"{info.name}: {info.summary}")
    print(format_table(["field", "value"], [
        ["languages", ",".join(info.languages)], ["splits", ",".join(info.splits)],
        ["main metric", info.main_metric], ["scorer", info.scorer],
        ["model needs", info.needs + (f" (also: {', '.join(info.served_by[1:])}, adapted)"
                                      if len(info.served_by) > 1 else "")],
        ["benchmark", f"{info.benchmark} (harness data get {info.benchmark})" if info.benchmark else "-"],
        ["reference", info.reference or "-"], ["plugin", info.plugin]], _width(args)))
    print("\nOptions (TASK:name=value,...):")
    print(format_table(["name", "default", "type"], [[o.name, "-" if o.default is None else str(o.default), o.type]
                                                      for o in info.options] or [["(none)", "", ""]], _width(args)))
    print(f"\nData files ({len(info.data_files)}):")
    print("\n".join(f"  {path}" for path in info.data_files) if info.data_files else "  (none declared)")


def _report(outcome: Outcome, leaderboard_path: Path | None, width: int | None) -> None:
    result = outcome.result
    assert result is not None  # callers skip the outcomes of ranks other than 0
    data = result.data
    scope = "built-in demo data" if data.demo else data.source
    print(f"{result.task.name} / {result.model.label}  ({scope}, split {data.split})")
    metrics = list(dict.fromkeys(name for row in result.rows for name in row.metrics))
    print(format_table(["subset", *(unit_label(m, result.task.unit(m)) for m in metrics), "count"],
                       [[row.subset, *(format_score(row.metrics.get(m)) for m in metrics), str(row.count)]
                        for row in result.rows], width))
    samples = (result.diagnostics.get("generation") or {}).get("samples")
    spread = (f"  (over {len(samples['main_scores'])} samples: mean {format_score(samples['mean'])}, std "
              f"{format_score(samples['std'])})" if samples else "")
    print(f"main score: {unit_label(result.main_score.metric, result.task.unit(result.main_score.metric))} = "
          f"{format_score(result.main_score.value, result.main_score.interval)}{spread}")
    for note in result.notes:
        print(f"note: {note}")
    if outcome.resumed_units:
        print(f"resumed units: {', '.join(outcome.resumed_units)}")
    print(f"result: {outcome.result_path}")
    print(f"predictions: {result.predictions.path}")
    if leaderboard_path is not None:
        print(f"leaderboard: {leaderboard_path}")


def _languages_option(args: argparse.Namespace) -> tuple[str, ...] | None:
    """``--langs``, or the one pair ``--context-lang``/``--question-lang`` name."""
    if args.context_lang or args.question_lang:
        if not (args.context_lang and args.question_lang) or args.langs:
            raise HarnessError("--context-lang and --question-lang go together, and replace --langs")
        return (f"{args.context_lang}-{args.question_lang}",)
    return args.langs


def _output_arguments(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """The API's output keyword arguments, from the output and statistics options."""
    return {"output_dir": args.output_dir, "leaderboard": None if args.no_leaderboard else args.leaderboard,
            "bootstrap": args.bootstrap, "bootstrap_seed": args.bootstrap_seed, "command": ("harness", *argv)}


def _data_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The API's data keyword arguments, from the data options."""
    return {"data_dir": args.data_dir, "split": args.split, "langs": _languages_option(args), "limit": args.limit}


def _print_plan(plan: Any) -> None:
    print(f"model: {plan.model}  device: {plan.device}  precision: {plan.precision}  world size: {plan.world_size}")
    print(format_table(["task", "data", "split", "units", "questions"],
                       [[t["task"], t["source"], t["split"], ",".join(t["units"]),
                         str(t["statistics"].get("questions", "-"))] for t in plan.tasks]))
    for task in plan.tasks:
        if task.get("generation") is not None:
            _print_generation_plan(task["task"], task["generation"])
    if plan.encoding is None:
        if not any(task.get("generation") is not None for task in plan.tasks):
            print("encoding: none (the model is not an encoder)")
        return
    e = plan.encoding
    tokens = f"{e.estimated_tokens} tokens" if e.tokens_exact else f"~{e.estimated_tokens} tokens, estimated from a sample"
    print(f"encoding: {e.texts_requested} texts requested, {e.unique_texts} unique, {e.cache_hits} in the cache, "
          f"{e.to_encode} to encode ({tokens})")
    seconds = "unknown" if e.estimated_seconds is None else _duration(e.estimated_seconds)
    print(f"estimated encoding time: {seconds} ({e.calibration})")


def _print_generation_plan(task: str, g: Any) -> None:
    """A generative task's plan: requests, prompt tokens, the budget, the time, one rendered prompt."""
    tokens = ("prompt tokens unknown: the model cannot count them" if g.prompt_tokens is None else
              f"{g.prompt_tokens:,} prompt tokens" if g.tokens_exact else
              f"~{g.prompt_tokens:,} prompt tokens, estimated from a seeded sample")
    trace = f" after a trace of up to {g.reasoning_tokens:,}" if g.reasoning_tokens else ""
    print(f"generation ({task}): {g.requests:,} requests, {g.unique:,} unique, {g.cache_hits:,} in the cache, "
          f"{g.to_generate:,} to generate ({tokens}); up to {g.max_new_tokens:,} new tokens a request{trace}")
    seconds = "unknown" if g.estimated_seconds is None else _duration(g.estimated_seconds)
    print(f"estimated generation time: {seconds} ({g.calibration})")
    print("one rendered prompt:")
    print("\n".join(f"  | {line}" for line in g.example_prompt.splitlines()))


def _duration(seconds: float) -> str:
    """``3 h 05 min``, ``4 min 10 s``, ``12.5 s``: the precision an estimate deserves."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.1f} s"


def _cmd_run(args: argparse.Namespace, argv: Sequence[str], registry: Registry) -> None:
    """``harness run``: :func:`harness.api.evaluate` (or :func:`harness.api.plan`) with the options."""
    from harness import api

    if args.task in registry.suites.entries and args.task in registry.tasks.entries and not args.model.startswith("@"):
        _check_task_not_suite(args, registry)
    common = dict(model_args=args.model_args, labels=args.labels, device=args.device, batch_size=args.batch_size,
                  seed=args.seed, threads=args.threads, cache_dir=_cache_dir(args), gen_kwargs=args.gen_kwargs,
                  system_prompt=args.system_prompt, log_samples=args.log_samples,
                  registry=registry, **_data_arguments(args))
    if args.dry_run:
        for number, plan in enumerate(api.plan(args.task, args.model, **common)):
            if number:
                print()
            _print_plan(plan)
        return
    output = _output_arguments(args, argv)
    outcomes = api.evaluate(args.task, args.model, resume=args.resume, progress=not args.quiet, **common, **output)
    _report_all([o for o in outcomes if o.result_path is not None], output["leaderboard"], args)  # rank 0 reports


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
        raise HarnessError(f"{exc} (with one model, {args.task} is the task; the suite {args.task} runs a model "
                           f"family: harness run {args.task} @family.json --labels DIR)") from None


def _report_all(outcomes: Sequence[Outcome], leaderboard_path: Path | None, args: argparse.Namespace) -> None:
    """Each result's table, then, for several tasks, one summary table of their main scores; or
    with ``--json`` one JSON object for scripts."""
    if args.json:
        print(json.dumps({"results": [{"result_path": str(o.result_path), "result": o.result.to_dict()}
                                      for o in outcomes if o.result is not None],
                          "leaderboard": None if leaderboard_path is None else str(leaderboard_path)},
                         indent=1, ensure_ascii=False))
        return
    width = _width(args)
    for number, outcome in enumerate(outcomes):
        if number:
            print()
        _report(outcome, leaderboard_path, width)
    if len(outcomes) > 1:
        print("\nSummary:")
        print(format_table(["task", "options", "model", "main metric", "score"],
                           [[r.task.name, ",".join(f"{k}={v}" for k, v in r.task.options.items()) or "-",
                             r.model.label, unit_label(r.main_score.metric, r.task.unit(r.main_score.metric)),
                             format_score(r.main_score.value)]
                            for r in (o.result for o in outcomes) if r is not None], width))


def _cmd_score(args: argparse.Namespace, argv: Sequence[str], registry: Registry) -> None:
    """``harness score``: :func:`harness.api.score` with the options."""
    from harness import api

    output = _output_arguments(args, argv)
    outcome = api.score(args.task, args.predictions, label=args.name, input_rules=args.input_rules, registry=registry,
                        **_data_arguments(args), **output)
    _report_all([outcome], output["leaderboard"], args)


def _cmd_leaderboard(args: argparse.Namespace) -> None:
    from harness import leaderboard

    if not args.file.exists():
        raise HarnessError(f"no leaderboard at {args.file} yet: run `harness run` first, or pass --leaderboard")
    board = leaderboard.load(args.file)
    if args.board_command == "page":
        _page(args, board)
    elif args.matrix is not None:
        if not args.task:
            raise HarnessError("--matrix needs --task")
        print(leaderboard.render_matrix(board, args.task, args.matrix or None))
    else:
        _show(args, board)


def _show(args: argparse.Namespace, board: Leaderboard) -> None:
    """``leaderboard show``: the ranked tables (or one model's table across tasks), then the
    papers' reported results when asked; as CSV or JSON for scripts."""
    from harness import leaderboard

    reported = leaderboard.select(leaderboard.load_reported(leaderboard.reported_folder(args.file)), args.task,
                                  args.model) if args.reported else ()
    if args.reported and not reported:
        print(f"no reported results{f' for task {args.task!r}' if args.task else ''} in "
              f"{leaderboard.reported_folder(args.file)}", file=sys.stderr)
    if args.csv:
        print(leaderboard.board_csv(board, args.task, args.model, reported), end="")
    elif args.json:
        print(leaderboard.render_json(board, args.task, reported if args.reported else None, args.model))
    else:
        tables = (leaderboard.render_model(board, args.model, _width(args)) if args.model
                  else leaderboard.render(board, args.task, _width(args)))
        print(tables if not reported else f"{tables}\n\n{leaderboard.render_reported(reported, _width(args))}")


def _p_value(p: float | None) -> str:
    return "-" if p is None else f"{p:.4g}"


def _cmd_compare(args: argparse.Namespace) -> None:
    from harness.results.compare import compare

    if args.bootstrap < 1:
        raise HarnessError("--bootstrap: a comparison needs at least 1 resample")
    comparison = compare(args.result_a, args.result_b, _bootstrap_settings(args), use_holm=args.holm)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=1, ensure_ascii=False))
        return
    a, b = comparison.a, comparison.b
    print(f"{a.task.name} ({a.task.scorer_signature}): A = {a.model.label} ({a.run_id}), B = {b.model.label} ({b.run_id})")
    confidence = f"{comparison.settings.confidence:.0%}"
    header = ["subset", "metric", "A", "B", "A - B", f"{confidence} interval", "p (permutation)", "p (McNemar)"]
    if args.holm:
        header.append("p (Holm)")
    rows = []
    for r in comparison.rows:
        interval = "-" if r.interval is None else f"[{format_score(r.interval[0])}, {format_score(r.interval[1])}]"
        cells = [r.subset, r.metric, format_score(r.a), format_score(r.b), format_score(r.difference), interval,
                 _p_value(r.p_permutation), _p_value(None if r.mcnemar is None else r.mcnemar.p_value)]
        rows.append(cells + ([_p_value(r.p_holm)] if args.holm else []))
    print(format_table(header, rows))
    methods = sorted({r.permutation for r in comparison.rows})
    print(f"paired bootstrap: {comparison.settings.resamples} resamples (seed {comparison.settings.seed}) of each "
          f"unit's questions{_cluster_rows(comparison.rows)}; permutation test: sign flips, {', '.join(methods)}")


def _cluster_rows(rows: list[RowComparison]) -> str:
    """Which rows resampled and swapped clusters of parallel questions whole, and which clusters."""
    from harness.stats.bootstrap import INSTANCE

    by_clusters: dict[str, list[str]] = {}
    for row in rows:
        if row.resampled != INSTANCE and row.subset not in by_clusters.setdefault(row.resampled, []):
            by_clusters[row.resampled].append(row.subset)
    return "".join(f", {', '.join(subsets)} by {name} (whole across units, in the swaps too)"
                   for name, subsets in by_clusters.items())


def _page(args: argparse.Namespace, board: Leaderboard) -> None:
    from harness import leaderboard
    from harness.files.io import check_folder, write_atomic

    if not args.serve:
        output = args.output or args.file.with_name("index.html")
        if output.is_dir():
            raise HarnessError(f"--output {output} is a folder: name the HTML file to write")
        check_folder(output.parent, "--output's folder")
        reported = leaderboard.load_reported(leaderboard.reported_folder(args.file))
        html = leaderboard.page(board, reported).encode("utf-8")
        write_atomic(output, lambda handle: handle.write(html))
        count = len(board.entries)
        papers = f"; {len(reported)} reported in the papers beside it" if reported else ""
        print(f"{output}: the page of {args.file} ({count} {'entry' if count == 1 else 'entries'}{papers})")
        return
    server = leaderboard.page_server(args.file, args.port)
    print(f"serving the page of {args.file} at http://{server.server_address[0]}:{server.server_address[1]}/ "
          "(Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C is how serving ends, not an interrupted run
        print("stopped serving")
    finally:
        server.server_close()


def _cmd_cache(args: argparse.Namespace) -> None:
    from harness.models import cache

    root = args.cache_dir or cache.default_root()
    if args.cache_command == "info":
        items = cache.describe(root)
        print(f"embedding cache: {root}")
        if not items:
            print("(empty)")
            return
        print(format_table(["model", "key", "entries", "MiB"],
                           [[i["label"], i["key"], "-" if i["entries"] is None else str(i["entries"]),
                             f"{i['bytes'] / 2**20:.1f}"] for i in items]))
        print(f"total: {sum(i['bytes'] for i in items) / 2**20:.1f} MiB")
        if args.verify:
            _cmd_cache_verify(root)
    else:
        removed = cache.clear(root, args.model)
        if args.model and not removed:
            raise HarnessError(f"no cached model labelled '{args.model}' in {root} (see `harness cache info`)")
        print(f"removed the cached embeddings and checkpoints of {len(removed)} model(s) from {root}")


def _cmd_cache_verify(root: Path) -> None:
    """``cache info --verify``: every cached model loaded again, its shards' samples encoded again
    (:func:`harness.models.cache.verify`); exit status 2 when a shard disagrees, for a maintainer's script."""
    from harness.definitions.model import Runtime, apply_threads, default_threads
    from harness.definitions.registry import Registry
    from harness.models import cache
    from harness.models.compose import rebuild_encoder

    registry = Registry.discover()
    runtime = Runtime(cache_dir=root, threads=default_threads(), registry=registry)

    def load(identity: dict[str, Any]) -> Model:
        model = rebuild_encoder(identity, registry, runtime)
        apply_threads(runtime)
        return model

    checks = cache.verify(root, load)
    print()
    if not checks:
        print("verify: no shards to verify")
        return
    print(format_table(["model", "shard", "verdict", "detail"],
                       [[c.label, str(c.shard.relative_to(root)), c.verdict, c.detail] for c in checks]))
    counts = {verdict: sum(c.verdict == verdict for c in checks) for verdict in ("agrees", "disagrees", "not verified")}
    print(f"verify: {len(checks)} shards; {', '.join(f'{verdict}: {n}' for verdict, n in counts.items())}")
    if counts["disagrees"]:
        raise HarnessError(f"{counts['disagrees']} of {len(checks)} cached shards disagree with the model that wrote "
                           "them and were removed (listed above); the next run encodes their texts again")


def _cmd_validate(args: argparse.Namespace) -> None:
    from harness.definitions.validation import InferredSchema, infer_schema, validate
    from harness.files.io import iter_jsonl, read_json
    from harness.results.result import RESULT_SCHEMA

    if args.file.is_dir():
        raise HarnessError(f"{args.file} is a folder: validate its files one by one")
    try:
        records = [(None, read_json(args.file))]
    except InputError as exc:
        if "Extra data" not in exc.reason:
            raise
        records = list(iter_jsonl(args.file))  # JSON lines: each line is one record
    inferred = InferredSchema(args.schema) if args.schema else infer_schema(records[0][1])
    if not inferred.fits and inferred.alike:
        closest = ", ".join((inferred.name, *inferred.alike))
        raise HarnessError(f"{args.file}: fits no schema; the closest, equally: {closest} (name one with --schema "
                           "to see what breaks it)")
    schema = inferred.name
    for line, instance in records:
        validate(instance, schema, file=args.file, record=None if line is None else f"line {line}")
    if args.rescore:
        from harness.running.intake import rescore_result

        if schema != RESULT_SCHEMA:
            raise HarnessError(f"{args.file}: --rescore checks a run result, not a {schema} file")
        rescored = rescore_result(args.file, args.data_dir, labels=args.labels)
        print(f"{args.file}: valid run-result; its {len(rescored.result.rows)} rows are what its predictions score")
        return
    alike = f" (the same shape as {', '.join(inferred.alike)})" if inferred.alike else ""
    print(f"{args.file}: valid {schema}" + ("" if records[0][0] is None else f" ({len(records)} lines)") + alike)


def _cmd_submit(args: argparse.Namespace, argv: Sequence[str], registry: Registry) -> None:
    from harness.running.intake import take_submissions
    from harness.running.settings import output_options

    output = output_options(progress=not args.quiet, **_output_arguments(args, argv))
    verdicts = take_submissions(args.submissions, data_dir=args.data_dir, output=output, registry=registry,
                                labels=args.labels)
    if args.json:
        print(json.dumps({"verdicts": [
            {"submission": str(v.submission), "accepted": v.accepted, "reason": v.reason or None,
             "results": [str(o.result_path) for o in v.outcomes]} for v in verdicts],
            "leaderboard": str(output.leaderboard)}, indent=1, ensure_ascii=False))
    for verdict in verdicts if not args.json else ():
        if verdict.accepted:
            scores = ", ".join(f"{o.result.task.name} {o.result.main_score.metric} "
                               f"{format_score(o.result.main_score.value)}" for o in verdict.outcomes if o.result)
            print(f"accepted  {verdict.submission}: {scores}")
        else:
            print(f"rejected  {verdict.submission}: {one_line(verdict.reason)}")
    rejected = sum(not v.accepted for v in verdicts)
    if not args.json:
        print(f"{len(verdicts) - rejected} accepted, {rejected} rejected; leaderboard: {output.leaderboard}")
    if rejected:  # exit 2, so that a maintainer's script notices; the accepted ones are on the board
        raise HarnessError(f"{rejected} of {len(verdicts)} submissions rejected (verdicts above)")


class _ToStderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a record comes (a handler keeping the stream it
    was made with would write to a stale one once stderr is redirected)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr)


def _configure_logging(args: argparse.Namespace) -> None:
    """The ``harness`` loggers to stderr at the level asked for (warnings only by default)."""
    level = (args.log_level.upper() if args.log_level
             else ("WARNING", "INFO", "DEBUG")[min(args.verbose, 2)])
    logger = logging.getLogger("harness")
    logger.setLevel(level)
    if not logger.handlers:
        handler = _ToStderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)


def _one_line_warnings(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _registry() -> Registry:
    """The plugins of this command: the installed ones and those named by ``--plugin`` (through
    ``$HARNESS_PLUGINS``, see :func:`main`); the run's composite models resolve their inner models
    in it too."""
    from harness.definitions.registry import Registry

    return Registry.discover()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harness`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # the shell asking for completions (see the README)
        import argcomplete

        argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    _globals(args)
    command_line = COMMAND_LINE.set(True)  # the library API's errors keep naming the flags typed here
    warnings.showwarning = _one_line_warnings
    _configure_logging(args)
    saved_plugins = os.environ.get(PLUGINS_ENV)
    if args.plugin:  # the command's registry loads them, and so do the look-ups that discover plugins themselves
        os.environ[PLUGINS_ENV] = ",".join(filter(None, [saved_plugins, *args.plugin]))
    try:
        if args.command == "list":
            _cmd_list(args)
        elif args.command == "run":
            _cmd_run(args, argv, _registry())
        elif args.command == "score":
            _cmd_score(args, argv, _registry())
        elif args.command == "compare":
            _cmd_compare(args)
        elif args.command == "leaderboard":
            _cmd_leaderboard(args)
        elif args.command == "cache":
            _cmd_cache(args)
        elif args.command == "validate":
            _cmd_validate(args)
        elif args.command == "submit":
            _cmd_submit(args, argv, _registry())
        elif args.command == "data":
            from harness.data import command as datacommand

            datacommand.main(args, _registry())
    except HarnessError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: finished units are saved; re-run with --resume to continue", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `harness list | head`: the reader left; say nothing, as `ls | head` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit writes nowhere
        return 141  # 128 + SIGPIPE, the status a shell gives a command killed by the closed pipe
    finally:
        COMMAND_LINE.reset(command_line)
        if saved_plugins is None:
            os.environ.pop(PLUGINS_ENV, None)
        else:
            os.environ[PLUGINS_ENV] = saved_plugins
    return 0


if __name__ == "__main__":
    sys.exit(main())
