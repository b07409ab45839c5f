"""retrieve-read through the command line: XOR-Full and XOR-EnglishSpan on a corpus built here,
MKQA on its demo data, and bad input as one-line errors."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

from harness.demo import parallel_qa_dir
from tests.plugins.harness_opendomain.world import EN, FI, JA, StubReader, translations_file

CLI = Callable[..., tuple[int, str, str]]
#: MKQA's name for the demo languages' codes where they differ (the demo's zh is MKQA's zh_cn).
MKQA_CODES = {"zh": "zh_cn"}


def run(cli: CLI, task: str, model_args: dict[str, object], *extra: str) -> dict:
    code, out, err = cli(
        "run",
        task,
        "retrieve-read",
        "--model-args",
        json.dumps(model_args),
        *extra,
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        "out",
    )
    assert code == 0, err
    path = Path(out.split("result: ")[1].split("\n")[0])
    return json.loads(path.read_text(encoding="utf-8")) | {"run_dir": str(path.parent)}


def metrics(result: dict) -> dict[str, dict[str, float]]:
    return {row["subset"]: row["metrics"] for row in result["rows"]}


def test_xor_full_with_answers_translated_back(
    harness_cli: CLI, xor_dir: Path, corpus: Path, stub_reader: type[StubReader], tmp_path: Path
) -> None:
    to_finnish = translations_file(tmp_path / "answers-fi.jsonl", [("en", "Paris", "Pariisi")])
    result = run(
        harness_cli,
        "xor-full",
        {
            "corpus": str(corpus),
            "reader": "stub-reader",
            "top_k": 2,
            "answer_translator": f"translations:file={to_finnish},target_lang=fi",
        },
        "--data-dir",
        xor_dir,
    )
    predictions = Path(result["run_dir"]) / "predictions.json"
    # The answers of test_pipeline's stub (Paris from an English passage, back in Finnish).
    assert json.loads(predictions.read_text(encoding="utf-8")) == {"1": "Pariisi", "-3": "1912", "4": "", "2": "東京"}
    # fi: Pariisi and 1912 exact, "" for Mountain View: F1 = EM = 2 / 3; ja: 東京 exact, 1. Official
    # XOR-Full: per language (2 / 3) * 100, average (2 / 3 + 1) / 7 * 100 = 23.8095, in that float order.
    rows = metrics(result)
    # the answers with letters are in the script of their question's language: Pariisi (fi), 東京 (ja)
    assert {lang: result["diagnostics"]["answer_script"][lang] for lang in ("fi", "ja")} == {"fi": 1.0, "ja": 1.0}
    assert rows["fi"]["f1"] == rows["fi"]["em"] == 2 / 3 * 100
    assert rows["ja"]["f1"] == rows["ja"]["em"] == 100.0
    assert result["main_score"]["value"] == (2 / 3 + 1) / 7 * 100
    assert result["model"]["label"] == "retrieve-read(BM25 -> stub -> answers-fi, top 2)"
    # `harness score` on the written predictions gives the same numbers.
    code, out, err = harness_cli(
        "score", "xor-full", "--predictions", predictions, "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 0, err
    assert "main score: f1 (%) = 23.8095" in out


def test_xor_engspan_with_translate_test_and_a_tiny_reader(
    harness_cli: CLI, xor_dir: Path, corpus: Path, question_translations: Path, tiny_reader_dir: Path
) -> None:
    result = run(
        harness_cli,
        "xor-engspan",
        {
            "corpus": str(corpus),
            "reader": f"hf-reader:path={tiny_reader_dir}",
            "translator": f"translations:file={question_translations}",
            "top_k": 3,
        },
        "--data-dir",
        xor_dir,
    )
    answers = json.loads((Path(result["run_dir"]) / "predictions.json").read_text(encoding="utf-8"))
    assert sorted(answers) == ["-3", "1", "2", "4"]
    # A random reader's answers mean nothing, but each is a non-empty span of some passage.
    passages = [text for text, _ in [*EN.values(), *FI.values(), *JA.values()]]
    assert all(answer and any(answer in text for text in passages) for answer in answers.values())
    parts = result["model"]["options"]
    assert parts["reader"]["name"] == "hf-reader" and result["model"]["weights"] == parts["reader"]["weights"]
    assert parts["translator"]["name"] == "translations" and parts["top_k"] == 3
    assert set(metrics(result)) == {"all", "fi", "ja"}


def test_mkqa_demo_end_to_end(harness_cli: CLI, tiny_reader_dir: Path, tmp_path: Path) -> None:
    # The demo's MKQA questions were written from the demo's XQuAD-R paragraphs: those paragraphs,
    # in every MKQA demo language, are the corpus (64 passages).
    corpus = tmp_path / "demo-wiki"
    corpus.mkdir()
    for lang in ("en", "de", "es", "ru", "ar", "vi", "zh", "th"):
        doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
        passages = [
            {"id": str(n), "title": article["title"], "text": paragraph["context"]}
            for n, article in enumerate(doc["data"])
            for paragraph in article["paragraphs"]
        ]
        (corpus / f"{MKQA_CODES.get(lang, lang)}.jsonl").write_text(
            "".join(json.dumps(passage, ensure_ascii=False) + "\n" for passage in passages), encoding="utf-8"
        )
    result = run(
        harness_cli, "mkqa", {"corpus": str(corpus), "reader": f"hf-reader:path={tiny_reader_dir}", "top_k": 2}
    )
    rows = metrics(result)
    assert set(rows) == {"incomplete: 8 of 26 languages", "ar", "de", "en", "es", "ru", "th", "vi", "zh_cn"}
    predictions = Path(result["run_dir"]) / "predictions"
    for lang in ("ar", "de", "en", "es", "ru", "th", "vi", "zh_cn"):
        lines = [json.loads(line) for line in (predictions / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(lines) == 30
        # A span answer for every question, with a finite no-answer score for the threshold sweep.
        assert all(line["prediction"] and math.isfinite(line["no_answer_prob"]) for line in lines)
        assert all(line["binary_answer"] is None for line in lines)
    assert result["model"]["details"]["corpus_languages"] == ["en", "ar", "de", "es", "ru", "th", "vi", "zh_cn"]


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    return err


def test_bad_pipelines_are_one_line_errors(
    harness_cli: CLI, xor_dir: Path, corpus: Path, stub_reader: type[StubReader], tmp_path: Path
) -> None:
    def error(**model_args: object) -> str:
        return _one_line_error(
            *harness_cli(
                "run",
                "xor-engspan",
                "retrieve-read",
                "--model-args",
                json.dumps({"corpus": str(corpus), "reader": "stub-reader", **model_args}),
                "--data-dir",
                xor_dir,
                "--quiet",
                "--no-leaderboard",
            )
        )

    missing = tmp_path / "psgs_w100.tsv"
    assert f"corpus {missing} does not exist" in error(corpus=str(missing))
    assert "model no-answer cannot run task retrieve-read: retrieve-read needs a Retriever or an Encoder" in error(
        retriever="no-answer"
    )
    assert "model bm25 cannot run task retrieve-read: retrieve-read needs a Reader" in error(reader="bm25")
    assert "model retrieve-read: top_k must be at least 1" in error(top_k=0)
    # A corpus line with a missing column is found when the corpus is first read.
    (corpus / "fi.jsonl").write_text(json.dumps({"id": "f9", "title": "T"}) + "\n", encoding="utf-8")
    assert f"{corpus / 'fi.jsonl'}: record line 1: field 'text': is missing" in error()
