"""``harness compare``: two runs on the same questions, their differences with paired bootstrap
intervals, permutation and McNemar tests."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import add_options, bootstrap_settings, plugins
from harness.display.tables import format_score, format_table
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.stats.paired import RowComparison


def add_parsers(commands: Any) -> None:
    """The ``compare`` command, under the top parser's ``commands``."""
    compare = commands.add_parser(
        "compare",
        help="compare two runs on the same questions: differences, paired "
        "bootstrap intervals, permutation and McNemar tests",
    )
    compare.add_argument("result_a", type=Path, help="a result.json (or its run folder)")
    compare.add_argument("result_b", type=Path, help="another result of the same task on the same data")
    add_options(compare, "compare")
    compare.add_argument(
        "--data-dir",
        type=Path,
        help="for a result without its per-instance records beside it (the shipped board's, a submission's): "
        "the benchmark files its predictions are scored again on (default: the folder the result names)",
    )
    compare.add_argument("--holm", action="store_true", help="Holm-adjust the per-language p-values, metric by metric")
    compare.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness.results.compare import compare
    from harness.running.intake import instance_table

    if args.bootstrap < 1:
        raise HarnessError("--bootstrap: a comparison needs at least 1 resample")
    registry = plugins()
    comparison = compare(
        args.result_a,
        args.result_b,
        bootstrap_settings(args),
        use_holm=args.holm,
        registry=registry,
        tables=lambda result, folder: instance_table(result, folder, args.data_dir, registry),
    )
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=1, ensure_ascii=False))
        return
    a, b = comparison.a, comparison.b
    print(
        f"{a.task.name} ({a.task.scorer_signature}): A = {a.model.label} ({a.run_id}), B = {b.model.label} ({b.run_id})"
    )
    confidence = f"{comparison.settings.confidence:.0%}"
    header = ["subset", "metric", "A", "B", "A - B", f"{confidence} interval", "p (permutation)", "p (McNemar)"]
    if args.holm:
        header.append("p (Holm)")
    rows = []
    for r in comparison.rows:
        interval = "-" if r.interval is None else f"[{format_score(r.interval[0])}, {format_score(r.interval[1])}]"
        cells = [
            r.subset,
            r.metric,
            format_score(r.a),
            format_score(r.b),
            format_score(r.difference),
            interval,
            _p_value(r.p_permutation),
            _p_value(None if r.mcnemar is None else r.mcnemar.p_value),
        ]
        rows.append(cells + ([_p_value(r.p_holm)] if args.holm else []))
    print(format_table(header, rows))
    methods = sorted({r.permutation for r in comparison.rows})
    print(
        f"paired bootstrap: {comparison.settings.resamples} resamples (seed {comparison.settings.seed}) of each "
        f"unit's questions{_cluster_rows(comparison.rows)}; permutation test: sign flips, {', '.join(methods)}"
    )


def _cluster_rows(rows: list[RowComparison]) -> str:
    """Which rows resampled and swapped clusters of parallel questions whole, and which clusters."""
    from harness.stats.bootstrap import INSTANCE

    by_clusters: dict[str, list[str]] = {}
    for row in rows:
        if row.resampled != INSTANCE and row.subset not in by_clusters.setdefault(row.resampled, []):
            by_clusters[row.resampled].append(row.subset)
    return "".join(
        f", {', '.join(subsets)} by {name} (whole across units, in the swaps too)"
        for name, subsets in by_clusters.items()
    )


def _p_value(p: float | None) -> str:
    return "-" if p is None else f"{p:.4g}"
