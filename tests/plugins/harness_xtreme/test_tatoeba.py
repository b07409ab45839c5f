"""Tatoeba as XTREME: LASER files, the sorted English side, cosine top-1, accuracy per language."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.definitions.registry import Registry
from harness.definitions.task import DataRequest
from harness.running.planning import expand_tasks
from harness_xtreme.benchmark import TATOEBA
from harness_xtreme.tatoeba import Tatoeba

Cli = Callable[..., tuple[int, str, str]]


def result(cwd: Path) -> dict:
    (path,) = list(Path(cwd).glob("results/**/result.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def rows_of(cwd: Path) -> dict[str, dict]:
    return {row["subset"]: row for row in result(cwd)["rows"]}


def test_gold_follows_xtreme_sorted_english(real_data: Path) -> None:
    # XTREME's mock Tatoeba labels are the first 10 lines of its real test labels: for each line of the
    # alphabetically sorted English file, the line of its translation. Derived here from the LASER files.
    task = Tatoeba()
    data = task.load(DataRequest(real_data / "tatoeba" / "v1", "test", task.check_languages(None)))
    assert tuple(data.pairs) == TATOEBA
    labels = real_data / "xtreme" / "mock_test_data" / "labels" / "tatoeba"
    for lang, pair in data.pairs.items():
        expected = [int(line) for line in (labels / f"test-{lang}.tsv").read_text(encoding="utf-8").split()]
        assert pair.gold[:10] == expected, lang
        assert pair.english == sorted(pair.english)


def test_real_oracle_is_100(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli("run", "tatoeba", "oracle", "--data-dir", real_data, "--quiet")
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert set(rows) == {"mean", *TATOEBA}
    assert all(row["metrics"] == {"accuracy": 100.0} for row in rows.values())
    # Pairs per language in the LASER release (its folder's LICENSE-NOTE: amh 168, swh 390, tha 548, tel 234).
    assert (rows["sw"]["count"], rows["th"]["count"], rows["te"]["count"], rows["de"]["count"]) == (390, 548, 234, 1000)


def test_e5_small_on_real_pairs(real_data: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # The first 40 pairs of German and Swahili: chance is 1/40 = 2.5%; multilingual-e5-small finds
    # nearly every translation (measured: 97.5 for both; 39 of 40).
    code, _, err = harness_cli(
        "run", "tatoeba", "e5-small", "--data-dir", real_data, "--langs", "de,sw", "--limit", "40", "--quiet"
    )
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert rows["de"]["metrics"]["accuracy"] > 80 and rows["sw"]["metrics"]["accuracy"] > 60
    assert result(tmp_path)["task"]["options"] == {"role": "query"}
    predictions = Path(result(tmp_path)["predictions"]["path"])
    lines = (tmp_path / predictions / "test-sw.tsv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40 and all(0 <= int(line) < 40 for line in lines)


def test_demo_pairs(harness_cli: Cli, tmp_path: Path) -> None:
    # The built-in parallel demo set has 8 of XTREME's Tatoeba languages, 36 sentences each.
    code, out, err = harness_cli("run", "tatoeba", "oracle", "--quiet")
    assert code == 0, err
    rows = rows_of(tmp_path)
    assert set(rows) == {"mean", "ar", "de", "es", "hi", "ru", "th", "vi", "zh"}
    assert rows["mean"]["count"] == 8 * 36 and rows["mean"]["metrics"] == {"accuracy": 100.0}


def laser_pair(folder: Path, code: str, english: list[str], foreign: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"tatoeba.{code}-eng.eng").write_text("".join(f"{s}\n" for s in english), encoding="utf-8")
    (folder / f"tatoeba.{code}-eng.{code}").write_text("".join(f"{s}\n" for s in foreign), encoding="utf-8")
    return folder


def test_duplicate_english_sentences(harness_cli: Cli, tmp_path: Path) -> None:
    # English lines b, a, b, c (with stray spaces, stripped as XTREME does) sort stably to a(1), b(0), b(2), c(3):
    # gold 1, 0, 2, 3. Both "b" queries are the same text, so a model answers both with one line (here 0):
    # 3 of 4 correct, accuracy 75.
    data = laser_pair(tmp_path / "laser", "xyz", ["b ", "a", "b", "c"], ["B", "A", "B'", "C"])
    predictions = tmp_path / "test-xyz.tsv"
    predictions.write_text("1\n0\n0\n3\n", encoding="utf-8")
    code, _, err = harness_cli(
        "score", "tatoeba", "--data-dir", data, "--langs", "xyz", "--predictions", predictions, "--quiet"
    )
    assert code == 0, err
    assert rows_of(tmp_path)["xyz"]["metrics"] == {"accuracy": 75.0}


def test_bad_inputs(harness_cli: Cli, tmp_path: Path) -> None:
    data = laser_pair(tmp_path / "laser", "xyz", ["b", "a"], ["B", "A"])
    laser_pair(data, "abc", ["x"], ["X", "Y"])
    predictions = tmp_path / "test-xyz.tsv"
    for text, message in [
        ("[1]\n0\n", "record line 1: expected a 0-based line number such as 367, got '[1]'"),
        ("1\n", "1 lines for 2 English sentences"),
        ("01\n0\n", "got '01'"),
    ]:
        predictions.write_text(text, encoding="utf-8")
        code, _, err = harness_cli(
            "score", "tatoeba", "--data-dir", data, "--langs", "xyz", "--predictions", predictions
        )
        assert code == 2 and message in err, err
    code, _, err = harness_cli("run", "tatoeba", "oracle", "--data-dir", data, "--langs", "abc")
    assert code == 2 and "tatoeba.abc-eng.abc: 2 lines, but tatoeba.abc-eng.eng has 1" in err
    code, _, err = harness_cli("run", "tatoeba", "oracle", "--data-dir", data, "--langs", "xyz,qqq")
    assert code == 2 and "no Tatoeba files for language 'qqq'" in err
    code, _, err = harness_cli("run", "tatoeba", "oracle", "--data-dir", data, "--langs", "x1")
    assert code == 2 and "unknown language 'x1' for task tatoeba" in err
    code, _, err = harness_cli("score", "tatoeba", "--langs", "de,es", "--predictions", predictions)
    assert code == 2 and "one predictions file answers one language" in err


def test_retrieval_suite_shares_one_encoding_queue(harness_cli: Cli) -> None:
    assert expand_tasks("xtreme-retrieval", Registry.discover()) == ["tatoeba", "lareqa"]
    code, out, err = harness_cli("run", "xtreme-retrieval", "e5-small", "--dry-run")
    assert code == 0, err
    assert "tatoeba" in out and "lareqa" in out and "texts requested" in out
