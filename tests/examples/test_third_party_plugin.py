"""A separately installed plugin package is found and used exactly like the built-in ones."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_plugin"
HARNESS = [sys.executable, "-m", "harness"]


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    source = tmp_path_factory.mktemp("example") / "third_party_plugin"
    shutil.copytree(EXAMPLE, source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-build-isolation", "--no-index", str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    try:
        yield
    finally:
        subprocess.run(
            [*pip, "uninstall", "-y", "harness-example-plugin"], check=True, capture_output=True, timeout=120
        )


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_installed_plugin_is_listed_and_runs(installed_example: None, tmp_path: Path) -> None:
    listing = harness("list", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "example-capitals" in listing.stdout and "char-trigram" in listing.stdout
    assert "lareqa" in listing.stdout  # first-party plugins are still there

    run = harness("run", "example-capitals", "char-trigram", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    # Trigram overlap puts each question's own-language answer first (checked by hand: e.g. the
    # English question shares "the capital of france" with en-1 and only "the capital of" with en-2).
    assert "main score: p@1 (0-1) = 1" in run.stdout

    mixed = harness("run", "lareqa", "char-trigram:dim=64", "--limit", "2", "--quiet", cwd=tmp_path)
    assert mixed.returncode == 0, mixed.stderr
    board = harness("leaderboard", "show", cwd=tmp_path)
    assert "example-capitals (test)" in board.stdout and "char-trigram-64" in board.stdout


def test_listing_the_installed_plugin_imports_nothing_heavy(installed_example: None, tmp_path: Path) -> None:
    """Each of the example's plugins is one module the harness imports to list it."""
    probe = (
        "import sys\n"
        "from harness.cli import main\n"
        "main(['list'])\n"
        "print(sorted(m for m in ('numpy', 'torch', 'jsonschema', 'scipy') if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "example-capitals" in done.stdout and "char-trigram" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_plugin_ships_the_schema_of_its_predictions(installed_example: None, tmp_path: Path) -> None:
    run = harness("run", "example-capitals", "char-trigram", "--quiet", "--no-leaderboard", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (predictions,) = tmp_path.glob("results/example-capitals/*/*/predictions.json")
    checked = harness("validate", str(predictions), "--schema", "example-capitals", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == f"{predictions}: valid example-capitals\n"

    (tmp_path / "bad.json").write_text('{"q1": "en-1"}', encoding="utf-8")  # a string, not a ranking
    bad = harness("validate", "bad.json", "--schema", "example-capitals", cwd=tmp_path)
    assert bad.returncode == 2
    assert (
        bad.stderr
        == "error: bad.json: field 'q1': does not match schema example-capitals: 'en-1' is not of type 'array'\n"
    )
