"""TyDiQA-GoldP: SQuAD v1.1 scorer per language, English in XTREME's mean, both file layouts."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_xtreme.tydiqa import LANGUAGE_NAMES

Cli = Callable[..., tuple[int, str, str]]


def rows_of(cwd: Path) -> dict[str, dict]:
    (path,) = list(Path(cwd).glob("results/**/result.json"))
    return {row["subset"]: row for row in json.loads(path.read_text(encoding="utf-8"))["rows"]}


def test_xtreme_mock_tydiqa(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # Per-language values and averages as XTREME's evaluate.py printed them on its mock submission
    # (third_party/evaluate_squad.py on each test-{lang}.json): every language 100/100 but id, EM 0 and
    # F1 74.99999999999999; averages over all nine, English included: EM 88.88888888888889, F1 97.22222222222223.
    mock = official_data / "xtreme" / "mock_test_data"
    code, _, err = harness_cli(
        "score",
        "tydiqa",
        "--data-dir",
        mock / "labels" / "tydiqa",
        "--predictions",
        mock / "predictions" / "tydiqa",
        "--quiet",
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["id"]["metrics"] == {"f1": 74.99999999999999, "exact_match": 0.0}
    assert all(rows[lang]["metrics"] == {"f1": 100.0, "exact_match": 100.0} for lang in LANGUAGE_NAMES if lang != "id")
    assert rows["mean"]["metrics"] == {"f1": 97.22222222222223, "exact_match": 88.88888888888889}
    # TyDi QA's own GoldP protocol leaves English out: EM 700/8 = 87.5, F1 (700 + 75)/8.
    assert rows["mean_without_en"]["metrics"] == pytest.approx({"f1": 775 / 8, "exact_match": 87.5})


def test_tydi_release_layout(official_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # The release names files by language name inside tydiqa-goldp-v1.1-dev/; --data-dir may name either folder.
    release = tmp_path / "tydiqa" / "tydiqa-goldp-v1.1-dev"
    release.mkdir(parents=True)
    for lang, name in LANGUAGE_NAMES.items():
        shutil.copy(
            official_data / "xtreme" / "mock_test_data" / "labels" / "tydiqa" / f"test-{lang}.json",
            release / f"tydiqa-goldp-dev-{name}.json",
        )
    for data_dir in (release.parent, release):
        code, _, err = harness_cli("run", "tydiqa", "oracle", "--data-dir", data_dir, "--quiet", "--no-leaderboard")
        assert code == 0, err
        rows = rows_of(tmp_path)
        assert set(rows) == {"mean", "mean_without_en", *LANGUAGE_NAMES}
        assert rows["mean"]["metrics"] == {"f1": 100.0, "exact_match": 100.0}
        (predictions,) = list(tmp_path.glob("results/**/predictions"))
        assert sorted(p.name for p in predictions.iterdir())[0] == "tydiqa-goldp-dev-arabic.json"
        shutil.rmtree(tmp_path / "results")


def test_demo_languages_and_empty(harness_cli: Cli, tmp_path: Path) -> None:
    # The built-in demo set has three TyDi languages (en, ar, ru), 24 questions each; "" scores 0.
    code, out, err = harness_cli("run", "tydiqa", "empty", "--quiet")
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert set(rows) == {"mean", "mean_without_en", "en", "ar", "ru"}
    assert rows["mean"]["count"] == 72 and rows["mean"]["metrics"] == {"f1": 0.0, "exact_match": 0.0}
    assert "built-in demo data" in out


def test_tiny_reader_runs(tiny_reader_dir: Path, harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli(
        "run",
        "tydiqa",
        f"hf-reader:path={tiny_reader_dir},max_length=128,stride=32",
        "--langs",
        "ar",
        "--limit",
        "3",
        "--quiet",
    )
    assert code == 0, err
    assert rows_of(tmp_path)["ar"]["count"] == 3


def test_explicit_language_without_file(harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli("run", "tydiqa", "oracle", "--langs", "ar,sw")
    assert code == 2
    assert "no TyDiQA-GoldP file for language 'sw'" in err
