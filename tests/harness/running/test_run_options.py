"""The run options are declared once (:mod:`harness.running.run_options`): the API functions'
keywords, the command line's flags and their help agree with the declaration, and a command's
flags arrive at the API as the keywords they stand for."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from typing import Any

import pytest

import harness.api
from harness.cli import build_parser, main
from harness.files.locations import DEFAULT_LEADERBOARD, DEFAULT_OUTPUT_DIR
from harness.running.run_options import RUN_OPTIONS, keyword_of, options_of

FUNCTIONS = ("evaluate", "plan", "score")
#: The flags of the commands that are not run options: the command's own arguments and the global ones.
NOT_DECLARED = {
    "run": {"-h", "--help", "--plugin", "-v", "--verbose", "--log-level"},
    "score": {"-h", "--help", "--plugin", "-v", "--verbose", "--log-level", "--predictions"},
}


def keyword_parameters(function: str) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(getattr(harness.api, function)).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    }


def subparser(command: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = build_parser()
    for word in command.split():
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_keyword_is_declared_with_its_default(function: str) -> None:
    parameters = keyword_parameters(function)
    declared = {o.name: o for o in options_of(function=function)}
    assert set(parameters) == set(declared)
    assert {name: p.default for name, p in parameters.items()} == {name: o.default for name, o in declared.items()}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_docstring_gives_every_keyword_its_help(function: str) -> None:
    doc = " ".join((getattr(harness.api, function).__doc__ or "").split())
    for option in options_of(function=function):
        assert " ".join((option.api_help or option.help).split()) in doc, option.name


def test_every_declared_flag_is_in_its_commands_parsers_with_its_default_and_help() -> None:
    commands = {command for option in RUN_OPTIONS for command in option.commands}
    assert commands == {
        "run",
        "score",
        "submit",
        "compare",
        "cache info",
        "cache clear",
        "list",
        "leaderboard show",
        "leaderboard pair",
    }
    for command in sorted(commands):
        actions = {flag: a for a in subparser(command)._actions for flag in a.option_strings}
        for option in options_of(command=command):
            assert option.flag in actions, (command, option.flag)
            action = actions[option.flag]
            assert action.default == option.command_default, (command, option.flag)
            assert action.help.replace("%%", "%") == option.help, (command, option.flag)


@pytest.mark.parametrize("command", ["run", "score"])
def test_every_flag_of_run_and_score_is_declared(command: str) -> None:
    flags = {flag for action in subparser(command)._actions for flag in action.option_strings}
    assert flags - NOT_DECLARED[command] == {o.flag for o in options_of(command=command)}


def test_the_defaults_the_command_line_keeps() -> None:
    """The command line writes results and a leaderboard unless told not to; the API writes nothing."""
    args = build_parser().parse_args(["run", "xquad", "oracle"])
    assert (args.output_dir, args.leaderboard, args.quiet, args.bootstrap, args.device) == (
        DEFAULT_OUTPUT_DIR,
        DEFAULT_LEADERBOARD,
        False,
        1000,
        "auto",
    )
    evaluate = keyword_parameters("evaluate")
    assert (evaluate["output_dir"].default, evaluate["leaderboard"].default, evaluate["progress"].default) == (
        None,
        None,
        True,
    )


def test_how_the_api_spells_a_flag() -> None:
    assert {
        flag: keyword_of(flag)
        for flag in (
            "--data-dir",
            "--name",
            "--quiet",
            "--no-cache",
            "--no-leaderboard",
            "--context-lang",
            "--question-lang",
            "--dry-run",
            "--predictions",
        )
    } == {
        "--data-dir": "data_dir",
        "--name": "label",
        "--quiet": "progress=False",
        "--no-cache": "cache_dir=None",
        "--no-leaderboard": "leaderboard=None",
        "--context-lang": "langs",
        "--question-lang": "langs",
        "--dry-run": None,
        "--predictions": None,
    }


def test_run_flags_arrive_as_keywords(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def evaluate(tasks: str, model: str, **keywords: Any) -> list[Any]:
        seen.update(keywords, tasks=tasks, model=model)
        return []

    monkeypatch.setattr(harness.api, "evaluate", evaluate)
    argv = [
        "run",
        "xquad",
        "oracle",
        "--model-args",
        "{}",
        "--data-dir",
        "d",
        "--split",
        "dev",
        "--langs",
        "de,en",
        "--limit",
        "3",
        "--labels",
        "l",
        "--device",
        "cpu",
        "--batch-size",
        "4",
        "--seed",
        "2",
        "--threads",
        "1",
        "--resume",
        "--gen-kwargs",
        "max_new_tokens=8",
        "--system-prompt",
        "S",
        "--log-samples",
        "--no-cache",
        "--output-dir",
        "o",
        "--no-leaderboard",
        "--quiet",
        "--bootstrap",
        "5",
        "--bootstrap-seed",
        "7",
    ]
    assert main(argv) == 0
    registry = seen.pop("registry")
    assert "xquad" in registry.tasks.entries
    assert seen == {
        "tasks": "xquad",
        "model": "oracle",
        "model_args": "{}",
        "data_dir": Path("d"),
        "split": "dev",
        "langs": ("de", "en"),
        "limit": 3,
        "labels": Path("l"),
        "device": "cpu",
        "batch_size": 4,
        "seed": 2,
        "threads": 1,
        "resume": True,
        "gen_kwargs": "max_new_tokens=8",
        "system_prompt": "S",
        "log_samples": True,
        "cache_dir": None,
        "output_dir": Path("o"),
        "leaderboard": None,
        "progress": False,
        "bootstrap": 5,
        "bootstrap_seed": 7,
        "command": ("harness", *argv),
    }


def test_score_flags_arrive_as_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def score(task: str, predictions: Path, **keywords: Any) -> Any:
        seen.update(keywords, task=task, predictions=predictions)
        raise harness.api.HarnessError("stop here")  # nothing to report

    monkeypatch.setattr(harness.api, "score", score)
    argv = [
        "score",
        "xquad",
        "--predictions",
        "p.json",
        "--name",
        "N",
        "--input-rules",
        "official",
        "--context-lang",
        "de",
        "--question-lang",
        "en",
    ]
    assert main(argv) == 2
    seen.pop("registry")
    assert seen == {
        "task": "xquad",
        "predictions": Path("p.json"),
        "label": "N",
        "input_rules": "official",
        "data_dir": None,
        "split": None,
        "langs": ("de-en",),
        "limit": None,
        "output_dir": DEFAULT_OUTPUT_DIR,
        "leaderboard": DEFAULT_LEADERBOARD,
        "bootstrap": 1000,
        "bootstrap_seed": 0,
        "command": ("harness", *argv),
    }
