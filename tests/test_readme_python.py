"""The README's "From Python" example runs as written (offline, on the built-in demo data)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_from_python_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    section = README.read_text(encoding="utf-8").split("## From Python", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{README}:From Python", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "lareqa" in out.splitlines()[0] and "MainScore(metric='map'" in out
    assert list(tmp_path.iterdir()) == []  # nothing written
