"""The ``harness`` command: list, run, score, validate and show the leaderboard.

Every user mistake ends as one line on stderr and exit code 2 (see :mod:`harness.errors`).

Each command lives in a module of this package, which makes its parser (``add_parsers``) and
does its work (a function of the parsed arguments and the command line); :data:`COMMANDS` names
them in ``harness --help``'s order. The options of a run are declared once, in
:mod:`harness.running.run_options`, and become the flags of ``run``, ``score``, ``submit``,
``compare`` and ``cache`` there (:func:`harness.cli.parsing.add_options`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from harness import __version__
from harness.cli import board, cache, compare, intake, listing, run
from harness.cli.parsing import Parser, plugins
from harness.data import command as datacommand
from harness.definitions.registry import DISABLE_PLUGINS_ENV, PLUGINS_ENV
from harness.display.wording import COMMAND_LINE
from harness.errors import HarnessError, one_line


def _data(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """``harness data``: its parser and its work are the data room's (:mod:`harness.data.command`)."""
    datacommand.main(args, plugins())


#: Each command's work, by name; ``PARSERS`` add the commands' parsers in ``harness --help``'s order.
COMMANDS: dict[str, Callable[[argparse.Namespace, Sequence[str]], None]] = {
    "list": listing.run,
    "run": run.run,
    "score": run.score,
    "compare": compare.run,
    "leaderboard": board.run,
    "cache": cache.run,
    "validate": intake.validate,
    "submit": intake.submit,
    "data": _data,
}
PARSERS: tuple[Callable[[Any], None], ...] = (
    listing.add_parsers,
    run.add_parsers,
    compare.add_parsers,
    board.add_parsers,
    cache.add_parsers,
    intake.add_parsers,
    datacommand.add_parser,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="harness",
        description="Score models on cross-lingual QA benchmarks exactly as the official scripts do.",
        epilog="--plugin, -v and --log-level may also follow the command (harness run ... -v).",
    )
    parser.add_argument("--version", action="version", version=f"xlqa-harness {__version__}")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help=f"also load this plugin module, installed or not (repeatable; same as ${PLUGINS_ENV}); "
        f"${DISABLE_PLUGINS_ENV} lists plugins not to load",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say what the harness does on stderr (-v: steps and timings, -vv: debug)",
    )
    parser.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), help="the same by name (overrides -v)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for add_parsers in PARSERS:
        add_parsers(commands)
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
                sub.add_argument(
                    "--plugin", action="append", dest="plugin_after", default=argparse.SUPPRESS, help=argparse.SUPPRESS
                )
                sub.add_argument(
                    "-v",
                    "--verbose",
                    action="count",
                    dest="verbose_after",
                    default=argparse.SUPPRESS,
                    help=argparse.SUPPRESS,
                )
                sub.add_argument(
                    "--log-level",
                    choices=("debug", "info", "warning", "error"),
                    dest="log_level_after",
                    default=argparse.SUPPRESS,
                    help=argparse.SUPPRESS,
                )
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


class _ToStderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a record comes (a handler keeping the stream it
    was made with would write to a stale one once stderr is redirected)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr)


def _configure_logging(args: argparse.Namespace) -> None:
    """The ``harness`` loggers to stderr at the level asked for (warnings only by default)."""
    level = args.log_level.upper() if args.log_level else ("WARNING", "INFO", "DEBUG")[min(args.verbose, 2)]
    logger = logging.getLogger("harness")
    logger.setLevel(level)
    if not logger.handlers:
        handler = _ToStderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)


def _one_line_warnings(
    message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    print(f"warning: {message}", file=sys.stderr)


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
        COMMANDS[args.command](args, argv)
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
