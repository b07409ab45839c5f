"""Per-instance records: one line per scored question, written next to ``result.json``.

Each :class:`Instance` names its question, the unit (row) it is scored in, its gold and
prediction, and the per-question value of every metric the row aggregates. Where an official
metric does not decompose into a mean (MKQA's threshold sweep), the record keeps what the
aggregation needs instead (the no-answer probability, the line order), so that the bootstrap
can re-run the official aggregation on any resample of the questions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.files.records import JsonRecord


@dataclass(frozen=True)
class Instance(JsonRecord):
    """One scored question: where it is counted, what was expected and predicted, its values
    (:meth:`to_dict`: one line of ``instances.jsonl``, schema ``instance``)."""

    id: str
    #: The unit (result row) the question is scored in: a language, or a pair such as ``es-en``.
    unit: str
    languages: tuple[str, ...]
    gold: Any
    prediction: Any
    #: Per-metric values of this question (e.g. ``{"f1": 0.5, "exact_match": 0.0}``), plus the
    #: sufficient statistics of metrics that do not decompose.
    values: dict[str, float]


@dataclass
class UnitValues:
    """The instances of one unit, as columns in file order: ``values[metric][i]``."""

    ids: list[str]
    languages: tuple[str, ...]
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class InstanceTable:
    """A run's instances by unit, each unit's values as numpy columns (what statistics read)."""

    units: dict[str, UnitValues]

    @classmethod
    def from_instances(cls, instances: Iterable[Instance]) -> InstanceTable:
        grouped: dict[str, list[Instance]] = {}
        for instance in instances:
            grouped.setdefault(instance.unit, []).append(instance)
        units = {}
        for unit, items in grouped.items():
            names = list(dict.fromkeys(name for item in items for name in item.values))
            columns = {name: np.asarray([item.values[name] for item in items], dtype=np.float64) for name in names}
            units[unit] = UnitValues([item.id for item in items], items[0].languages, columns)
        return cls(units)

    def unit(self, name: str) -> UnitValues:
        return self.units[name]
