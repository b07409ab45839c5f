"""When a run began and the seconds of each of its phases, recorded in its result's provenance."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from harness.results.provenance import now_iso

log = logging.getLogger("harness.running.runner")

T = TypeVar("T")


class PhaseTimer:
    """Seconds per phase (``harness -v`` logs each as it ends); ``label`` says whose phases they
    are (a task, or the work its tasks share)."""

    def __init__(self, label: str = "run") -> None:
        self.label = label
        self.phases: dict[str, float] = {}

    def time(self, name: str, fn: Callable[[], T], detail: str = "") -> T:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.add(name, time.perf_counter() - start, detail)

    def add(self, name: str, seconds: float, detail: str = "") -> None:
        """Count ``seconds`` to phase ``name`` (time measured elsewhere)."""
        self.phases[name] = self.phases.get(name, 0.0) + seconds
        log.info("%s: %s%s %.2f s", self.label, name, f" {detail}" if detail else "", seconds)


@dataclass(frozen=True)
class Clock:
    """When a run (or a scoring) began: its start in the result, its wall time measured from it."""

    started: str = field(default_factory=now_iso)
    t0: float = field(default_factory=time.perf_counter)

    def wall(self) -> float:
        return time.perf_counter() - self.t0
