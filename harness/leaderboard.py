"""The leaderboard: every run folded into one JSON file, safely, and shown as a table.

Updates take a file lock and replace the file atomically, so two runs finishing at once both
land and a crash never leaves a broken leaderboard. An entry is keyed by what makes scores
comparable (task and options, split, data, languages, limit, model identity): re-running the
same thing replaces its entry, anything else adds one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness.errors import HarnessError
from harness.io import dump_json, read_json, sha256_text
from harness.provenance import now_iso
from harness.results import RunResult
from harness.tables import format_score, format_table
from harness.validation import validate

SCHEMA = "leaderboard"
SCHEMA_VERSION = "1.0"


def entry_from_result(result: RunResult, result_path: Path) -> dict[str, Any]:
    """The leaderboard entry for one run result."""
    identity = result.model.identity
    model = {"name": identity.name, "label": identity.label, "weights": identity.weights, "options": identity.options}
    data = result.data
    fingerprint = data.fingerprint
    key = sha256_text(
        json.dumps(
            [result.task.name, result.task.options, data.split, fingerprint, list(data.languages), data.limit, model],
            sort_keys=True,
        )
    )[:16]
    extra: dict[str, Any] = {}
    if result.main_score.interval is not None:
        extra["main_interval"] = list(result.main_score.interval)
    if result.task.scorer_signature is not None:
        extra["scorer_signature"] = result.task.scorer_signature
    return {
        "key": key,
        "task": result.task.name,
        "task_options": result.task.options,
        "split": data.split,
        "languages": list(data.languages),
        "limit": data.limit,
        "demo": data.demo,
        "data_fingerprint": fingerprint,
        "model": model,
        "main_metric": result.main_score.metric,
        "main_score": result.main_score.value,
        "higher_is_better": result.task.higher_is_better,
        "rows": [row.to_dict() for row in result.rows],
        "run_id": result.run_id,
        "kind": result.kind,
        "result_path": str(result_path),
        "finished_at": result.provenance.finished_at,
        "harness_version": result.provenance.harness_version,
        **extra,
    }


def load(path: Path) -> dict[str, Any]:
    """Read and validate a leaderboard (an empty one if the file does not exist yet)."""
    if not path.exists():
        return {"schema_version": SCHEMA_VERSION, "updated_at": now_iso(), "entries": []}
    board = read_json(path)
    validate(board, SCHEMA, file=path)
    return board


def add_result(path: Path, result: RunResult, result_path: Path) -> dict[str, Any]:
    """Fold one run result into the leaderboard at ``path`` (locked, atomic); return the entry."""
    entry = entry_from_result(result, result_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=120):
        board = load(path)
        board["entries"] = [e for e in board["entries"] if e["key"] != entry["key"]] + [entry]
        board["entries"].sort(key=lambda e: (e["task"], e["split"], e["demo"], e["key"]))
        board["updated_at"] = now_iso()
        validate(board, SCHEMA, file=path)
        dump_json(board, path)
    return entry


def render(board: dict[str, Any], task: str | None = None) -> str:
    """The leaderboard as text tables, one per task, split and main metric, best first (a task
    whose main metric depends on the run, such as XTREME's all_task for a complete submission and
    a differently named mean for an incomplete one, never ranks two kinds of number together)."""
    entries = [e for e in board["entries"] if task is None or e["task"] == task]
    if not entries:
        return "(no entries)" if task is None else f"(no entries for task '{task}')"
    blocks = []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault((entry["task"], entry["split"], entry["main_metric"]), []).append(entry)
    for (task_name, split, _), group in sorted(groups.items()):
        group.sort(key=lambda e: e["main_score"], reverse=group[0]["higher_is_better"])
        title = f"{task_name} ({split}) - main score: {group[0]['main_metric']}"
        rows = []
        for rank, entry in enumerate(group, start=1):
            scope = []
            if entry["demo"]:
                scope.append("demo data")
            if entry["limit"]:
                scope.append(f"limit {entry['limit']}")
            if entry["task_options"]:
                scope.append(",".join(f"{k}={v}" for k, v in sorted(entry["task_options"].items())))
            rows.append([str(rank), entry["model"]["label"], format_score(entry["main_score"], entry.get("main_interval")),
                         ",".join(entry["languages"]), "; ".join(scope) or "-", entry["finished_at"][:10]])
        header = ["#", "model", group[0]["main_metric"], "languages", "scope", "date"]
        blocks.append(title + "\n" + format_table(header, rows))
    return "\n\n".join(blocks)


def render_matrix(board: dict[str, Any], task: str, metric: str | None = None) -> str:
    """Language-pair rows (e.g. MLQA's G-XLT) as one matrix per entry: rows = first language."""
    blocks = []
    for entry in board["entries"]:
        if entry["task"] != task:
            continue
        pairs = [row for row in entry["rows"] if len(row.get("languages", [])) == 2]
        if not pairs:
            continue
        name = metric or next(iter(pairs[0]["metrics"]))
        if name not in pairs[0]["metrics"]:
            raise HarnessError(f"metric '{name}' is not in the rows of task {task} (metrics: {', '.join(pairs[0]['metrics'])})")
        firsts = list(dict.fromkeys(row["languages"][0] for row in pairs))
        seconds = list(dict.fromkeys(row["languages"][1] for row in pairs))
        cell = {tuple(row["languages"]): row["metrics"][name] for row in pairs}
        body = [[a] + [format_score(cell.get((a, b))) for b in seconds] for a in firsts]
        blocks.append(f"{entry['model']['label']} - {name} (rows: first language, columns: second)\n"
                      + format_table([""] + seconds, body))
    if not blocks:
        return f"(no language-pair rows for task '{task}')"
    return "\n\n".join(blocks)
