"""The official fixtures vendored under tests/fixtures are byte-for-byte the real-data files, and
small enough to ship with the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.files.io import sha256_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VENDORED = [p.relative_to(FIXTURES) for p in sorted(FIXTURES.glob("xtreme/mock_test_data/**/*")) if p.is_file()] + [
    Path("mkqa/test_mkqa.jsonl.gz"),
    Path("mkqa/official-test-fixture/en_prediction.jsonl"),
]


def test_the_vendored_fixtures_are_the_official_files(real_data: Path) -> None:
    originals = sorted(
        p.relative_to(real_data) for p in (real_data / "xtreme" / "mock_test_data").rglob("*") if p.is_file()
    )
    assert [p for p in VENDORED if p.parts[0] == "xtreme"] == originals  # the whole folder, nothing more
    differing = [str(p) for p in VENDORED if sha256_file(FIXTURES / p) != sha256_file(real_data / p)]
    assert differing == []


def test_the_vendored_fixtures_stay_small() -> None:
    assert sum((FIXTURES / p).stat().st_size for p in VENDORED) < 200_000  # bytes; today about 128 KB


@pytest.mark.parametrize("folder", ["xtreme", "mkqa"])
def test_every_vendored_folder_has_its_licence_note(folder: str) -> None:
    note = (FIXTURES / folder / "README.md").read_text(encoding="utf-8")
    assert "licence" in note.lower() and "## The official numbers" in note and "attribution" in note.lower()
