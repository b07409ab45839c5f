"""Issue 11: ``--resume`` after damage -- a unit file cut short, edited, or not this run's is
dropped with a warning and its unit predicted again; temporaries of a killed write are removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.definitions.registry import Registry
from harness.running import runner, settings
from tests.harness.fakes import SEARCHES, fake_registry
from tests.harness.running.test_runner import EXPECTED_ROWS, outputs


@pytest.fixture
def registry() -> Registry:
    return fake_registry()


def _interrupted(tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run until the third unit (fr) is interrupted; return the parts folder (de.json, en.json)."""
    monkeypatch.setitem(SEARCHES, "count", 0)
    monkeypatch.setitem(SEARCHES, "interrupt_at", 3)
    with pytest.raises(KeyboardInterrupt):
        runner.run("fake-lookup", "word-overlap", output=outputs(tmp_path), registry=registry)
    (parts,) = list((tmp_path / "results").rglob("parts"))
    return parts


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda text: text[: len(text) // 2], "malformed JSON"),
        (lambda text: "", "malformed JSON"),
        (lambda text: json.dumps([1, 2]), "not a unit file of this harness version"),
        (lambda text: json.dumps({**json.loads(text), "predictions": {"de-1": 7}}), "does not match its checksum"),
        (lambda text: json.dumps({**json.loads(text), "run_id": "0" * 16}), "a unit of another run"),
        (lambda text: json.dumps({**json.loads(text), "unit": "xx"}), "unit 'xx' is not a unit of this run"),
        (
            lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "sha256"}),
            "not a unit file of this harness version",
        ),
    ],
)
def test_a_damaged_unit_is_dropped_and_predicted_again(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch, damage, problem: str
) -> None:
    parts = _interrupted(tmp_path, registry, monkeypatch)
    de = parts / "de.json"
    de.write_text(damage(de.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.warns(RuntimeWarning, match=f"de.json: .*{problem}.*; that unit is predicted again"):
        outcome = runner.run(
            "fake-lookup",
            "word-overlap",
            output=outputs(tmp_path),
            registry=registry,
            execution=settings.ExecutionOptions(resume=True),
        )
    assert outcome.resumed_units == ["en"]
    assert SEARCHES["count"] == 3 + 2  # de and fr searched again
    assert [(r.subset, r.metrics["p@1"], r.count) for r in outcome.result.rows] == EXPECTED_ROWS


def test_stale_temporaries_of_the_run_are_removed_on_resume(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = _interrupted(tmp_path, registry, monkeypatch)
    run_dir = parts.parent
    stale = [run_dir / ".predictions.jsonl.abc123.tmp", parts / ".fr.json.x1y2.tmp", run_dir / ".predictions.q9.old"]
    stale[0].write_text("half", encoding="utf-8")
    stale[1].write_text("{", encoding="utf-8")
    stale[2].mkdir()
    (stale[2] / "inner").write_text("x", encoding="utf-8")
    outcome = runner.run(
        "fake-lookup",
        "word-overlap",
        output=outputs(tmp_path),
        registry=registry,
        execution=settings.ExecutionOptions(resume=True),
    )
    assert outcome.resumed_units == ["de", "en"]
    assert not any(path.exists() for path in stale)
    assert not list(run_dir.rglob(".*"))


def test_span_qa_prediction_folders_are_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = outputs(tmp_path)
    first = runner.run("xquad", "oracle", output=output)
    folder = Path(first.result.predictions.path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert len(before) > 1  # one file per language: a kill between two of them is possible
    writes = []

    def write_bytes_then_die(self: Path, data: bytes) -> int:
        if writes:
            raise KeyboardInterrupt  # killed after the first file of the folder
        writes.append(self)
        return original(self, data)

    original = Path.write_bytes
    monkeypatch.setattr(Path, "write_bytes", write_bytes_then_die)
    with pytest.raises(KeyboardInterrupt):
        runner.run("xquad", "empty", output=output)
    monkeypatch.setattr(Path, "write_bytes", original)
    (empty_run,) = [p for p in (tmp_path / "results" / "xquad").iterdir() if p.name != folder.parent.parent.name]
    assert not list(empty_run.rglob("predictions")) and not list(empty_run.rglob(".*"))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
