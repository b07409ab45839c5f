"""``harness leaderboard show``, ``page`` and ``pair``: the board as tables, CSV or JSON, as a web
page, and its neighbours compared question by question."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import add_options
from harness.cli.parsing import width as _width
from harness.errors import HarnessError
from harness.files.locations import DEFAULT_LEADERBOARD

if TYPE_CHECKING:
    from harness.leaderboard import Leaderboard


def add_parsers(commands: Any) -> None:
    """The ``leaderboard`` command and its actions, under the top parser's ``commands``."""
    board = commands.add_parser("leaderboard", help="show the leaderboard")
    board_commands = board.add_subparsers(dest="board_command", required=True, metavar="ACTION")
    show = board_commands.add_parser("show", help="print the leaderboard as tables")
    _board_file(show)
    show.add_argument("--task", help="only this task")
    add_options(show, "leaderboard show")
    show.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: the ranked groups, one per "
        "scope (task, options, split, languages, limit, demo, data, scorer)",
    )
    show.add_argument(
        "--matrix",
        nargs="?",
        const="",
        metavar="METRIC",
        help="print language-pair rows (e.g. MLQA G-XLT) as a matrix of METRIC (needs --task)",
    )
    show.add_argument("--model", help="one table across tasks for the models whose label contains MODEL (any case)")
    show.add_argument(
        "--csv",
        action="store_true",
        help="every number as CSV, one line per entry, subset and metric (with --task, --model, --reported)",
    )
    show.add_argument(
        "--reported",
        action="store_true",
        help="also the papers' reported results (reported/*.json "
        "beside the leaderboard file): shown apart, never ranked with the entries, not re-scored",
    )
    page = board_commands.add_parser(
        "page", help="write a self-contained HTML page of a leaderboard file, or serve it on this machine"
    )
    _board_file(page, "--leaderboard", "--file")
    target = page.add_mutually_exclusive_group()
    target.add_argument(
        "--output", type=Path, help="the HTML file to write (default: index.html beside the leaderboard file)"
    )
    target.add_argument(
        "--serve",
        action="store_true",
        help="serve the page at http://127.0.0.1:PORT/ until interrupted, read afresh on every reload",
    )
    page.add_argument("--port", type=int, default=8000, help="with --serve (default: 8000)")
    pair = board_commands.add_parser(
        "pair",
        help="compare every two entries ranked next to each other question by question (paired "
        "bootstrap, as harness compare) and keep the comparisons in the board, where they decide the ties",
    )
    _board_file(pair)
    pair.add_argument(
        "--data-dir",
        type=Path,
        help="for results without their per-instance records beside them (a shipped board's): the benchmark "
        "files their predictions are scored again on (default: the folder each result names)",
    )
    add_options(pair, "leaderboard pair", grouped=False)


def _board_file(parser: argparse.ArgumentParser, *flags: str) -> None:
    """The leaderboard file an action reads, ``--file`` or ``--leaderboard`` (``flags``: the
    order help shows them in)."""
    parser.add_argument(
        *(flags or ("--file", "--leaderboard")),
        dest="file",
        type=Path,
        default=DEFAULT_LEADERBOARD,
        help=f"the leaderboard file (default: {DEFAULT_LEADERBOARD})",
    )


def run(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness import leaderboard

    if not args.file.exists():
        raise HarnessError(f"no leaderboard at {args.file} yet: run `harness run` first, or pass --leaderboard")
    board = leaderboard.load(args.file)
    if args.board_command == "page":
        _page(args, board)
    elif args.board_command == "pair":
        _pair(args, board)
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

    reported = (
        leaderboard.select(leaderboard.load_reported(leaderboard.reported_folder(args.file)), args.task, args.model)
        if args.reported
        else ()
    )
    if args.reported and not reported:
        print(
            f"no reported results{f' for task {args.task!r}' if args.task else ''} in "
            f"{leaderboard.reported_folder(args.file)}",
            file=sys.stderr,
        )
    if args.csv:
        print(leaderboard.board_csv(board, args.task, args.model, reported), end="")
    elif args.json:
        print(leaderboard.render_json(board, args.task, reported if args.reported else None, args.model))
    else:
        tables = (
            leaderboard.render_model(board, args.model, _width(args))
            if args.model
            else leaderboard.render(board, args.task, _width(args))
        )
        print(tables if not reported else f"{tables}\n\n{leaderboard.render_reported(reported, _width(args))}")


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
    print(
        f"serving the page of {args.file} at http://{server.server_address[0]!s}:{server.server_address[1]}/ "
        "(Ctrl-C stops)"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C is how serving ends, not an interrupted run
        print("stopped serving")
    finally:
        server.server_close()


def _pair(args: argparse.Namespace, board: Leaderboard) -> None:
    """``leaderboard pair``: a line per pair of neighbours as it is compared, then the board written."""
    from harness import leaderboard
    from harness.cli.parsing import bootstrap_settings, plugins
    from harness.leaderboard.rendering import paired_summary
    from harness.running.intake import instance_table

    if args.bootstrap < 1:
        raise HarnessError("--bootstrap: a paired comparison needs at least 1 resample")
    registry = plugins()

    def report(p: leaderboard.Pairing) -> None:
        names = f"{p.above.scope.task}: {p.above.model.label} vs {p.below.model.label}"
        if p.paired is None:
            print(f"{names}: not compared ({p.skipped}); overlap decides", flush=True)
            return
        verdict = "tied" if p.paired.tied else "ordered"
        summary = paired_summary(p.paired)
        print(f"{names}: {p.paired.metric} {summary}: {verdict}{' (kept)' if p.reused else ''}", flush=True)

    done = leaderboard.pair_neighbours(
        board,
        args.file.parent,
        bootstrap_settings(args),
        lambda result, folder: instance_table(result, folder, args.data_dir, registry),
        registry,
        report,
    )
    made = [p.paired for p in done if p.paired is not None]
    # handled: every pair of neighbours, and every comparison the board held (those of entries no
    # longer neighbours go); one another process stores meanwhile stays
    handled = [(p.above.run_id, p.below.run_id) for p in done] + [(p.run_a, p.run_b) for p in board.paired]
    leaderboard.set_paired(args.file, made, handled)
    compared = sum(p.paired is not None for p in done)
    print(f"{args.file}: {compared} of {len(done)} pairs of neighbours compared question by question")
