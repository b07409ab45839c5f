"""XCOPA and XNLI by log-likelihood with a tiny random Llama (hf-generator): every option scored
here with plain transformers (lm-evaluation-harness's recipe written out: the continuation's tokens
are those of context + continuation after the context's, one forward pass per request, no
padding), the choices by sum, per character and per byte taken here, and the run's rows equal
them. The model is named as on the command line (hf-generator declares LoglikelihoodScorer), in
batches of 3 so that rows of mixed lengths share batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness
from harness_xtreme.benchmark import XNLI_CLASSES
from tests.plugins.harness_xtreme.test_likelihood import write_pairs_exact
from tests.plugins.harness_xtreme.test_xcopa import write_xcopa


def plain_loglikelihood(model: Any, tokenizer: Any, context: str, continuation: str) -> float:
    import torch

    head = tokenizer(context)["input_ids"]
    tail = tokenizer(context + continuation)["input_ids"][len(head) :]
    with torch.inference_mode():
        logprobs = model(torch.tensor([head + tail])).logits[0].float().log_softmax(-1)
    return float(logprobs[len(head) - 1 : -1].gather(-1, torch.tensor(tail)[:, None]).sum())


def expected_rows(folder: Path, questions: dict[str, list[tuple[str, list[str], int]]]) -> dict[str, dict[str, float]]:
    """Each language's three accuracies from plain transformers' log-likelihoods."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    rows = {}
    for lang, items in questions.items():
        right = {"accuracy": 0, "accuracy_norm": 0, "accuracy_bytes": 0}
        for context, options, gold in items:
            lls = [plain_loglikelihood(model, tokenizer, context, option) for option in options]
            for metric, sizes in (
                ("accuracy", [1.0] * len(options)),
                ("accuracy_norm", [len(o) for o in options]),
                ("accuracy_bytes", [len(o.encode("utf-8")) for o in options]),
            ):
                values = [ll / size for ll, size in zip(lls, sizes)]
                right[metric] += values.index(max(values)) == gold
        rows[lang] = {metric: 100 * count / len(items) for metric, count in right.items()}
    return rows


def test_xcopa_and_xnli_equal_plain_transformers(tmp_path: Path, tiny_causal_lm_dir: Path) -> None:
    gold = [n % 2 for n in range(8)]
    write_xcopa(tmp_path / "xcopa", "val", "tr", gold)
    records = [json.loads(line) for line in (tmp_path / "xcopa" / "val-tr.jsonl").read_text().splitlines()]
    xcopa = {
        "tr": [
            (
                f"{r['premise'].removesuffix('.')} {'çünkü' if r['question'] == 'cause' else 'bu yüzden'}",
                [" " + r[c][0].lower() + r[c][1:] for c in ("choice1", "choice2")],
                label,
            )
            for r, label in zip(records, gold)
        ]
    }
    labels = [XNLI_CLASSES[n % 3] for n in range(6)]
    pairs = [(f"The river {n} is long", f"a river {'is' if n % 2 else 'was'} long {n}") for n in range(6)]
    write_pairs_exact(tmp_path / "xnli" / "dev-en.tsv", pairs, labels)
    word = {"entailment": "Yes", "neutral": "Also", "contradiction": "No"}
    xnli = {
        "en": [
            (f"{p}, right?", [f" {word[label]}, {h}" for label in XNLI_CLASSES], XNLI_CLASSES.index(gold_label))
            for (p, h), gold_label in zip(pairs, labels)
        ]
    }
    model = f"hf-generator:path={tiny_causal_lm_dir}"
    for task, folder, lang, questions in (("xcopa", "xcopa", "tr", xcopa), ("xnli", "xnli", "en", xnli)):
        [outcome] = harness.evaluate(
            task,
            model,
            data_dir=tmp_path / folder,
            split="dev",
            langs=[lang],
            batch_size=3,
            device="cpu",
            progress=False,
            bootstrap=0,
        )
        rows = {row.subset: row.metrics for row in outcome.result.rows}
        assert rows[lang] == pytest.approx(expected_rows(tiny_causal_lm_dir, questions)[lang], abs=1e-9)
