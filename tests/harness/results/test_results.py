"""The typed run result: it reads back what it writes, and migrates results of older versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.definitions.validation import validate
from harness.files.io import json_bytes, read_json
from harness.results.result import SCHEMA_VERSION, RunResult, migrate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def test_a_version_0_result_migrates_to_the_current_version() -> None:
    raw = read_json(FIXTURES / "version-0.json")
    assert "schema_version" not in raw
    result = RunResult.from_dict(raw)
    assert result.schema_version == SCHEMA_VERSION == "1.0"
    # version 0 differs from 1.0 only by the missing field: everything else reads back as it was
    assert result.to_dict() == {"schema_version": "1.0", **raw}
    validate(result.to_dict(), "run-result", file="migrated version-0.json")
    assert result.model.label == "BM25" and result.main_score.value == raw["main_score"]["value"]
    assert [row.subset for row in result.rows] == ["all", "en", "de"]
    assert result.rows[1].languages == ("en",) and result.rows[0].languages == ()


def test_a_result_of_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown run-result schema_version '9.9'"):
        migrate({"schema_version": "9.9"})


SHIPPED = sorted((Path(__file__).resolve().parents[3] / "leaderboard" / "results").glob("**/result.json"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.parent.parent.name + "/" + path.parent.name)
def test_a_written_result_reads_and_writes_back_byte_for_byte(path: Path) -> None:
    """The records lay a result out as the harness wrote it: the same keys in the same order (the
    provenance's own order, ``schema_version`` first), optional keys only where set."""
    text = path.read_bytes()
    assert json_bytes(RunResult.from_dict(json.loads(text)).to_dict()) == text
