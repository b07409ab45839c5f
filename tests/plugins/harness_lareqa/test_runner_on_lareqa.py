"""The runner end to end with first-party plugins (LAReQA, BM25, baselines) on the demo data: results,
resume, replay, and bad input. The core behaviour is tested on fakes in tests/harness/running/test_runner.py."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.hookspecs import hookimpl
from harness.definitions.registry import Registry
from harness.definitions.specs import ModelSpec, PluginInfo
from harness.definitions.validation import validate
from harness.errors import CapabilityError
from harness.files.io import read_json
from harness.running import runner, settings
from harness_bm25.model import BM25

CALLS: dict[str, int] = {"search": 0}


class InterruptedBM25(BM25):
    """BM25 that is 'killed' (KeyboardInterrupt) in its 3rd search call, i.e. in the 3rd language."""

    def index(self, corpus: Any) -> Any:
        inner = super().index(corpus)

        class Flaky:
            def search(self, queries: Any, **kwargs: Any) -> Any:
                CALLS["search"] += 1
                if CALLS["search"] == 3:
                    raise KeyboardInterrupt
                return inner.search(queries, **kwargs)

        return Flaky()


class TextOnly:
    """A model with no capability any retrieval task can use."""

    def __init__(self, *, runtime: Any) -> None:
        pass


@pytest.fixture
def registry() -> Registry:
    registry = Registry.discover()
    plugin = types.SimpleNamespace(
        harness_models=hookimpl(
            lambda: [
                ModelSpec("interrupted-bm25", f"{__name__}:InterruptedBM25"),
                ModelSpec("text-only", f"{__name__}:TextOnly"),
            ]
        )
    )
    registry.add_plugin(plugin, PluginInfo("test-models"))
    return registry


def outputs(tmp_path: Path) -> settings.OutputOptions:
    return settings.OutputOptions(
        output_dir=tmp_path / "results", leaderboard=tmp_path / "board.json", show_progress=False, command=("test",)
    )


def test_a_run_writes_a_valid_result_and_leaderboard(tmp_path: Path) -> None:
    outcome = runner.run("lareqa", "bm25", output=outputs(tmp_path))
    result = read_json(outcome.result_path)
    validate(result, "run-result", file=outcome.result_path)
    assert result["data"]["demo"] is True and result["data"]["source"] == "built-in demo data"
    assert result["data"]["statistics"]["questions"] == 9 * 24
    assert len(result["data"]["files"]) == 9 and all(len(f["sha256"]) == 64 for f in result["data"]["files"])
    assert result["rows"][0]["subset"] == "all"
    assert result["main_score"] == {
        "metric": "map",
        "value": result["rows"][0]["metrics"]["map"],
        "interval": result["rows"][0]["intervals"]["map"],
    }
    low, high = result["main_score"]["interval"]
    assert low < result["main_score"]["value"] < high
    assert (outcome.result_path.parent / "instances.jsonl").read_text(encoding="utf-8").count("\n") == 9 * 24
    assert Path(result["predictions"]["path"]).exists()
    board = read_json(tmp_path / "board.json")
    validate(board, "leaderboard", file=tmp_path / "board.json")
    assert [e["model"]["label"] for e in board["entries"]] == ["BM25"]
    # the same run again replaces its entry; a different model adds one
    runner.run("lareqa", "bm25", output=outputs(tmp_path))
    runner.run("lareqa", "bm25:k1=1.2", output=outputs(tmp_path))
    labels = sorted(e["model"]["label"] for e in read_json(tmp_path / "board.json")["entries"])
    assert labels == ["BM25", "BM25 (k1=1.2)"]


def test_an_interrupted_run_resumes_without_recomputing_saved_units(tmp_path: Path, registry: Registry) -> None:
    CALLS["search"] = 0
    with pytest.raises(KeyboardInterrupt):
        runner.run("lareqa", "interrupted-bm25", output=outputs(tmp_path), registry=registry)
    parts = sorted(p.name for p in (tmp_path / "results").rglob("parts/*.json"))
    assert parts == ["ar.json", "de.json"]  # two languages finished before the kill
    assert not list((tmp_path / "results").rglob("result.json"))
    assert not (tmp_path / "board.json").exists()

    outcome = runner.run(
        "lareqa",
        "interrupted-bm25",
        output=outputs(tmp_path),
        registry=registry,
        execution=settings.ExecutionOptions(resume=True),
    )
    assert outcome.resumed_units == ["ar", "de"]
    assert CALLS["search"] == 3 + 7  # only the 7 unfinished languages were searched again
    plain = runner.run("lareqa", "bm25", output=outputs(tmp_path))
    assert outcome.result.rows == plain.result.rows


def test_replaying_predictions_gives_the_same_scores(tmp_path: Path) -> None:
    first = runner.run("lareqa", "bm25", output=outputs(tmp_path))
    replay = runner.run(
        "lareqa", f"predictions:file={first.result.predictions.path},label=replayed", output=outputs(tmp_path)
    )
    assert replay.result.rows == first.result.rows
    assert replay.result.model.identity.weights.startswith("sha256:")
    scored = runner.score("lareqa", Path(first.result.predictions.path), output=outputs(tmp_path))
    assert scored.result.kind == "score" and scored.result.rows == first.result.rows


def test_reference_models_give_the_metric_bounds(tmp_path: Path) -> None:
    assert runner.run("lareqa", "oracle", output=outputs(tmp_path)).evaluation.main_score == 1.0
    assert runner.run("lareqa", "empty", output=outputs(tmp_path)).evaluation.main_score == 0.0
    assert runner.run("lareqa:pool=mono", "oracle", output=outputs(tmp_path)).evaluation.main_score == 1.0
    assert runner.run("lareqa:pool=mono", "empty", output=outputs(tmp_path)).evaluation.main_score == 0.0


def test_a_model_without_the_needed_capability_stops_before_loading(tmp_path: Path, registry: Registry) -> None:
    with pytest.raises(CapabilityError) as error:
        runner.run("lareqa", "text-only", output=outputs(tmp_path), registry=registry)
    assert str(error.value) == "model text-only cannot run task lareqa: lareqa needs a Retriever or an Encoder"


def test_limit_and_languages_are_recorded(tmp_path: Path) -> None:
    outcome = runner.run(
        "lareqa", "bm25", data=settings.DataOptions(languages=("en", "zh"), limit=5), output=outputs(tmp_path)
    )
    data = outcome.result.data
    assert data.languages == ("en", "zh") and data.limit == 5
    assert data.statistics["questions_per_language"] == {"en": 5, "zh": 5}
    entry = read_json(tmp_path / "board.json")["entries"][0]
    assert entry["limit"] == 5 and entry["languages"] == ["en", "zh"]


def test_limit_samples_questions_against_the_full_pool(tmp_path: Path) -> None:
    # The demo data: 24 questions in each of 9 languages, 324 candidates.
    full = runner.run("lareqa", "bm25", output=outputs(tmp_path / "full"))
    limited = runner.run("lareqa", "bm25", data=settings.DataOptions(limit=3), output=outputs(tmp_path / "limited"))
    again = runner.run("lareqa", "bm25", data=settings.DataOptions(limit=3), output=outputs(tmp_path / "again"))
    stats = limited.result.data.statistics
    assert stats["candidates"] == full.result.data.statistics["candidates"] == 324
    assert stats["questions_per_language"] == {lang: 3 for lang in stats["questions_per_language"]}
    assert stats["sample"] == {"per_language": 3, "seed": 0, "of_questions": 216}
    assert any("seeded sample" in note and "full pool of 324" in note for note in limited.result.notes)

    def lines(outcome: runner.Outcome) -> dict[str, dict[str, Any]]:
        path = Path(outcome.result.predictions.path)
        return {item["question_id"]: item for item in map(json.loads, path.read_text(encoding="utf-8").splitlines())}

    sampled, everything = lines(limited), lines(full)
    assert sampled == lines(again)  # seeded
    ids = {uid.rsplit("_", 1)[0] for uid in sampled}
    assert len(ids) == 3 and len(sampled) == 27  # the same three questions in every language
    head = [uid.rsplit("_", 1)[0] for uid in everything if uid.endswith("_ar")][:3]
    assert ids != set(head)  # drawn at random, not the file's first questions (what --limit kept before)
    # against the same pool, each sampled question is ranked exactly as in the full run
    assert all(item == everything[uid] for uid, item in sampled.items())


def test_cli_run_prints_a_table_and_paths(harness_cli: Any) -> None:
    code, out, err = harness_cli("run", "lareqa", "bm25", "--langs", "en,de", "--limit", "4", "--quiet")
    assert code == 0, err
    assert "Using the built-in demo data" in err
    assert "main score: map (0-1) = " in out and "result: results/lareqa/bm25/" in out
    code, out, _ = harness_cli("leaderboard", "show")
    assert code == 0 and "lareqa (test) - main score: map" in out and "limit 4" in out
    result_path = next(Path("results").rglob("result.json"))
    code, out, _ = harness_cli("validate", str(result_path))
    assert code == 0 and "valid run-result" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "lareqa", "bm25", "--langs", "xx"], "error: unknown language 'xx' for task lareqa"),
        (["run", "lareqa", "bm25", "--split", "dev"], "error: unknown split 'dev' for task lareqa (splits: test)"),
        (["run", "lareqa", "bm26"], "error: unknown model 'bm26'; did you mean 'bm25'?"),
        (["run", "lareqa", "bm25:k=2"], "error: model bm25: unknown option 'k'"),
        (["run", "lareqa", "bm25", "--device", "tpu"], "error: unknown device 'tpu'"),
        (["run", "lareqa", "bm25", "--limit", "0"], "error: --limit must be a positive number"),
        (["run", "lareqa", "bm25", "--data-dir", "no/such/dir"], "error: --data-dir no/such/dir does not exist"),
        (["leaderboard", "show"], "error: no leaderboard at results/leaderboard.json yet"),
    ],
)
def test_user_mistakes_are_one_line_errors_with_exit_code_2(harness_cli: Any, args: list[str], message: str) -> None:
    code, out, err = harness_cli(*args)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(message)
    assert not Path("results").exists() and not Path("leaderboard").exists()


def test_cuda_without_a_gpu_is_an_error_not_a_silent_fallback(harness_cli: Any, tiny_encoder_dir: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    code, _, err = harness_cli("run", "lareqa", f"hf-encoder:path={tiny_encoder_dir}", "--device", "cuda")
    assert code == 2 and "error: --device cuda was asked for, but torch sees no GPU" in err


def test_a_corrupt_leaderboard_is_reported_and_left_untouched(tmp_path: Path) -> None:
    board = tmp_path / "board.json"
    board.write_text('{"schema_version": "1.0", "entries": "oops"}')
    before = board.read_bytes()
    with pytest.raises(Exception) as error:
        runner.run("lareqa", "bm25", output=outputs(tmp_path))
    assert "board.json" in str(error.value) and "does not match schema leaderboard" in str(error.value)
    assert board.read_bytes() == before
    assert json.loads(before)["entries"] == "oops"


def test_a_folder_of_benchmarks_serves_every_task(tmp_path: Path) -> None:
    import shutil

    from harness.demo import parallel_qa_dir

    shutil.copytree(parallel_qa_dir(), tmp_path / "benchmarks" / "lareqa" / "xquad-r")
    outcome = runner.run(
        "lareqa", "oracle", data=settings.DataOptions(data_dir=tmp_path / "benchmarks"), output=outputs(tmp_path)
    )
    assert outcome.result.data.source == str(tmp_path / "benchmarks" / "lareqa" / "xquad-r")
    assert outcome.result.data.demo is False and outcome.evaluation.main_score == 1.0
