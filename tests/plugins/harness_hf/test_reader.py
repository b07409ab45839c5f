"""hf-reader: spans found like an exhaustive search would, across windows, mapped back to the
context's characters; batching changes nothing; options and paths are checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import Reader, ReadingExample
from harness.demo import parallel_qa_dir
from harness.errors import HarnessError

Cli = Callable[..., tuple[int, str, str]]
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def demo_examples(lang: str) -> list[ReadingExample]:
    doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
    return [
        ReadingExample(qa["id"], qa["question"], p["context"], lang, lang)
        for a in doc["data"]
        for p in a["paragraphs"]
        for qa in p["qas"]
    ]


def reader(path: Path, **options: object):
    from harness_hf.reader import HFReader

    return HFReader(runtime=Runtime(device_request="cpu"), path=path, **options)


def brute_force(
    model_dir: Path, question: str, context: str, *, max_length: int, stride: int, max_answer_length: int
) -> tuple[str, int, float, float]:
    """Every valid (start, end) context-token pair of every window, scored start + end logit by
    calling the model on each window alone; the best span's text via the offsets, and the
    smallest [CLS] score."""
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForQuestionAnswering.from_pretrained(str(model_dir)).eval()
    encoded = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )
    best, null = (float("-inf"), "", -1), float("inf")
    for w in range(len(encoded["input_ids"])):
        inputs = {k: torch.tensor([encoded[k][w]]) for k in MODEL_INPUTS if k in encoded}
        with torch.no_grad():
            out = model(**inputs)
        start, end = out.start_logits[0].numpy(), out.end_logits[0].numpy()
        null = min(null, float(start[0] + end[0]))
        context_tokens = [i for i, s in enumerate(encoded.sequence_ids(w)) if s == 1]
        offsets = encoded["offset_mapping"][w]
        for s in context_tokens:
            for e in context_tokens:
                if s <= e < s + max_answer_length and start[s] + end[e] > best[0]:
                    best = (float(start[s] + end[e]), context[offsets[s][0] : offsets[e][1]], offsets[s][0])
    return best[1], best[2], best[0], null


def test_is_a_reader_and_matches_exhaustive_search(tiny_reader_dir: Path) -> None:
    # With n_best at least the window length, the n-best search is exhaustive.
    model = reader(tiny_reader_dir, max_length=512, n_best=512, max_answer_length=30)
    assert isinstance(model, Reader)
    examples = demo_examples("en")[:4] + demo_examples("zh")[:4]
    answers = model.read(examples)
    for example, answer in zip(examples, answers):
        text, start, score, null = brute_force(
            tiny_reader_dir, example.question, example.context, max_length=512, stride=128, max_answer_length=30
        )
        assert (answer.text, answer.start) == (text, start)
        assert answer.score == pytest.approx(score, abs=1e-4)
        assert answer.no_answer_score == pytest.approx(null, abs=1e-4)


def test_long_context_is_read_in_overlapping_windows(tiny_reader_dir: Path) -> None:
    # All 8 English demo paragraphs as one context (about 1,900 tokens) in windows of 64 tokens
    # sharing 24: the best span over all windows, as an exhaustive search over each window finds it.
    # (The questions are shorter than max_question_length, so both see the same windows.)
    examples = demo_examples("en")
    context = "\n\n".join(dict.fromkeys(e.context for e in examples))
    long = [ReadingExample(e.id, e.question, context, "en", "en") for e in examples[::6]]
    model = reader(tiny_reader_dir, max_length=64, stride=24, max_question_length=32, n_best=64, max_answer_length=12)
    assert len(model._windows(long)) > 20 * len(long)
    for example, answer in zip(long, model.read(long)):
        text, start, score, null = brute_force(
            tiny_reader_dir, example.question, context, max_length=64, stride=24, max_answer_length=12
        )
        assert (answer.text, answer.start) == (text, start)
        assert context[answer.start : answer.start + len(answer.text)] == answer.text
        assert answer.score == pytest.approx(score, abs=1e-4)
        assert answer.no_answer_score == pytest.approx(null, abs=1e-4)


def test_answers_are_context_substrings_in_every_script(tiny_reader_dir: Path) -> None:
    model = reader(tiny_reader_dir, max_length=128, stride=32)
    for lang in ("ar", "hi", "th", "vi", "ru"):
        examples = demo_examples(lang)[:6]
        for example, answer in zip(examples, model.read(examples)):
            assert answer.text and answer.text == answer.text.strip()
            assert example.context[answer.start : answer.start + len(answer.text)] == answer.text


def test_batching_does_not_change_answers(tiny_reader_dir: Path) -> None:
    examples = demo_examples("de")[:10] + demo_examples("th")[:10]
    one = reader(tiny_reader_dir, max_length=128, stride=32)
    one.batch_size = 1
    many = reader(tiny_reader_dir, max_length=128, stride=32)
    many.batch_size = 64
    a, b = one.read(examples), many.read(examples)
    assert [(x.text, x.start) for x in a] == [(y.text, y.start) for y in b]
    np.testing.assert_allclose([x.score for x in a], [y.score for y in b], atol=1e-4)


def test_n_best_one_pairs_the_best_start_with_the_best_end(tiny_reader_dir: Path) -> None:
    # n_best=1 keeps only the top start and top end token: their span if it is valid, else no answer.
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_reader_dir))
    qa = AutoModelForQuestionAnswering.from_pretrained(str(tiny_reader_dir)).eval()
    model = reader(tiny_reader_dir, max_length=512, n_best=1, max_answer_length=30)
    examples = demo_examples("es")[:8]
    for example, answer in zip(examples, model.read(examples)):
        encoded = tokenizer(example.question, example.context, return_offsets_mapping=True)
        with torch.no_grad():
            out = qa(**{k: torch.tensor([encoded[k]]) for k in MODEL_INPUTS if k in encoded})
        context_mask = np.array([s == 1 for s in encoded.sequence_ids(0)])
        s = int(np.argmax(np.where(context_mask, out.start_logits[0].numpy(), -np.inf)))
        e = int(np.argmax(np.where(context_mask, out.end_logits[0].numpy(), -np.inf)))
        if s <= e < s + 30:
            offsets = encoded["offset_mapping"]
            assert (answer.text, answer.start) == (example.context[offsets[s][0] : offsets[e][1]], offsets[s][0])
        else:
            assert (answer.text, answer.start, answer.score) == ("", -1, float("-inf"))


def test_long_questions_are_cut_to_max_question_length(tiny_reader_dir: Path) -> None:
    model = reader(tiny_reader_dir, max_length=128, stride=32, max_question_length=16)
    question = "  " + " ".join(["Welcher europäische Fluss ist länger als die Donau?"] * 20)
    example = ReadingExample("q", question, demo_examples("de")[0].context, "de", "de")
    (cut,) = model._questions([example])
    assert question.lstrip().startswith(cut)
    assert len(model.tokenizer(cut, add_special_tokens=False)["input_ids"]) == 16
    (answer,) = model.read([example])
    assert example.context[answer.start : answer.start + len(answer.text)] == answer.text


def test_bad_options_and_paths(tiny_reader_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="is not a local checkpoint folder"):
        reader(tmp_path / "nowhere")
    with pytest.raises(
        HarnessError, match="context room of a window, max_length - max_question_length - 3 special tokens = 61; got 61"
    ):
        reader(tiny_reader_dir, max_length=128, stride=61)
    with pytest.raises(HarnessError, match="n_best and max_answer_length must be at least 1"):
        reader(tiny_reader_dir, n_best=0)


def test_xquad_demo_run_with_the_reader(tiny_reader_dir: Path, harness_cli: Cli, tmp_path: Path) -> None:
    code, out, err = harness_cli(
        "run", "xquad", f"hf-reader:path={tiny_reader_dir},max_length=128,stride=32", "--langs", "en,zh", "--quiet"
    )
    assert code == 0, err
    assert "it/s" not in err  # --quiet: no bar, transformers' "Loading weights" included
    (path,) = list(tmp_path.glob("results/**/result.json"))
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["model"]["options"]["max_length"] == 128 and result["model"]["weights"].startswith("sha256:")
    predictions = Path(result["predictions"]["path"])
    answers = json.loads((predictions / "zh.json").read_text(encoding="utf-8"))
    contexts = {e.id: e.context for e in demo_examples("zh")}
    assert set(answers) == set(contexts) and all(answers[q] in contexts[q] for q in answers)
    code, _, err = harness_cli("run", "xquad", f"hf-reader:path={tmp_path / 'missing'}", "--quiet")
    assert code == 2 and "is not a local checkpoint folder" in err


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_answers_are_context_substrings_and_mostly_agree_with_the_cpu(tiny_reader_dir: Path) -> None:
    from harness_hf.reader import HFReader

    examples = demo_examples("en")
    on_cpu = reader(tiny_reader_dir).read(examples)
    on_gpu = HFReader(runtime=Runtime(device_request="cuda"), path=tiny_reader_dir).read(examples)
    assert all(a.text == e.context[a.start : a.start + len(a.text)] for a, e in zip(on_gpu, examples) if a.start >= 0)
    # bfloat16 logits may flip near-ties of a random model, but not most answers
    assert sum(a.text == b.text for a, b in zip(on_cpu, on_gpu)) >= len(examples) // 2
