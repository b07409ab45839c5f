"""retrieve-read's plumbing with BM25 and a reader stub whose spans are known: which passages are
read, which span wins, the no-answer score, translate-test and answers translated back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.data.passages import Passages, read_passages
from harness.definitions.model import Runtime
from harness.definitions.protocols import OpenAnswer, OpenDomainQA, OpenQuestion, SpanAnswer
from harness_opendomain import model as pipeline
from harness_opendomain.model import Choice, RetrieveRead, choose
from tests.plugins.harness_opendomain.world import (
    EN,
    ENGLISH,
    FI,
    JA,
    NO_SPAN,
    Q_CAPITAL,
    Q_EIFFEL,
    Q_GOOGLE,
    Q_TITANIC,
    QUESTIONS,
    StubReader,
    translations_file,
)


def open_questions(answer_lang: str | None = None) -> list[OpenQuestion]:
    """The four questions; ``answer_lang`` "question" asks for answers in the question's language."""
    return [
        OpenQuestion(qid, text, lang, lang if answer_lang == "question" else answer_lang)
        for qid, text, lang, _, _ in QUESTIONS
    ]


def retrieve_read(corpus: Path, **options: Any) -> RetrieveRead:
    return RetrieveRead(runtime=Runtime(device_request="cpu"), corpus=corpus, reader="stub-reader", **options)


def test_choose_the_best_span_and_the_no_answer_score() -> None:
    spans = [SpanAnswer("Paris", 27, 5.0, 1.0), SpanAnswer("1889", 3, 7.5, -2.0), SpanAnswer("", -1, NO_SPAN, 4.0)]
    # Best span: 7.5 (passage 2, fi). Null: the smallest, -2.0. no_answer_score = -2.0 - 7.5 = -9.5.
    assert choose(spans, ["en", "fi", "en"]) == Choice("1889", "fi", -9.5)
    # A tie goes to the better-ranked passage: 5.0 twice, the first wins; null min(1.0, 0.0) - 5.0 = -5.0.
    assert choose([SpanAnswer("a", 0, 5.0, 1.0), SpanAnswer("b", 0, 5.0, 0.0)], ["en", "ja"]) == Choice("a", "en", -5.0)
    # No valid span anywhere: "" and no score; a reader without null scores gives no score either.
    assert choose([SpanAnswer("", -1, NO_SPAN, 4.0)] * 2, ["en", "en"]) == Choice("", None, None)
    assert choose([SpanAnswer("x", 0, 1.0, None)], ["en"]) == Choice("x", "en", None)


def test_retrieve_read_answers_from_the_best_passage(
    corpus: Path, stub_reader: type[StubReader], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[Path] = []

    def counted(location: Path) -> Passages:
        reads.append(location)
        return read_passages(location)

    monkeypatch.setattr(pipeline, "read_passages", counted)
    model = retrieve_read(corpus, top_k=2)
    assert isinstance(model, OpenDomainQA)
    answers = model.answer(open_questions())
    # BM25 over (title, text), top 2 (ties by corpus position: e0, e1, e2, e3, f0, f1, j0):
    #  1 fi Eiffel:  f0 (eiffel, torni, sijaitsee), e0 (eiffel) -> spans 3.0 / 4.0: "Paris" (e0);
    #                no-answer = min(1.0, 0.5) - 4.0 = -3.5
    #  2 ja 日本の首都: j0 (日本, の, 首都, は), then e0 (every English passage scores 0) -> 6.0 / 1.0:
    #                "東京"; min(2.0, 3.0) - 6.0 = -4.0
    # -3 fi Titanic: f1 (titanic, upposi), e1 (titanic) -> 2.0 / no span: "1912"; min(-1.0, 3.0) - 2.0 = -3.0
    #  4 fi Google:  "googlen" matches nothing: e0, e1, for which the stub has no span: "" and no score.
    assert answers == [
        OpenAnswer("Paris", -3.5),
        OpenAnswer("東京", -4.0),
        OpenAnswer("1912", -3.0),
        OpenAnswer("", None),
    ]
    # All eight (question, passage) pairs went to the reader in one call, passages in ranking order.
    [call] = stub_reader.calls
    passage = {text: pid for pid, (text, _) in {**EN, **FI, **JA}.items()}
    assert [(e.question, passage[e.context], e.question_lang, e.context_lang) for e in call] == [
        (Q_EIFFEL, "f0", "fi", "fi"),
        (Q_EIFFEL, "e0", "fi", "en"),
        (Q_CAPITAL, "j0", "ja", "ja"),
        (Q_CAPITAL, "e0", "ja", "en"),
        (Q_TITANIC, "f1", "fi", "fi"),
        (Q_TITANIC, "e1", "fi", "en"),
        (Q_GOOGLE, "e0", "fi", "en"),
        (Q_GOOGLE, "e1", "fi", "en"),
    ]
    # The corpus is read and indexed once, on the first call, and kept.
    assert model.answer(open_questions()[:1]) == answers[:1]
    assert reads == [corpus]


def test_an_encoder_retrieves_too(corpus: Path, stub_reader: type[StubReader], tiny_encoder_dir: Path) -> None:
    # A random encoder ranks at random, but with top_k = all 7 passages every question reads every
    # passage, so the answers are those above whatever the order (no two spans tie).
    model = retrieve_read(corpus, top_k=7, retriever=f"hf-encoder:path={tiny_encoder_dir}")
    assert model.answer(open_questions()) == [
        OpenAnswer("Paris", -3.5),
        OpenAnswer("東京", -4.0),
        OpenAnswer("1912", -3.0),
        OpenAnswer("", None),
    ]
    assert len(stub_reader.calls[0]) == 4 * 7
    assert model.identity().options["retriever"]["name"] == "hf-encoder"


def test_answers_found_in_another_language_are_translated_back(
    corpus: Path, stub_reader: type[StubReader], tmp_path: Path
) -> None:
    to_finnish = translations_file(tmp_path / "answers-fi.jsonl", [("en", "Paris", "Pariisi")])
    model = retrieve_read(corpus, top_k=2, answer_translator=f"translations:file={to_finnish},target_lang=fi")
    answers = model.answer(open_questions("question"))
    # Only "Paris" (an English passage, a Finnish question) is translated; "東京" comes from a
    # Japanese passage for a Japanese question and "1912" from a Finnish one; "" stays "".
    assert [a.text for a in answers] == ["Pariisi", "東京", "1912", ""]
    assert [a.no_answer_score for a in answers] == [-3.5, -4.0, -3.0, None]
    # A question that wants an English answer (XOR-EnglishSpan) keeps the English "Paris";
    # without an answer language nothing is translated.
    assert [a.text for a in model.answer(open_questions("en")[:1])] == ["Paris"]
    assert [a.text for a in model.answer(open_questions())] == ["Paris", "東京", "1912", ""]


def test_translate_test_reads_english_questions(
    corpus: Path, stub_reader: type[StubReader], question_translations: Path
) -> None:
    model = retrieve_read(corpus, top_k=1, translator=f"translations:file={question_translations}")
    answers = model.answer(open_questions())
    # English queries: "Where is the Eiffel Tower?" -> e0 (the, eiffel, tower); "What is the
    # capital of Japan?" -> e2 (is, the, capital, of, japan); "Where is Google's headquarters?"
    # -> e3 (is, google); "When did the Titanic sink?" -> f1: "titanic" twice in 5 tokens beats
    # "titanic" twice and "the" in e1's 11 tokens (N = 7 passages, avgdl = 53/7, k1 1.5, b 0.75:
    # idf(titanic) = ln(5.5/2.5) = 0.788, idf(the) = ln(4.5/3.5) = 0.251; f1: 0.788 * 2 * 2.5 /
    # (2 + 1.5 * (0.25 + 0.75 * 5 / 7.571)) = 1.264; e1: 0.983 + 0.251 * 2.5 / (1 + 1.5 * (0.25
    # + 0.75 * 11 / 7.571)) = 1.192). The stub answers the first two: Paris 4.0 (null 0.5),
    # Tokyo 5.0 (null 1.0).
    assert answers == [
        OpenAnswer("Paris", 0.5 - 4.0),
        OpenAnswer("Tokyo", 1.0 - 5.0),
        OpenAnswer("", None),
        OpenAnswer("", None),
    ]
    [call] = stub_reader.calls
    assert [(e.question, e.question_lang, e.context) for e in call] == [
        (ENGLISH["1"], "en", EN["e0"][0]),
        (ENGLISH["2"], "en", EN["e2"][0]),
        (ENGLISH["-3"], "en", FI["f1"][0]),
        (ENGLISH["4"], "en", EN["e3"][0]),
    ]


def test_identity_records_every_part(corpus: Path, stub_reader: type[StubReader], question_translations: Path) -> None:
    identity = retrieve_read(corpus, top_k=3, translator=f"translations:file={question_translations}").identity()
    assert identity.name == "retrieve-read"
    assert identity.label == "retrieve-read(questions-en -> BM25 -> stub, top 3)"
    assert identity.weights == "sha256:stub"  # the reader's
    options = identity.options
    assert options["retriever"]["name"] == "bm25" and options["retriever"]["options"]["k1"] == 1.5
    assert options["reader"] == {"name": "stub-reader", "label": "stub", "weights": "sha256:stub", "options": {}}
    assert options["translator"]["name"] == "translations" and options["translator"]["weights"].startswith("sha256:")
    assert options["answer_translator"] is None
    assert (options["top_k"], options["titles"], options["target_lang"]) == (3, True, "en")
    assert sorted(options["corpus"]) == ["en.tsv", "fi.jsonl", "ja.jsonl"]
    assert all(digest.startswith("sha256:") and len(digest) == 71 for digest in options["corpus"].values())
    assert identity.details["corpus_languages"] == ["en", "fi", "ja"]
    json.dumps(identity.as_dict())  # a result can record it
