"""``harness validate`` and ``harness submit``: a file checked against its JSON Schema (and a
result's numbers against its predictions), and submission folders scored into the leaderboard."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cli.parsing import add_options, output_keywords, plugins
from harness.display.tables import format_score
from harness.errors import HarnessError, InputError, one_line


def add_parsers(commands: Any) -> None:
    """The ``validate`` and ``submit`` commands, under the top parser's ``commands``."""
    validate = commands.add_parser(
        "validate", help="check a result, leaderboard or predictions file (JSON or JSON lines) against its JSON Schema"
    )
    validate.add_argument("file", type=Path, help="the file to check")
    validate.add_argument(
        "--schema",
        help="schema name, a harness or plugin one (default: the schema the file "
        "fits, the harness's own first; for JSON lines, the one its first line fits)",
    )
    validate.add_argument(
        "--rescore",
        action="store_true",
        help="a result: also recompute its scores from the "
        "predictions it names, on the data of --data-dir (default: the folder it names), and refuse "
        "any number they do not give",
    )
    validate.add_argument("--data-dir", type=Path, help="with --rescore: the maintainer's copy of the benchmark files")
    validate.add_argument(
        "--labels",
        type=Path,
        help="with --rescore: gold labels kept apart from the inputs "
        "(XTREME's test labels: LABELS/{task}/test-{lang}.*), for the tasks that take them",
    )

    submit = commands.add_parser(
        "submit", help="leaderboard intake: score submission folders from their predictions and add the accepted ones"
    )
    submit.add_argument(
        "submissions",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="a submission folder (with submission.json) or a folder of them",
    )
    submit.add_argument(
        "--data-dir",
        type=Path,
        help="the benchmark files every submission is scored against "
        "(default: the data home's, `harness data get`, else the tasks' demo data)",
    )
    submit.add_argument(
        "--labels",
        type=Path,
        help="gold labels kept apart from the inputs (XTREME's test labels: "
        "LABELS/{task}/test-{lang}.*), for the tasks that take them",
    )
    add_options(submit, "submit")


def validate(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness.definitions.validation import InferredSchema, infer_schema, validate
    from harness.files.io import iter_jsonl, read_json
    from harness.results.result import RESULT_SCHEMA

    if args.file.is_dir():
        raise HarnessError(f"{args.file} is a folder: validate its files one by one")
    try:
        records: list[tuple[int | None, Any]] = [(None, read_json(args.file))]
    except InputError as exc:
        if "Extra data" not in exc.reason:
            raise
        records = list(iter_jsonl(args.file))  # JSON lines: each line is one record
    inferred = InferredSchema(args.schema) if args.schema else infer_schema(records[0][1])
    if not inferred.fits and inferred.alike:
        closest = ", ".join((inferred.name, *inferred.alike))
        raise HarnessError(
            f"{args.file}: fits no schema; the closest, equally: {closest} (name one with --schema "
            "to see what breaks it)"
        )
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


def submit(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness.running.intake import take_submissions
    from harness.running.settings import output_options

    output = output_options(progress=not args.quiet, **output_keywords(args, argv))
    verdicts = take_submissions(
        args.submissions, data_dir=args.data_dir, output=output, registry=plugins(), labels=args.labels
    )
    if args.json:
        print(
            json.dumps(
                {
                    "verdicts": [
                        {
                            "submission": str(v.submission),
                            "accepted": v.accepted,
                            "reason": v.reason or None,
                            "results": [str(o.result_path) for o in v.outcomes],
                        }
                        for v in verdicts
                    ],
                    "leaderboard": str(output.leaderboard),
                },
                indent=1,
                ensure_ascii=False,
            )
        )
    for verdict in verdicts if not args.json else ():
        if verdict.accepted:
            scores = ", ".join(
                f"{o.result.task.name} {o.result.main_score.metric} {format_score(o.result.main_score.value)}"
                for o in verdict.outcomes
                if o.result
            )
            print(f"accepted  {verdict.submission}: {scores}")
        else:
            print(f"rejected  {verdict.submission}: {one_line(verdict.reason)}")
    rejected = sum(not v.accepted for v in verdicts)
    if not args.json:
        print(f"{len(verdicts) - rejected} accepted, {rejected} rejected; leaderboard: {output.leaderboard}")
    if rejected:  # exit 2, so that a maintainer's script notices; the accepted ones are on the board
        raise HarnessError(f"{rejected} of {len(verdicts)} submissions rejected (verdicts above)")
