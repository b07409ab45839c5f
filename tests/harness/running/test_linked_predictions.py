"""Issue 31, item 14: a predictions path that is a link to a large, changing folder (a ``.json``
name linked to ``/tmp``) is read by the file names the task expects, never walked; a file that
vanishes or cannot be read is one line, exit 2.

The walk is caught with an audit hook (``os.scandir`` / ``os.listdir`` events): listing a folder
inside the linked one is what a recursive walk does, and what met a vanishing file."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]

_LISTED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _LISTED is not None and event in ("os.scandir", "os.listdir") and args and args[0] is not None:
        _LISTED.append(os.fspath(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else str(args[0]))


sys.addaudithook(_audit)


@pytest.fixture
def listed() -> Iterator[list[str]]:
    global _LISTED
    _LISTED = []
    try:
        yield _LISTED
    finally:
        _LISTED = None


@pytest.mark.parametrize("task", ["xquad", "mlqa", "tydiqa", "tatoeba", "mkqa"])
def test_a_linked_folder_is_read_by_name_not_walked(
    harness_cli: Cli, tmp_path: Path, task: str, listed: list[str]
) -> None:
    code, out, err = harness_cli("run", task, "oracle", "--quiet", "--no-leaderboard", "--output-dir", "out", "--json")
    assert code == 0, err
    result = json.loads(out)["results"][0]["result"]
    written = Path(result["predictions"]["path"])
    big = tmp_path / "big"  # stands for /tmp: the task's files among others, and folders of more
    if written.is_dir():
        shutil.copytree(written, big)
    else:
        big.mkdir()
        shutil.copy(written, big / f"{'en' if task == 'mkqa' else 'all'}.jsonl")
    for number in range(3):
        deep = big / f"session-{number}" / "inner"
        deep.mkdir(parents=True)
        (deep / "scratch.json").write_text("{}", encoding="utf-8")
    link = tmp_path / "preds.json"
    link.symlink_to(big, target_is_directory=True)
    listed.clear()
    code, out, err = harness_cli(
        "score", task, "--predictions", str(link), "--no-leaderboard", "--output-dir", "scored", "--json"
    )
    inside = [path for path in listed if Path(path).is_relative_to(big) or Path(path).is_relative_to(link)]
    assert not [p for p in inside if Path(p) not in (big, link)], inside  # no folder inside was listed
    assert code == 0, err
    assert json.loads(out)["results"][0]["result"]["main_score"] == result["main_score"]


def test_a_file_that_cannot_be_read_is_one_line(harness_cli: Cli, tmp_path: Path) -> None:
    code, out, err = harness_cli(
        "run", "xquad", "oracle", "--quiet", "--no-leaderboard", "--output-dir", "out", "--json"
    )
    assert code == 0, err
    written = Path(json.loads(out)["results"][0]["result"]["predictions"]["path"])
    folder = tmp_path / "preds"
    shutil.copytree(written, folder)
    victim = sorted(folder.iterdir())[0]
    victim.unlink()
    victim.symlink_to(tmp_path / "gone")  # vanished: a link to nothing
    code, out, err = harness_cli("score", "xquad", "--predictions", str(folder), "--no-leaderboard")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"error: {victim}: missing"), err


def test_a_predictions_folders_identity_is_what_was_read(tmp_path: Path) -> None:
    """Two folders with the same task files score as the same model, whatever else they hold."""
    from harness.running.runner import file_identity

    read = {"de": {"q1": "Berlin"}}
    a = file_identity(tmp_path, read=read)
    (tmp_path / "other.txt").write_text("x", encoding="utf-8")
    assert file_identity(tmp_path, read=read).weights == a.weights
    assert file_identity(tmp_path, read={"de": {"q1": "Bonn"}}).weights != a.weights
