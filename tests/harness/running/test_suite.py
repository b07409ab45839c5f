"""One model, several tasks, on the fake task and the fake letter-count encoder: one shared
encoding queue, a warm re-run encodes nothing, dry runs, suite files and suite names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.registry import Registry
from harness.errors import HarnessError
from harness.files.io import read_json
from harness.running import planning, runner, settings
from tests.harness.fakes import fake_registry

SUITE = ["fake-lookup", "fake-lookup:short=true"]
# The two tasks share the 6 questions; their pools differ (3 sentences, and the same 3 cut to two
# words): 2 x (3 + 6) = 18 texts requested, 3 + 3 + 6 = 12 of them different.
REQUESTED, UNIQUE = 18, 12


@pytest.fixture
def registry() -> Registry:
    return fake_registry()


def outputs(tmp_path: Path) -> settings.OutputOptions:
    return settings.OutputOptions(
        output_dir=tmp_path / "results", leaderboard=tmp_path / "board.json", show_progress=False
    )


def test_task_lists_split_on_commas_between_tasks() -> None:
    assert planning.split_task_list("fake-lookup:short=true,weight=2,other, third") == [
        "fake-lookup:short=true,weight=2",
        "other",
        "third",
    ]


def test_suite_files_suite_names_and_unknown_entries(tmp_path: Path, registry: Registry) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "mine", "tasks": ["fake-lookup", "fake-lookup:short=true"]}))
    assert planning.expand_tasks(f"@{path}", registry) == SUITE
    assert planning.expand_tasks("fake-both,fake-lookup", registry) == [*SUITE, "fake-lookup"]
    path.write_text(json.dumps({"name": "mine", "tasks": []}))
    with pytest.raises(HarnessError, match=r"suite.json: field 'tasks': does not match schema suite"):
        planning.expand_tasks(f"@{path}", registry)


def test_a_suite_encodes_each_text_once_and_a_warm_rerun_encodes_nothing(tmp_path: Path, registry: Registry) -> None:
    cache_dir = tmp_path / "cache"
    cold = runner.run_suite(
        SUITE,
        "letter-counts",
        output=outputs(tmp_path),
        execution=settings.ExecutionOptions(cache_dir=cache_dir),
        registry=registry,
    )
    assert [o.result.task.options for o in cold] == [{"short": False}, {"short": True}]
    encoding = cold[-1].result.provenance.execution["encoding"]
    assert encoding["encoded"] == encoding["unique"] == UNIQUE
    assert cold[0].result.provenance.execution["suite"] == ["fake-lookup", "fake-lookup"]
    assert len(read_json(tmp_path / "board.json")["entries"]) == 2

    warm = runner.run_suite(
        SUITE,
        "letter-counts",
        output=outputs(tmp_path),
        execution=settings.ExecutionOptions(cache_dir=cache_dir),
        registry=registry,
    )
    warm_encoding = warm[-1].result.provenance.execution["encoding"]
    assert warm_encoding["encoded"] == 0 and warm_encoding["cache_hits"] == UNIQUE
    assert [o.result.rows for o in warm] == [o.result.rows for o in cold]


def test_dry_run_prints_the_plan_without_encoding(harness_cli: Any, only_fakes: None) -> None:
    code, out, err = harness_cli("run", ",".join(SUITE), "letter-counts", "--dry-run")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "model: letter-counts  device: cpu  precision: n/a  world size: 1"
    assert lines[-2].startswith(
        f"encoding: {REQUESTED} texts requested, {UNIQUE} unique, 0 in the cache, {UNIQUE} to encode ("
    )
    assert lines[-1].startswith("estimated encoding time: ") and "tokens/s measured on " in lines[-1]
    assert not Path("results").exists()
    code, out, _ = harness_cli("cache", "info")
    assert code == 0 and "letter-counts" not in out  # nothing was encoded, so nothing was cached
