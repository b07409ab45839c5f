"""How a row's number is computed from per-question values, declared once per task.

A :class:`Statistic` does two things with the same definition:

* :meth:`Statistic.point` computes the official number from the instances in file order, with
  the official script's own arithmetic (a sequential ``100.0 * sum / n``, a numpy mean...), so a
  test can check that the records reproduce the reported number bit for bit;
* :meth:`Statistic.combine` computes it for many resamples at once: the leaves
  (:class:`UnitStatistic`, a function of one unit's questions) get each unit's resampled values
  as ``(resamples, questions)`` matrices (:class:`Gathered`) and return one value per resample;
  composites (:class:`Pooled`, :class:`Macro`) combine the leaves' vectors as the official
  aggregation combines per-language numbers.

A unit's row is resampled within the unit (a language, a language pair). A composite over
several units is resampled within each unit too, unless it declares the task's ``clusters``
(parallel data: :class:`harness.stats.clusters.Clusters`); then a drawn cluster brings its instance in
every unit (:mod:`harness.stats.clusters`). Either way each unit's resample has the unit's size,
and a macro average over languages is recomputed as the official script averages it: mean of
per-language means.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from harness.stats.records import InstanceTable, UnitValues

if TYPE_CHECKING:
    from harness.stats.clusters import Clusters


class Columns(Mapping[str, np.ndarray]):
    """A unit's value matrices under some resampling or swapping, ``metric -> (rows, questions)``,
    each built on first use: a leaf reads only the columns it needs (MKQA's sweep reads six,
    a mean one), so memory holds no matrix nobody asked for."""

    def __init__(self, names: Sequence[str], build: Callable[[str], np.ndarray]) -> None:
        self._names, self._build = tuple(names), build
        self._built: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._built:
            if name not in self._names:
                raise KeyError(name)
            self._built[name] = self._build(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class Gathered:
    """The value matrices of one unit (see :class:`Columns`), plus a scratch dict where the
    leaves of the same unit share work (e.g. one sort for ``best_f1`` and ``best_em``)."""

    values: Mapping[str, np.ndarray]
    scratch: dict[str, np.ndarray] = field(default_factory=dict)


def percent_of_sum(values: Sequence[float]) -> float:
    """``100.0 * sum / n`` summed in file order: SQuAD v1.1's, MLQA's and XOR's per-file score."""
    total = 0.0
    for value in values:
        total += value
    return 100.0 * total / len(values)


def plain_mean(values: Sequence[float]) -> float:
    """``sum(values) / len(values)`` in the given order: the official average over languages."""
    return sum(values) / len(values)


def numpy_mean(values: Sequence[float]) -> float:
    """``float(np.mean(values))`` (numpy's pairwise sum): LAReQA's mAP."""
    return float(np.mean(np.asarray(values, dtype=np.float64)))


class Statistic(ABC):
    """A row metric as a function of the instances of some units."""

    #: The clusters a row with this statistic resamples whole (see :mod:`harness.stats.clusters`);
    #: None: each unit's instances within the unit. The row's own statistic decides for all its parts.
    clusters: Clusters | None = None

    @abstractmethod
    def leaves(self) -> tuple[UnitStatistic, ...]:
        """The per-unit statistics this one is built from."""

    @abstractmethod
    def point(self, table: InstanceTable) -> float:
        """The official number from the instances, in the official arithmetic."""

    @abstractmethod
    def combine(self, leaf_values: Mapping[UnitStatistic, np.ndarray], sizes: Mapping[str, int]) -> np.ndarray:
        """One value per resample from the leaves' vectors (``sizes``: questions per unit)."""

    def units(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(leaf.unit for leaf in self.leaves()))

    def binary_metric(self) -> str | None:
        """The metric when every leaf is the mean of the same 0/1 per-question metric (McNemar applies)."""
        leaves = self.leaves()
        names = {leaf.metric for leaf in leaves if isinstance(leaf, Mean) and leaf.binary}
        return (
            names.pop() if len(names) == 1 and all(isinstance(leaf, Mean) and leaf.binary for leaf in leaves) else None
        )


@dataclass(frozen=True, eq=False)
class UnitStatistic(Statistic):
    """A statistic of one unit's questions."""

    unit: str
    metric: str

    def leaves(self) -> tuple[UnitStatistic, ...]:
        return (self,)

    def combine(self, leaf_values: Mapping[UnitStatistic, np.ndarray], sizes: Mapping[str, int]) -> np.ndarray:
        return leaf_values[self]

    @abstractmethod
    def on_unit(self, gathered: Gathered) -> np.ndarray:
        """The statistic of each row of the resampled value matrices: shape ``(resamples,)``."""

    def point(self, table: InstanceTable) -> float:
        unit = table.unit(self.unit)
        return float(self.on_unit(Gathered(Columns(list(unit.values), lambda k: unit.values[k][None, :])))[0])


@dataclass(frozen=True, eq=False)
class Mean(UnitStatistic):
    """``scale`` times the mean of a per-question metric over a unit; ``official`` computes the
    point estimate the way the official script sums (the last bit depends on the order)."""

    scale: float = 100.0
    official: Callable[[Sequence[float]], float] = percent_of_sum
    #: Whether the per-question values are 0/1 (exact match, hits, correct): McNemar applies.
    binary: bool = False

    def on_unit(self, gathered: Gathered) -> np.ndarray:
        means: np.ndarray = self.scale * gathered.values[self.metric].mean(axis=1)
        return means

    def point(self, table: InstanceTable) -> float:
        return self.official(table.unit(self.unit).values[self.metric].tolist())


@dataclass(frozen=True, eq=False)
class Pooled(Statistic):
    """One mean over the questions of several units (LAReQA's ``all``: a global mean); each unit's
    resample keeping its size, it is the size-weighted mean of the units' means."""

    parts: tuple[Mean, ...]
    clusters: Clusters | None = None

    def leaves(self) -> tuple[UnitStatistic, ...]:
        return self.parts

    def point(self, table: InstanceTable) -> float:
        first = self.parts[0]
        values = np.concatenate([table.unit(p.unit).values[p.metric] for p in self.parts])
        return first.official(values.tolist())

    def combine(self, leaf_values: Mapping[UnitStatistic, np.ndarray], sizes: Mapping[str, int]) -> np.ndarray:
        total = sum(sizes[p.unit] for p in self.parts)
        return cast(np.ndarray, sum(leaf_values[p] * sizes[p.unit] for p in self.parts) / total)


@dataclass(frozen=True, eq=False)
class Macro(Statistic):
    """The official average of per-unit numbers: ``official`` applied to the parts' point values
    (e.g. ``statistics.mean``, or XOR-Full's sum over 7); resampled, the parts' sum divided by
    ``divisor`` (default: their number)."""

    parts: tuple[Statistic, ...]
    official: Callable[[Sequence[float]], float]
    divisor: float | None = None
    clusters: Clusters | None = None

    def leaves(self) -> tuple[UnitStatistic, ...]:
        return tuple(leaf for part in self.parts for leaf in part.leaves())

    def point(self, table: InstanceTable) -> float:
        return self.official([part.point(table) for part in self.parts])

    def combine(self, leaf_values: Mapping[UnitStatistic, np.ndarray], sizes: Mapping[str, int]) -> np.ndarray:
        total = sum(part.combine(leaf_values, sizes) for part in self.parts)
        return cast(np.ndarray, total / (self.divisor or len(self.parts)))


#: What a task declares: for each row (by subset), each metric's statistic.
RowStatistics = dict[str, dict[str, Statistic]]


def unit_sizes(table: InstanceTable) -> dict[str, int]:
    return {name: len(unit) for name, unit in table.units.items()}


def gathered(unit: UnitValues, indices: np.ndarray) -> Gathered:
    """A unit's columns resampled by an index matrix ``(resamples, questions)``."""
    return Gathered(Columns(list(unit.values), lambda name: unit.values[name][indices]))


#: At most this many values per gathered matrix at a time (16 MiB of float64): resamples of a
#: large unit are handled in slices of rows, which changes no draw and no result.
CHUNK_VALUES = 1 << 21


def row_slices(rows: int, columns: int) -> Iterator[slice]:
    """Slices of ``rows`` rows such that ``rows x columns`` stays under :data:`CHUNK_VALUES`."""
    step = max(1, CHUNK_VALUES // max(columns, 1))
    for start in range(0, rows, step):
        yield slice(start, min(rows, start + step))
