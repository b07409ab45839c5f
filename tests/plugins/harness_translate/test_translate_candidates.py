"""Translate-test of the whole retrieval pipeline: candidates translated by id (LAReQA's
Translate-Test: everything into English), translation files keyed by id and language, and machine
translations cached and reused by a later run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import Corpus
from harness.definitions.task import DataRequest
from harness.demo import parallel_qa_dir
from harness.errors import HarnessError
from harness.running import runner, settings
from harness_bm25.model import BM25
from harness_hf.translator import HFTranslator
from harness_lareqa.task import LAReQA
from harness_translate.file import TranslationsFile
from tests.harness.scoring.test_ranking_metrics import official_style_ap
from tests.plugins.harness_translate.tiny_marian import build_tiny_marian

LANGS = ("de", "en")


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_file_keyed_by_id_keeps_two_translations_of_one_text(tmp_path: Path) -> None:
    # XQuAD's human translations do this: two English questions, one Greek text
    file = _write(
        tmp_path / "t.jsonl",
        [
            {"id": "q1", "lang": "el", "question": "Πότε;", "translation": "When was it built?"},
            {"id": "q2", "lang": "el", "question": "Πότε;", "translation": "When did it end?"},
            {"id": "c1", "lang": "el", "text": "Μια πρόταση.", "translation": "A sentence."},
        ],
    )
    translator = TranslationsFile(runtime=Runtime(), file=file)
    assert translator.translate_ids(
        ["q2", "q1", "c1"], ["Πότε;", "Πότε;", "Μια πρόταση."], source_lang="el", target_lang="en"
    ) == ["When did it end?", "When was it built?", "A sentence."]
    assert translator.translate(["Μια πρόταση."], source_lang="el", target_lang="en") == ["A sentence."]
    with pytest.raises(HarnessError, match=r"2 different translations of the el text 'Πότε;' .*needs the id"):
        translator.translate(["Πότε;"], source_lang="el", target_lang="en")
    with pytest.raises(HarnessError, match="translates another text for the el id 'c1'"):
        translator.translate_ids(["c1"], ["Άλλη πρόταση."], source_lang="el", target_lang="en")
    with pytest.raises(HarnessError, match="no translation of the el text with id 'c9'"):
        translator.translate_ids(["c9"], ["Μια πρόταση."], source_lang="el", target_lang="en")
    _write(
        file,
        [
            {"id": "q1", "lang": "el", "question": "a", "translation": "b"},
            {"id": "q1", "lang": "el", "question": "c", "translation": "d"},
        ],
    )
    with pytest.raises(HarnessError, match="id 'q1' appears twice for language 'el'"):
        TranslationsFile(runtime=Runtime(), file=file)


def _demo() -> tuple[LAReQA, Any, Corpus]:
    task = LAReQA()
    data = task.load(DataRequest(parallel_qa_dir(), "test", LANGS))
    return task, data, task.corpus(data)


def _parallel_english_file(path: Path) -> Path:
    """The demo is fully parallel: every German question and candidate "translated" into its English
    counterpart (same question id; same paragraph and sentence numbers), keyed by id; and a decoy
    that gives the first German question's text a second translation, so a lookup by text fails."""
    _, data, corpus = _demo()
    english = {q.xling_id: q.text for q in data.questions if q.lang == "en"}
    texts = dict(zip(corpus.ids, corpus.texts))
    german = [q for q in data.questions if q.lang == "de"]
    return _write(
        path,
        [{"id": q.xling_id, "lang": "de", "question": q.text, "translation": english[q.xling_id]} for q in german]
        + [{"id": "decoy", "lang": "de", "question": german[0].text, "translation": "decoy"}]
        + [
            {"id": cid, "lang": "de", "text": texts[cid], "translation": texts["en" + cid[2:]]}
            for cid in corpus.ids
            if cid.startswith("de_")
        ],
    )


def _run(tmp_path: Path, translator: str, candidates: bool, cache: Path | None = None) -> runner.Outcome:
    args = {"translator": translator, "model": "bm25", **({"candidates": True} if candidates else {})}
    return runner.run(
        "lareqa",
        "translate-test",
        model_args=json.dumps(args),
        data=settings.DataOptions(languages=LANGS),
        execution=settings.ExecutionOptions(cache_dir=cache),
        output=settings.OutputOptions(output_dir=tmp_path / "results", leaderboard=None, show_progress=False),
    )


def test_everything_into_english_equals_bm25_on_the_english_texts(tmp_path: Path) -> None:
    file = _parallel_english_file(tmp_path / "de-en.jsonl")
    outcome = _run(tmp_path, f"translations:file={file}", candidates=True)
    assert outcome.result.model.identity.options["candidates"] is True
    # reference: BM25 over the English counterparts, tagged English, ties by pool position
    _, data, corpus = _demo()
    english_text = {q.xling_id: q.text for q in data.questions if q.lang == "en"}
    english_corpus = [dict(zip(corpus.ids, corpus.texts))["en" + cid[2:]] for cid in corpus.ids]
    index = BM25(runtime=Runtime()).index(Corpus(corpus.ids, english_corpus, ["en"] * len(corpus)))
    questions = [q for lang in LANGS for q in data.questions_in(lang)]
    scores = index.scores([english_text[q.xling_id] for q in questions], langs=["en"] * len(questions))
    aps = [
        official_style_ap(
            set(data.targets[q.xling_id].tolist()), sorted(range(len(corpus)), key=lambda p: (-row[p], p)), None
        )
        for q, row in zip(questions, scores)
    ]
    assert outcome.result.rows[0].metrics["map"] == pytest.approx(float(np.mean(aps)), abs=1e-12)
    # translating the questions only is another, lower score (German candidates stay German)
    questions_only = _run(tmp_path, f"translations:file={file}", candidates=False)
    assert questions_only.result.rows[0].metrics["map"] < outcome.result.rows[0].metrics["map"]


def test_machine_translations_are_cached_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marian = build_tiny_marian(tmp_path / "marian")
    translator = f"hf-translator:path={marian},max_new_tokens=4,max_length=60"  # the tiny model has 64 positions
    first = _run(tmp_path, translator, candidates=True, cache=tmp_path / "cache")
    [cache_file] = (tmp_path / "cache" / "translations").glob("*.json")
    cached = json.loads(cache_file.read_text(encoding="utf-8"))["translations"]
    _, data, corpus = _demo()
    german = {q.text for q in data.questions if q.lang == "de"} | {
        t for t, lang in zip(corpus.texts, corpus.langs) if lang == "de"
    }
    assert set(cached) == {"de"} and set(cached["de"]["en"]) == german  # each distinct German text once

    def refuse(*args: Any, **kwargs: Any) -> list[str]:
        raise AssertionError("translated again")

    monkeypatch.setattr(HFTranslator, "translate", refuse)
    second = _run(tmp_path, translator, candidates=True, cache=tmp_path / "cache")
    assert second.result.rows == first.result.rows
    assert Path(second.result.predictions.path).read_bytes() == Path(first.result.predictions.path).read_bytes()
