"""Replay and reference models (see :class:`harness.definitions.protocols.PredictionSource`).

``predictions:file=...`` is how a leaderboard submission runs through ``harness run``: the task
reads the file in its official format, so the result and leaderboard entry look exactly like
those of a model run. ``oracle`` and ``empty`` ask the task for its reference predictions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.plugin import HarnessError, Model, ModelIdentity, PredictionSource, Runtime, Task
from harness.plugin.io import sha256_path


class ReplayPredictions(Model):
    """Predictions made elsewhere, in the task's documented prediction format."""

    provides = frozenset({PredictionSource})

    def __init__(self, *, runtime: Runtime, file: Path, label: str | None = None) -> None:
        if not file.exists():
            raise HarnessError(f"model predictions: file={file} does not exist")
        self.file = file
        self.label = label

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name=self.name or "predictions",
            label=self.label or self.file.stem,
            weights=f"sha256:{sha256_path(self.file)}",
            options={},
            details={"file": str(self.file)},
        )

    def predictions_for(self, task: Task[Any], data: Any) -> dict[str, Any]:
        return task.read_predictions(self.file, data)


class _Reference(Model):
    provides = frozenset({PredictionSource})

    kind = ""

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name=self.name or self.kind, label=self.name or self.kind, weights=None, options={})

    def predictions_for(self, task: Task[Any], data: Any) -> dict[str, Any]:
        return task.reference_predictions(data, self.kind)


class Oracle(_Reference):
    """The task's gold answers."""

    kind = "gold"


class Empty(_Reference):
    """Empty answers or rankings."""

    kind = "empty"
