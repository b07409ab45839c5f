"""Full-ranking mAP: the harness's vectorised path against the straightforward per-question loop.

The harness scores a chunk of questions against the pool with one matrix product and finds the
rank of each correct candidate by counting the better-scored candidates (no sort of the pool);
AP then follows from the sorted target ranks (harness.metrics.ranking).

The pool has XQuAD-R's shape (11 languages, 13,014 candidates, 11 correct answers per question);
scores come from random 64-d unit vectors. Both sides start from the same vectors and must agree
on mAP; the loop is the official XTREME-R one (score, argsort, walk the ranking). Run:

    python benchmarks/bench_lareqa_map.py              # 1,000 questions
    python benchmarks/bench_lareqa_map.py --questions 13090
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.metrics.ranking import average_precision
from harness.search import ranks_of

LANGUAGES, PER_LANGUAGE, CANDIDATES, DIM = 11, 1190, 13014, 64


def per_question_loop(questions: np.ndarray, candidates: np.ndarray, targets: list[np.ndarray]) -> float:
    scores_ap = []
    for vector, target in zip(questions, targets):
        ranked = (vector[None, :] @ candidates.T)[0].argsort()[::-1]
        wanted = set(target.tolist())
        score, hits = 0.0, 0.0
        for i, pred in enumerate(ranked):
            if pred in wanted and pred not in ranked[:i]:
                hits += 1.0
                score += hits / (i + 1.0)
        scores_ap.append(score / len(wanted))
    return float(np.mean(scores_ap))


def vectorised(questions: np.ndarray, candidates: np.ndarray, targets: np.ndarray, chunk: int = 256) -> float:
    """What the LAReQA task does: score a chunk of questions, count each target's rank, AP."""
    ranks = np.concatenate([
        ranks_of(questions[start : start + chunk] @ candidates.T, targets[start : start + chunk])
        for start in range(0, len(questions), chunk)
    ])
    return float(average_precision(ranks, np.full(len(targets), targets.shape[1])).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=1000, help="questions scored by both methods")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    unit = lambda m: (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    candidates = unit(rng.normal(size=(CANDIDATES, DIM)))
    n = min(args.questions, LANGUAGES * PER_LANGUAGE)
    questions = unit(rng.normal(size=(n, DIM)))
    targets = np.stack([rng.choice(CANDIDATES, size=LANGUAGES, replace=False) for _ in range(n)])

    start = time.perf_counter()
    fast = vectorised(questions, candidates, targets)
    fast_s = time.perf_counter() - start
    start = time.perf_counter()
    slow = per_question_loop(questions, candidates, list(targets))
    slow_s = time.perf_counter() - start
    # Matrix and vector products round float32 scores differently, which can swap two candidates
    # whose scores differ in the last bit; the means agree far below any printed digit.
    assert abs(fast - slow) < 1e-8, (fast, slow)
    print(f"questions: {n}, candidates: {CANDIDATES}, mAP (both): {fast:.6f}")
    print(f"per-question loop: {slow_s:8.2f} s  ({1000 * slow_s / n:.2f} ms/question)")
    print(f"vectorised:        {fast_s:8.2f} s  ({1000 * fast_s / n:.2f} ms/question)")
    print(f"speed-up: {slow_s / fast_s:.1f}x")


if __name__ == "__main__":
    main()
