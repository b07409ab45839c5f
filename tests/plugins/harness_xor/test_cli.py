"""XOR tasks through the command line: a BM25 run on a corpus built here, and bad input."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

CLI = Callable[..., tuple[int, str, str]]

QUESTIONS = [
    {"id": "1", "question": "Missä Eiffel-torni sijaitsee?", "answers": ["Paris"], "lang": "fi"},
    {"id": "-2", "question": "Milloin Titanic upposi?", "answers": ["1912"], "lang": "fi"},
    {"id": "3", "question": "Googleの本社はどこにありますか？", "answers": ["Mountain View"], "lang": "ja"},
    {"id": "4", "question": "日本の首都は？", "answers": ["Tokyo"], "lang": "ja"},
    {"id": "5", "question": "Является ли Москва столицей?", "answers": ["yes"], "lang": "ru"},
]
PASSAGES = [
    ("p0", "The tower was finished in 1889.", "Tower"),
    ("p1", "Google is headquartered in Mountain View, California.", "Google"),
    ("p2", "The Titanic sank in April 1912 after hitting an iceberg.", "Titanic"),
    ("p3", "The Eiffel Tower stands in Paris, France.", "Paris"),
]


@pytest.fixture
def xor_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "xor"
    folder.mkdir()
    lines = [json.dumps({**q, "split": "dev"}, ensure_ascii=False) for q in QUESTIONS]
    (folder / "xor_dev_retrieve_eng_span_v1_1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "psgs.tsv"
    rows = ["id\ttext\ttitle"] + [f'{pid}\t"{text}"\t{title}' for pid, text, title in PASSAGES]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_bm25_run_end_to_end(harness_cli: CLI, xor_dir: Path, corpus: Path, tmp_path: Path) -> None:
    code, out, err = harness_cli(
        "run", f"xor-retrieve:corpus={corpus},top_k=1", "bm25", "--data-dir", xor_dir, "--quiet", "--no-leaderboard"
    )
    assert code == 0, err
    # top_k=1: fi "Eiffel" -> p3 (Paris: hit), fi "Titanic" -> p2 (1912: hit); ja "Google" (MeCab
    # token) -> p1 (hit); ja 日本の首都 shares no token with any passage, every score is 0 and the
    # tie goes to p0 (miss). The ru question is yes/no and not counted.
    # R@2kt: fi 2/2 = 100, ja 1/2 = 50, macro (100 + 50) / 2 = 75.
    result_path = next(Path(tmp_path).rglob("result.json"))
    result = json.loads(result_path.read_text(encoding="utf-8"))
    rows = {row["subset"]: row["metrics"] for row in result["rows"]}
    assert rows == {
        "all": {"r@2kt": 75.0, "r@5kt": 75.0},
        "fi": {"r@2kt": 100.0, "r@5kt": 100.0},
        "ja": {"r@2kt": 50.0, "r@5kt": 50.0},
    }
    predictions = json.loads((result_path.parent / "predictions.json").read_text(encoding="utf-8"))
    assert predictions[0] == {"id": "1", "lang": "fi", "ctxs": ["The Eiffel Tower stands in Paris, France."]}
    # the corpus by file name (its content is in the data fingerprint): no absolute path in the scope
    assert result["task"]["options"] == {"top_k": 1, "titles": True, "corpus": corpus.name}
    assert sorted(Path(f["path"]).name for f in result["data"]["files"]) == [
        "psgs.tsv",
        "xor_dev_retrieve_eng_span_v1_1.jsonl",
    ]
    # The written predictions score the same through `harness score`.
    code, out, err = harness_cli(
        "score",
        "xor-retrieve",
        "--predictions",
        result_path.parent / "predictions.json",
        "--data-dir",
        xor_dir,
        "--no-leaderboard",
    )
    assert code == 0, err
    assert "main score: r@5kt (%) = 75" in out


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err


def test_retrieve_predictions_must_be_an_array(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"1": {"lang": "fi", "ctxs": []}}), encoding="utf-8")
    err = _one_line_error(*harness_cli("score", "xor-retrieve", "--predictions", predictions, "--data-dir", xor_dir))
    assert f"{predictions}: must be a JSON array of {{id, lang, ctxs}} objects, not an object" in err


def test_retrieve_prediction_with_unknown_language(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text(
        json.dumps([{"id": "1", "lang": "fi", "ctxs": []}, {"id": "3", "lang": "jp", "ctxs": []}]), encoding="utf-8"
    )
    err = _one_line_error(*harness_cli("score", "xor-retrieve", "--predictions", predictions, "--data-dir", xor_dir))
    assert "record item 1: field 'lang': unknown language 'jp'" in err


def test_retrieve_prediction_with_a_non_string_passage(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps([{"id": "1", "lang": "fi", "ctxs": [{"text": "Paris"}]}]), encoding="utf-8")
    err = _one_line_error(*harness_cli("score", "xor-retrieve", "--predictions", predictions, "--data-dir", xor_dir))
    assert "field '0.ctxs.0'" in err


def test_corpus_line_with_a_missing_column(harness_cli: CLI, xor_dir: Path, corpus: Path) -> None:
    corpus.write_text(corpus.read_text(encoding="utf-8") + "p4\tNo title here\n", encoding="utf-8")
    err = _one_line_error(
        *harness_cli("run", f"xor-retrieve:corpus={corpus}", "bm25", "--data-dir", xor_dir, "--quiet")
    )
    assert f"{corpus}: record line 6: field 'title': has 2 of the 3 tab-separated columns" in err


def test_jsonl_corpus_passage_without_text(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "psgs.jsonl"
    corpus.write_text(
        json.dumps({"id": 1, "title": "T", "text": "x"}) + "\n" + json.dumps({"id": 2, "title": "T"}) + "\n",
        encoding="utf-8",
    )
    err = _one_line_error(
        *harness_cli("run", f"xor-retrieve:corpus={corpus}", "bm25", "--data-dir", xor_dir, "--quiet")
    )
    assert "record line 2: field 'text': is missing" in err


def test_run_without_a_corpus(harness_cli: CLI, xor_dir: Path) -> None:
    err = _one_line_error(*harness_cli("run", "xor-retrieve", "bm25", "--data-dir", xor_dir, "--quiet"))
    assert "needs a passage corpus" in err


def test_answer_tasks_reject_malformed_predictions(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    (xor_dir / "xor_dev_full_v1_1.jsonl").write_text(
        (xor_dir / "xor_dev_retrieve_eng_span_v1_1.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"1": {"text": "Paris"}}), encoding="utf-8")
    err = _one_line_error(*harness_cli("score", "xor-engspan", "--predictions", predictions, "--data-dir", xor_dir))
    assert "field '1'" in err
    predictions.write_text(json.dumps({"fi_1": "Pariisi", "1": "Pariisi"}), encoding="utf-8")
    err = _one_line_error(*harness_cli("score", "xor-full", "--predictions", predictions, "--data-dir", xor_dir))
    assert "keys 'fi_1' and '1' name the same question" in err
    # A model that cannot answer open-domain questions (a bare retriever) is refused before anything runs.
    err = _one_line_error(*harness_cli("run", "xor-full", "bm25", "--data-dir", xor_dir))
    assert "model bm25 cannot run task xor-full" in err


def test_missing_data_file_and_question_only_test_file(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    err = _one_line_error(*harness_cli("run", "xor-full", "oracle", "--data-dir", xor_dir))
    assert "has no xor_dev_full_v1_1.jsonl" in err
    (xor_dir / "xor_test_retrieve_eng_span_q_only_v1_1.jsonl").write_text(
        json.dumps({"id": "9", "question": "?", "lang": "fi", "split": "test"}) + "\n", encoding="utf-8"
    )
    err = _one_line_error(*harness_cli("run", "xor-engspan", "oracle", "--data-dir", xor_dir, "--split", "test"))
    assert "has no answers (a question-only test file)" in err


def test_engspan_answers_as_strings_or_objects(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"1": {"answer": "Paris"}, "-2": "the 1912"}), encoding="utf-8")
    code, out, err = harness_cli(
        "score", "xor-engspan", "--predictions", predictions, "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 0, err
    # fi: both answers exact after SQuAD normalisation ("the 1912" -> "1912"): F1 = EM = 100.
    # ja (2 questions) and ru (1) have no answers: 0. Plain mean over fi, ja, ru: 100 / 3.
    assert "main score: f1 (%) = 33.3333" in out
    assert ["fi", "100", "100", "2"] in [line.split() for line in out.splitlines()]


def test_unknown_ids_are_refused_with_their_count(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    # Issue 11: one rule for every task -- an id of no question of the data file is an error naming the
    # first such id and how many there are (eval_xor_full.py would ignore them and score 0).
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"1": "Paris", "99": "x", "98": "y"}), encoding="utf-8")
    code, _, err = harness_cli(
        "score", "xor-engspan", "--predictions", predictions, "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 2
    assert err == (
        f"error: {predictions}: field '99': not a question of xor_dev_retrieve_eng_span_v1_1.jsonl "
        "(2 such id(s): predictions for another file?)\n"
    )


def test_retrieve_unknown_ids_are_refused(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "retrieve.json"
    predictions.write_text(json.dumps([{"id": "nosuch", "lang": "fi", "ctxs": []}]), encoding="utf-8")
    code, _, err = harness_cli(
        "score", "xor-retrieve", "--predictions", predictions, "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 2 and "field 'nosuch': not a question of" in err and "(1 such id(s)" in err


def test_duplicate_keys_are_refused(harness_cli: CLI, xor_dir: Path, tmp_path: Path) -> None:
    predictions = tmp_path / "preds.json"
    predictions.write_text('{"1": "Paris", "-2": "a", "1": "Rome"}', encoding="utf-8")
    code, _, err = harness_cli(
        "score", "xor-engspan", "--predictions", predictions, "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 2
    assert err == f"error: {predictions}: field '1': given twice in one JSON object (only one value may be meant)\n"


def test_the_same_corpus_in_two_folders_is_one_leaderboard_scope(
    harness_cli: CLI, xor_dir: Path, corpus: Path, tmp_path: Path
) -> None:
    """Issue 31, item 12: the scope holds the corpus's file name and (in the data fingerprint) its
    content, not its absolute path; a result still rescores with the corpus in the data folder."""
    elsewhere = tmp_path / "maintainer-b" / corpus.name
    elsewhere.parent.mkdir()
    shutil.copy(corpus, elsewhere)
    board = tmp_path / "board.json"
    for number, path in enumerate((corpus, elsewhere)):
        code, _, err = harness_cli(
            "run",
            f"xor-retrieve:corpus={path},top_k=1",
            "bm25",
            "--data-dir",
            xor_dir,
            "--quiet",
            "--leaderboard",
            board,
            "--output-dir",
            f"out{number}",
        )
        assert code == 0, err
    code, out, err = harness_cli("leaderboard", "show", "--file", board, "--json")
    assert code == 0, err
    assert str(tmp_path) not in out
    entries = json.loads(board.read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 1  # the same model on the same scope: one entry, the later run replacing the first
    shutil.copy(corpus, xor_dir / corpus.name)
    result = next((tmp_path / "out1").rglob("result.json"))
    code, out, err = harness_cli("validate", "--rescore", result, "--data-dir", xor_dir)
    assert code == 0, err
