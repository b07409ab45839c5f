"""What ``harness list`` shows is what the tasks are, and listing stays light.

``harness list`` reads each plugin's specs without importing its task classes; each task's
metadata is declared once, in a light module both read, and these tests fail when the two views
could disagree, when listing starts importing a heavy library, or when a first-party plugin
imports another one (shared code belongs in the core).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from harness.registry import Registry, TaskSpec

PLUGINS = Path(__file__).parents[2] / "plugins"
#: Libraries that take a noticeable fraction of a second to import (or far more).
HEAVY = ("numpy", "torch", "jsonschema", "scipy", "transformers")


def registered_tasks() -> list[TaskSpec]:
    return [spec for spec, _ in Registry.discover().tasks.entries.values()]


@pytest.mark.parametrize("spec", registered_tasks(), ids=lambda spec: spec.name)
def test_listing_shows_the_tasks_own_metadata(spec: TaskSpec) -> None:
    metadata = spec.load().metadata
    assert (spec.name, spec.summary, spec.languages) == (metadata.name, metadata.description, metadata.languages)


def test_listing_imports_no_heavy_library() -> None:
    probe = ("import sys\n"
             "from harness.cli import main\n"
             "main(['list'])\n"
             f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "xquad" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize("plugin", sorted(p.name for p in PLUGINS.iterdir() if (p / "plugin.py").is_file()))
def test_no_plugin_imports_another(plugin: str) -> None:
    others = {p.name for p in PLUGINS.iterdir() if p.is_dir()} - {plugin}
    imported = {name for path in (PLUGINS / plugin).rglob("*.py") for name in _imported_packages(path)}
    assert imported & others == set()
