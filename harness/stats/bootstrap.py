"""Percentile bootstrap intervals over questions, resampled within each unit, vectorised.

One ``numpy.random.Generator`` seeded with ``seed`` draws, for each unit in the table's order,
one index matrix ``rng.integers(0, n, (resamples, n))`` -- exactly the draws
``scipy.stats.bootstrap`` makes for a multi-sample statistic whose samples are the units, so the
two agree (a test checks it). Each unit's matrix is drawn once and used for every metric and row
that reads the unit (and, in a paired comparison, for both runs), then dropped, so memory holds
one unit's resamples at a time (in slices of rows for a large unit). The interval is the ``(1 - confidence) / 2`` and
``(1 + confidence) / 2`` quantiles of the resampled statistic (linear interpolation, as scipy's
``method="percentile"``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError
from harness.stats.records import InstanceTable
from harness.stats.statistics import RowStatistics, Statistic, UnitStatistic, gathered, row_slices, unit_sizes

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class BootstrapSettings:
    """How intervals are computed; recorded in the result so they can be reproduced."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self) -> None:
        if self.resamples < 0:
            raise HarnessError("--bootstrap must be 0 (no intervals) or a positive number of resamples")
        if not 0 < self.confidence < 1:
            raise HarnessError("the confidence level must be between 0 and 1")


def unit_draws(table: InstanceTable, settings: BootstrapSettings) -> Iterator[tuple[str, np.ndarray]]:
    """``(unit, index matrix)`` for every unit of ``table`` in order, from one seeded generator."""
    rng = np.random.default_rng(settings.seed)
    for name, unit in table.units.items():
        yield name, rng.integers(0, len(unit), (settings.resamples, len(unit)))


def resample(tables: Sequence[InstanceTable], statistics: Sequence[Statistic],
             settings: BootstrapSettings) -> list[list[np.ndarray]]:
    """For each table (runs on the same questions: the same draws for all), each statistic's
    values over the resamples: ``out[table][statistic]`` of shape ``(resamples,)``."""
    leaves: dict[str, list[UnitStatistic]] = {}
    for statistic in statistics:
        for leaf in statistic.leaves():
            if leaf not in leaves.setdefault(leaf.unit, []):
                leaves[leaf.unit].append(leaf)
    values: list[dict[UnitStatistic, np.ndarray]] = [{} for _ in tables]
    for unit, indices in unit_draws(tables[0], settings):
        if unit not in leaves:
            continue
        for table, out in zip(tables, values):
            parts: dict[UnitStatistic, list[np.ndarray]] = {leaf: [] for leaf in leaves[unit]}
            for rows in row_slices(*indices.shape):
                resampled = gathered(table.unit(unit), indices[rows])
                for leaf in leaves[unit]:
                    parts[leaf].append(leaf.on_unit(resampled))
            out.update({leaf: np.concatenate(chunks) for leaf, chunks in parts.items()})
    sizes = unit_sizes(tables[0])
    return [[statistic.combine(out, sizes) for statistic in statistics] for out in values]


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap samples (linear interpolation between order statistics)."""
    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha])
    return float(low), float(high)


def row_intervals(table: InstanceTable, rows: RowStatistics,
                  settings: BootstrapSettings) -> dict[str, dict[str, tuple[float, float]]]:
    """Every declared row metric's interval: ``subset -> metric -> (low, high)``."""
    keys = [(subset, metric) for subset, metrics in rows.items() for metric in metrics]
    if not keys or settings.resamples == 0:
        return {}
    samples = resample([table], [rows[s][m] for s, m in keys], settings)[0]
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for (subset, metric), values in zip(keys, samples):
        out.setdefault(subset, {})[metric] = percentile_interval(values, settings.confidence)
    return out
