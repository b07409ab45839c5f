"""Results to put on test leaderboards: a task of language-pair rows, and variants of it."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.files.io import sha256_text
from harness.results.result import RunResult
from tests.harness.fakes import fake_result

ROWS = [
    {"split": "dev", "subset": "de-de", "languages": ["de", "de"], "metrics": {"f1": 70.0, "em": 60.0}, "count": 5},
    {"split": "dev", "subset": "de-en", "languages": ["de", "en"], "metrics": {"f1": 30.0, "em": 20.0}, "count": 5},
    {"split": "dev", "subset": "en-de", "languages": ["en", "de"], "metrics": {"f1": 40.0, "em": 35.0}, "count": 5},
    {"split": "dev", "subset": "en-en", "languages": ["en", "en"], "metrics": {"f1": 90.0, "em": 80.0}, "count": 5},
]
#: The data fingerprint of fake_result's one data file.
FINGERPRINT = sha256_text("a" * 64)
#: A submission's model card, as ``submission.json`` gives it.
CARD = {
    "name": "a model",
    "zero_shot": True,
    "translated_training_data": False,
    "license": "apache-2.0",
    "parameters": 118_000_000,
    "training_languages": ["en"],
    "link": "https://example.org/model",
}


def result_for(label: str, score: float, *, task: str = "pairs") -> RunResult:
    return fake_result(
        task=task,
        label=label,
        split="dev",
        languages=("de", "en"),
        metric="f1",
        score=score,
        rows=ROWS,
        finished_at="2026-11-21T00:00:00+00:00",
    )


def variant(
    label: str,
    score: float,
    *,
    task: str = "pairs",
    demo: bool = False,
    limit: int | None = None,
    languages: tuple[str, ...] = ("de", "en"),
    options: dict[str, Any] | None = None,
    interval: tuple[float, float] | None = None,
    scorer: str | None = None,
    card: dict[str, Any] | None = None,
) -> RunResult:
    """:func:`result_for` with another scope, a main-score interval, or a submission's model card."""
    result = result_for(label, score, task=task)
    identity = result.model.identity
    return dataclasses.replace(
        result,
        data=dataclasses.replace(result.data, demo=demo, limit=limit, languages=languages),
        task=dataclasses.replace(result.task, options=options or {}, scorer_signature=scorer),
        main_score=dataclasses.replace(result.main_score, interval=interval),
        model=dataclasses.replace(
            result.model, identity=dataclasses.replace(identity, details={} if card is None else {"card": card})
        ),
    )


def paired_marks(ranked_runs: list[str], comparisons: list[dict[str, Any]]) -> list[str]:
    """The rank marks of entries ranked best first (their run ids) as the rule says them, from the
    board file's comparisons, each of two neighbours required: tied where the interval of the
    difference holds 0 or p is not below 0.05, ties chained, ``=k`` for the rank a tie starts at."""
    marks, start = ["1"], 0
    for i in range(1, len(ranked_runs)):
        (p,) = [p for p in comparisons if {p["run_a"], p["run_b"]} == {ranked_runs[i - 1], ranked_runs[i]}]
        if p["interval"][0] <= 0 <= p["interval"][1] or p["p_permutation"] >= 0.05:
            marks[start] = f"={start + 1}"
            marks.append(f"={start + 1}")
        else:
            start = i
            marks.append(str(i + 1))
    return marks
