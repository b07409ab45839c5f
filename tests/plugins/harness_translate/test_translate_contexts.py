"""MLQA translate-test: contexts translated sentence by sentence, the English answer projected back
onto the original context (the fuzzy-match fallback), checked by hand and end to end."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.data.sentences import split_sentences
from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Reader, ReadingExample, SpanAnswer
from harness.definitions.specs import ModelSpec
from harness.running import runner, settings
from harness_translate.contexts import join_translation, project
from tests.plugins.harness_lareqa.test_mlqa_r import FIXTURE, write_mlqa_fixture

GERMAN = "Der Fluss ist lang. Er fließt 200 km nach Norden."
ENGLISH = ["The river is long.", "It flows north for 200 km."]


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("200 km", "200 km"),  # found as it is
        ("200 kilometres", "200 k"),  # the longest shared run, 5 characters
        ("north", "Er fließt 200 km nach Norden."),  # shares 2 characters ("or"): the whole sentence
        ("long", "Der Fluss ist lang."),  # in the first sentence: that one
        ("", ""),  # no answer stays no answer
    ],
)
def test_the_answer_is_projected_by_hand(answer: str, expected: str) -> None:
    context = join_translation(GERMAN, split_sentences(GERMAN, "de"), ENGLISH)
    assert context.english == "The river is long. It flows north for 200 km."
    start = context.english.find(answer) if answer else 0
    projected = project(SpanAnswer(answer, start, 0.5), context)
    assert projected.text == expected and GERMAN[projected.start : projected.start + len(expected)] == expected
    assert projected.score == 0.5


class ForReader(Model):
    """Reads English only: the word after "for" (else no answer)."""

    provides = frozenset({Reader})

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="for-reader", label="for-reader")

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        out = []
        for e in examples:
            match = re.search(r"\bfor (\S+)", e.context)
            out.append(SpanAnswer(match.group(1), match.start(1), 1.0) if match else SpanAnswer("", 0, 0.0))
        return out


#: English of the German fixture's sentences, and of its questions.
SENTENCES = {
    "Der Fluss entspringt in den Hügeln.": "The river rises in the hills.",
    "Er fließt 200 km nach Norden.": "It flows north for 200 km.",
    "Brown kartierte ihn 1850.": "Brown mapped it in 1850.",
    "Die Stadt hat einen Markt.": "The town has a market.",
    "Der Markt öffnet montags.": "The market opens on Mondays.",
}


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("for-reader", f"{__name__}:ForReader")]


def test_mlqa_reads_the_english_context_and_answers_in_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = write_mlqa_fixture(tmp_path / "mlqa")
    records = []
    for context, qas in FIXTURE["de"]:
        sentences = [context[s:e] for s, e in split_sentences(context, "de")]
        for qid, _ in qas:
            records.append({"id": qid, "lang": "de", "question": f"{qid} in de?", "translation": f"{qid}?"})
            records += [
                {"id": f"{qid}/{k}", "lang": "de", "text": text, "translation": SENTENCES[text]}
                for k, text in enumerate(sentences)
            ]
    translations = tmp_path / "de-en.jsonl"
    translations.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    monkeypatch.setenv("HARNESS_PLUGINS", __name__)  # translate-test loads its inner model by name

    def run(contexts: bool) -> dict[str, float]:
        args = {"translator": f"translations:file={translations}", "model": "for-reader", "contexts": contexts}
        outcome = runner.run(
            "mlqa",
            "translate-test",
            model_args=json.dumps(args),
            data=settings.DataOptions(data_dir=data_dir, split="dev", languages=("de",)),
            output=settings.OutputOptions(output_dir=tmp_path / "results", leaderboard=None, show_progress=False),
        )
        return outcome.result.rows[0].metrics

    # a1's English context has "for 200": its answer "200" is found in the German context, which is
    # a1's gold answer; b1 and d1 get no answer: 1 of 3 exact
    assert run(contexts=True) == {"exact_match": pytest.approx(100 / 3), "f1": pytest.approx(100 / 3)}
    assert run(contexts=False) == {"exact_match": 0.0, "f1": 0.0}  # German contexts: no "for"
