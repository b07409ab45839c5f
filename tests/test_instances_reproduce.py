"""Every task's per-instance records reproduce its official rows exactly.

For each task, predictions are made from the gold answers with some of them spoilt (seeded), the
task scores them (its rows are the official numbers: other tests check them against the
official scorers), and each declared row statistic, computed from the per-question values
alone, must give the row's number bit for bit -- also after a round trip through
``instances.jsonl``. Real data when HARNESS_REAL_DATA is set, else the built-in demo data. XTREME's
labelled tasks and BUCC are scored on their ``dev`` layout written from XTREME's mock labels (vendored),
with XTREME's mock predictions: the numbers of the official mock submission.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.registry import Registry
from harness.definitions.task import Evaluation, Task
from harness.results.instances import read_instances, write_instances
from harness.running.planning import load_data, load_task
from harness.running.settings import DataOptions
from harness.stats.records import InstanceTable
from tests.conftest import VENDORED

#: XTREME's mock submission (labels and predictions), vendored.
XTREME_MOCK = VENDORED / "xtreme" / "mock_test_data"


def _real(subdir: str) -> Path | None:
    root = os.environ.get("HARNESS_REAL_DATA")
    return Path(root) / subdir if root and (Path(root) / subdir).exists() else None


def _spoil_answers(predictions: dict[str, dict[str, str]], rng: random.Random) -> dict[str, dict[str, str]]:
    """About a third of the answers wrong, a sixth cut to their first word, a tenth left out."""
    out = {}
    for unit, answers in predictions.items():
        out[unit] = {}
        for qid, answer in answers.items():
            roll = rng.random()
            if roll < 0.1:
                continue
            out[unit][qid] = "the wrong answer" if roll < 0.4 else answer.split(" ")[0] if roll < 0.55 else answer
    return out


def _spoil_rankings(
    predictions: dict[str, list[dict[str, Any]]], rng: random.Random, pool: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """LAReQA: each ranking is some random candidates with some of the correct ones mixed in."""
    out = {}
    for unit, items in predictions.items():
        out[unit] = []
        for item in items:
            kept = [cid for cid in item["ranking"] if rng.random() < 0.6]
            ranking = list(dict.fromkeys(rng.sample(pool, 5) + kept))
            rng.shuffle(ranking)
            out[unit].append({"question_id": item["question_id"], "ranking": ranking})
    return out


def _spoil_mkqa(predictions: dict[str, list[dict[str, Any]]], rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """MKQA: wrong texts and no-answer scores with many ties (the sweep's order matters)."""
    out = {}
    for unit, records in predictions.items():
        out[unit] = [
            {
                **r,
                "prediction": "wrong" if rng.random() < 0.3 else r["prediction"],
                "no_answer_prob": rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]),
            }
            for r in records
        ]
    return out


def _spoil_lines(predictions: dict[str, list[int]], rng: random.Random) -> dict[str, list[int]]:
    return {
        unit: [p if rng.random() < 0.7 else rng.randrange(len(lines)) for p in lines]
        for unit, lines in predictions.items()
    }


def _mock_lines(task: str, lang: str) -> list[str]:
    return [line.strip() for line in (XTREME_MOCK / "labels" / task / f"test-{lang}.tsv").read_text().splitlines()]


def _xtreme_dev(task: str) -> Callable[[Path], Path]:
    """A builder of the task's ``dev`` files in XTREME's download layout, one per language of the
    mock labels, carrying those labels (made-up sentences and ids: the scores read only labels)."""

    def build(root: Path) -> Path:
        folder = root / task
        folder.mkdir(parents=True)
        for labels in sorted((XTREME_MOCK / "labels" / task).glob("test-*.tsv")):
            lang = labels.stem.removeprefix("test-")
            lines = _mock_lines(task, lang)
            if task == "bucc2018":
                pairs = [line.split("\t") for line in lines if line]
                for side, ids in ((lang, [s for s, _ in pairs]), ("en", [t for _, t in pairs])):
                    (folder / f"{lang}-en.dev.{side}").write_text("".join(f"{i}\tsentence {i}\n" for i in ids))
                (folder / f"{lang}-en.dev.gold").write_text("".join(f"{s}\t{t}\n" for s, t in pairs))
            elif task in ("panx", "udpos"):
                (folder / f"dev-{lang}.tsv").write_text(
                    "".join(f"w{n}\t{tag}\n" if tag else "\n" for n, tag in enumerate(lines))
                )
            else:
                (folder / f"dev-{lang}.tsv").write_text(
                    "".join(f"a {n}\tb {n}\t{label}\n" for n, label in enumerate(lines))
                )
        return folder

    return build


def _mock_predictions(task: Task, data: Any) -> Any:
    return task.read_predictions(XTREME_MOCK / "predictions", data)


Spoil = Callable[[Any, random.Random, Task, Any], Any]
CASES: list[tuple[str, str | Callable[[Path], Path] | None, dict[str, Any], Spoil]] = [
    ("xquad", "xquad", {}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    ("mlqa", "mlqa", {"split": "dev"}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    ("mlqa:mode=gxlt", "mlqa", {"split": "dev"}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    ("tydiqa", None, {}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    ("lareqa", "lareqa/xquad-r", {"limit": 40}, lambda p, rng, task, data: _spoil_rankings(p, rng, data.pool.ids)),
    ("xor-engspan", "xor-tydi", {"limit": 150}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    ("xor-full", "xor-tydi", {"limit": 150}, lambda p, rng, task, data: _spoil_answers(p, rng)),
    (
        "xor-retrieve",
        "xor-tydi",
        {"limit": 150},
        lambda p, rng, task, data: {
            u: [{**i, "ctxs": i["ctxs"] if rng.random() < 0.6 else ["nothing here"]} for i in items]
            for u, items in p.items()
        },
    ),
    ("mkqa", "mkqa/test_mkqa.jsonl.gz", {"limit": 600}, lambda p, rng, task, data: _spoil_mkqa(p, rng)),
    ("tatoeba", "tatoeba", {}, lambda p, rng, task, data: _spoil_lines(p, rng)),
    *[
        (name, _xtreme_dev(name), {"split": "dev"}, lambda p, rng, task, data: _mock_predictions(task, data))
        for name in ("xnli", "pawsx", "panx", "udpos", "bucc2018")
    ],
    ("xtreme", lambda root: XTREME_MOCK / "labels", {}, lambda p, rng, task, data: _mock_predictions(task, data)),
]


def _scored(
    name: str, subdir: str | Callable[[Path], Path] | None, options: dict[str, Any], spoil: Spoil, tmp_path: Path
) -> tuple[Task, Evaluation]:
    task, _ = load_task(Registry.discover(), name)
    folder = subdir(tmp_path / "data") if callable(subdir) else _real(subdir) if subdir else None
    if folder is None and task.demo_data_dir() is None:
        pytest.skip(f"{name} has no demo data and HARNESS_REAL_DATA has no {subdir}")
    data = load_data(task, DataOptions(data_dir=folder, split=options.get("split"), limit=options.get("limit")))
    predictions = spoil(task.reference_predictions(data, "gold"), random.Random(7), task, data)
    return task, task.evaluate(data, predictions)


@pytest.mark.parametrize(("name", "subdir", "options", "spoil"), CASES, ids=[c[0] for c in CASES])
def test_instances_reproduce_every_row_exactly(
    name: str, subdir: str | Callable[[Path], Path] | None, options: dict[str, Any], spoil: Spoil, tmp_path: Path
) -> None:
    task, evaluation = _scored(name, subdir, options, spoil, tmp_path)
    assert evaluation.instances
    path = tmp_path / "instances.jsonl"
    write_instances(evaluation.instances, path)
    rows = {row.subset: row for row in evaluation.rows}
    for table in (
        InstanceTable.from_instances(evaluation.instances),
        InstanceTable.from_instances(read_instances(path)),
    ):
        statistics = task.statistics(table)
        assert statistics.keys() <= rows.keys()
        checked = 0
        for subset, metrics in statistics.items():
            for metric, statistic in metrics.items():
                assert statistic.point(table) == rows[subset].metrics[metric], (subset, metric)
                checked += 1
        assert checked >= len(table.units) + 1  # every unit's row and a summary, one metric at least
    # the spoilt predictions are not a degenerate case: the rows' main metric varies across units
    # (a unit row without the main metric, as the xtreme submission's task/lang rows: its first metric)
    main = task.metadata.main_metric
    assert (
        len(
            {
                row.metrics.get(main, next(iter(row.metrics.values())))
                for row in evaluation.rows
                if row.subset in table.units
            }
        )
        > 1
    )
