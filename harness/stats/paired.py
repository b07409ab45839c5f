"""Paired comparison of two runs on the same questions: difference, paired bootstrap interval,
sign-flip permutation test, McNemar for 0/1 metrics, optional Holm correction.

Paired means question by question: run A's and run B's values of the same question are kept
together. The paired bootstrap resamples questions (within each unit, or whole clusters of
parallel questions for a row that declares them; the same index matrices for both runs, see
:mod:`harness.stats.bootstrap`) and takes the percentile interval of
``statistic(A*) - statistic(B*)``. The permutation test swaps A's and B's values of each question
with probability 1/2 (for a mean, a sign flip of the per-question difference) and recomputes the
row's statistic as the official aggregation does; the two-sided p-value is the share of swaps
whose difference is at least as large in absolute value as the observed one. In a row that
resamples clusters, a cluster's questions swap together, in every unit. With at most
:data:`EXACT_LIMIT` questions (clusters) in a row all ``2**n`` swaps are enumerated (exact);
otherwise ``R`` random swap patterns are drawn (``R`` = the number of bootstrap resamples,
seeded, see :func:`random_masks`) and ``p = (1 + count) / (1 + R)``, never 0.
McNemar's exact test (a two-sided binomial test on the discordant pairs) is given where the row
is the mean of one 0/1 per-question metric over its questions (exact match, hits, correct), and
its questions are independent pairs: not where a row holds a question with its translations,
whose discordances go together.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import SerializerFunctionWrapHandler, model_serializer
from scipy.stats import binomtest

from harness.errors import HarnessError
from harness.files.records import JsonRecord, in_order
from harness.stats.bootstrap import INSTANCE, BootstrapSettings, percentile_interval, resample, resampled_by
from harness.stats.records import InstanceTable
from harness.stats.statistics import Columns, Gathered, RowStatistics, Statistic, UnitStatistic, row_slices, unit_sizes
from harness.stats.strata import Strata, stratify

if TYPE_CHECKING:
    from harness.stats.clusters import Clusters

#: Rows with at most this many questions get the exact permutation test (2**n swaps).
EXACT_LIMIT = 16
#: Scores that differ by less than this are the same score in the permutation count (float noise).
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class McNemar(JsonRecord):
    """Discordant pairs of a 0/1 metric: ``a_only`` where A is right and B wrong, ``b_only`` the reverse."""

    a_only: int
    b_only: int
    p_value: float


@dataclass(frozen=True)
class RowComparison(JsonRecord):
    """One row metric of two runs (:meth:`to_dict`: as ``harness compare --json`` prints it,
    what was resampled before the tests' results)."""

    subset: str
    metric: str
    a: float
    b: float
    difference: float
    interval: tuple[float, float] | None
    p_permutation: float
    permutation: str  # "exact (2**n swaps)" or "monte carlo (N swaps)"
    mcnemar: McNemar | None
    #: What the resamples drew and the swaps swapped: ``instance`` or the clusters' name.
    resampled: str = INSTANCE
    p_holm: float | None = None

    @model_serializer(mode="wrap")
    def _ordered(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return in_order(write(self), _COMPARISON_ORDER)


#: The order of a row comparison's keys in ``harness compare --json``.
_COMPARISON_ORDER = (
    "subset",
    "metric",
    "a",
    "b",
    "difference",
    "interval",
    "resampled",
    "p_permutation",
    "permutation",
    "mcnemar",
    "p_holm",
)


def check_same_questions(a: InstanceTable, b: InstanceTable) -> None:
    """Refuse tables whose units or question ids differ: a paired test needs the same questions."""
    if list(a.units) != list(b.units):
        raise HarnessError(f"the runs score different units ({', '.join(a.units)} vs {', '.join(b.units)})")
    for name, unit in a.units.items():
        if unit.ids != b.units[name].ids:
            raise HarnessError(f"the runs score different questions in unit {name}")


def mcnemar(a: np.ndarray, b: np.ndarray) -> McNemar:
    """McNemar's exact test: a two-sided binomial test of the discordant pairs at 1/2."""
    a_only = int(np.count_nonzero((a == 1) & (b == 0)))
    b_only = int(np.count_nonzero((a == 0) & (b == 1)))
    p = 1.0 if a_only + b_only == 0 else float(binomtest(a_only, a_only + b_only, 0.5).pvalue)
    return McNemar(a_only, b_only, p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest p times (m - i), made monotone, capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


MaskSource = Callable[[str], np.ndarray]


def _traded(names: list[str], mask: np.ndarray, take: dict[str, np.ndarray], keep: dict[str, np.ndarray]) -> Columns:
    """The columns ``names`` of ``keep`` with ``take``'s values where ``mask`` is set."""
    return Columns(names, lambda k: np.where(mask, take[k], keep[k]))


def _swapped(statistic: Statistic, a: InstanceTable, b: InstanceTable, masks: MaskSource) -> np.ndarray:
    """``statistic(A') - statistic(B')`` where ``masks(unit)`` (swaps, questions) marks the
    questions whose A and B values trade places."""
    values: list[dict[UnitStatistic, np.ndarray]] = [{}, {}]
    for unit in statistic.units():
        mask, ua, ub = masks(unit), a.unit(unit).values, b.unit(unit).values
        leaves = [leaf for leaf in statistic.leaves() if leaf.unit == unit]
        parts: list[dict[UnitStatistic, list[np.ndarray]]] = [{leaf: [] for leaf in leaves} for _ in range(2)]
        for rows in row_slices(*mask.shape):
            part = mask[rows]
            first = Gathered(_traded(list(ua), part, ub, ua))
            second = Gathered(_traded(list(ua), part, ua, ub))
            for leaf in leaves:
                parts[0][leaf].append(leaf.on_unit(first))
                parts[1][leaf].append(leaf.on_unit(second))
        for side, chunks in zip(values, parts):
            side.update({leaf: np.concatenate(c) for leaf, c in chunks.items()})
    sizes = unit_sizes(a)
    difference: np.ndarray = statistic.combine(values[0], sizes) - statistic.combine(values[1], sizes)
    return difference


def _swap_columns(
    statistic: Statistic, table: InstanceTable, strata: Strata | None
) -> tuple[int, dict[str, np.ndarray]]:
    """How many things of the row swap independently (its questions, or its clusters given the
    ``strata`` of the row's clusters), and for each unit which of them each question is."""
    units = statistic.units()
    if strata is None:
        bounds = np.cumsum([0, *(len(table.unit(u)) for u in units)])
        return _size(statistic, table), {u: np.arange(bounds[i], bounds[i + 1]) for i, u in enumerate(units)}
    numbers = [strata.cluster_index(u) for u in units]
    present, local = np.unique(np.concatenate(numbers), return_inverse=True)
    bounds = np.cumsum([0, *map(len, numbers)])
    return len(present), {u: local[bounds[i] : bounds[i + 1]] for i, u in enumerate(units)}


def _size(statistic: Statistic, table: InstanceTable) -> int:
    """How many questions the row holds, in all its units."""
    return sum(len(table.unit(u)) for u in statistic.units())


def random_masks(table: InstanceTable, settings: BootstrapSettings, strata: Strata | None = None) -> MaskSource:
    """Seeded random swaps, ``settings.resamples`` rows per unit; each unit's from its own
    generator (seed, unit position), so they are the same whichever rows ask for them. With the
    ``strata`` of a row's clusters, one coin per cluster, each stratum's from its own generator
    (seed, stratum position), spread to the cluster's questions in every unit: where every
    cluster is one question, the same swaps."""
    if strata is not None:
        coins = np.concatenate(
            [
                np.random.default_rng([settings.seed, i]).integers(
                    0, 2, (settings.resamples, stratum.size), dtype=np.bool_
                )
                for i, stratum in enumerate(strata.strata)
            ],
            axis=1,
        )
        return lambda unit: coins[:, strata.cluster_index(unit)]
    position = {name: i for i, name in enumerate(table.units)}

    def masks(unit: str) -> np.ndarray:
        rng = np.random.default_rng([settings.seed, position[unit]])
        return rng.integers(0, 2, (settings.resamples, len(table.unit(unit))), dtype=np.bool_)

    return masks


def permutation_p(
    statistic: Statistic,
    a: InstanceTable,
    b: InstanceTable,
    observed: float,
    masks: MaskSource,
    strata: Strata | None = None,
) -> tuple[float, str]:
    """Two-sided sign-flip p-value of the row, exact for small rows, else Monte Carlo (``masks``);
    ``strata``: of the clusters the row swaps whole, if any."""
    n, columns = _swap_columns(statistic, a, strata)
    if n <= EXACT_LIMIT:  # every assignment of swaps (2**n rows)
        every = np.asarray(list(itertools.product((False, True), repeat=n)), dtype=bool)
        flipped = _swapped(statistic, a, b, lambda unit: every[:, columns[unit]])
        count = int(np.count_nonzero(np.abs(flipped) >= abs(observed) - TIE_TOLERANCE))
        return count / len(flipped), f"exact ({len(flipped)} swaps)"
    flipped = _swapped(statistic, a, b, masks)
    count = int(np.count_nonzero(np.abs(flipped) >= abs(observed) - TIE_TOLERANCE))
    return (1 + count) / (1 + len(flipped)), f"monte carlo ({len(flipped)} swaps)"


def compare_tables(
    a: InstanceTable, b: InstanceTable, rows: RowStatistics, settings: BootstrapSettings, *, use_holm: bool = False
) -> list[RowComparison]:
    """Compare every declared row metric of two runs on the same questions. ``settings.resamples``
    is both the number of bootstrap resamples and of random swaps (at least 1 here)."""
    check_same_questions(a, b)
    if settings.resamples < 1:
        raise HarnessError("a comparison needs at least one resample (--bootstrap N, N >= 1)")
    keys = [(subset, metric) for subset, metrics in rows.items() for metric in metrics]
    statistics = [rows[s][m] for s, m in keys]
    resampled_a, resampled_b = resample([a, b], statistics, settings)
    swaps: dict[Clusters | None, tuple[Strata | None, MaskSource]] = {}
    out = []
    for (subset, metric), statistic, sample_a, sample_b in zip(keys, statistics, resampled_a, resampled_b):
        clusters = settings.clusters_of(statistic)
        if clusters not in swaps:
            strata = None if clusters is None else stratify(a, clusters)
            swaps[clusters] = strata, random_masks(a, settings, strata)
        strata, masks = swaps[clusters]
        point_a, point_b = statistic.point(a), statistic.point(b)
        observed = float(_swapped(statistic, a, b, lambda u: np.zeros((1, len(a.unit(u))), dtype=bool))[0])
        p, how = permutation_p(statistic, a, b, observed, masks, strata)
        binary = statistic.binary_metric()
        test = None
        if binary is not None and (strata is None or _swap_columns(statistic, a, strata)[0] == _size(statistic, a)):
            test = mcnemar(
                np.concatenate([a.unit(u).values[binary] for u in statistic.units()]),
                np.concatenate([b.unit(u).values[binary] for u in statistic.units()]),
            )
        out.append(
            RowComparison(
                subset,
                metric,
                point_a,
                point_b,
                point_a - point_b,
                percentile_interval(sample_a - sample_b, settings.confidence),
                p,
                how,
                test,
                resampled_by(statistic, settings),
            )
        )
    if use_holm:
        out = _with_holm(out, [isinstance(statistic, UnitStatistic) for statistic in statistics])
    return out


def _with_holm(rows: list[RowComparison], one_unit: list[bool]) -> list[RowComparison]:
    """Holm-adjust the permutation p-values of the units' own rows (the languages or pairs), metric by metric."""
    by_metric: dict[str, list[int]] = {}
    for i, (row, single) in enumerate(zip(rows, one_unit)):
        if single:
            by_metric.setdefault(row.metric, []).append(i)
    out = list(rows)
    for indices in by_metric.values():
        for i, p in zip(indices, holm([rows[i].p_permutation for i in indices])):
            r = rows[i]
            out[i] = replace(r, p_holm=p)
    return out
