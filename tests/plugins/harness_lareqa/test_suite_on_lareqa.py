"""LAReQA with a tiny HF encoder, one model on several tasks: one shared encoding queue, a warm re-run encodes nothing, dry runs,
suite files, and two gloo ranks giving exactly the single-process scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.registry import Registry
from harness.errors import HarnessError
from harness.files.io import read_json
from harness.running import planning, runner, settings
from tests.torchrun import environment, harness_run

SUITE = ["lareqa", "lareqa:candidates=sentence"]


def outputs(tmp_path: Path) -> settings.OutputOptions:
    return settings.OutputOptions(
        output_dir=tmp_path / "results", leaderboard=tmp_path / "board.json", show_progress=False
    )


def test_task_lists_split_on_commas_between_tasks() -> None:
    assert planning.split_task_list("lareqa:candidates=pair,save_top_k=5,mlqa, xquad") == [
        "lareqa:candidates=pair,save_top_k=5",
        "mlqa",
        "xquad",
    ]


def test_suite_files_and_unknown_entries(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "mine", "tasks": ["lareqa", "lareqa:candidates=pair,save_top_k=5"]}))
    assert planning.expand_tasks(f"@{path}", Registry.discover()) == ["lareqa", "lareqa:candidates=pair,save_top_k=5"]
    path.write_text(json.dumps({"name": "mine", "tasks": []}))
    with pytest.raises(HarnessError, match=r"suite.json: field 'tasks': does not match schema suite"):
        planning.expand_tasks(f"@{path}", Registry.discover())


def test_a_suite_encodes_each_text_once_and_a_warm_rerun_encodes_nothing(
    tmp_path: Path, tiny_encoder_dir: Path
) -> None:
    model = f"hf-encoder:path={tiny_encoder_dir}"
    cache_dir = tmp_path / "cache"
    cold = runner.run_suite(
        SUITE, model, output=outputs(tmp_path), execution=settings.ExecutionOptions(cache_dir=cache_dir)
    )
    assert [o.result.task.options for o in cold] == [{"candidates": "concat"}, {"candidates": "sentence"}]
    encoding = cold[-1].result.provenance.execution["encoding"]
    # 324 concatenated candidates + 324 sentences + 216 questions, every one encoded exactly once
    assert encoding["encoded"] == encoding["unique"] == 324 + 324 + 216
    assert encoding["padding_share"] < 0.10
    assert cold[0].result.provenance.execution["suite"] == ["lareqa", "lareqa"]
    board = read_json(tmp_path / "board.json")
    assert len(board["entries"]) == 2

    warm = runner.run_suite(
        SUITE, model, output=outputs(tmp_path), execution=settings.ExecutionOptions(cache_dir=cache_dir)
    )
    warm_encoding = warm[-1].result.provenance.execution["encoding"]
    assert warm_encoding["encoded"] == 0 and warm_encoding["cache_hits"] == 864
    assert [o.result.rows for o in warm] == [o.result.rows for o in cold]


def test_dry_run_prints_the_plan_without_encoding(harness_cli: Any, tiny_encoder_dir: Path) -> None:
    code, out, err = harness_cli(
        "run",
        "lareqa,lareqa:candidates=sentence",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--dry-run",
        "--limit",
        "2",
        "--cache-dir",
        "cache",
    )  # not the session's cache
    assert code == 0, err
    assert "model: tiny-encoder" in out and "device: cpu  precision: float32  world size: 1" in out
    # --limit 2 samples two questions per language (9 languages) and keeps the whole pool: 324
    # candidates per task (concatenated, then sentences alone) + 18 questions per task, the
    # questions shared: 684 requested, 324 + 324 + 18 = 666 unique.
    assert "encoding: 684 texts requested, 666 unique, 0 in the cache, 666 to encode" in out
    assert not Path("results").exists()
    code, out, _ = harness_cli("cache", "info", "--cache-dir", "cache")
    assert code == 0 and "tiny-encoder" not in out  # nothing was encoded, so nothing was cached


@pytest.mark.slow
def test_two_gloo_ranks_give_the_single_process_scores(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    args = [
        "lareqa,lareqa:candidates=sentence",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--no-cache",
        "--quiet",
        "--batch-size",
        "16",
    ]
    env = environment()
    harness_run(tmp_path, [*args, "--output-dir", "single", "--leaderboard", "single.json"], env)
    harness_run(tmp_path, [*args, "--output-dir", "dist", "--leaderboard", "dist.json"], env, ranks=2)
    one, two = read_json(tmp_path / "single.json")["entries"], read_json(tmp_path / "dist.json")["entries"]
    assert len(two) == 2  # rank 0 alone wrote, one entry per task
    assert [e["rows"] for e in two] == [e["rows"] for e in one]
    results = sorted((tmp_path / "dist").rglob("result.json"))
    assert len(results) == 2
    execution = read_json(results[0])["provenance"]["execution"]
    assert execution["world_size"] == 2
    assert execution["encoding"]["encoded"] < execution["encoding"]["unique"]  # each rank encoded a share
    # Every rank's share is recorded, and together they are every text, once.
    shares = [rank["encoding"] for rank in execution["ranks"]]
    whole = execution["all_ranks"]["encoding"]
    assert len(shares) == 2 and whole["encoded"] == sum(s["encoded"] for s in shares) == shares[0]["unique"]
    assert whole["tokens"] == sum(s["tokens"] for s in shares)
    assert whole["seconds"] == max(s["seconds"] for s in shares)


def test_built_in_suites_expand_to_their_tasks() -> None:
    registry = Registry.discover()
    assert planning.expand_tasks("mlqa-all,lareqa", registry) == ["mlqa", "mlqa:mode=gxlt", "lareqa"]
    assert planning.expand_tasks("xtreme-qa", registry) == ["xquad", "mlqa", "tydiqa"]
