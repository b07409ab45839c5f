"""The strata in which the bootstrap draws clusters of parallel instances.

A task whose data is parallel declares how its instances group across units
(:class:`harness.stats.clusters.Clusters`: XQuAD's question id, the same in its 12 languages). A row over
several units is then resampled cluster by cluster: a drawn question brings its instance in
every unit. The draws are made within *strata*, the clusters that appear in the same units the
same number of times:

* every unit's resample keeps its size, so every per-unit statistic (a mean, MKQA's threshold
  sweep, XTREME's counted F1) reads a ``(resamples, instances)`` index matrix as before;
* the languages a question was translated into are a fixed part of the benchmark's design, as
  a language's number of questions is for the within-unit bootstrap: MLQA dev's 1,148 questions,
  each in its own subset of the 7 languages, fall into 41 strata (7 to 61 questions each);
  XQuAD, every question in every language, is one stratum;
* where every cluster is one instance (no parallel data, or one unit), the strata are the units
  and the draws are exactly the within-unit ones (same generator calls, same numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.stats.clusters import Clusters
from harness.stats.records import InstanceTable


@dataclass(frozen=True)
class Stratum:
    """Clusters with the same presence: ``members[unit]`` has one row per cluster, the positions
    (in the unit's columns) of its instances there, as many per cluster in every row."""

    size: int
    members: dict[str, np.ndarray]


@dataclass(frozen=True)
class Strata:
    """A table's clusters, stratified by presence, in the order they first appear (units in
    table order, instances in file order)."""

    strata: tuple[Stratum, ...]

    def index_matrix(self, unit: str, drawn: Sequence[np.ndarray]) -> np.ndarray:
        """The unit's positions under drawn clusters (``drawn[s]``: ``(resamples, size)`` cluster
        numbers of stratum ``s``): each drawn cluster's instances in the unit, strata side by side."""
        parts = [
            stratum.members[unit][clusters].reshape(len(clusters), -1)
            for stratum, clusters in zip(self.strata, drawn)
            if unit in stratum.members
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)

    def cluster_index(self, unit: str) -> np.ndarray:
        """The cluster of each instance of ``unit`` (in its columns' order), numbered across the
        strata: stratum 0's clusters first."""
        size = sum(members.size for stratum in self.strata for u, members in stratum.members.items() if u == unit)
        out = np.empty(size, dtype=np.int64)
        offset = 0
        for stratum in self.strata:
            if unit in stratum.members:
                out[stratum.members[unit]] = offset + np.arange(stratum.size)[:, None]
            offset += stratum.size
        return out


def stratify(table: InstanceTable, clusters: Clusters) -> Strata:
    """Group the table's instances by ``clusters.key`` and the clusters by presence (which units,
    how many instances in each)."""
    members: dict[str, dict[str, list[int]]] = {}
    for name, unit in table.units.items():
        for position, instance_id in enumerate(unit.ids):
            members.setdefault(clusters.key(name, instance_id), {}).setdefault(name, []).append(position)
    by_presence: dict[tuple[tuple[str, int], ...], list[dict[str, list[int]]]] = {}
    for member in members.values():
        by_presence.setdefault(tuple((unit, len(positions)) for unit, positions in member.items()), []).append(member)
    return Strata(
        tuple(
            Stratum(
                len(group),
                {unit: np.asarray([member[unit] for member in group], dtype=np.int64) for unit, _ in presence},
            )
            for presence, group in by_presence.items()
        )
    )
