"""Scoring all 49 MLQA G-XLT dev files: the harness's scorer against the official MLQA script.

Baseline: ``evaluate(dataset, predictions, answer_language)`` of the official
``mlqa_evaluation_v1.py``, imported from ``--official DIR`` (or ``$XLQA_OFFICIAL_DIR``; the
repository ships no copy, so one of the two is required), called once per file as the official
command line does, with the context language as the answer language. Harness: ``MLQA.score_units``
(one pass over all files, one normalisation memo per answer language, so answer strings shared
by the files of one context language are normalised once).

Data: the real MLQA v1 dev files under ``--data-dir`` (the folder holding ``MLQA_V1``; there is
no demo default). Predictions: each question's first gold answer, seeded perturbation (a quarter
cut by one word, a quarter upper-cased with "!"), the same dictionaries for both sides; reading
the data and predictions is not timed. The sides run alternately ``--repeat`` times; min and
median seconds per side and their ratio are printed, and every file's EM and F1 must be
identical (``==``) on both sides.

    python benchmarks/bench_span_scoring.py --data-dir ../shared/data/mlqa --official DIR
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from harness.definitions.task import DataRequest
from harness.qa.task import SpanQAData
from harness_mlqa.task import MLQA

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, add_official_argument, alternate, import_official, report

Predictions = dict[str, dict[str, str]]
Scores = dict[str, tuple[float, float]]


def perturbed(data: SpanQAData, seed: int) -> Predictions:
    """Gold answers, a quarter cut by one word and a quarter upper-cased with "!" (a realistic mix
    of exact, partial and missed answers)."""
    rng = random.Random(seed)
    out: Predictions = {}
    for name, unit in data.units.items():
        out[name] = {}
        for question in unit.questions:
            gold, r = question.answers[0], rng.random()
            out[name][question.id] = (
                " ".join(gold.split()[:-1]) if r < 0.25 else gold.upper() + "!" if r < 0.5 else gold
            )
    return out


def official_datasets(data: SpanQAData, folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each unit's file as the official script reads it (``json.load(...)['data']``)."""
    paths = {path.name: path for path in folder.rglob("*.json")}
    out = {}
    for name, unit in data.units.items():
        with open(paths[unit.file_name], encoding="utf-8") as handle:
            out[name] = json.load(handle)["data"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="folder holding the real MLQA_V1")
    add_official_argument(parser, "mlqa_evaluation_v1.py")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running both sides once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.data_dir / "MLQA_V1").is_dir():
        raise SystemExit(f"--data-dir {args.data_dir}: no MLQA_V1 folder there (the real MLQA data is needed)")
    official = import_official(args.official, "mlqa_evaluation_v1")

    task = MLQA(mode="gxlt")
    data = task.load(DataRequest(args.data_dir, args.split, task.check_languages(None)))
    datasets = official_datasets(data, args.data_dir / "MLQA_V1")
    predictions = perturbed(data, args.seed)
    questions = sum(len(unit.questions) for unit in data.units.values())

    def run_official() -> Scores:
        scores = {}
        for name, unit in data.units.items():
            result = official.evaluate(datasets[name], predictions[name], unit.context_lang)
            scores[name] = (result["exact_match"], result["f1"])
        return scores

    def run_harness() -> Scores:
        return {name: (s.exact_match, s.f1) for name, s in task.score_units(data, predictions).items()}

    print(
        f"real MLQA {args.split}: {len(data.units)} files, {questions:,} questions; predictions: seeded perturbation "
        f"of the gold answers (seed {args.seed}); baseline: official mlqa_evaluation_v1.evaluate, file by file"
    )
    baseline, harness = alternate(
        [Side("official mlqa_evaluation_v1", run_official), Side("harness MLQA.score_units", run_harness)], args.repeat
    )
    different = [name for name in data.units if baseline.result[name] != harness.result[name]]
    if different:
        raise SystemExit(
            f"scores differ in {len(different)} files, e.g. {different[0]}: "
            f"official {baseline.result[different[0]]}, harness {harness.result[different[0]]}"
        )
    print(f"equality: EM and F1 identical (==) in all {len(data.units)} files")
    report(baseline, harness, unit="ms")


if __name__ == "__main__":
    main()
