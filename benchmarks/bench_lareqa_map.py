"""LAReQA mAP over the full XQuAD-R pool: the harness's vectorised path against XTREME-R's official code.

Baseline: ``mean_avg_prec_at_k(question_set, candidate_set)`` of the official ``utils_lareqa.py``
(XTREME-R), imported from ``--official DIR`` (or ``$XLQA_OFFICIAL_DIR``; the repository ships no
copy, so one of the two is required), on the question and candidate sets its own ``load_data``
builds from the real XQuAD-R files. It scores one question at a time, argsorts the whole pool
and walks the ranking in Python; it prints the mean AP, which is read back from its output.
Harness: what the LAReQA task does with a scoring index: chunks of ``QUERY_CHUNK`` questions
scored with one matrix product, each correct candidate's rank found by counting better-scored
candidates (``harness.models.search.ranks_of``, no sort), then ``harness.scoring.ranking.average_precision``.

Data: the real XQuAD-R pool under ``--data-dir`` (13,090 questions, 13,014 candidates, 11
languages; no demo default). Encodings: seeded random unit vectors of e5-small's 384 dimensions,
one per question uid and candidate uid, given to both sides (float64, so the matrix product and
the official vector product cannot order two candidates differently by rounding). The official
loop takes about 0.1 s a question, so ``--questions N`` scores a seeded sample of N questions
(both sides the same ones) against the whole pool. The sides run alternately ``--repeat``
times; min and median seconds per side and their ratio are printed, and the two mAPs must agree
within 1e-12 (summation order differs).

    python benchmarks/bench_lareqa_map.py --data-dir ../shared/data/lareqa/xquad-r --official DIR --questions 100
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from harness.definitions.task import DataRequest
from harness.models.search import ranks_of
from harness.scoring.ranking import average_precision
from harness_lareqa.task import QUERY_CHUNK, LAReQA

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, add_official_argument, alternate, import_official, report

DIM = 384  # multilingual-e5-small


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.normal(size=(n, DIM))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def official_sets(official: Any, data_dir: Path, languages: list[str]) -> tuple[Any, Any]:
    """The official question and candidate sets of the XQuAD-R files (its progress lines muted)."""
    squad_per_lang = {}
    for lang in languages:
        with open(data_dir / f"{lang}.json", encoding="utf-8") as handle:
            squad_per_lang[lang] = json.load(handle)
    with contextlib.redirect_stdout(io.StringIO()):
        return official.load_data(squad_per_lang)


def official_map(official: Any, questions: Any, candidates: Any) -> float:
    """The official mean AP, read from the line ``mean_avg_prec_at_k`` prints."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        official.mean_avg_prec_at_k(questions, candidates)
    return float(printed.getvalue().strip().rsplit(": ", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="the real XQuAD-R folder (ar.json ... zh.json)")
    add_official_argument(parser, "utils_lareqa.py")
    parser.add_argument("--questions", type=int, default=100, help="seeded sample of questions (13,090: all)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running both sides once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.data_dir / "en.json").is_file():
        raise SystemExit(f"--data-dir {args.data_dir}: no XQuAD-R files there (the real data is needed)")
    official = import_official(args.official, "utils_lareqa")

    task = LAReQA()
    data = task.load(DataRequest(data_dir=args.data_dir, split="test"))
    rng = np.random.default_rng(args.seed)
    chosen = sorted(rng.choice(len(data.questions), size=min(args.questions, len(data.questions)), replace=False))
    questions = [data.questions[i] for i in chosen]
    question_vectors = unit_vectors(rng, len(questions))
    candidate_vectors = unit_vectors(rng, len(data.pool.ids))

    official_questions, official_candidates = official_sets(official, args.data_dir, list(data.languages))
    sample = official.QuestionSet()
    for question, vector in zip(questions, question_vectors):
        item = official_questions.by_uid[question.uid]
        item.encoding = vector
        sample.add(item)
    for uid, vector in zip(data.pool.ids, candidate_vectors):
        official_candidates.by_uid[uid].encoding = {"sentences_and_contexts": vector}
    targets = LAReQA._target_matrix(data, questions)
    counts = (targets >= 0).sum(axis=1)

    def run_harness() -> float:
        ranks = np.concatenate(
            [
                ranks_of(
                    question_vectors[start : start + QUERY_CHUNK] @ candidate_vectors.T,
                    targets[start : start + QUERY_CHUNK],
                )
                for start in range(0, len(questions), QUERY_CHUNK)
            ]
        )
        return float(average_precision(ranks, counts).mean())

    print(
        f"real XQuAD-R: {len(questions):,} of {len(data.questions):,} questions (seed {args.seed}) x "
        f"{len(data.pool.ids):,} candidates, random {DIM}-d float64 unit vectors; "
        f"baseline: official utils_lareqa.mean_avg_prec_at_k"
    )
    baseline, harness = alternate(
        [
            Side("official mean_avg_prec_at_k", lambda: official_map(official, sample, official_candidates)),
            Side("harness ranks_of + average_precision", run_harness),
        ],
        args.repeat,
    )
    difference = abs(baseline.result - harness.result)
    if difference > 1e-12:
        raise SystemExit(f"mAP differs: official {baseline.result!r}, harness {harness.result!r}")
    print(f"equality: mAP official {baseline.result!r}, harness {harness.result!r} (|difference| {difference:.1e})")
    report(baseline, harness)


if __name__ == "__main__":
    main()
