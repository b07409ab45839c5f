"""Percentile bootstrap intervals over questions, vectorised.

A row of one unit (a language, a pair) resamples the unit's questions; so does a row over
several units whose statistic declares no clusters, unit by unit. One
``numpy.random.Generator`` seeded with ``seed`` draws, for each unit in the table's order, one
index matrix ``rng.integers(0, n, (resamples, n))`` -- exactly the draws ``scipy.stats.bootstrap``
makes for a multi-sample statistic whose samples are the units, so the two agree (a test checks
it). A row over several units of parallel data (its statistic declares the task's clusters)
resamples clusters instead: a generator seeded alike draws ``rng.integers(0, n, (resamples, n))``
cluster numbers for each stratum of ``n`` clusters in turn (:mod:`harness.stats.clusters`), and a
unit's index matrix holds the drawn clusters' instances in it; where every cluster is one
instance these are the within-unit draws, number for number.

Each unit's matrix is drawn once per kind of draw and used for every metric and row that reads
the unit that way (and, in a paired comparison, for both runs), then dropped, so memory holds one
unit's resamples at a time (in slices of rows for a large unit), besides the clusters drawn. The
interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled
statistic (linear interpolation, as scipy's ``method="percentile"``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.errors import HarnessError
from harness.stats import DEFAULT_RESAMPLES
from harness.stats.records import InstanceTable
from harness.stats.statistics import RowStatistics, Statistic, UnitStatistic, gathered, row_slices, unit_sizes
from harness.stats.strata import stratify

if TYPE_CHECKING:
    from harness.stats.clusters import Clusters

DEFAULT_CONFIDENCE = 0.95


#: A percentile interval ``(low, high)`` of a metric.
Interval = tuple[float, float]
#: What an interval's resamples drew where they drew each unit's instances within the unit (every
#: per-language row, and every row of data that is not parallel); otherwise they drew clusters
#: whole across units, and the row records the clusters' name (:class:`harness.stats.clusters.Clusters`).
INSTANCE = "instance"


@dataclass(frozen=True)
class RowIntervals(Mapping[str, Interval]):
    """One row's intervals by metric, and what their resamples drew (:data:`INSTANCE` or the
    name of the clusters), so that a result can say which resampling unit each interval used."""

    intervals: dict[str, Interval]
    resampled: str

    def __getitem__(self, metric: str) -> Interval:
        return self.intervals[metric]

    def __iter__(self) -> Iterator[str]:
        return iter(self.intervals)

    def __len__(self) -> int:
        return len(self.intervals)


@dataclass(frozen=True)
class BootstrapSettings:
    """How intervals are computed; recorded in the result so they can be reproduced."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE
    #: Whether rows over parallel data resample the clusters their statistics declare; False
    #: resamples every row within its units, as results written before clusters were (their
    #: intervals are checked so when such a result is rescored).
    resample_clusters: bool = True

    def __post_init__(self) -> None:
        if self.resamples < 0:
            raise HarnessError("--bootstrap must be 0 (no intervals) or a positive number of resamples")
        if not 0 < self.confidence < 1:
            raise HarnessError("the confidence level must be between 0 and 1")

    def clusters_of(self, statistic: Statistic) -> Clusters | None:
        """The clusters the resamples of a row with this statistic draw; None: within each unit."""
        return statistic.clusters if self.resample_clusters else None


def unit_draws(table: InstanceTable, settings: BootstrapSettings) -> Iterator[tuple[str, np.ndarray]]:
    """``(unit, index matrix)`` for every unit of ``table`` in order, from one seeded generator."""
    rng = np.random.default_rng(settings.seed)
    for name, unit in table.units.items():
        yield name, rng.integers(0, len(unit), (settings.resamples, len(unit)))


def cluster_draws(
    table: InstanceTable, clusters: Clusters, settings: BootstrapSettings
) -> Iterator[tuple[str, np.ndarray]]:
    """``(unit, index matrix)`` for every unit of ``table`` in order, the drawn clusters' instances:
    each stratum's cluster numbers drawn in turn from one seeded generator."""
    strata = stratify(table, clusters)
    rng = np.random.default_rng(settings.seed)
    drawn = [rng.integers(0, stratum.size, (settings.resamples, stratum.size)) for stratum in strata.strata]
    for name in table.units:
        yield name, strata.index_matrix(name, drawn)


def draws(
    table: InstanceTable, clusters: Clusters | None, settings: BootstrapSettings
) -> Iterator[tuple[str, np.ndarray]]:
    """The within-unit draws, or those of ``clusters`` where a row resamples them."""
    return unit_draws(table, settings) if clusters is None else cluster_draws(table, clusters, settings)


def _leaf_values(
    tables: Sequence[InstanceTable], statistics: Sequence[Statistic], indices_by_unit: Iterator[tuple[str, np.ndarray]]
) -> list[dict[UnitStatistic, np.ndarray]]:
    """For each table, the statistics' leaves over the resamples of the given index matrices."""
    leaves: dict[str, list[UnitStatistic]] = {}
    for statistic in statistics:
        for leaf in statistic.leaves():
            if leaf not in leaves.setdefault(leaf.unit, []):
                leaves[leaf.unit].append(leaf)
    values: list[dict[UnitStatistic, np.ndarray]] = [{} for _ in tables]
    for unit, indices in indices_by_unit:
        if unit not in leaves:
            continue
        for table, out in zip(tables, values):
            parts: dict[UnitStatistic, list[np.ndarray]] = {leaf: [] for leaf in leaves[unit]}
            for rows in row_slices(*indices.shape):
                resampled = gathered(table.unit(unit), indices[rows])
                for leaf in leaves[unit]:
                    parts[leaf].append(leaf.on_unit(resampled))
            out.update({leaf: np.concatenate(chunks) for leaf, chunks in parts.items()})
    return values


def resample(
    tables: Sequence[InstanceTable], statistics: Sequence[Statistic], settings: BootstrapSettings
) -> list[list[np.ndarray]]:
    """For each table (runs on the same questions: the same draws for all), each statistic's
    values over the resamples: ``out[table][statistic]`` of shape ``(resamples,)``. Each
    statistic reads the draws of its clusters (:meth:`BootstrapSettings.clusters_of`)."""
    by_clusters: dict[Clusters | None, list[int]] = {}
    for i, statistic in enumerate(statistics):
        by_clusters.setdefault(settings.clusters_of(statistic), []).append(i)
    sizes = unit_sizes(tables[0])
    out: list[list[np.ndarray]] = [[np.empty(0)] * len(statistics) for _ in tables]
    for clusters, chosen in by_clusters.items():
        group = [statistics[i] for i in chosen]
        for table_out, values in zip(out, _leaf_values(tables, group, draws(tables[0], clusters, settings))):
            for i, statistic in zip(chosen, group):
                table_out[i] = statistic.combine(values, sizes)
    return out


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap samples (linear interpolation between order statistics)."""
    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha])
    return float(low), float(high)


def resampled_by(statistic: Statistic, settings: BootstrapSettings) -> str:
    """What a statistic's resamples draw, as a result records it: the clusters' name, or
    :data:`~harness.stats.bootstrap.INSTANCE` (each unit's instances within the unit)."""
    clusters = settings.clusters_of(statistic)
    return INSTANCE if clusters is None else clusters.name


def row_intervals(table: InstanceTable, rows: RowStatistics, settings: BootstrapSettings) -> dict[str, RowIntervals]:
    """Every declared row metric's interval: ``subset -> metric -> (low, high)``, each row's with
    what its resamples drew (one kind of draw per row: a task declares its rows so)."""
    keys = [(subset, metric) for subset, metrics in rows.items() for metric in metrics]
    if not keys or settings.resamples == 0:
        return {}
    samples = resample([table], [rows[s][m] for s, m in keys], settings)[0]
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for (subset, metric), values in zip(keys, samples):
        intervals.setdefault(subset, {})[metric] = percentile_interval(values, settings.confidence)
    out = {}
    for subset, metrics in intervals.items():
        (resampled, *others) = dict.fromkeys(resampled_by(rows[subset][metric], settings) for metric in metrics)
        if others:
            raise ValueError(f"row {subset}: its metrics resample different things ({resampled}, {', '.join(others)})")
        out[subset] = RowIntervals(metrics, resampled)
    return out
