"""A plugin sees the harness through its contract, ``harness.plugin``, and nothing else.

The first-party plugins are written as a third party must write one: every import of the
harness they make names a public module (:data:`PUBLIC`), so the contract is what they need and
any other module of the core can move without breaking a plugin. The example plugin and the
Python in the plugins' READMEs are held to the same line. The contract's own declarations must
stay light (``harness list`` imports every plugin module) and say what they export.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
#: The modules a plugin may import: the contract, and the library API (``harness.evaluate``...).
CONTRACT = (
    "harness.plugin",
    "harness.plugin.io",
    "harness.plugin.formats",
    "harness.plugin.scoring",
    "harness.plugin.services",
    "harness.plugin.tasks",
)
PUBLIC = frozenset({*CONTRACT, "harness", "harness.api"})
#: Where plugin code lives: the first-party plugins and the example third-party plugin.
PLUGIN_ROOTS = (ROOT / "plugins", ROOT / "examples" / "third_party_plugin")


def harness_imports(source: str) -> list[tuple[int, str]]:
    """Each import of a ``harness`` module in ``source`` (at any depth: in a function, under
    ``if TYPE_CHECKING``), as (line, module); ``from harness import api`` counts as ``harness.api``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name == "harness" or alias.name.startswith("harness.")
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == "harness":
                found += [
                    (node.lineno, f"harness.{alias.name}")
                    for alias in node.names
                    if f"harness.{alias.name}" in PUBLIC or alias.name[0].islower()
                ]
            elif node.module.startswith("harness."):
                found.append((node.lineno, node.module))
    return found


def plugin_sources() -> list[tuple[str, str]]:
    """(where, Python source) for every plugin module and every Python block of a plugin README."""
    sources = []
    for root in PLUGIN_ROOTS:
        for path in sorted(root.rglob("*.py")):
            sources.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
        for path in sorted(root.rglob("README.md")):
            for index, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)):
                sources.append((f"{path.relative_to(ROOT)} (python block {index + 1})", block))
    return sources


def test_the_census_finds_the_plugins() -> None:
    """The line below holds over something: every first-party plugin and the example are read."""
    read = {where.split("/")[1] for where, _ in plugin_sources() if where.startswith("plugins/")}
    plugins = {path.name for path in (ROOT / "plugins").iterdir() if (path / "plugin.py").is_file()}
    assert plugins and read == plugins
    assert any(where.startswith("examples/") for where, _ in plugin_sources())


@pytest.mark.parametrize("where, source", plugin_sources(), ids=lambda value: value if "/" in value else "")
def test_plugins_import_only_public_modules(where: str, source: str) -> None:
    internal = [f"line {line}: {module}" for line, module in harness_imports(source) if module not in PUBLIC]
    assert internal == [], f"{where} imports internal harness modules (use harness.plugin): {internal}"


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import harness.definitions.task\nfrom harness import cli\nfrom harness.plugin import Task\n"
        "def f():\n    from harness.scoring.spans import score_questions\n"
        "if True:\n    from harness.plugin.scoring import Mean\n"
    )
    internal = [module for _, module in harness_imports(source) if module not in PUBLIC]
    assert internal == ["harness.definitions.task", "harness.cli", "harness.scoring.spans"]


@pytest.mark.parametrize("name", CONTRACT)
def test_each_contract_module_exports_what_it_lists(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__ and "harness.plugin" in module.__doc__
    missing = [item for item in module.__all__ if not hasattr(module, item)]
    assert missing == []
    imported = {
        item
        for item, value in vars(module).items()
        if not item.startswith("_") and item != "annotations" and not isinstance(value, type(sys))
    }
    assert imported == set(module.__all__)


def test_declaring_a_plugin_imports_nothing_heavy() -> None:
    """``harness list`` imports every plugin's declarations: the contract modules they use are light."""
    probe = (
        "import sys, harness.plugin, harness.plugin.io\n"
        "print(sorted(m for m in ('numpy', 'torch', 'jsonschema', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
