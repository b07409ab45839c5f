"""XCOPA, XNLI and PAWS-X with a language model, by log-likelihood: a fake scorer with known
log-likelihoods (a hash of context and continuation) runs through ``harness.evaluate`` and the
command line; the test writes every prompt out itself, takes the choices by the summed
log-likelihood, per character and per UTF-8 byte, and compares the requests the model saw, the
chosen labels and the three accuracies with the result. The run's prediction folder reads back
to the same rows (``harness score``), the submission file holding the summed choice."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import harness
from harness.definitions.protocols import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from harness.errors import CapabilityError
from harness_xtreme.benchmark import PAWSX_CLASSES, XNLI_CLASSES
from tests.harness.fake_scorer import known_logprob
from tests.plugins.harness_xtreme.test_labelled import label_lines
from tests.plugins.harness_xtreme.test_xcopa import write_xcopa

Cli = Callable[..., tuple[int, str, str]]


class ScoringObject:
    """A Python generator object that scores continuations by :func:`known_logprob`, keeping what it was asked."""

    def __init__(self) -> None:
        self.asked: list[LoglikelihoodRequest] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        return [Generation("") for _ in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.asked.extend(requests)
        return [
            Loglikelihood(known_logprob(r.context, r.continuation), len(r.continuation.split()), False)
            for r in requests
        ]


def choices(context: str, options: Sequence[str]) -> tuple[int, int, int]:
    """The reference choice by the sum, per character and per UTF-8 byte (first of equals)."""
    lls = [known_logprob(context, option) for option in options]

    def best(values: list[float]) -> int:
        return values.index(max(values))

    return (
        best(lls),
        best([lp / len(o) for lp, o in zip(lls, options)]),
        best([lp / len(o.encode("utf-8")) for lp, o in zip(lls, options)]),
    )


def accuracies(expected: list[tuple[str, list[str], int]]) -> dict[str, float]:
    """Percent accuracies of the three choices, each example as (context, options, gold index)."""
    picked = [choices(context, options) for context, options, _ in expected]
    return {
        name: 100 * sum(p[k] == gold for p, (_, _, gold) in zip(picked, expected)) / len(expected)
        for k, name in enumerate(("accuracy", "accuracy_norm", "accuracy_bytes"))
    }


def rows_of(outcome: harness.Outcome) -> dict[str, dict[str, float]]:
    return {row.subset: row.metrics for row in outcome.result.rows}


def test_xnli_by_loglikelihood(tmp_path: Path) -> None:
    langs = {
        "en": ("right", "Yes", "Also", "No"),
        "de": ("richtig", "Ja", "Auch", "Nein"),
        "zh": ("正确", "是的", "所以", "不是的"),
    }
    expected: dict[str, list[tuple[str, list[str], int]]] = {}
    for number, lang in enumerate(langs):
        gold = [XNLI_CLASSES[(n * 5 + number) % 3] for n in range(30)]
        pairs = [
            (f"{lang} Prämisse 前提 {n}" + " x" * (n % 4), f"Hypothese {n} 假设" + "字" * (n % 3)) for n in range(30)
        ]
        write_pairs_exact(tmp_path / "xnli" / f"dev-{lang}.tsv", pairs, gold)
        right, yes, also, no = langs[lang]
        word = {"entailment": yes, "neutral": also, "contradiction": no}
        expected[lang] = [
            (
                f"{premise}, {right}?",
                [f" {word[label]}, {hypothesis}" for label in XNLI_CLASSES],
                XNLI_CLASSES.index(label),
            )
            for (premise, hypothesis), label in zip(pairs, gold)
        ]
    scorer = ScoringObject()
    [outcome] = harness.evaluate(
        "xnli", scorer, data_dir=tmp_path / "xnli", split="dev", langs=list(langs), progress=False, bootstrap=0
    )
    asked = {(r.context, r.continuation) for r in scorer.asked}
    assert asked == {
        (context, option) for lang in langs for context, options, _ in expected[lang] for option in options
    }
    rows = rows_of(outcome)
    for lang in langs:
        assert rows[lang] == pytest.approx(accuracies(expected[lang]), abs=1e-9)
    for metric in ("accuracy", "accuracy_norm", "accuracy_bytes"):
        assert rows["mean"][metric] == pytest.approx(sum(rows[lang][metric] for lang in langs) / len(langs), abs=1e-9)
    assert outcome.result.main_score.value == rows["mean"]["accuracy"]
    # the three choices disagree on some examples, or the test could not tell them apart
    picked = [choices(c, o) for lang in langs for c, o, _ in expected[lang]]
    assert any(p[0] != p[1] for p in picked) and any(p[1] != p[2] for p in picked)


def test_pawsx_prompt_and_cli_readback(tmp_path: Path, harness_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    gold = [PAWSX_CLASSES[n % 2] for n in range(8)]
    # a final period, dropped from the context; the second sentence starts in lower case
    pairs = [(f"Première phrase {n}{' é' * (n % 3)}.", f"Seconde phrase {n}{'à' * (n % 4)}") for n in range(8)]
    (tmp_path / "data" / "pawsx").mkdir(parents=True)
    write_pairs_exact(tmp_path / "data" / "pawsx" / "dev-fr.tsv", pairs, gold)
    expected = [
        (
            f"{first.removesuffix('.')}, n'est-ce pas?",
            [f" Non, {second[0].lower()}{second[1:]}", f" Oui, {second[0].lower()}{second[1:]}"],
            PAWSX_CLASSES.index(label),
        )
        for (first, second), label in zip(pairs, gold)
    ]
    [outcome] = harness.evaluate(
        "pawsx",
        ScoringObject(),
        data_dir=tmp_path / "data" / "pawsx",
        split="dev",
        langs=["fr"],
        progress=False,
        bootstrap=200,
        output_dir=tmp_path / "out",
    )
    rows = rows_of(outcome)
    assert rows["fr"] == pytest.approx(accuracies(expected), abs=1e-9)
    [row] = [row for row in outcome.result.rows if row.subset == "fr"]
    for metric in ("accuracy", "accuracy_norm", "accuracy_bytes"):  # bootstrap intervals for all three
        low, high = row.intervals[metric]
        assert low <= rows["fr"][metric] <= high
    folder = Path(outcome.result.predictions.path)
    submitted = label_lines(folder / "pawsx" / "test-fr.tsv")
    assert submitted == [PAWSX_CLASSES[choices(c, o)[0]] for c, o, _ in expected]
    saved = json.loads((folder / "pawsx" / "fr.loglikelihoods.json").read_text(encoding="utf-8"))
    assert saved["loglikelihoods"] == [[pytest.approx(known_logprob(c, x)) for x in o] for c, o, _ in expected]
    code, out, err = harness_cli(
        "score",
        "pawsx",
        "--predictions",
        folder,
        "--data-dir",
        tmp_path / "data" / "pawsx",
        "--split",
        "dev",
        "--langs",
        "fr",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "scored",
    )
    assert code == 0, err
    scored = {row["subset"]: row["metrics"] for row in json.loads(out)["results"][0]["result"]["rows"]}
    assert scored["fr"] == pytest.approx(rows["fr"], abs=1e-12)
    # a summed choice that is not the submission's: one line naming the file and the field
    saved["chosen"]["sum"][0] = "1" if saved["chosen"]["sum"][0] == "0" else "0"
    (folder / "pawsx" / "fr.loglikelihoods.json").write_text(json.dumps(saved), encoding="utf-8")
    code, _, err = harness_cli(
        "score",
        "pawsx",
        "--predictions",
        folder,
        "--data-dir",
        tmp_path / "data" / "pawsx",
        "--split",
        "dev",
        "--langs",
        "fr",
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "scored2",
    )
    assert code == 2 and "fr.loglikelihoods.json" in err and "chosen.sum" in err


def write_pairs_exact(path: Path, pairs: list[tuple[str, str]], labels: list[str]) -> None:
    """A pair file in XTREME's layout, of sentences that need no quoting."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{a}\t{b}\t{label}\n" for (a, b), label in zip(pairs, labels)), encoding="utf-8")


def test_xcopa_by_loglikelihood(tmp_path: Path) -> None:
    connectors = {"it": ("perché", "quindi"), "zh": ("因为", "所以")}
    expected = {}
    for lang in connectors:
        gold = [(n * 3 + len(lang)) % 2 for n in range(10)]
        write_xcopa(tmp_path / "xcopa", "val", lang, gold)
        records = [json.loads(line) for line in (tmp_path / "xcopa" / f"val-{lang}.jsonl").read_text().splitlines()]
        cause, effect = connectors[lang]
        expected[lang] = [
            (
                f"{r['premise'].strip().removesuffix('.')} {cause if r['question'] == 'cause' else effect}",
                [" " + r["choice1"][0].lower() + r["choice1"][1:], " " + r["choice2"][0].lower() + r["choice2"][1:]],
                label,
            )
            for r, label in zip(records, gold)
        ]
    scorer = ScoringObject()
    [outcome] = harness.evaluate(
        "xcopa", scorer, data_dir=tmp_path / "xcopa", split="dev", langs=list(connectors), progress=False, bootstrap=0
    )
    assert {(r.context, r.continuation) for r in scorer.asked} == {
        (c, o) for lang in connectors for c, options, _ in expected[lang] for o in options
    }
    rows = rows_of(outcome)
    for lang in connectors:
        assert rows[lang] == pytest.approx(accuracies(expected[lang]), abs=1e-9)


def test_a_generator_that_cannot_score_is_refused_before_work(tmp_path: Path) -> None:
    class OnlyGenerates:
        def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
            raise AssertionError("not asked")

    write_xcopa(tmp_path / "xcopa", "val", "it", [0, 1])
    with pytest.raises(CapabilityError, match="xcopa needs a MultipleChoice or a LoglikelihoodScorer"):
        harness.evaluate(
            "xcopa",
            OnlyGenerates(),
            data_dir=tmp_path / "xcopa",
            split="dev",
            langs=["it"],
            progress=False,
            bootstrap=0,
        )
