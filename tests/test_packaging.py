"""What a non-editable install ships: every package folder of the core and of the first-party
plugins is listed in ``pyproject.toml`` (an editable install finds them anyway, so CI did not see
``harness.cli`` missing: ``pip install .`` then ``harness`` failed on its import)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "harness").rglob("__init__.py")}
    folders |= {init.parent.name for init in (ROOT / "plugins").glob("*/__init__.py")}
    assert folders - listed == set()
