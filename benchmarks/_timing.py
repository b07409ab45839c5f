"""Alternate-and-repeat timing shared by the benchmarks that compare the harness with a baseline.

A shared machine's speed drifts (other jobs, frequency scaling), so a single timing per side, or
all of one side's runs before the other's, measures the drift as much as the code. Here the sides
run in turn (A, B, A, B, ...) for ``repeat`` rounds, each run timed with ``time.perf_counter``;
min (the least disturbed run) and median (the typical one) are reported per side, and the ratio
is taken of medians and of mins, so a reader sees how stable the figure is.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Side:
    """One side of a comparison: its label, the function timed, its timings and last result."""

    label: str
    run: Callable[[], Any]
    seconds: list[float] = field(default_factory=list)
    result: Any = None

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def alternate(sides: list[Side], repeat: int) -> list[Side]:
    """Run every side once per round, in the same order, ``repeat`` rounds; keep each result."""
    if repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    for _ in range(repeat):
        for side in sides:
            start = time.perf_counter()
            side.result = side.run()
            side.seconds.append(time.perf_counter() - start)
    return sides


def report(baseline: Side, harness: Side, unit: str = "s") -> None:
    """Print min/median per side and the baseline/harness ratios (above 1: the harness is faster)."""
    scale = {"s": 1.0, "ms": 1e3}[unit]
    width = max(len(baseline.label), len(harness.label))
    runs = len(harness.seconds)
    for side in (baseline, harness):
        print(
            f"{side.label:{width}}  min {side.min * scale:10.3f} {unit}  median {side.median * scale:10.3f} {unit}"
            f"  ({runs} runs, alternated)"
        )
    print(
        f"ratio baseline/harness: median {baseline.median / harness.median:.2f}x, min {baseline.min / harness.min:.2f}x"
    )


def add_official_argument(parser: Any, script: str) -> None:
    """``--official DIR``: the folder holding the official script(s); required unless the
    ``XLQA_OFFICIAL_DIR`` environment variable names it (the repository ships no copy)."""
    default = os.environ.get("XLQA_OFFICIAL_DIR")
    parser.add_argument(
        "--official",
        default=default,
        required=default is None,
        help=f"folder holding the official {script} (default: $XLQA_OFFICIAL_DIR; required if unset)",
    )


def import_official(folder: str, module: str) -> Any:
    """Import an official evaluation script from ``folder`` (outside the repository) as a module."""
    path = Path(folder)
    if not (path / f"{module}.py").is_file():
        raise SystemExit(f"--official {folder}: no {module}.py there")
    sys.path.insert(0, str(path))
    return importlib.import_module(module)
