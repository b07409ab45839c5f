"""What every command's parser shares: the parser whose refusals are one line, the declared run
options as flags (:func:`add_options`) and back as the API's keywords (:func:`given_keywords`),
the table width, and the plugins a command sees."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from harness.display.tables import terminal_width
from harness.errors import did_you_mean, one_line
from harness.running.run_options import options_of

if TYPE_CHECKING:
    from harness.definitions.registry import Registry
    from harness.stats.bootstrap import BootstrapSettings


class Parser(argparse.ArgumentParser):
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
            what = cast(str, action.metavar or "command").lower()  # a subcommand's metavar is one word
            self.exit(
                2,
                f"error: unknown {what} '{one_line(value)}'{did_you_mean(value, action.choices)} "
                f"(known: {', '.join(action.choices)})\n",
            )
        super()._check_value(action, value)

    def error(self, message: str) -> Any:
        self.exit(2, f"error: {self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def add_options(parser: argparse.ArgumentParser, command: str, grouped: bool = True) -> None:
    """The flags of the run options :data:`~harness.running.run_options.RUN_OPTIONS` declares for
    ``command``, in the declaration's order, each under its argparse group (or, not ``grouped``,
    straight on a command that lists its few options together)."""
    groups: dict[str, Any] = {}
    for option in options_of(command=command):
        assert option.flag is not None  # a declared command takes the option by its flag
        where: Any = parser
        if grouped and option.group is not None:
            if option.group not in groups:
                groups[option.group] = parser.add_argument_group(option.group)
            where = groups[option.group]
        where.add_argument(option.flag, **option.argparse_keywords())


def given_keywords(args: argparse.Namespace, function: str, *groups: str) -> dict[str, Any]:
    """The keywords of API ``function`` that this command's flags give as they are
    (``--data-dir``'s value as ``data_dir``), those of ``groups`` if named. A flag that stands for
    its keyword in another way (``--quiet``, ``--no-cache``, ``--name``, ``--context-lang``) is
    the command's to read."""
    return {
        option.name: getattr(args, option.name)
        for option in options_of(function=function, command=args.command)
        if option.flag == "--" + option.name.replace("_", "-") and (not groups or option.group in groups)
    }


def output_keywords(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """The API's output keyword arguments, from the output and statistics options."""
    return {
        **given_keywords(args, "score", "output", "statistics"),
        "leaderboard": None if args.no_leaderboard else args.leaderboard,
        "command": ("harness", *argv),
    }


def width(args: argparse.Namespace) -> int | None:
    return None if getattr(args, "wide", False) else terminal_width()


def bootstrap_settings(args: argparse.Namespace) -> BootstrapSettings:
    from harness.stats.bootstrap import BootstrapSettings

    return BootstrapSettings(resamples=args.bootstrap, seed=args.bootstrap_seed)


def plugins() -> Registry:
    """The plugins of this command: the installed ones and those named by ``--plugin`` (through
    ``$HARNESS_PLUGINS``, see :func:`harness.cli.main`); the run's composite models resolve their
    inner models in it too."""
    from harness.definitions.registry import Registry

    return Registry.discover()
