"""The core's rooms stand in one order: every import points down or within its room, and no
module reaches itself through its imports, type-hint imports and imports inside functions included.

``docs/architecture.md`` draws the rooms in :data:`ROOMS`' order, lowest first; this test reads
every import of every module under ``harness/`` with ``ast`` (nothing is run) and fails on an
arrow up (a room importing one above it) and on any circle of modules, naming the files and the
import. ``harness/__init__.py`` is the package's face (the version, and the library API imported
on first use): it stands above everything and only :mod:`harness.results.provenance` reads it
(for ``__version__``), so it is left out of the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).parents[2] / "harness"
#: The rooms, lowest first: a module may import its own room and the rooms before it.
ROOMS = (
    "harness.errors",  # the errors every room raises
    "harness.files",  # files on disk and over the network
    "harness.display",  # what a person sees: progress, tables, wording
    "harness.demo",  # the parallel-QA demo data
    "harness.options",  # typed options of tasks and models
    "harness.stats",  # per-question records, statistics, the bootstrap and paired tests
    "harness.definitions",  # what a task, a model, a capability and a plugin are; the registry
    "harness.data",  # the benchmarks' data: the data home, passages, sentences
    "harness.scoring",  # the shared official scorers and metrics
    "harness.models",  # models and their services (encoding, generation, log-likelihood, cache)
    "harness.qa",  # the span-QA task bases
    "harness.results",  # the result file and what sits beside it
    "harness.leaderboard",  # the leaderboard
    "harness.running",  # running a plan: planning, execution, recording
    "harness.api",  # the library API
    "harness.cli",  # the command line
    "harness.__main__",
    "harness.plugin",  # the plugin contract (it hands on names from the rooms below)
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(CORE.rglob("*.py")) if path != CORE / "__init__.py"}


def imports(name: str, path: Path, known: set[str]) -> set[tuple[str, int]]:
    """The core modules ``name`` imports, at any depth of its code, each with a line it does so."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add((target, node.lineno))
    return found


def graph() -> dict[str, set[tuple[str, int]]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def room(name: str) -> int:
    for index, prefix in enumerate(ROOMS):
        if name == prefix or name.startswith(prefix + "."):
            return index
    raise AssertionError(f"{name} stands in no room: add it to ROOMS (and to docs/architecture.md)")


def test_every_module_stands_in_a_room() -> None:
    assert [name for name in modules() if not any(name == r or name.startswith(r + ".") for r in ROOMS)] == []


def test_no_arrow_runs_up() -> None:
    up = [
        f"{modules()[name].relative_to(CORE.parent)}:{line} imports {target} ({ROOMS[room(target)]} stands above "
        f"{ROOMS[room(name)]})"
        for name, targets in graph().items()
        for target, line in sorted(targets)
        if room(target) > room(name)
    ]
    assert up == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_reaches_itself() -> None:
    edges = {name: {target for target, _ in targets} for name, targets in graph().items()}
    assert cycles(edges) == []


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_circle_finder_finds_circles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(edges) == expected


def test_the_graph_sees_type_hint_and_function_imports() -> None:
    """The two kinds of import a first glance misses are arrows too."""
    edges = {target for target, _ in graph()["harness.definitions.model"]}
    assert "harness.definitions.specs" in edges  # under ``if TYPE_CHECKING``
    assert "harness.running.planning" in {target for target, _ in graph()["harness.api"]}  # inside a function
