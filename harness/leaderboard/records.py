"""Results as flat records: one per (run, subset, metric), with the run's scope beside every
number, so that ``pandas.DataFrame(records)`` reads them as they are, ``harness leaderboard show
--csv`` writes them as CSV, and a table across tasks for one model is a selection of them.

The same record describes a leaderboard entry's rows, a run result's rows (``Outcome.records()``,
``Outcome.to_frame()``) and a paper's reported numbers (``kind`` ``reported``, no interval, no
count), so verified and reported numbers can be put side by side by a script without being mixed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from harness.leaderboard.entry import LeaderboardEntry
from harness.leaderboard.reported import ReportedResult
from harness.results.result import ResultRow, RunResult

#: The columns of a record, in order (CSV header, data frame columns).
COLUMNS = (
    "kind",
    "task",
    "task_options",
    "split",
    "languages",
    "limit",
    "demo",
    "model",
    "subset",
    "metric",
    "value",
    "low",
    "high",
    "count",
    "main",
    "source",
)


def _options(options: dict[str, Any]) -> str:
    return ",".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(options.items()))


def _rows(
    scope: dict[str, Any], rows: Sequence[ResultRow], main_metric: str, main_subset: str | None
) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        for metric, value in row.metrics.items():
            interval = row.intervals.get(metric)
            out.append(
                {
                    **scope,
                    "subset": row.subset,
                    "metric": metric,
                    "value": value,
                    "low": None if interval is None else interval[0],
                    "high": None if interval is None else interval[1],
                    "count": row.count,
                    "main": metric == main_metric and row.subset == main_subset,
                }
            )
    return out


def _main_subset(rows: Sequence[ResultRow], metric: str, score: float) -> str | None:
    """The subset whose ``metric`` is the main score (the first such row; as the runner takes it)."""
    return next((row.subset for row in rows if row.metrics.get(metric) == score), None)


def entry_records(entry: LeaderboardEntry) -> list[dict[str, Any]]:
    """A leaderboard entry's rows as records (``kind``: run or score)."""
    scope = entry.scope
    context = {
        "kind": entry.kind,
        "task": scope.task,
        "task_options": _options(scope.task_options),
        "split": scope.split,
        "languages": ",".join(scope.languages),
        "limit": scope.limit,
        "demo": scope.demo,
        "model": entry.model.label,
        "source": entry.result_path,
    }
    return _rows(context, entry.rows, entry.main_metric, _main_subset(entry.rows, entry.main_metric, entry.main_score))


def result_records(result: RunResult, source: str | None = None) -> list[dict[str, Any]]:
    """A run result's rows as records (``source``: where its file is, if anywhere)."""
    data = result.data
    context = {
        "kind": result.kind,
        "task": result.task.name,
        "task_options": _options(result.task.options),
        "split": data.split,
        "languages": ",".join(data.languages),
        "limit": data.limit,
        "demo": data.demo,
        "model": result.model.label,
        "source": source,
    }
    main = result.main_score
    return _rows(context, result.rows, main.metric, _main_subset(result.rows, main.metric, main.value))


def reported_records(result: ReportedResult) -> list[dict[str, Any]]:
    """A paper's reported numbers as records (``kind`` reported; subset ``all`` for the headline)."""
    context = {
        "kind": "reported",
        "task": result.task,
        "task_options": _options(result.task_options),
        "split": result.split,
        "languages": ",".join(result.languages),
        "limit": None,
        "demo": False,
        "model": result.model,
        "low": None,
        "high": None,
        "count": None,
        "source": result.source,
    }
    out = []
    for metric, reported in result.metrics().items():
        cells = ({"all": reported.score} if reported.score is not None else {}) | reported.subsets
        out += [
            {
                **context,
                "subset": subset,
                "metric": metric,
                "value": value,
                "main": metric == result.metric and subset == "all",
            }
            for subset, value in cells.items()
        ]
    return out


def ordered(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with their keys in :data:`COLUMNS` order."""
    return [{column: record.get(column) for column in COLUMNS} for record in records]


def to_csv(records: Iterable[dict[str, Any]]) -> str:
    """Records as CSV (header first; empty cells for None)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in ordered(records):
        writer.writerow({k: "" if v is None else v for k, v in record.items()})
    return buffer.getvalue()


def to_frame(records: Iterable[dict[str, Any]]) -> Any:
    """Records as a ``pandas.DataFrame`` (pandas is not a dependency of the harness: a one-line
    error where it is not installed)."""
    try:
        import pandas
    except ImportError:
        from harness.errors import HarnessError

        raise HarnessError(
            "to_frame needs pandas (pip install pandas); records() gives the same rows as "
            "dicts, which pandas.DataFrame reads as they are"
        ) from None
    return pandas.DataFrame(ordered(records), columns=list(COLUMNS))
