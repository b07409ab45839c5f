"""The per-instance file beside ``result.json``: one line per scored question, written atomically.

What a line holds is :class:`harness.stats.records.Instance`; this module reads and writes the
file, checking each line against its schema, so the statistics stay free of files and schemas.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from harness.definitions.validation import validate
from harness.errors import InputError
from harness.files.io import iter_jsonl, write_atomic
from harness.files.records import to_json_values
from harness.stats.records import Instance

#: The name of the per-instance file beside ``result.json``, and the schema of one of its lines.
INSTANCES_FILE = "instances.jsonl"
INSTANCE_SCHEMA = "instance"


def write_instances(instances: Sequence[Instance], path: Path) -> None:
    """Write the records as compact JSON lines, atomically (a kill leaves the old file or none)."""
    lines = [
        json.dumps(raw, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        for raw in to_json_values(Instance, instances)
    ]
    payload = "".join(line + "\n" for line in lines).encode("utf-8")
    write_atomic(path, lambda handle: handle.write(payload))


def read_instances(path: Path) -> list[Instance]:
    """Read and validate a per-instance file; a bad line is one error naming file, line and field."""
    out = []
    for line, raw in iter_jsonl(path):
        validate(raw, INSTANCE_SCHEMA, file=path, record=f"line {line}")
        instance = Instance.from_dict(raw)
        bad = next((name for name, value in instance.values.items() if not math.isfinite(value)), None)
        if bad is not None:
            raise InputError("not a finite number", file=path, record=f"line {line}", field=f"values.{bad}")
        out.append(instance)
    if not out:
        raise InputError("no instances", file=path)
    return out
