"""Issue 11: XTREME files that evaluate.py would crash on or score silently are one-line errors."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import VENDORED
from tests.plugins.harness_xtreme.test_tatoeba import laser_pair

Cli = Callable[..., tuple[int, str, str]]
MOCK = VENDORED / "xtreme" / "mock_test_data"


@pytest.mark.parametrize("line", ["abc", "NaN", "-1", "", " 1x"])
def test_pawsx_prediction_that_is_no_label_is_refused(harness_cli: Cli, tmp_path: Path, line: str) -> None:
    labels, predictions = tmp_path / "labels", tmp_path / "predictions"
    for side, folder in (("labels", labels), ("predictions", predictions)):
        shutil.copytree(MOCK / side / "pawsx", folder / "pawsx")
    file = predictions / "pawsx" / "test-de.tsv"
    lines = file.read_text(encoding="utf-8").splitlines()
    file.write_text("\n".join([lines[0], line, *lines[2:]]) + "\n", encoding="utf-8")
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions)
    assert code == 2
    assert err == f"error: {file}: record line 2: {line.strip()!r} is not a label (labels: 0, 1)\n"
    assert not (tmp_path / "results").exists()


def test_pawsx_label_file_of_blank_lines_is_refused(harness_cli: Cli, tmp_path: Path) -> None:
    labels, predictions = tmp_path / "labels", tmp_path / "predictions"
    for side, folder in (("labels", labels), ("predictions", predictions)):
        shutil.copytree(MOCK / side / "pawsx", folder / "pawsx")
    file = labels / "pawsx" / "test-en.tsv"
    file.write_text("\n" * 10, encoding="utf-8")
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions)
    assert (code, err) == (2, f"error: {file}: record line 1: '' is not a label (labels: 0, 1)\n")


def test_tatoeba_line_number_past_the_digit_limit(harness_cli: Cli, tmp_path: Path) -> None:
    data = laser_pair(tmp_path / "laser", "xyz", ["b", "a"], ["B", "A"])
    predictions = tmp_path / "test-xyz.tsv"
    predictions.write_text("1" * 5000 + "\n0\n", encoding="utf-8")
    code, _, err = harness_cli("score", "tatoeba", "--data-dir", data, "--langs", "xyz", "--predictions", predictions)
    assert (code, err) == (
        2,
        f"error: {predictions}: record line 1: line number of 5000 digits: no file has that many lines\n",
    )


@pytest.mark.parametrize("side", ["eng", "xyz"])
def test_tatoeba_sentences_of_blank_lines_are_refused(harness_cli: Cli, tmp_path: Path, side: str) -> None:
    data = laser_pair(tmp_path / "laser", "xyz", ["b", "a"], ["B", "A"])
    blank = data / f"tatoeba.xyz-eng.{side}"
    blank.write_text("\n \n", encoding="utf-8")
    code, _, err = harness_cli("run", "tatoeba", "oracle", "--data-dir", data, "--langs", "xyz")
    assert (code, err.splitlines()[-1]) == (2, f"error: {blank}: no sentences")
