"""Model families: paths relative to the family file, tasks grouped by their model, and a family
running a suite without a scoring task (the XTREME plugin's tests run one with it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.definitions.registry import Registry
from harness.errors import InputError
from harness.options import path_options
from harness.running import planning, runner, settings
from harness.running.family import ModelFamily, run_family
from tests.harness.fakes import fake_registry


def test_path_options_are_the_options_declared_as_paths() -> None:
    def factory(*, weights: Path, vocab: Path | None = None, name: str = "x", size: int = 1) -> None: ...

    assert path_options(factory) == {"weights", "vocab"}


def write_family(path: Path, models: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "f", "models": models}), encoding="utf-8")
    return path


def test_relative_paths_are_relative_to_the_family_file(tmp_path: Path) -> None:
    registry = Registry.discover()
    file = write_family(
        tmp_path / "family" / "family.json",
        {
            "xnli": "hf-classifier:path=heads/xnli,max_length=64",
            "panx,udpos": f"hf-tagger:path={tmp_path / 'elsewhere'}",
            "tatoeba": "bm25:k1=1.2",
        },
    )
    family = ModelFamily.read(file, registry)
    assert family.models == {
        "xnli": f"hf-classifier:path={tmp_path / 'family' / 'heads' / 'xnli'},max_length=64",
        "panx": f"hf-tagger:path={tmp_path / 'elsewhere'}",
        "udpos": f"hf-tagger:path={tmp_path / 'elsewhere'}",
        "tatoeba": "bm25:k1=1.2",
    }
    # grouped by model in the order the tasks come; options kept with their task
    assert family.groups(["udpos", "xnli:labels=L", "panx"]) == [
        (family.models["udpos"], ["udpos", "panx"]),
        (family.models["xnli"], ["xnli:labels=L"]),
    ]
    with pytest.raises(InputError, match="no model for pawsx"):
        family.groups(["xnli", "pawsx"])


def test_a_family_runs_a_suite_without_a_scoring_task(tmp_path: Path) -> None:
    registry = fake_registry()
    family = write_family(tmp_path / "family.json", {"fake-lookup": "word-overlap:weight=2"})
    outcome = run_family(
        planning.expand_suite("fake-both", registry),
        family,
        registry=registry,
        output=settings.OutputOptions(
            output_dir=tmp_path / "results", leaderboard=tmp_path / "board.json", show_progress=False
        ),
    )
    assert outcome.scored is None
    assert [o.result.task.options for o in outcome.runs] == [{"short": False}, {"short": True}]
    assert {o.result.model.identity.options["weight"] for o in outcome.runs} == {2.0}
    direct = runner.run_suite(
        ["fake-lookup", "fake-lookup:short=true"],
        "word-overlap:weight=2",
        registry=registry,
        output=settings.OutputOptions(output_dir=tmp_path / "direct", leaderboard=None, show_progress=False),
    )
    assert [o.result.main_score for o in outcome.runs] == [o.result.main_score for o in direct]
