"""Translate-test end to end on XOR-Retrieve: a translations file, and a tiny random Marian model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.definitions.model import Runtime
from harness_hf.translator import HFTranslator
from tests.plugins.harness_translate.tiny_marian import build_tiny_marian

CLI = Callable[..., tuple[int, str, str]]

QUESTIONS = [
    {"id": "1", "question": "Missä Eiffel-torni sijaitsee?", "answers": ["Paris"], "lang": "fi"},
    {"id": "2", "question": "日本の首都は？", "answers": ["Tokyo"], "lang": "ja"},
    {"id": "3", "question": "Googleの本社はどこにありますか？", "answers": ["Mountain View"], "lang": "ja"},
]
TRANSLATIONS = {
    "1": "Where is the Eiffel Tower?",
    "2": "What is the capital of Japan?",
    "3": "Where is the headquarters of Google?",
}
PASSAGES = [
    ("p0", "The tower was finished in 1889.", "Tower"),
    ("p1", "Google is headquartered in Mountain View, California.", "Google"),
    ("p2", "Tokyo is the capital of Japan.", "Tokyo"),
    ("p3", "The Eiffel Tower stands in Paris, France.", "Paris"),
]


@pytest.fixture(scope="module")
def tiny_marian_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_marian(tmp_path_factory.mktemp("tiny-marian"))


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "xor"
    data.mkdir()
    (data / "xor_dev_retrieve_eng_span_v1_1.jsonl").write_text(
        "".join(json.dumps({**q, "split": "dev"}, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    corpus = tmp_path / "psgs.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": i, "text": t, "title": ti}) + "\n" for i, t, ti in PASSAGES), encoding="utf-8"
    )
    return data, corpus


def _translations_file(path: Path, translations: dict[str, str]) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {"id": q["id"], "lang": q["lang"], "question": q["question"], "translation": translations[q["id"]]},
                ensure_ascii=False,
            )
            + "\n"
            for q in QUESTIONS
        ),
        encoding="utf-8",
    )
    return path


def _run(cli: CLI, data: Path, corpus: Path, model: str, *extra: str) -> dict:
    code, out, err = cli(
        "run",
        f"xor-retrieve:corpus={corpus},top_k=1",
        model,
        *extra,
        "--data-dir",
        data,
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        "out",
    )
    assert code == 0, err
    path = Path(out.split("result: ")[1].split("\n")[0])
    return json.loads(path.read_text(encoding="utf-8")) | {"predictions_file": str(path.parent / "predictions.json")}


def test_translations_file_in_front_of_bm25(harness_cli: CLI, setup: tuple[Path, Path], tmp_path: Path) -> None:
    data, corpus = setup
    translations = _translations_file(tmp_path / "q-en.jsonl", TRANSLATIONS)
    result = _run(
        harness_cli,
        data,
        corpus,
        "translate-test",
        "--model-args",
        json.dumps({"translator": f"translations:file={translations}", "model": "bm25"}),
    )
    # Translated, every question shares words with its passage (Eiffel, capital Japan, Google):
    # top-1 hits everywhere. BM25 on the Japanese question 日本の首都は？ alone shares no token with
    # any English passage and gets p0 (a miss).
    assert {row["subset"]: row["metrics"]["r@2kt"] for row in result["rows"]} == {
        "all": 100.0,
        "fi": 100.0,
        "ja": 100.0,
    }
    direct = _run(harness_cli, data, corpus, "bm25")
    assert {row["subset"]: row["metrics"]["r@2kt"] for row in direct["rows"]} == {"all": 75.0, "fi": 100.0, "ja": 50.0}
    model = result["model"]
    assert model["label"] == "translate-test(q-en -> BM25)"
    assert model["options"]["translator"]["name"] == "translations"
    assert model["options"]["translator"]["weights"].startswith("sha256:")
    assert model["options"]["model"]["name"] == "bm25"


def test_tiny_marian_in_front_of_bm25(
    harness_cli: CLI, setup: tuple[Path, Path], tiny_marian_dir: Path, tmp_path: Path
) -> None:
    data, corpus = setup
    translator = f"hf-translator:path={tiny_marian_dir},max_new_tokens=6"
    result = _run(
        harness_cli,
        data,
        corpus,
        "translate-test",
        "--model-args",
        json.dumps({"translator": translator, "model": "bm25"}),
    )
    parts = result["model"]["options"]
    assert parts["translator"]["name"] == "hf-translator" and parts["translator"]["weights"].startswith("sha256:")
    assert parts["translator"]["options"]["max_new_tokens"] == 6
    # The same run with the model's translations written to a file first gives the same passages.
    marian = HFTranslator(runtime=Runtime(device_request="cpu"), path=tiny_marian_dir, max_new_tokens=6)
    produced = {
        q["id"]: marian.translate([q["question"]], source_lang=q["lang"], target_lang="en")[0] for q in QUESTIONS
    }
    assert all(produced.values())
    replay = _run(
        harness_cli,
        data,
        corpus,
        "translate-test",
        "--model-args",
        json.dumps(
            {
                "translator": f"translations:file={_translations_file(tmp_path / 'marian.jsonl', produced)}",
                "model": "bm25",
            }
        ),
    )
    assert Path(result["predictions_file"]).read_text() == Path(replay["predictions_file"]).read_text()
    assert result["rows"] == replay["rows"]


def test_hf_translator_batches_like_single_texts(tiny_marian_dir: Path) -> None:
    marian = HFTranslator(runtime=Runtime(device_request="cpu", batch_size=2), path=tiny_marian_dir, max_new_tokens=5)
    texts = [q["question"] for q in QUESTIONS] + ["Milloin Titanic upposi ?"]
    batched = marian.translate(texts, source_lang="fi", target_lang="en")
    assert batched == [marian.translate([t], source_lang="fi", target_lang="en")[0] for t in texts]


def test_limits_past_the_checkpoints_positions_are_cut_to_them(tiny_marian_dir: Path) -> None:
    # the tiny Marian has 64 positions: the defaults (512 input tokens, 128 new ones) would run
    # past its position table and fail inside generate
    marian = HFTranslator(runtime=Runtime(device_request="cpu"), path=tiny_marian_dir)
    assert (marian.max_length, marian.max_new_tokens) == (64, 63)
    long = " ".join(["Where is the Eiffel Tower ?"] * 30)  # 180 words: past 64 tokens
    assert len(marian.translate([long], source_lang="en", target_lang="fi")) == 1
    assert marian.identity().options["max_length"] == 64


def test_untranslated_question_is_an_error(harness_cli: CLI, setup: tuple[Path, Path], tmp_path: Path) -> None:
    data, corpus = setup
    translations = _translations_file(tmp_path / "q-en.jsonl", TRANSLATIONS)
    translations.write_text(
        "\n".join(translations.read_text(encoding="utf-8").splitlines()[:2]) + "\n", encoding="utf-8"
    )
    code, out, err = harness_cli(
        "run",
        f"xor-retrieve:corpus={corpus}",
        "translate-test",
        "--model-args",
        json.dumps({"translator": f"translations:file={translations}", "model": "bm25"}),
        "--data-dir",
        data,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and err.count("\n") == 1
    assert "has no translation of the ja text 'Googleの本社はどこにありますか？'" in err
    translations.write_text(json.dumps({"id": "1", "lang": "fi", "question": "?"}) + "\n", encoding="utf-8")
    code, out, err = harness_cli(
        "run",
        f"xor-retrieve:corpus={corpus}",
        "translate-test",
        "--model-args",
        json.dumps({"translator": f"translations:file={translations}", "model": "bm25"}),
        "--data-dir",
        data,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and "record line 1" in err and "'translation' is a required property" in err
