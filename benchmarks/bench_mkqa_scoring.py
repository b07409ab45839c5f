"""MKQA scoring speed: the harness's scorer against a plain per-example loop, in the same run.

Generates (into a temporary folder, never committed) an MKQA file of ``--examples`` questions in
all 26 languages, with the full data's answer-type mix (dates carry 12 formatted gold strings,
entities up to 4, 32% No Answer), and one prediction file per language (exact, partial, wrong
and empty answers; ``no_answer_prob`` rounded to 2 decimals, so ties are common). Then it scores
all 26 languages twice:

* ``harness``: ``MKQA.evaluate`` (each distinct string normalised once per language, numpy sweep);
* ``plain loop``: the textbook implementation, one example and one gold string at a time,
  normalising both sides for each comparison, a Python ``sorted`` sweep and dict bookkeeping.

Both must give the same official metrics in every language; the script checks this and prints
the times and their ratio. Reading the prediction files is timed separately.

    python benchmarks/bench_mkqa_scoring.py               # 1,000 examples x 26 languages (quick)
    python benchmarks/bench_mkqa_scoring.py --examples 10000   # the full MKQA size
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from harness.metrics.answers import token_f1
from harness.task import DataRequest
from harness_mkqa.data import MKQAData
from harness_mkqa.languages import MKQA_LANGUAGES
from harness_mkqa.normalize import CHARACTER_SEGMENTED, answer_tokens
from harness_mkqa.predictions import predicted_text
from harness_mkqa.task import MKQA

#: Answer types with their share of the full data (10,000 examples).
TYPE_MIX = {"entity": 4221, "long_answer": 1815, "unanswerable": 1427, "date": 1174, "number": 485,
            "number_with_unit": 394, "short_phrase": 346, "binary": 138}
#: A code-point range per script, for made-up words.
SCRIPTS = {"ar": (0x0621, 0x064A), "he": (0x05D0, 0x05EA), "ru": (0x0430, 0x044F), "th": (0x0E01, 0x0E2E),
           "km": (0x1780, 0x17A2), "ko": (0xAC00, 0xAD00), "ja": (0x3041, 0x3096), "zh_cn": (0x4E00, 0x4F00),
           "zh_hk": (0x4E00, 0x4F00), "zh_tw": (0x4E00, 0x4F00)}
OFFICIAL_METRICS = ("best_em", "best_f1", "best_answerable_em", "best_answerable_f1", "best_unanswerable_em",
                    "best_f1_threshold", "exact_match", "f1", "answerable_exact_match", "answerable_f1",
                    "unanswerable_exact_match")


def _word(rng: random.Random, lang: str) -> str:
    low, high = SCRIPTS.get(lang, (ord("a"), ord("z")))
    return "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(2, 7)))


def _phrase(rng: random.Random, lang: str, words: int) -> str:
    joiner = "" if lang in CHARACTER_SEGMENTED else " "
    return joiner.join(_word(rng, lang) for _ in range(words))


def _answers(rng: random.Random, lang: str, kind: str) -> list[dict[str, Any]]:
    if kind in ("long_answer", "unanswerable"):
        return [{"type": kind, "text": None}]
    if kind == "binary":
        return [{"type": kind, "text": rng.choice(["yes", "no"])}]
    if kind == "date":
        y, m, d = rng.randint(1800, 2020), rng.randint(1, 12), rng.randint(1, 28)
        month = _word(rng, lang)
        aliases = [f"{y}-{m:02d}-{d:02d}", f"{d:02d}/{m:02d}/{y}", f"{y} {month}, {d}", f"{m:02d}-{d:02d}-{y}",
                   f"{m:02d}/{d:02d}/{y}", f"{y} {month} {d}", f"{y} {m:02d} {d:02d}", f"{d} {month} {y}",
                   f"{d:02d} {m:02d} {y}", f"{m:02d} {d:02d} {y}", f"{d:02d}-{m:02d}-{y}"]
        return [{"type": kind, "text": str(y), "aliases": [str(y)]},
                {"type": kind, "text": f"{y}-{m:02d}-{d:02d}", "aliases": aliases}]
    if kind in ("number", "number_with_unit"):
        number = str(rng.randint(1, 100000))
        text = number if kind == "number" else f"{number} {_word(rng, lang)}"
        return [{"type": kind, "text": text, "aliases": [number]}]
    text = _phrase(rng, lang, rng.randint(1, 4))
    return [{"type": kind, "text": text, "aliases": [_phrase(rng, lang, rng.randint(1, 4)) for _ in range(rng.randint(0, 3))]}]


def _prediction(rng: random.Random, lang: str, answers: list[dict[str, Any]]) -> str:
    golds = [a["text"] or "" for a in answers] + [alias for a in answers for alias in a.get("aliases", [])]
    u = rng.random()
    if u < 0.35:
        gold = rng.choice(golds)
        return rng.choice([gold, gold.upper(), f"{gold}!", f"the {gold}"])
    if u < 0.55:
        return f"{rng.choice(golds)} {_phrase(rng, lang, 2)}"
    if u < 0.8:
        return _phrase(rng, lang, rng.randint(1, 4))
    return ""


def generate(folder: Path, examples: int, seed: int) -> Path:
    """Write ``folder/mkqa.jsonl.gz`` and ``folder/predictions/<lang>.jsonl``; return the predictions folder."""
    rng = random.Random(seed)
    kinds = rng.choices(list(TYPE_MIX), weights=list(TYPE_MIX.values()), k=examples)
    ids = [i - 2**61 for i in rng.sample(range(2**62), examples)]  # distinct, some negative like NQ ids
    gold = [{lang: _answers(rng, lang, kind) for lang in MKQA_LANGUAGES} for kind in kinds]
    with gzip.open(folder / "mkqa.jsonl.gz", "wt", encoding="utf-8") as handle:
        for example_id, answers in zip(ids, gold):
            queries = {lang: f"question {example_id}" for lang in MKQA_LANGUAGES}
            handle.write(json.dumps({"example_id": example_id, "query": queries["en"], "queries": queries,
                                     "answers": answers}, ensure_ascii=False) + "\n")
    predictions = folder / "predictions"
    predictions.mkdir()
    for lang in MKQA_LANGUAGES:
        lines = [{"example_id": example_id, "prediction": _prediction(rng, lang, answers[lang]),
                  "binary_answer": answers[lang][0]["text"] if answers[lang][0]["type"] == "binary" and rng.random() < 0.5 else None,
                  "no_answer_prob": round(rng.uniform(-12, 4), 2)}
                 for example_id, answers in zip(ids, gold)]
        rng.shuffle(lines)
        (predictions / f"{lang}.jsonl").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                                                    encoding="utf-8")
    return predictions


def plain_loop(data: MKQAData, records: list[dict[str, Any]], lang: str) -> dict[str, float]:
    """One language, one example and one gold string at a time (the baseline being timed)."""
    by_id = {str(r["example_id"]): r for r in records}
    em: dict[str, float] = {}
    f1: dict[str, float] = {}
    answerable: dict[str, bool] = {}
    for example_id, annotation in zip(data.example_ids, data.annotations[lang]):
        text = predicted_text(by_id[example_id])
        em[example_id] = max(float(answer_tokens(text, lang) == answer_tokens(g, lang)) for g in annotation.golds)
        f1[example_id] = max(token_f1(answer_tokens(text, lang), answer_tokens(g, lang), both_empty=1.0)
                             for g in annotation.golds)
        answerable[example_id] = annotation.answerable
    prob = {str(r["example_id"]): r.get("no_answer_prob", 0) for r in records}
    score = best = sum(not a for a in answerable.values())
    threshold = 0.0
    for example_id in sorted(prob, key=prob.get):
        if answerable[example_id]:
            score += f1[example_id]
        elif predicted_text(by_id[example_id]):
            score -= 1
        if score > best:
            best, threshold = score, prob[example_id]

    def at_threshold(values: dict[str, float], keep: Any) -> list[float]:
        return [float(not answerable[i]) if prob[i] > threshold else v for i, v in values.items() if keep(i)]

    def percent(values: list[float]) -> float:
        return float(round(100.0 * np.mean(values), 2))

    yes, no = (lambda i: answerable[i]), (lambda i: not answerable[i])
    return {
        "best_em": percent(at_threshold(em, lambda i: True)), "best_f1": round(100.0 * best / len(em), 2),
        "best_answerable_em": percent(at_threshold(em, yes)), "best_answerable_f1": percent(at_threshold(f1, yes)),
        "best_unanswerable_em": percent(at_threshold(em, no)), "best_f1_threshold": round(threshold, 2),
        "exact_match": percent(list(em.values())), "f1": percent(list(f1.values())),
        "answerable_exact_match": percent([em[i] for i in em if yes(i)]),
        "answerable_f1": percent([f1[i] for i in f1 if yes(i)]),
        "unanswerable_exact_match": percent([em[i] for i in em if no(i)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=1000, help="questions per language (MKQA has 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    task = MKQA()
    with tempfile.TemporaryDirectory(prefix="bench-mkqa-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        prediction_dir = generate(folder, args.examples, args.seed)
        print(f"generated {args.examples} examples x {len(MKQA_LANGUAGES)} languages in {time.perf_counter() - start:.1f}s")
        data = task.load(DataRequest(folder, "test", MKQA_LANGUAGES))
        start = time.perf_counter()
        predictions = task.read_predictions(prediction_dir, data)
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        evaluation = task.evaluate(data, predictions)
        harness_s = time.perf_counter() - start
        start = time.perf_counter()
        plain = {lang: plain_loop(data, predictions[lang], lang) for lang in MKQA_LANGUAGES}
        plain_s = time.perf_counter() - start
    rows = {row.subset: row.metrics for row in evaluation.rows}
    mismatches = [(lang, m) for lang in MKQA_LANGUAGES for m in OFFICIAL_METRICS if rows[lang][m] != plain[lang][m]]
    if mismatches:
        raise SystemExit(f"the two scorers disagree: {mismatches[:5]}")
    total = args.examples * len(MKQA_LANGUAGES)
    print(f"reading {total} predictions (26 files, checked line by line): {read_s:.2f}s")
    print(f"harness scorer: {harness_s:.2f}s   plain loop: {plain_s:.2f}s   ratio: {plain_s / harness_s:.1f}x "
          f"(same metrics in all 26 languages; macro best_f1 {evaluation.main_score})")


if __name__ == "__main__":
    main()
