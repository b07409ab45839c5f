"""Bootstrap intervals of all 49 MLQA G-XLT dev cells (and the G-XLT and XLT means): the
harness's vectorised bootstrap against a plain Python loop over the same draws.

Harness: ``row_intervals`` with MLQA's declared row statistics -- one index matrix per cell
(``resamples x questions``), each cell's F1 and EM means for all resamples at once, the summary
rows combined from the cells' vectors; the cells' rows draw questions within the cell, the
summary rows (G-XLT, XLT) draw MLQA's questions whole across the cells (clusters of parallel
questions, stratified by the languages each is in), so each cell is resampled twice.
Baseline: the same draws (the same seeded generators, the same index matrices, drawn outside the
timing for the loop), then for every cell, kind of draw and resample a Python ``sum`` over the
drawn questions' values, the summaries averaged per resample, and the same percentile function.
Both sides give every interval; they must agree within 1e-9.

Data: the real MLQA v1 dev files under ``--data-dir`` (the folder holding ``MLQA_V1``).
Predictions (``--predictions``): ``perturbed`` (default: gold answers, a quarter cut by one word,
a quarter replaced), ``gold`` or ``empty``; scoring them is not timed. The sides run alternately
``--repeat`` times; min and median seconds per side and their ratio are printed.

    python benchmarks/bench_bootstrap.py --data-dir ../shared/data/mlqa
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

from harness.definitions.task import DataRequest
from harness.qa.task import SpanQAData
from harness.stats.bootstrap import BootstrapSettings, draws, percentile_interval, row_intervals
from harness.stats.clusters import Clusters
from harness.stats.records import InstanceTable
from harness.stats.statistics import Macro, Mean, RowStatistics
from harness_mlqa.task import MLQA

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, alternate, report

Intervals = dict[str, dict[str, tuple[float, float]]]


def predictions(data: SpanQAData, kind: str, seed: int) -> dict[str, dict[str, str]]:
    rng = random.Random(seed)
    out: dict[str, dict[str, str]] = {}
    for name, unit in data.units.items():
        out[name] = {}
        for question in unit.questions:
            gold, r = question.answers[0], rng.random()
            if kind == "empty":
                out[name][question.id] = ""
            elif kind == "gold" or r >= 0.5:
                out[name][question.id] = gold
            else:
                out[name][question.id] = " ".join(gold.split()[:-1]) if r < 0.25 else "a wrong answer"
    return out


def loop_intervals(
    table: InstanceTable,
    rows: RowStatistics,
    drawn: dict[Clusters | None, dict[str, np.ndarray]],
    settings: BootstrapSettings,
) -> Intervals:
    """The plain loop: per kind of draw, cell and metric, per resample, a Python sum over the
    drawn questions (each cell once per kind); then each row per resample from its cells."""
    cells: dict[tuple[Clusters | None, str, str], list[float]] = {}
    for clusters, by_unit in drawn.items():
        for unit in table.units:
            drawn_rows = by_unit[unit].tolist()
            for metric in ("f1", "exact_match"):
                column = table.unit(unit).values[metric].tolist()
                cells[clusters, unit, metric] = [100.0 * sum(column[i] for i in row) / len(row) for row in drawn_rows]
    out: Intervals = {}
    for subset, metrics in rows.items():
        for metric, statistic in metrics.items():
            leaves = statistic.leaves()
            assert all(isinstance(leaf, Mean) for leaf in leaves) and isinstance(statistic, (Macro, Mean))
            clusters = settings.clusters_of(statistic)
            samples = [
                sum(cells[clusters, leaf.unit, leaf.metric][b] for leaf in leaves) / len(leaves)
                for b in range(settings.resamples)
            ]
            out.setdefault(subset, {})[metric] = percentile_interval(np.asarray(samples), settings.confidence)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="folder holding the real MLQA_V1")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--predictions", choices=("perturbed", "gold", "empty"), default="perturbed")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running both sides once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.data_dir / "MLQA_V1").is_dir():
        raise SystemExit(f"--data-dir {args.data_dir}: no MLQA_V1 folder there (the real MLQA data is needed)")

    task = MLQA(mode="gxlt")
    data = task.load(DataRequest(args.data_dir, args.split, task.check_languages(None)))
    evaluation = task.evaluate(data, predictions(data, args.predictions, args.seed))
    table = InstanceTable.from_instances(evaluation.instances)
    rows = task.statistics(table)
    settings = BootstrapSettings(args.resamples, seed=args.seed)
    kinds = dict.fromkeys(
        settings.clusters_of(statistic) for metrics in rows.values() for statistic in metrics.values()
    )
    drawn = {clusters: dict(draws(table, clusters, settings)) for clusters in kinds}
    questions = sum(len(unit) for unit in table.units.values())
    print(
        f"MLQA {args.split} G-XLT: {len(table.units)} cells, {questions} questions, {args.predictions} predictions, "
        f"{len(rows)} rows x 2 metrics, {args.resamples} resamples"
    )

    harness = Side("harness (vectorised)", lambda: row_intervals(table, rows, settings))
    baseline = Side("plain Python loop", lambda: loop_intervals(table, rows, drawn, settings))
    alternate([baseline, harness], args.repeat)
    report(baseline, harness)
    worst = max(
        abs(a - b)
        for subset in rows
        for metric in rows[subset]
        for a, b in zip(harness.result[subset][metric], baseline.result[subset][metric])
    )
    if worst > 1e-9:
        raise SystemExit(f"the two sides' intervals differ by {worst}")
    gxlt = harness.result["gxlt"]["f1"]
    print(
        f"intervals agree (largest difference {worst:.1e}); G-XLT F1 "
        f"{next(r for r in evaluation.rows if r.subset == 'gxlt').metrics['f1']:.2f} [{gxlt[0]:.2f}, {gxlt[1]:.2f}]"
    )


if __name__ == "__main__":
    main()
