"""``harness score --input-rules official`` (issue 11): input the harness refuses by default is
scored as the official script scores it, and the result and leaderboard say so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.conftest import VENDORED

Cli = Callable[..., tuple[int, str, str]]


def _result(folder: Path) -> dict:
    (path,) = list(folder.glob("**/result.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def _rows(result: dict) -> list[tuple[str, dict, int]]:
    return [(row["subset"], row["metrics"], row["count"]) for row in result["rows"]]


def _oracle_file(harness_cli: Cli, task: str, relative: str) -> Path:
    code, _, err = harness_cli("run", task, "oracle", "--no-leaderboard", "--quiet", "--output-dir", "oracle")
    assert code == 0, err
    (path,) = list(Path("oracle").glob(f"*/*/*/{relative}"))
    return path.resolve()


def test_span_qa_extra_ids_and_lists(harness_cli: Cli, tmp_path: Path) -> None:
    answers = json.loads(_oracle_file(harness_cli, "xquad", "predictions/en.json").read_text(encoding="utf-8"))
    first = next(iter(answers))
    edited = {**answers, first: "a wrong answer"}
    plain, extra, listed = tmp_path / "plain.json", tmp_path / "extra.json", tmp_path / "list.json"
    plain.write_text(json.dumps(edited), encoding="utf-8")
    extra.write_text(json.dumps({**edited, "no-such-question": "x"}), encoding="utf-8")
    listed.write_text(json.dumps(list(answers)), encoding="utf-8")
    code, _, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", extra, "--no-leaderboard")
    assert code == 2 and "field 'no-such-question': not a question of" in err
    code, _, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", plain, "--output-dir", "strict",
                               "--no-leaderboard", "--quiet")
    assert code == 0, err
    code, out, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", extra, "--output-dir", "official",
                                 "--input-rules", "official", "--leaderboard", "board.json", "--quiet")
    assert code == 0, err
    strict, official = _result(Path("strict")), _result(Path("official"))
    assert _rows(official) == _rows(strict)
    assert 0 < official["main_score"]["value"] < 100
    assert official["task"]["options"] == {"input_rules": "official"} and strict["task"]["options"] == {}
    assert "read under --input-rules official" in out
    board = json.loads(Path("board.json").read_text(encoding="utf-8"))
    assert [entry["task_options"] for entry in board["entries"]] == [{"input_rules": "official"}]
    code, _, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", listed, "--output-dir", "listed",
                               "--input-rules", "official", "--no-leaderboard", "--quiet")
    assert code == 0, err
    assert _result(Path("listed"))["main_score"]["value"] == 0.0


def test_xtreme_qa_folder_extra_ids(harness_cli: Cli, tmp_path: Path) -> None:
    mock = VENDORED / "xtreme" / "mock_test_data"
    labels, predictions = tmp_path / "labels", tmp_path / "predictions"
    shutil.copytree(mock / "labels" / "mlqa", labels / "mlqa")
    shutil.copytree(mock / "predictions" / "mlqa", predictions / "mlqa")
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions,
                               "--output-dir", "strict", "--no-leaderboard", "--quiet")
    assert code == 0, err
    file = predictions / "mlqa" / "test-en.json"
    file.write_text(json.dumps({**json.loads(file.read_text(encoding="utf-8")), "foreign": "x"}), encoding="utf-8")
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions,
                               "--no-leaderboard", "--quiet")
    assert code == 2 and "field 'foreign': not a question of" in err
    code, _, err = harness_cli("score", "xtreme", "--data-dir", labels, "--predictions", predictions,
                               "--output-dir", "official", "--input-rules", "official", "--no-leaderboard", "--quiet")
    assert code == 0, err
    assert _rows(_result(Path("official"))) == _rows(_result(Path("strict")))


def test_mkqa_repeated_id_last_line_wins(harness_cli: Cli, tmp_path: Path) -> None:
    lines = _oracle_file(harness_cli, "mkqa", "predictions/en.jsonl").read_text(encoding="utf-8").splitlines()
    changed = json.dumps({**json.loads(lines[0]), "prediction": "something else", "no_answer_prob": 0.5})
    repeated, replaced = tmp_path / "repeated" / "en.jsonl", tmp_path / "replaced" / "en.jsonl"
    repeated.parent.mkdir()
    replaced.parent.mkdir()
    repeated.write_text("\n".join([*lines, changed]) + "\n", encoding="utf-8")
    replaced.write_text("\n".join([changed, *lines[1:]]) + "\n", encoding="utf-8")
    code, _, err = harness_cli("score", "mkqa", "--langs", "en", "--predictions", repeated, "--no-leaderboard")
    assert code == 2 and "appears twice" in err
    code, _, err = harness_cli("score", "mkqa", "--langs", "en", "--predictions", replaced, "--output-dir", "a",
                               "--no-leaderboard", "--quiet")
    assert code == 0, err
    code, _, err = harness_cli("score", "mkqa", "--langs", "en", "--predictions", repeated, "--output-dir", "b",
                               "--input-rules", "official", "--no-leaderboard", "--quiet")
    assert code == 0, err
    assert _rows(_result(Path("b"))) == _rows(_result(Path("a")))
    assert _result(Path("b"))["main_score"]["value"] < 100  # the changed line counts


def test_xor_unknown_ids_and_two_keys_for_one_question(harness_cli: Cli, tmp_path: Path) -> None:
    from tests.plugins.harness_xor.test_cli import QUESTIONS

    folder = tmp_path / "xor"
    folder.mkdir()
    (folder / "xor_dev_full_v1_1.jsonl").write_text(
        "".join(json.dumps({**q, "split": "dev"}, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    first = QUESTIONS[0]
    wrong_then_right = tmp_path / "two-keys.json"
    wrong_then_right.write_text(json.dumps({first["id"]: "wrong", f"{first['lang']}_{first['id']}": first["answers"][0],
                                            "99": "x"}), encoding="utf-8")
    right = tmp_path / "right.json"
    right.write_text(json.dumps({first["id"]: first["answers"][0]}), encoding="utf-8")
    code, _, err = harness_cli("score", "xor-full", "--data-dir", folder, "--predictions", wrong_then_right,
                               "--no-leaderboard")
    assert code == 2 and "field '99': not a question of" in err
    code, _, err = harness_cli("score", "xor-full", "--data-dir", folder, "--predictions", right, "--output-dir", "a",
                               "--no-leaderboard", "--quiet")
    assert code == 0, err
    code, _, err = harness_cli("score", "xor-full", "--data-dir", folder, "--predictions", wrong_then_right,
                               "--output-dir", "b", "--input-rules", "official", "--no-leaderboard", "--quiet")
    assert code == 0, err
    assert _rows(_result(Path("b"))) == _rows(_result(Path("a")))
