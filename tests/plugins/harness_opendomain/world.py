"""A tiny XOR-style world: four questions, passages in three languages, and a reader stub whose
spans are written down here (registered by the ``stub_reader`` fixture as the model
``stub-reader``, so the pipeline loads it from a spec string exactly as it loads ``hf-reader``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from harness.definitions.model import Model, ModelIdentity
from harness.definitions.protocols import Reader, ReadingExample, SpanAnswer

NO_SPAN = float("-inf")

# Corpus position order: en.tsv first, then fi.jsonl, ja.jsonl (harness.data.passages puts English first).
EN = {
    "e0": ("The Eiffel Tower stands in Paris, France.", "Eiffel Tower"),
    "e1": ("The Titanic sank in April 1912 after hitting an iceberg.", "Titanic"),
    "e2": ("Tokyo is the capital of Japan.", "Tokyo"),
    "e3": ("Google is headquartered in Mountain View, California.", "Google"),
}
FI = {"f0": ("Eiffel-torni sijaitsee Pariisissa.", "Eiffel-torni"), "f1": ("Titanic upposi vuonna 1912.", "Titanic")}
JA = {"j0": ("東京は日本の首都です。", "東京")}

Q_EIFFEL, Q_CAPITAL = "Missä Eiffel-torni sijaitsee?", "日本の首都は？"
Q_TITANIC, Q_GOOGLE = "Milloin Titanic upposi?", "Mikä on Googlen pääkonttori?"
#: (id, question, lang, XOR-EnglishSpan answers, XOR-Full answers)
QUESTIONS = [
    ("1", Q_EIFFEL, "fi", ["Paris"], ["Pariisi"]),
    ("2", Q_CAPITAL, "ja", ["Tokyo"], ["東京"]),
    ("-3", Q_TITANIC, "fi", ["1912"], ["1912"]),
    ("4", Q_GOOGLE, "fi", ["Mountain View"], ["Mountain View"]),
]
#: Human translations of the questions into English (a translations file for translate-test).
ENGLISH = {
    "1": "Where is the Eiffel Tower?",
    "2": "What is the capital of Japan?",
    "-3": "When did the Titanic sink?",
    "4": "Where is Google's headquarters?",
}


def _span(
    question: str, passage: str, answer: str, score: float, null: float | None
) -> tuple[tuple[str, str], SpanAnswer]:
    text = {**EN, **FI, **JA}[passage][0]
    start = text.find(answer) if answer else -1
    return (question, text), SpanAnswer(answer, start, score, null)


#: What the stub reads in each (question, passage) pair; any other pair has no span and no null score.
SPANS = dict(
    [
        _span(Q_EIFFEL, "f0", "Pariisissa", 3.0, 1.0),
        _span(Q_EIFFEL, "e0", "Paris", 4.0, 0.5),
        _span(Q_CAPITAL, "j0", "東京", 6.0, 2.0),
        _span(Q_CAPITAL, "e0", "Paris", 1.0, 3.0),
        _span(Q_TITANIC, "f1", "1912", 2.0, -1.0),
        _span(Q_TITANIC, "e1", "", NO_SPAN, 3.0),
        _span(ENGLISH["1"], "e0", "Paris", 4.0, 0.5),
        _span(ENGLISH["2"], "e2", "Tokyo", 5.0, 1.0),
    ]
)


class StubReader(Model):
    """A Reader that looks its spans up in :data:`SPANS` and records every ``read`` call."""

    provides = frozenset({Reader})

    calls: ClassVar[list[list[ReadingExample]]] = []

    def __init__(self, *, runtime: Any) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="stub-reader", label="stub", weights="sha256:stub")

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        StubReader.calls.append(list(examples))
        return [SPANS.get((e.question, e.context), SpanAnswer("", -1, NO_SPAN, None)) for e in examples]


def translations_file(path: Path, records: Sequence[tuple[str, str, str]]) -> Path:
    """A ``translations`` model file of (lang, text, translation) records."""
    lines = [
        json.dumps({"id": f"t{i}", "lang": lang, "question": text, "translation": translation}, ensure_ascii=False)
        for i, (lang, text, translation) in enumerate(records)
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
