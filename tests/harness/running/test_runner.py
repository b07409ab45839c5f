"""The runner end to end on the fake task and models: results, leaderboard, resume, scoring a
predictions file, reference models, plans, and bad input (see tests/harness/fakes.py for the
data and why word-overlap scores p@1 = 4/6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.registry import Registry
from harness.definitions.validation import validate
from harness.errors import CapabilityError
from harness.files.io import read_json
from harness.running import execution, runner, settings
from tests.harness.fakes import FAKE_DATA, SEARCHES, fake_registry

#: p@1 of word-overlap on the fake data, worked out by hand in tests/harness/fakes.py.
EXPECTED_ROWS = [("all", 4 / 6, 6), ("de", 0.5, 2), ("en", 1.0, 2), ("fr", 0.5, 2)]


@pytest.fixture
def registry() -> Registry:
    return fake_registry()


def outputs(tmp_path: Path) -> settings.OutputOptions:
    return settings.OutputOptions(
        output_dir=tmp_path / "results", leaderboard=tmp_path / "board.json", show_progress=False, command=("test",)
    )


def test_a_run_writes_a_valid_result_and_leaderboard(tmp_path: Path, registry: Registry) -> None:
    outcome = runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    result = read_json(outcome.result_path)
    validate(result, "run-result", file=outcome.result_path)
    assert [(r["subset"], r["metrics"]["p@1"], r["count"]) for r in result["rows"]] == EXPECTED_ROWS
    assert result["main_score"] == {"metric": "p@1", "value": 4 / 6}
    assert result["data"]["demo"] is True and result["data"]["source"] == "built-in demo data"
    assert result["data"]["statistics"] == {"questions": 6, "candidates": 3}
    assert [f["path"] for f in result["data"]["files"]] == [str(FAKE_DATA / "lookup.json")]
    predictions = read_json(Path(result["predictions"]["path"]))
    assert predictions["en-1"] == ["c1", "c2"] and predictions["de-2"] == ["c1", "c2"]  # no shared word: corpus order
    board = read_json(tmp_path / "board.json")
    validate(board, "leaderboard", file=tmp_path / "board.json")
    assert [e["model"]["label"] for e in board["entries"]] == ["word-overlap"]
    # the same run again replaces its entry; another option adds one
    runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    runner.run("fake-lookup", "word-overlap:weight=2", output=outputs(tmp_path), registry=registry)
    labels = sorted(e["model"]["label"] for e in read_json(tmp_path / "board.json")["entries"])
    assert labels == ["word-overlap", "word-overlap (weight=2.0)"]


def test_an_interrupted_run_resumes_without_recomputing_saved_units(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SEARCHES, "count", 0)
    monkeypatch.setitem(SEARCHES, "interrupt_at", 3)  # one search per language: the kill comes in fr
    with pytest.raises(KeyboardInterrupt):
        runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    assert sorted(p.name for p in (tmp_path / "results").rglob("parts/*.json")) == ["de.json", "en.json"]
    assert not list((tmp_path / "results").rglob("result.json")) and not (tmp_path / "board.json").exists()

    outcome = runner.run(
        "fake-lookup",
        "word-overlap",
        output=outputs(tmp_path),
        registry=registry,
        execution=settings.ExecutionOptions(resume=True),
    )
    assert outcome.resumed_units == ["de", "en"]
    assert SEARCHES["count"] == 3 + 1  # only fr was searched again
    assert [(r.subset, r.metrics["p@1"], r.count) for r in outcome.result.rows] == EXPECTED_ROWS


def test_scoring_the_predictions_file_gives_the_same_scores(tmp_path: Path, registry: Registry) -> None:
    first = runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    path = Path(first.result.predictions.path)
    scored = runner.score(
        "fake-lookup",
        path,
        output=outputs(tmp_path),
        registry=registry,
        identity=runner.file_identity(path, label="replayed"),
    )
    assert scored.result.kind == "score" and scored.result.rows == first.result.rows
    assert scored.result.model.label == "replayed" and scored.result.model.identity.weights.startswith("sha256:")


def test_reference_models_give_the_metric_bounds(tmp_path: Path, registry: Registry) -> None:
    gold = runner.run("fake-lookup", "reference", output=outputs(tmp_path), registry=registry)
    empty = runner.run("fake-lookup", "reference:kind=empty", output=outputs(tmp_path), registry=registry)
    assert (gold.evaluation.main_score, empty.evaluation.main_score) == (1.0, 0.0)


def test_a_model_without_the_needed_capability_stops_before_loading(tmp_path: Path, registry: Registry) -> None:
    with pytest.raises(CapabilityError) as error:
        runner.run("fake-lookup", "text-only", output=outputs(tmp_path), registry=registry)
    assert (
        str(error.value) == "model text-only cannot run task fake-lookup: fake-lookup needs a Retriever or an Encoder"
    )
    assert not (tmp_path / "results").exists()


def test_limit_and_languages_are_recorded(tmp_path: Path, registry: Registry) -> None:
    outcome = runner.run(
        "fake-lookup",
        "word-overlap",
        data=settings.DataOptions(languages=("en", "fr"), limit=1),
        output=outputs(tmp_path),
        registry=registry,
    )
    data = outcome.result.data
    assert data.languages == ("en", "fr") and data.limit == 1 and data.statistics["questions"] == 2
    # en-1 and fr-1 are both answered: p@1 = 1
    assert [(r.subset, r.metrics["p@1"], r.count) for r in outcome.result.rows] == [
        ("all", 1.0, 2),
        ("en", 1.0, 1),
        ("fr", 1.0, 1),
    ]
    entry = read_json(tmp_path / "board.json")["entries"][0]
    assert entry["limit"] == 1 and entry["languages"] == ["en", "fr"]


def test_a_plan_describes_the_run_without_running_it(tmp_path: Path, registry: Registry) -> None:
    plan = runner.plan_suite(["fake-lookup"], "word-overlap", output=outputs(tmp_path), registry=registry)
    assert isinstance(plan, execution.Plan)
    assert plan.model == "word-overlap" and plan.encoding is None  # not an encoder
    assert [(t["task"], t["units"], t["statistics"]["questions"]) for t in plan.tasks] == [
        ("fake-lookup", ["de", "en", "fr"], 6)
    ]
    assert not (tmp_path / "results").exists() and not (tmp_path / "board.json").exists()
    assert isinstance(
        runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry), runner.Outcome
    )


def test_cli_run_prints_a_table_and_paths(harness_cli: Any, only_fakes: None) -> None:
    code, out, err = harness_cli("run", "fake-lookup", "word-overlap", "--langs", "en,de", "--quiet")
    assert code == 0, err
    assert "Using the built-in demo data" in err
    lines = out.splitlines()
    assert lines[0] == "fake-lookup / word-overlap  (built-in demo data, split test)"
    assert lines[1:6] == [
        "subset  p@1 (0-1)  count",
        "------  ---------  -----",
        "all     0.75       4",
        "en      1          2",
        "de      0.5        2",
    ]  # en-1, en-2, de-1 right, de-2 wrong: 3 of 4
    assert "main score: p@1 (0-1) = 0.75" in out and "result: results/fake-lookup/word-overlap/" in out
    code, out, _ = harness_cli("leaderboard", "show")
    assert code == 0 and out.splitlines()[0] == "fake-lookup (test) - main score: p@1 (fraction)"
    result_path = next(Path("results").rglob("result.json"))
    code, out, _ = harness_cli("validate", str(result_path))
    assert code == 0 and out == f"{result_path}: valid run-result\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "fake-lookup", "word-overlap", "--langs", "xx"], "error: unknown language 'xx' for task fake-lookup"),
        (
            ["run", "fake-lookup", "word-overlap", "--split", "dev"],
            "error: unknown split 'dev' for task fake-lookup (splits: test)",
        ),
        (["run", "fake-lookup", "word-overlp"], "error: unknown model 'word-overlp'; did you mean 'word-overlap'?"),
        (["run", "fake-lookup", "word-overlap:k=2"], "error: model word-overlap: unknown option 'k'"),
        (["run", "fake-lookup", "word-overlap", "--device", "tpu"], "error: unknown device 'tpu'"),
        (["run", "fake-lookup", "word-overlap", "--limit", "0"], "error: --limit must be a positive number"),
        (
            ["run", "fake-lookup", "word-overlap", "--data-dir", "no/such/dir"],
            "error: --data-dir no/such/dir does not exist",
        ),
        (["leaderboard", "show"], "error: no leaderboard at results/leaderboard.json yet"),
    ],
)
def test_user_mistakes_are_one_line_errors_with_exit_code_2(
    harness_cli: Any, only_fakes: None, args: list[str], message: str
) -> None:
    code, out, err = harness_cli(*args)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(message)
    assert not Path("results").exists() and not Path("leaderboard").exists()


def test_cuda_without_a_gpu_is_an_error_not_a_silent_fallback(harness_cli: Any, only_fakes: None) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    code, _, err = harness_cli("run", "fake-lookup", "word-overlap", "--device", "cuda", "--dry-run")
    assert code == 2 and "error: --device cuda was asked for, but torch sees no GPU" in err


def test_a_corrupt_leaderboard_is_reported_and_left_untouched(tmp_path: Path, registry: Registry) -> None:
    board = tmp_path / "board.json"
    board.write_text('{"schema_version": "1.0", "entries": "oops"}')
    before = board.read_bytes()
    with pytest.raises(Exception) as error:
        runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    assert "board.json" in str(error.value) and "does not match schema leaderboard" in str(error.value)
    assert board.read_bytes() == before
    assert json.loads(before)["entries"] == "oops"


def test_a_folder_of_benchmarks_serves_every_task(tmp_path: Path, registry: Registry) -> None:
    shutil.copytree(FAKE_DATA, tmp_path / "benchmarks" / "fake" / "lookup")  # the task's data_subdir
    outcome = runner.run(
        "fake-lookup",
        "reference",
        data=settings.DataOptions(data_dir=tmp_path / "benchmarks"),
        output=outputs(tmp_path),
        registry=registry,
    )
    assert outcome.result.data.source == str(tmp_path / "benchmarks" / "fake" / "lookup")
    assert outcome.result.data.demo is False and outcome.evaluation.main_score == 1.0


def test_the_commit_a_result_records_is_read_when_the_run_starts(tmp_path: Path, registry: Registry) -> None:
    """A run of hours records the code it started with, not a commit made while it ran: the
    (cached) commit is read when the run is opened, before any work."""
    from harness.results import provenance

    provenance.git_commit.cache_clear()
    runner.plan_suite(["fake-lookup"], "word-overlap", output=outputs(tmp_path), registry=registry)
    assert provenance.git_commit.cache_info().currsize == 1
