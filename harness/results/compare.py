"""``harness compare RESULT_A RESULT_B``: two runs of one task on the same questions, row by row.

Two numbers are compared only when they measure the same thing: the same task, scorer signature
and task options, split, languages and limit, and the same data files (fingerprint); otherwise
the comparison stops with one line naming what differs -- the languages each run has alone
rather than the fingerprint their different files give. The rows' statistics come from the task
(:meth:`harness.definitions.task.Task.statistics`), the tests from :mod:`harness.stats.paired`.
Each side's per-instance records are read from beside its result (:func:`read_table`), or, given
another source, obtained otherwise: the command line scores a shipped result's predictions again
(:func:`harness.running.intake.instance_table`), since the leaderboard ships predictions only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.definitions.registry import Registry, load_target
from harness.errors import HarnessError, InputError
from harness.files.io import sha256_path
from harness.options import bind_options
from harness.results.instances import INSTANCES_FILE, read_instances
from harness.results.result import RESULT_FILE, RunResult, read_result
from harness.stats.bootstrap import BootstrapSettings
from harness.stats.paired import RowComparison, compare_tables
from harness.stats.records import InstanceTable


@dataclass(frozen=True)
class Comparison:
    """Two results and their row-by-row comparison."""

    a: RunResult
    b: RunResult
    rows: list[RowComparison]
    settings: BootstrapSettings

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": {"run_id": self.a.run_id, "model": self.a.model.label},
            "b": {"run_id": self.b.run_id, "model": self.b.model.label},
            "task": self.a.task.name,
            "scorer_signature": self.a.task.scorer_signature,
            "bootstrap": {
                "resamples": self.settings.resamples,
                "seed": self.settings.seed,
                "confidence": self.settings.confidence,
            },
            "rows": [row.to_dict() for row in self.rows],
        }


def _languages_differ(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """The languages one run has and the other lacks, or their order where both have the same."""
    only_a, only_b = [lang for lang in a if lang not in b], [lang for lang in b if lang not in a]
    if not only_a and not only_b:
        return f"languages (in another order: {', '.join(a)} vs {', '.join(b)})"
    sides = [f"only A has {', '.join(only_a)}" if only_a else "", f"only B has {', '.join(only_b)}" if only_b else ""]
    return f"languages ({'; '.join(side for side in sides if side)})"


def _what_differs(a: RunResult, b: RunResult) -> str | None:
    """What makes two results' numbers measure different things, the most telling first: the
    data fingerprint comes last, since other languages, splits or limits read other files."""
    checks: list[tuple[str, Any, Any]] = [
        ("task", a.task.name, b.task.name),
        ("scorer signature", a.task.scorer_signature, b.task.scorer_signature),
        ("task options", a.task.options, b.task.options),
        ("split", a.data.split, b.data.split),
        ("languages", a.data.languages, b.data.languages),
        ("limit", a.data.limit, b.data.limit),
        ("data fingerprint", a.data.fingerprint[:12], b.data.fingerprint[:12]),
    ]
    for what, left, right in checks:
        if left != right:
            return _languages_differ(left, right) if what == "languages" else f"{what} ({left} vs {right})"
    return None


def check_comparable(a: RunResult, b: RunResult) -> None:
    """Refuse, in one line, two results that are not scores of the same thing."""
    differs = _what_differs(a, b)
    if differs is not None:
        raise HarnessError(f"cannot compare: the runs differ in {differs}")


def read_table(result: RunResult, folder: Path) -> InstanceTable:
    """The result's per-instance records (beside it), checked against the hash the result recorded."""
    if result.instances is None:
        raise HarnessError(
            f"{folder / RESULT_FILE} has no per-instance records (written by an older harness): "
            "score its predictions again with `harness score`"
        )
    path = folder / INSTANCES_FILE
    if not path.is_file():
        raise InputError("missing: the per-instance records of this result", file=path)
    if sha256_path(path) != result.instances.sha256:
        raise InputError("not the file this result wrote (its SHA-256 differs from the result's)", file=path)
    return InstanceTable.from_instances(read_instances(path))


#: Where a result's per-instance records come from, given the result and its folder.
TableSource = Callable[[RunResult, Path], InstanceTable]


def compare(
    path_a: Path,
    path_b: Path,
    settings: BootstrapSettings,
    *,
    use_holm: bool = False,
    registry: Registry | None = None,
    tables: TableSource = read_table,
) -> Comparison:
    """Compare two results of the same task on the same questions, every row with statistics;
    each side's records come from ``tables``, once the two are known to be comparable."""
    a, folder_a = read_result(path_a)
    b, folder_b = read_result(path_b)
    check_comparable(a, b)
    table_a, table_b = tables(a, folder_a), tables(b, folder_b)
    registry = registry or Registry.discover()
    spec, plugin = registry.task(a.task.name)
    task_cls = load_target(spec, plugin, "task")
    options = {k: v for k, v in a.task.options.items() if k != "input_rules"}  # a data option, not the task's
    task = task_cls(**bind_options(task_cls, options, owner=f"task {a.task.name}"))
    rows = task.statistics(table_a)
    if not rows:
        raise HarnessError(f"task {a.task.name} declares no row statistics to compare")
    return Comparison(a, b, compare_tables(table_a, table_b, rows, settings, use_holm=use_holm), settings)
