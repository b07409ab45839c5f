"""``harness list``: the installed tasks, models and suites, or everything about one task."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import add_options
from harness.cli.parsing import width as _width
from harness.display.tables import format_table

if TYPE_CHECKING:
    from harness.definitions.registry import Registry


def add_parsers(commands: Any) -> None:
    """The ``list`` command, under the top parser's ``commands``."""
    listing = commands.add_parser("list", help="list tasks, models and suites from installed plugins, or show one task")
    listing.add_argument(
        "name",
        nargs="?",
        metavar="TASK",
        help="show this task: languages, splits, scorer, options "
        "with their defaults, the capability a model needs, its data files",
    )
    listing.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output (tasks with their options, capabilities and data files)",
    )
    add_options(listing, "list")


def run(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness.definitions.registry import Registry

    registry = Registry.discover()
    if args.name is not None:
        _show_task(args, registry)
        return
    if args.json:
        from harness.api import describe_task

        print(
            json.dumps(
                {
                    "tasks": {n: describe_task(n, registry).to_dict() for n in sorted(registry.tasks.entries)},
                    "models": {
                        n: {"summary": s.summary, "plugin": p.name}
                        for n, (s, p) in sorted(registry.models.entries.items())
                    },
                    "suites": {
                        n: {"tasks": list(s.tasks), "scored_by": s.scored_by, "plugin": p.name}
                        for n, (s, p) in sorted(registry.suites.entries.items())
                    },
                    "broken": [{"plugin": b.plugin.name, "reason": b.reason} for b in registry.broken],
                    "conflicts": registry.conflicts(),
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        return
    print("Tasks:")
    width = _width(args)
    print(
        format_table(
            ["name", "languages", "plugin", "summary"],
            [[n, ",".join(s.languages), p.name, s.summary] for n, (s, p) in sorted(registry.tasks.entries.items())],
            width,
        )
    )
    print("\nModels:")
    print(
        format_table(
            ["name", "plugin", "summary"],
            [[n, p.name, s.summary] for n, (s, p) in sorted(registry.models.entries.items())],
            width,
        )
    )
    if registry.suites.entries:
        print("\nSuites:")
        print(
            format_table(
                ["name", "tasks", "scored as one by", "plugin"],
                [
                    [n, ",".join(s.tasks), s.scored_by or "-", p.name]
                    for n, (s, p) in sorted(registry.suites.entries.items())
                ],
                width,
            )
        )
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
    print(
        format_table(
            ["field", "value"],
            [
                ["languages", ",".join(info.languages)],
                *(
                    [["editions", ", ".join(f"{e.name} ({len(e.languages)} languages)" for e in info.editions)]]
                    if info.editions
                    else []
                ),
                ["splits", ",".join(info.splits)],
                ["main metric", info.main_metric],
                ["scorer", info.scorer],
                [
                    "model needs",
                    info.needs
                    + (f" (also: {', '.join(info.served_by[1:])}, adapted)" if len(info.served_by) > 1 else ""),
                ],
                ["benchmark", f"{info.benchmark} (harness data get {info.benchmark})" if info.benchmark else "-"],
                ["reference", info.reference or "-"],
                ["plugin", info.plugin],
            ],
            _width(args),
        )
    )
    print("\nOptions (TASK:name=value,...):")
    print(
        format_table(
            ["name", "default", "type"],
            [[o.name, "-" if o.default is None else str(o.default), o.type] for o in info.options]
            or [["(none)", "", ""]],
            _width(args),
        )
    )
    print(f"\nData files ({len(info.data_files)}):")
    print("\n".join(f"  {path}" for path in info.data_files) if info.data_files else "  (none declared)")
