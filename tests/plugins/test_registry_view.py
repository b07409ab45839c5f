"""What ``harness list`` shows is what the tasks are, listing stays light, and every first-party
plugin says in its README what it provides.

``harness list`` reads each plugin's specs without importing its task classes; each task's
metadata is declared once, in a light module both read, and these tests fail when the two views
could disagree, when listing starts importing a heavy library, when a first-party plugin
imports another one (shared code belongs in the core), or when a task, model or suite is added
to a first-party plugin without a word in that plugin's README.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from harness.definitions.hookspecs import ENTRY_POINT_GROUP
from harness.definitions.registry import Registry
from harness.definitions.specs import TaskSpec

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
    probe = (
        "import sys\n"
        "from harness.cli import main\n"
        "main(['list'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "xquad" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize("plugin", sorted(p.name for p in PLUGINS.iterdir() if (p / "plugin.py").is_file()))
def test_no_plugin_imports_another(plugin: str) -> None:
    others = {p.name for p in PLUGINS.iterdir() if p.is_dir()} - {plugin}
    imported = {name for path in (PLUGINS / plugin).rglob("*.py") for name in _imported_packages(path)}
    assert imported & others == set()


def first_party_names() -> dict[str, list[str]]:
    """Each first-party plugin folder and the names (tasks, models, suites) its plugin registers."""
    folder_of = {ep.name: ep.value.split(".")[0] for ep in entry_points(group=ENTRY_POINT_GROUP)}
    names: dict[str, list[str]] = {p.name: [] for p in PLUGINS.iterdir() if (p / "plugin.py").is_file()}
    registry = Registry.discover()
    for namespace in (registry.tasks, registry.models, registry.suites):
        for name, (_, plugin) in namespace.entries.items():
            if folder_of.get(plugin.name) in names:
                names[folder_of[plugin.name]].append(name)
    return names


@pytest.mark.parametrize("folder, names", sorted(first_party_names().items()))
def test_each_plugin_readme_names_each_of_its_tasks_and_models(folder: str, names: list[str]) -> None:
    readme = PLUGINS / folder / "README.md"
    assert readme.is_file(), f"{folder} has no README.md (what it reproduces, options, data layout, a command)"
    text = readme.read_text(encoding="utf-8")
    # written as code, inline or in a fenced block: `xquad`, `mlqa:mode=gxlt`, `harness run xquad ...`
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", " ", text, flags=re.S))
    code = " ".join(blocks + inline)
    # a name followed or preceded by more of a name is another one: `mlqa-r` does not name `mlqa`
    undocumented = [name for name in names if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", code)]
    assert names and not undocumented, f"{readme} does not name {undocumented}"
