"""MKQA scoring of all 26 languages: the harness against the official MKQA evaluation.

Baseline: the official ``mkqa_eval.py`` (with its ``mkqa_eval_util.py``; it imports matplotlib),
imported from ``--official DIR`` (or ``$XLQA_OFFICIAL_DIR``; the repository ships no copy, so one
of the two is required), used as its command line does for each language, but reading the gold
file once for all 26: ``read_annotations(gold)``, then per language ``read_predictions(file)`` and
``evaluate(annotations[lang], predictions, lang, verbose=True)`` (verbose adds the default-threshold
metrics, so all 11 official metrics are compared). Harness: ``MKQA.load``, ``read_predictions``
of the folder and ``evaluate``. Both sides are timed from the files to the metrics.

Data (``--data``): the real MKQA file. The full ``mkqa.jsonl.gz`` (10,000 examples) is not in
the shared data; what is there is the official 6-example test file (``test_mkqa.jsonl.gz``, also
vendored under ``tests/fixtures/mkqa``), so the real-data figure is 6 examples x 26 languages,
far too small for the speed to mean much beyond fixed costs. ``--synthetic N`` instead generates
(into a temporary folder, never committed) an MKQA-format file of N made-up questions with the
full data's answer-type mix (dates carry 12 formatted gold strings, entities up to 4, 32% No
Answer): distinct questions, not repeats, so the size figure is honest about work but not
about real strings. Predictions, one ``<lang>.jsonl`` per language, are made from each example's
gold answers with a seeded mix of exact, partial, wrong and empty answers, ``binary_answer`` on
half the yes/no questions and ``no_answer_prob`` rounded to 2 decimals (so ties occur).

The sides run alternately ``--repeat`` times; min and median seconds per side and their ratio
are printed, and all 11 metrics must be identical (``==``) in every language.

    python benchmarks/bench_mkqa_scoring.py --data ../shared/data/mkqa/test_mkqa.jsonl.gz --official DIR
    python benchmarks/bench_mkqa_scoring.py --synthetic 10000 --official DIR     # the full MKQA size
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.definitions.task import DataRequest
from harness_mkqa.languages import MKQA_LANGUAGES
from harness_mkqa.normalize import CHARACTER_SEGMENTED
from harness_mkqa.task import MKQA

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, add_official_argument, alternate, import_official, report

Metrics = dict[str, dict[str, Any]]  # language -> metric -> value

#: Answer types with their share of the full data (10,000 examples).
TYPE_MIX = {
    "entity": 4221,
    "long_answer": 1815,
    "unanswerable": 1427,
    "date": 1174,
    "number": 485,
    "number_with_unit": 394,
    "short_phrase": 346,
    "binary": 138,
}
#: A code-point range per script, for made-up words.
SCRIPTS = {
    "ar": (0x0621, 0x064A),
    "he": (0x05D0, 0x05EA),
    "ru": (0x0430, 0x044F),
    "th": (0x0E01, 0x0E2E),
    "km": (0x1780, 0x17A2),
    "ko": (0xAC00, 0xAD00),
    "ja": (0x3041, 0x3096),
    "zh_cn": (0x4E00, 0x4F00),
    "zh_hk": (0x4E00, 0x4F00),
    "zh_tw": (0x4E00, 0x4F00),
}
OFFICIAL_METRICS = (
    "best_em",
    "best_f1",
    "best_answerable_em",
    "best_answerable_f1",
    "best_unanswerable_em",
    "best_f1_threshold",
    "exact_match",
    "f1",
    "answerable_exact_match",
    "answerable_f1",
    "unanswerable_exact_match",
)


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
        aliases = [
            f"{y}-{m:02d}-{d:02d}",
            f"{d:02d}/{m:02d}/{y}",
            f"{y} {month}, {d}",
            f"{m:02d}-{d:02d}-{y}",
            f"{m:02d}/{d:02d}/{y}",
            f"{y} {month} {d}",
            f"{y} {m:02d} {d:02d}",
            f"{d} {month} {y}",
            f"{d:02d} {m:02d} {y}",
            f"{m:02d} {d:02d} {y}",
            f"{d:02d}-{m:02d}-{y}",
        ]
        return [
            {"type": kind, "text": str(y), "aliases": [str(y)]},
            {"type": kind, "text": f"{y}-{m:02d}-{d:02d}", "aliases": aliases},
        ]
    if kind in ("number", "number_with_unit"):
        number = str(rng.randint(1, 100000))
        text = number if kind == "number" else f"{number} {_word(rng, lang)}"
        return [{"type": kind, "text": text, "aliases": [number]}]
    text = _phrase(rng, lang, rng.randint(1, 4))
    return [
        {
            "type": kind,
            "text": text,
            "aliases": [_phrase(rng, lang, rng.randint(1, 4)) for _ in range(rng.randint(0, 3))],
        }
    ]


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


def synthetic_examples(n: int, rng: random.Random) -> list[dict[str, Any]]:
    """N made-up MKQA examples in the official format, with the full data's answer-type mix."""
    kinds = rng.choices(list(TYPE_MIX), weights=list(TYPE_MIX.values()), k=n)
    ids = [i - 2**61 for i in rng.sample(range(2**62), n)]  # distinct, some negative like NQ ids
    return [
        {
            "example_id": example_id,
            "query": f"question {example_id}",
            "queries": {lang: f"question {example_id}" for lang in MKQA_LANGUAGES},
            "answers": {lang: _answers(rng, lang, kind) for lang in MKQA_LANGUAGES},
        }
        for example_id, kind in zip(ids, kinds)
    ]


def write_predictions(folder: Path, examples: list[dict[str, Any]], rng: random.Random) -> None:
    """One ``<lang>.jsonl`` per language in ``folder``, lines shuffled."""
    folder.mkdir()
    for lang in MKQA_LANGUAGES:
        lines = []
        for example in examples:
            answers = example["answers"][lang]
            binary = answers[0]["type"] == "binary" and rng.random() < 0.5
            lines.append(
                {
                    "example_id": example["example_id"],
                    "prediction": _prediction(rng, lang, answers),
                    "binary_answer": answers[0]["text"] if binary else None,
                    "no_answer_prob": round(rng.uniform(-12, 4), 2),
                }
            )
        rng.shuffle(lines)
        (folder / f"{lang}.jsonl").write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
        )


def same(official: Any, harness: Any) -> bool:
    """Equal values; a language without (un)answerable examples is NaN officially, None here."""
    if official is None or (isinstance(official, float) and math.isnan(official)):
        return harness is None or (isinstance(harness, float) and math.isnan(harness))
    return official == harness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data", type=Path, help="the real MKQA file (mkqa.jsonl.gz or the official test_mkqa.jsonl.gz)"
    )
    source.add_argument("--synthetic", type=int, metavar="N", help="generate N made-up examples instead")
    add_official_argument(parser, "mkqa_eval.py")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running both sides once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.data is not None and not args.data.is_file():
        raise SystemExit(f"--data {args.data}: no such file (the real MKQA data is needed)")
    official = import_official(args.official, "mkqa_eval")
    logging.disable(logging.WARNING)  # the official reader warns once per language that 10,000 are expected

    rng = random.Random(args.seed)
    task = MKQA()
    with tempfile.TemporaryDirectory(prefix="bench-mkqa-") as tmp:
        folder = Path(tmp)
        if args.data is not None:
            gold = args.data
            with gzip.open(gold, "rt", encoding="utf-8") as handle:
                examples = [json.loads(line) for line in handle]
            label = f"real MKQA {gold.name}"
        else:
            examples = synthetic_examples(args.synthetic, rng)
            gold = folder / "mkqa.jsonl.gz"
            with gzip.open(gold, "wt", encoding="utf-8") as handle:
                handle.writelines(json.dumps(example, ensure_ascii=False) + "\n" for example in examples)
            label = "synthetic MKQA-format data"
        prediction_dir = folder / "predictions"
        write_predictions(prediction_dir, examples, rng)

        def run_official() -> Metrics:
            annotations = official.read_annotations(str(gold))
            return {
                lang: official.evaluate(
                    annotations[lang],
                    official.read_predictions(str(prediction_dir / f"{lang}.jsonl")),
                    lang,
                    verbose=True,
                    print_metrics=False,
                )
                for lang in MKQA_LANGUAGES
            }

        def run_harness() -> Metrics:
            data = task.load(DataRequest(gold, "test", MKQA_LANGUAGES))
            evaluation = task.evaluate(data, task.read_predictions(prediction_dir, data))
            return {row.subset: row.metrics for row in evaluation.rows}

        print(
            f"{label}: {len(examples):,} examples x {len(MKQA_LANGUAGES)} languages = "
            f"{len(examples) * len(MKQA_LANGUAGES):,} predictions (seed {args.seed}); baseline: official mkqa_eval "
            f"(read_annotations once, read_predictions + evaluate per language), both timed from the files"
        )
        baseline, harness = alternate(
            [Side("official mkqa_eval", run_official), Side("harness MKQA", run_harness)], args.repeat
        )
    different = [
        (lang, m, baseline.result[lang][m], harness.result[lang][m])
        for lang in MKQA_LANGUAGES
        for m in OFFICIAL_METRICS
        if not same(baseline.result[lang][m], harness.result[lang][m])
    ]
    if different:
        raise SystemExit(
            f"{len(different)} metrics differ, e.g. (language, metric, official, harness): {different[:3]}"
        )
    print(f"equality: all {len(OFFICIAL_METRICS)} official metrics identical in all {len(MKQA_LANGUAGES)} languages")
    report(baseline, harness, unit="ms")


if __name__ == "__main__":
    main()
