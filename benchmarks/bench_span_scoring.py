"""Scoring every MLQA G-XLT file: the harness's scorer against a plain per-question loop.

The harness scores all files of a run in one pass with one normalisation memo per answer
language, so an answer string shared by several files (the 49 MLQA pairs share 7 sets of
contexts and answers) is normalised once. The baseline, timed in the same run on the same
predictions, is the plain loop of the official scripts: for each file, for each question,
normalise the prediction and every gold answer afresh. Both must give identical scores.

    python benchmarks/bench_span_scoring.py                    # the demo pairs (49 x 24 questions)
    python benchmarks/bench_span_scoring.py --data-dir DIR     # full size: real MLQA (DIR holds MLQA_V1)
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path

from harness.metrics.answers import token_f1
from harness.task import DataRequest
from harness_mlqa.task import MLQA
from harness.qa.task import SpanQAData

Predictions = dict[str, dict[str, str]]


def plain_loop(task: MLQA, data: SpanQAData, predictions: Predictions) -> dict[str, tuple[float, float]]:
    """Per file, per question: normalise the prediction and each gold, take the best EM and F1."""
    out = {}
    for name, unit in data.units.items():
        normalize = task.normalizer(unit)
        exact_sum = f1_sum = 0.0
        for question in unit.questions:
            if question.id not in predictions[name]:
                continue
            prediction = normalize(predictions[name][question.id])
            golds = [normalize(gold) for gold in question.answers]
            exact_sum += max(float(prediction == gold) for gold in golds)
            f1_sum += max(token_f1(prediction, gold) for gold in golds)
        out[name] = (100.0 * exact_sum / len(unit.questions), 100.0 * f1_sum / len(unit.questions))
    return out


def harness_scores(task: MLQA, data: SpanQAData, predictions: Predictions) -> dict[str, tuple[float, float]]:
    return {name: (s.exact_match, s.f1) for name, s in task.score_units(data, predictions).items()}


def perturbed(data: SpanQAData, seed: int) -> Predictions:
    """Gold answers, a quarter cut by one word and a quarter upper-cased with "!" (a realistic mix
    of exact, partial and missed answers)."""
    rng = random.Random(seed)
    out: Predictions = {}
    for name, unit in data.units.items():
        out[name] = {}
        for question in unit.questions:
            gold, r = question.answers[0], rng.random()
            out[name][question.id] = (" ".join(gold.split()[:-1]) if r < 0.25 else
                                      gold.upper() + "!" if r < 0.5 else gold)
    return out


def best_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="folder holding MLQA_V1 (default: the built-in demo pairs)")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--predictions", choices=["gold", "perturbed"], default="perturbed")
    parser.add_argument("--repeat", type=int, default=3, help="timings per method; the best is kept")
    args = parser.parse_args()

    task = MLQA(mode="gxlt")
    data_dir = args.data_dir or task.demo_data_dir()
    data = task.load(DataRequest(data_dir, args.split, task.check_languages(None)))
    predictions = task.reference_predictions(data, "gold") if args.predictions == "gold" else perturbed(data, 0)
    questions = sum(len(unit.questions) for unit in data.units.values())

    expected = plain_loop(task, data, predictions)
    assert harness_scores(task, data, predictions) == expected, "the two scorers disagree"
    baseline = best_time(lambda: plain_loop(task, data, predictions), args.repeat)
    harness = best_time(lambda: harness_scores(task, data, predictions), args.repeat)
    print(f"{len(data.units)} files, {questions} questions ({'demo pairs' if args.data_dir is None else data_dir}), "
          f"{args.predictions} predictions; identical scores")
    print(f"plain per-question loop: {baseline * 1000:8.1f} ms")
    print(f"harness scorer:          {harness * 1000:8.1f} ms")
    print(f"speed-up: {baseline / harness:.2f}x")


if __name__ == "__main__":
    main()
