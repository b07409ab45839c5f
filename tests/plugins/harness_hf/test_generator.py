"""hf-generator on tiny random causal and seq2seq checkpoints built from configs: the same loading
and generation code as a real checkpoint. Greedy tokens and the answer's log-probability are
checked against a plain token-by-token reference; runs through ``harness run`` on MLQA, XQuAD,
MKQA and XOR-Full are scored again from their predictions files by ``harness score``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest, LoglikelihoodRequest
from harness.demo import parallel_qa_dir
from harness.errors import HarnessError
from harness.scoring.span_file import read_span_file
from tests.harness.running.test_generative_runs import XOR_QUESTIONS, rows
from tests.tiny_models import build_tiny_causal_lm

Cli = Callable[..., tuple[int, str, str]]
PROMPTS = [
    f"Context: {q.context}\nQuestion: {q.question}\nAnswer:" for q in read_span_file(parallel_qa_dir() / "en.json")
]


def generator(path: Path, **options: Any):
    from harness_hf.generator import HFGenerator

    return HFGenerator(runtime=Runtime(device_request="cpu"), path=path, **options)


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_batches_and_left_padding_do_not_change_the_answers(
    kind: str, tiny_causal_lm_dir: Path, tiny_seq2seq_dir: Path
) -> None:
    model = generator(tiny_causal_lm_dir if kind == "causal" else tiny_seq2seq_dir)
    assert model.seq2seq == (kind == "seq2seq")
    requests = [GenerationRequest(p, GenerationOptions(max_new_tokens=6, logprobs=True)) for p in PROMPTS[:6]]
    together = model.generate(requests)
    alone = [model.generate([r])[0] for r in requests]
    assert [g.text for g in together] == [g.text for g in alone]
    assert [g.logprob for g in together] == pytest.approx([g.logprob for g in alone], abs=1e-4)
    assert all(g.new_tokens <= 6 and g.prompt_tokens > 10 for g in together)


def test_greedy_tokens_and_logprob_match_a_token_by_token_reference(tiny_causal_lm_dir: Path) -> None:
    import torch

    model = generator(tiny_causal_lm_dir)
    tokenizer, network = model.tokenizer, model.model
    checked = 0
    for prompt in PROMPTS:
        ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
        total, new = 0.0, []
        with torch.inference_mode():
            for _ in range(5):  # greedy, one token at a time, no cache, no padding
                logprobs = network(ids).logits[0, -1].log_softmax(-1)
                token = int(logprobs.argmax())
                total += float(logprobs[token])
                new.append(token)
                ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
                if token == tokenizer.eos_token_id:
                    break
        text = tokenizer.decode(new, skip_special_tokens=True)
        if text != text.lstrip() or not text.strip():
            continue  # leading white space is not part of the answer: compare where every token is
        (generation,) = model.generate([GenerationRequest(prompt, GenerationOptions(5, (), True))])
        assert generation.text == text.strip() and generation.logprob == pytest.approx(total, abs=1e-4)
        checked += 1
    assert checked >= 3


def test_stop_strings_cut_the_answer_and_end_its_row(tiny_causal_lm_dir: Path) -> None:
    model = generator(tiny_causal_lm_dir)
    free = [model.generate([GenerationRequest(p, GenerationOptions(12))])[0] for p in PROMPTS[:8]]
    prompt, full = next((p, g) for p, g in zip(PROMPTS, free) if len(g.text) > 4 and g.text[3] != g.text[:3])
    stop = full.text[3]
    (cut,) = model.generate([GenerationRequest(prompt, GenerationOptions(12, (stop,)))])
    assert cut.text == full.text[: full.text.index(stop)].strip() and cut.new_tokens < full.new_tokens


def test_chat_template_is_used_when_the_tokenizer_has_one(tmp_path: Path, tiny_causal_lm_dir: Path) -> None:
    chat_dir = build_tiny_causal_lm(tmp_path / "chat", chat=True)
    model = generator(chat_dir)
    assert model.chat and model.model_input("hi") == "<|user|>hi<|end|><|assistant|>"
    assert model.identity().options["chat"] is True
    assert generator(chat_dir, chat="off").model_input("hi") == "hi"
    with pytest.raises(HarnessError, match="has no chat template"):
        generator(tiny_causal_lm_dir, chat="on")


def test_a_checkpoint_without_a_tokenizer_is_one_line(
    tmp_path: Path, tiny_causal_lm_dir: Path, harness_cli: Cli
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(tiny_causal_lm_dir / name, bare / name)
    with pytest.raises(HarnessError, match="has no usable tokenizer"):
        generator(bare)
    code, _, err = harness_cli("run", "xquad:prompt=qa", f"hf-generator:path={bare}", "--quiet")
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: model hf-generator: ")
    assert "has no usable tokenizer" in err


def score_again(harness_cli: Cli, task: str, result_path: Path, *extra: str) -> dict[str, dict[str, float]]:
    result = json.loads(result_path.read_text(encoding="utf-8"))
    code, out, err = harness_cli(
        "score", task, "--predictions", result["predictions"]["path"], "--no-leaderboard", "--json", *extra
    )
    assert code == 0, err
    return rows(json.loads(out)["results"][0]["result"])


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_demo_runs_score_as_their_predictions_files(
    kind: str, tiny_causal_lm_dir: Path, tiny_seq2seq_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    path = tiny_causal_lm_dir if kind == "causal" else tiny_seq2seq_dir
    xor = tmp_path / "xor"
    xor.mkdir()
    (xor / "xor_dev_full_v1_1.jsonl").write_text(
        "".join(json.dumps({**q, "split": "dev"}, ensure_ascii=False) + "\n" for q in XOR_QUESTIONS), encoding="utf-8"
    )
    runs = [
        ("xquad:prompt=qa", "xquad", ("--langs", "en,zh")),
        ("mlqa:mode=gxlt,prompt=qa,shots=1", "mlqa:mode=gxlt", ("--langs", "en,de")),
        ("mkqa:prompt=closed-book", "mkqa", ("--langs", "en,zh_cn")),
        ("xor-full:prompt=closed-book", "xor-full", ("--data-dir", str(xor))),
    ]
    for task, scorer, extra in runs:
        output = tmp_path / task.split(":")[0]
        code, _, err = harness_cli(
            "run", task, f"hf-generator:path={path}", *extra, "--quiet", "--no-leaderboard", "--output-dir", output
        )
        assert code == 0, err
        (result_path,) = output.glob("**/result.json")
        assert rows(json.loads(result_path.read_text(encoding="utf-8"))) == score_again(
            harness_cli, scorer, result_path, *extra
        ), task


needs_gpu = pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")


@needs_gpu
def test_gpu_float32_generates_and_scores_as_the_cpu(tiny_causal_lm_dir: Path) -> None:
    """The same greedy tokens and log-likelihoods on the GPU as on the CPU, both in float32: moving
    a batch, its padding and the stop logic to the device changes nothing but rounding."""
    from harness_hf.generator import HFGenerator

    cpu = generator(tiny_causal_lm_dir)
    gpu = HFGenerator(runtime=Runtime(device_request="cuda"), path=tiny_causal_lm_dir, precision="float32")
    assert gpu.device.startswith("cuda") and gpu.precision == "float32"
    requests = [GenerationRequest(p, GenerationOptions(8, ("\n",), True)) for p in PROMPTS[:8]]
    on_cpu, on_gpu = cpu.generate(requests), gpu.generate(requests)
    assert sum(a.text == b.text for a, b in zip(on_cpu, on_gpu)) >= 7  # a near-tie may flip, not more
    same = [(a, b) for a, b in zip(on_cpu, on_gpu) if a.text == b.text]
    assert [b.logprob for _, b in same] == pytest.approx([a.logprob for a, _ in same], abs=1e-3)
    pairs = [LoglikelihoodRequest(p, " the answer") for p in PROMPTS[:6]]
    assert [x.logprob for x in gpu.loglikelihood(pairs)] == pytest.approx(
        [x.logprob for x in cpu.loglikelihood(pairs)], abs=1e-3
    )


@needs_gpu
def test_a_gpu_run_is_bfloat16_records_its_device_and_scores_as_its_predictions(
    tiny_causal_lm_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    output = tmp_path / "gpu"
    code, _, err = harness_cli(
        "run", "xquad:prompt=qa", f"hf-generator:path={tiny_causal_lm_dir}", "--langs", "en,zh",
        "--device", "cuda", "--quiet", "--no-leaderboard", "--output-dir", output,
    )  # fmt: skip
    assert code == 0, err
    (result_path,) = output.glob("**/result.json")
    result = json.loads(result_path.read_text(encoding="utf-8"))
    execution = result["provenance"]["execution"]
    assert execution["device"].startswith("cuda") and execution["precision"] in ("bfloat16", "float16")
    assert rows(result) == score_again(harness_cli, "xquad", result_path, "--langs", "en,zh")
