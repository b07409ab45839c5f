"""Fakes the core tests build on, so they test the harness and nothing a plugin does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.results import RunResult


def fake_result(*, task: str, label: str, split: str, languages: Sequence[str], metric: str, score: float,
                rows: list[dict[str, Any]], finished_at: str) -> RunResult:
    """A complete, schema-valid result of model ``label`` on ``task``, for leaderboard tests."""
    return RunResult.from_dict({
        "schema_version": "1.0",
        "run_id": "0" * 16,
        "kind": "run",
        "task": {"name": task, "plugin": {"name": "fake", "distribution": None, "version": None}, "options": {},
                 "main_metric": metric, "higher_is_better": True, "prediction_format": "fake-predictions",
                 "reference": "none"},
        "model": {"name": "m", "label": label, "weights": None, "options": {}, "details": {}, "plugin": None},
        "data": {"source": "nowhere", "demo": False, "split": split, "languages": list(languages), "limit": None,
                 "files": [{"path": "data.json", "sha256": "a" * 64, "bytes": 1}], "statistics": {}},
        "main_score": {"metric": metric, "value": score},
        "rows": rows,
        "diagnostics": {},
        "notes": [],
        "predictions": {"path": "predictions.json", "format": "fake-predictions", "sha256": "b" * 64},
        "provenance": {"harness_version": "0.1.0", "git_commit": None, "python": "3.11", "packages": {},
                       "platform": "test", "plugins": {"fake": None}, "device": "cpu", "seed": 0,
                       "started_at": finished_at, "finished_at": finished_at, "wall_time_s": 0.0,
                       "command": ["test"]},
    })
