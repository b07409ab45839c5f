"""The options of a run, declared once: each one's API keyword, command-line flag, default, help,
argparse group, and the API functions and commands that take it.

``harness run`` and :func:`harness.evaluate` take the same options (``--data-dir`` is
``data_dir``), as ``harness score`` and :func:`harness.score` do. The command line's flags are
made from :data:`RUN_OPTIONS` (:func:`harness.cli.parsing.add_options`), the API functions'
docstrings list their keywords from it, and an API error names a flag's keyword through it
(:func:`keyword_of`). The API functions still spell their signatures out, so that a reader, an
editor and a type checker see them; ``tests/harness/running/test_run_options.py`` checks that every
keyword, default and flag agrees with its declaration.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.files.locations import DEFAULT_LEADERBOARD, DEFAULT_OUTPUT_DIR
from harness.stats import DEFAULT_RESAMPLES


@dataclass(frozen=True)
class RunOption:
    """One option of a run, for the API and the command line at once."""

    #: The API keyword (``data_dir``), or for a flag of the command line only its argparse dest.
    name: str
    help: str
    #: The API functions that take it as a keyword (``evaluate``, ``plan``, ``score``).
    functions: tuple[str, ...] = ()
    #: The commands whose parser has its flag (``run``, ``cache info``, ...).
    commands: tuple[str, ...] = ()
    #: The API keyword's default.
    default: Any = None
    #: The command line's flag; ``None`` for a keyword of the API only (``registry``).
    flag: str | None = None
    #: The flag's default where the command line's differs from the API's (``--output-dir``
    #: writes to ``results/``; the API writes nothing unless asked); ``None``: the API's.
    cli_default: Any = None
    #: The argparse group the flag is listed under in ``--help`` (``None``: the command's own).
    group: str | None = None
    #: Reads the flag's text (argparse's ``type``); ``None``: the text as it is.
    parse: Callable[[str], Any] | None = None
    #: A flag that takes no value (``store_true``).
    switch: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    #: How the API spells the flag where it is not its keyword (``--quiet`` is ``progress=False``).
    api_spelling: str | None = None
    #: The keyword's help in the API's docstrings where the API's meaning differs from the flag's.
    api_help: str | None = None

    @property
    def keyword(self) -> str | None:
        """The API keyword, or ``None`` for a flag of the command line only."""
        return self.name if self.functions else None

    @property
    def command_default(self) -> Any:
        """The flag's default on the command line."""
        if self.cli_default is not None:
            return self.cli_default
        return False if self.switch else self.default

    def argparse_keywords(self) -> dict[str, Any]:
        """``add_argument``'s keywords for the flag (its dest stays argparse's, from the flag)."""
        keywords: dict[str, Any] = {"help": self.help.replace("%", "%%")}
        if self.switch:
            keywords["action"] = "store_true"
        else:
            keywords["default"] = self.command_default
        for key, value in (("type", self.parse), ("metavar", self.metavar), ("choices", self.choices)):
            if value is not None:
                keywords[key] = value
        return keywords


def languages(text: str) -> tuple[str, ...]:
    """``--langs``: comma-separated codes; an empty list is refused (it must not mean "all")."""
    codes = tuple(lang.strip() for lang in text.split(",") if lang.strip())
    if not codes:
        raise argparse.ArgumentTypeError(f"no language code in '{text}' (leave --langs out for all languages)")
    return codes


def resamples(text: str) -> int:
    """``--bootstrap``: a number of resamples, 0 (none) or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: the number of resamples is 0 (none) or more")
    return value


_RUN_SCORE = ("run", "score")
_OUTPUT = ("run", "score", "submit")

#: Every option of a run and a scoring (and the table width other commands share), in the order
#: ``--help`` lists them.
RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption(
        "model_args",
        "model options as a JSON object (merged over name:key=value)",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--model-args",
    ),
    RunOption(
        "label",
        "label for the leaderboard (default: the predictions file name)",
        functions=("evaluate", "score"),
        commands=("score",),
        flag="--name",
        api_help="the label of the model (or predictions) in the results and the leaderboard (default: the "
        "model's own label; for predictions, the file name)",
    ),
    RunOption(
        "input_rules",
        "strict (default): refuse predictions that hide a mistake (ids of no question, ids "
        "given twice, ...); official: score them as the official script does (recorded in the result and "
        "the leaderboard as the task option input_rules=official)",
        functions=("score",),
        commands=("score",),
        default="strict",
        flag="--input-rules",
        choices=("strict", "official"),
    ),
    RunOption(
        "data_dir",
        "folder with the benchmark files in their official layout (default: the benchmark in "
        "the data home, `harness data get`, else the task's built-in demo data)",
        functions=("evaluate", "plan", "score"),
        commands=_RUN_SCORE,
        flag="--data-dir",
        group="data",
        parse=Path,
    ),
    RunOption(
        "split",
        "data split (default: the task's first split)",
        functions=("evaluate", "plan", "score"),
        commands=_RUN_SCORE,
        flag="--split",
        group="data",
    ),
    RunOption(
        "langs",
        "comma-separated language codes (default: all); a language pair as first-second, e.g. es-en (context-question)",
        functions=("evaluate", "plan", "score"),
        commands=_RUN_SCORE,
        flag="--langs",
        group="data",
        parse=languages,
    ),
    RunOption(
        "context_lang",
        "with --question-lang: the one (context, question) pair of a cross-lingual task, "
        "same as --langs CONTEXT-QUESTION",
        commands=_RUN_SCORE,
        flag="--context-lang",
        group="data",
        api_spelling="langs",
    ),
    RunOption(
        "question_lang",
        "see --context-lang",
        commands=_RUN_SCORE,
        flag="--question-lang",
        group="data",
        api_spelling="langs",
    ),
    RunOption(
        "limit",
        "only the first N questions per language (quick checks; recorded in the result and the leaderboard)",
        functions=("evaluate", "plan", "score"),
        commands=_RUN_SCORE,
        flag="--limit",
        group="data",
        parse=int,
    ),
    RunOption(
        "labels",
        "with a model family: gold labels kept apart from the inputs (XTREME's test labels, "
        "evaluate.py's label folder), given to every task that takes a labels option and used to score the "
        "suite's runs as one submission",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--labels",
        group="data",
        parse=Path,
    ),
    RunOption(
        "device",
        "auto (a GPU when torch sees one), cpu or cuda",
        functions=("evaluate", "plan"),
        commands=("run",),
        default="auto",
        flag="--device",
        group="execution",
    ),
    RunOption(
        "batch_size",
        "batch size for models that batch (default: the model's)",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--batch-size",
        group="execution",
        parse=int,
    ),
    RunOption(
        "seed",
        "random seed (default: 0)",
        functions=("evaluate", "plan"),
        commands=("run",),
        default=0,
        flag="--seed",
        group="execution",
        parse=int,
    ),
    RunOption(
        "threads",
        "CPU threads for the model (default: the cores this process may use, shared by the ranks "
        "of a torchrun on this machine)",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--threads",
        group="execution",
        parse=int,
    ),
    RunOption(
        "resume",
        "reuse the units an interrupted run already saved",
        functions=("evaluate",),
        commands=("run",),
        default=False,
        flag="--resume",
        group="execution",
        switch=True,
    ),
    RunOption(
        "dry_run",
        "print the plan (tasks, unique texts, estimated tokens, cache hits, device) and stop",
        commands=("run",),
        flag="--dry-run",
        group="execution",
        switch=True,
    ),
    RunOption(
        "gen_kwargs",
        "decoding options over the prompt template's, as lm-eval's --gen_kwargs: "
        "max_new_tokens=64,temperature=0.7,top_p=0.9,seed=1,samples=4,reasoning_tokens=512,stop=\\n (stop "
        "repeated for several; or a JSON object); recorded in the result and the scorer signature",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--gen-kwargs",
        group="generation (generative models)",
    ),
    RunOption(
        "system_prompt",
        "the system prompt of a chat model (lm-eval's --system_instruction)",
        functions=("evaluate", "plan"),
        commands=("run",),
        flag="--system-prompt",
        group="generation (generative models)",
    ),
    RunOption(
        "log_samples",
        "keep each rendered prompt's text in instances.jsonl (its SHA-256 is always kept)",
        functions=("evaluate", "plan"),
        commands=("run",),
        default=False,
        flag="--log-samples",
        group="generation (generative models)",
        switch=True,
    ),
    RunOption(
        "cache_dir",
        "embedding cache folder (default: $HARNESS_CACHE_DIR or ~/.cache/xlqa-harness)",
        functions=("evaluate", "plan"),
        commands=("run", "cache info", "cache clear"),
        flag="--cache-dir",
        group="execution",
        parse=Path,
        api_help="embedding cache folder (default: none, nothing cached; the command line's default is "
        "$HARNESS_CACHE_DIR or ~/.cache/xlqa-harness)",
    ),
    RunOption(
        "no_cache",
        "neither read nor write the embedding cache",
        commands=("run",),
        flag="--no-cache",
        group="execution",
        switch=True,
        api_spelling="cache_dir=None",
    ),
    RunOption(
        "output_dir",
        f"where results go (default: {DEFAULT_OUTPUT_DIR}/ in the current folder)",
        functions=("evaluate", "score"),
        commands=_OUTPUT,
        flag="--output-dir",
        cli_default=DEFAULT_OUTPUT_DIR,
        group="output",
        parse=Path,
        api_help="write the results, predictions and per-instance records there, in the results layout "
        f"(default: none, nothing written; the command line's default is {DEFAULT_OUTPUT_DIR}/)",
    ),
    RunOption(
        "leaderboard",
        f"leaderboard file to update (default: {DEFAULT_LEADERBOARD} in the current folder)",
        functions=("evaluate", "score"),
        commands=_OUTPUT,
        flag="--leaderboard",
        cli_default=DEFAULT_LEADERBOARD,
        group="output",
        parse=Path,
        api_help="leaderboard file to add the results to (default: none; the command line's default is "
        f"{DEFAULT_LEADERBOARD})",
    ),
    RunOption(
        "no_leaderboard",
        "do not update the leaderboard",
        commands=_OUTPUT,
        flag="--no-leaderboard",
        group="output",
        switch=True,
        api_spelling="leaderboard=None",
    ),
    RunOption(
        "progress",
        "no progress bars",
        functions=("evaluate",),
        commands=_OUTPUT,
        default=True,
        flag="--quiet",
        cli_default=False,
        group="output",
        switch=True,
        api_spelling="progress=False",
        api_help="show progress bars (the command line's --quiet: no progress bars)",
    ),
    RunOption(
        "json",
        "print the results as JSON on stdout (one object: results, each with its result file's "
        "content and path), not tables",
        commands=_OUTPUT,
        flag="--json",
        group="output",
        switch=True,
    ),
    RunOption(
        "wide",
        "print tables whole (default: fitted to the terminal, 100 columns when not a terminal, long cells cut with …)",
        commands=(*_OUTPUT, "list", "leaderboard show"),
        flag="--wide",
        switch=True,
    ),
    RunOption(
        "bootstrap",
        f"bootstrap resamples behind the 95% intervals (default: {DEFAULT_RESAMPLES}; 0: no intervals, "
        "except in compare and leaderboard pair, which need at least 1)",
        functions=("evaluate", "score"),
        commands=(*_OUTPUT, "compare", "leaderboard pair"),
        default=DEFAULT_RESAMPLES,
        flag="--bootstrap",
        group="statistics",
        parse=resamples,
        metavar="N",
    ),
    RunOption(
        "bootstrap_seed",
        "seed of the resampling (default: 0)",
        functions=("evaluate", "score"),
        commands=(*_OUTPUT, "compare", "leaderboard pair"),
        default=0,
        flag="--bootstrap-seed",
        group="statistics",
        parse=int,
    ),
    RunOption(
        "command",
        "what the results record as the command that ran (default: this process's)",
        functions=("evaluate", "score"),
    ),
    RunOption(
        "registry",
        "the installed plugins to use (default: those discovered now, "
        "harness.definitions.registry.Registry.discover())",
        functions=("evaluate", "plan", "score"),
    ),
)


def options_of(*, function: str | None = None, command: str | None = None) -> tuple[RunOption, ...]:
    """The declared options an API function or a command takes, in :data:`RUN_OPTIONS`' order."""
    return tuple(
        o
        for o in RUN_OPTIONS
        if (function is None or function in o.functions) and (command is None or command in o.commands)
    )


def keyword_of(flag: str) -> str | None:
    """How the API spells a declared flag (``--data-dir``: ``data_dir``; ``--quiet``:
    ``progress=False``), or ``None`` for a flag not declared here."""
    for option in RUN_OPTIONS:
        if option.flag == flag:
            return option.api_spelling or option.keyword
    return None


#: The command that calls each API function, whose flags its docstring names.
COMMAND_OF = {"evaluate": "run", "plan": "run", "score": "score"}


def keywords_doc(function: str, names: Iterable[str]) -> str:
    """The docstring section that lists ``function``'s keywords ``names`` with their help, and
    with their flags where its command (:data:`COMMAND_OF`) has them."""
    by_name = {o.name: o for o in options_of(function=function)}
    lines = [
        f"Keyword options (declared in :mod:`harness.running.run_options`; the flags are harness "
        f"{COMMAND_OF[function]}'s):"
    ]
    for name in names:
        option = by_name[name]
        flag = f"{option.flag}; " if option.flag and COMMAND_OF[function] in option.commands else ""
        lines.extend(
            textwrap.wrap(
                f"{name} ({flag}default {option.default!r}): {option.api_help or option.help}",
                100,
                initial_indent="    ",
                subsequent_indent="        ",
                break_on_hyphens=False,
                break_long_words=False,
            )
        )
    return "\n".join(lines)
