"""Generation throughput: one request at a time against the harness's shared, length-sorted batches.

Baseline (one at a time): ``hf-generator`` answers each prompt alone, the way a loop over
``model.generate`` per question does: no padding, but one forward per token per question.
Harness (shared): the same prompts through :class:`harness.models.generation.GenerationService` (no
disk cache, a new service per run so nothing is remembered), sorted by prompt length into batches
of ``--batch-size``, left-padded. Both sides generate the same greedy tokens (checked), from the
``qa`` template's reading-comprehension prompts of XQuAD (``--data-dir``: the real files; default:
the built-in demo set), zero-shot.

The model is ``--model PATH`` (any local checkpoint), or by default a random Llama built from a
config (4 layers, width 256, a byte-level BPE vocabulary trained on the demo data; weights do not
change the arithmetic, and a random model rarely stops early, so every request runs its
``--max-new-tokens``). Printed: min and median seconds per side over ``--repeat`` alternated rounds,
generated tokens per second, and the padding share of the service's batches, sorted and (for
comparison) in arrival order. ``--device cuda`` runs the same on a GPU (bf16).

    python benchmarks/bench_generation.py --prompts 64 --batch-size 16 [--device cuda] [--model PATH]

Measured on the shared 2-core CPU machine (other sessions running, so noisy), demo prompts,
``--prompts 32 --batch-size 8 --repeat 2``, float32: one at a time 55.4/76.4 s, shared batches
14.6/32.6 s (min/median; 3.79x min, 2.34x median), 7 vs 16 generated tokens/s (medians); padding
share 3.7% sorted vs 12.3% in arrival order.

On an NVIDIA H200 (2026-11-27, ``benchmarks/gpu_checks.sh``), bf16, checkpoints with the real
models' shapes and tokenizers and random weights (``benchmarks/shaped_checkpoint.py``), the first
16 real XQuAD en prompts, ``--batch-size 16 --max-new-tokens 32 --repeat 2``: Gemma 3 270M's shape,
one at a time 11.6/13.7 s, shared batches 0.88/0.91 s (min/median; 15.1x median), 563 generated
tokens/s shared; SmolLM2's shape 15.7/16.5 s against 1.05/1.13 s (14.6x), 453 tokens/s. A decode
step takes about 28 ms at batch 1 and at batch 16 alike: on the GPU decode is bound by the host
(``generate``'s Python and one kernel launch per operator), not by the chip, so larger batches
are nearly free there. End to end, ``harness run xquad:prompt=qa --langs en --device cuda`` on all
1,190 questions (default batch 32, every answer run to the template's 32 tokens, as a random
model never stops): Gemma's shape 89 s wall (70 s of generation), SmolLM2's 69 s (53 s). Run again
later that day on another H200 (stop 40): Gemma's shape 17.5 s one at a time against 1.11 s shared
(medians, 15.9x, 463 tokens/s shared), SmolLM2's 14.3 s against 0.77 s (18.5x, 664 tokens/s); end
to end 82 s and 74 s of wall time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._timing import Side, alternate, report
from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest
from harness.demo import parallel_qa_dir
from harness.models.generation import GenerationService
from harness.models.prompting import load_template
from harness.scoring.span_file import read_span_file


def build_model(folder: Path) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.tiny_models import train_bpe

    vocab_size = train_bpe(folder, vocab_size=2000)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        pad_token_id=0,
        bos_token_id=None,
        eos_token_id=1,
    )
    LlamaForCausalLM(config).save_pretrained(str(folder))
    return folder


def padding_in_arrival_order(
    service: GenerationService, requests: list[GenerationRequest], batch_size: int, new_tokens: list[int]
) -> float:
    """The padding share the same batches would have without sorting (arrival order)."""
    lengths = service._lengths([r.prompt for r in requests])
    real = padded = 0
    for start in range(0, len(requests), batch_size):
        part = range(start, min(start + batch_size, len(requests)))
        real += sum(lengths[i] + new_tokens[i] for i in part)
        padded += len(part) * (max(lengths[i] for i in part) + max(new_tokens[i] for i in part))
    return 1 - real / padded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="folder with xquad.{lang}.json (default: the demo set)")
    parser.add_argument("--model", type=Path, help="a local checkpoint (default: a random Llama built here)")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    from harness_hf.generator import HFGenerator

    files = sorted(args.data_dir.glob("xquad.*.json")) if args.data_dir else sorted(parallel_qa_dir().glob("*.json"))
    questions = [q for path in files for q in read_span_file(path)][: args.prompts]
    template = load_template("qa")
    options = GenerationOptions(max_new_tokens=args.max_new_tokens, stop=template.stop)
    requests = [
        GenerationRequest(template.render({"context": q.context, "question": q.question}, "en"), options)
        for q in questions
    ]
    with tempfile.TemporaryDirectory() as scratch:
        path = args.model or build_model(Path(scratch))
        model = HFGenerator(runtime=Runtime(device_request=args.device, batch_size=args.batch_size), path=path)
        services: list[GenerationService] = []

        def shared() -> list[str]:
            services.append(GenerationService(model, batch_size=args.batch_size))
            return [g.text for g in services[-1].generate(requests)]

        def one_at_a_time() -> list[str]:
            return [model.generate([request])[0].text for request in requests]

        shared()  # warm-up (and the checkpoint's first-call costs) outside the timings
        sides = alternate([Side("one at a time", one_at_a_time), Side("shared batches", shared)], args.repeat)
    baseline, harness = sides
    if baseline.result != harness.result:
        differing = sum(a != b for a, b in zip(baseline.result, harness.result))
        print(f"note: {differing} of {len(requests)} answers differ between the sides (float rounding under padding)")
    stats = services[-1].stats
    print(
        f"{len(requests)} prompts, {stats.prompt_tokens} prompt tokens, {stats.new_tokens} generated tokens, "
        f"batch size {args.batch_size}, device {model.device} ({model.precision})"
    )
    report(baseline, harness)
    print(
        f"generated tokens/s: one at a time {stats.new_tokens / baseline.median:,.0f}, "
        f"shared {stats.new_tokens / harness.median:,.0f} (medians)"
    )
    news = [g.new_tokens for g in services[-1].generate(requests)]
    print(
        f"padding share: sorted batches {stats.padding_share:.1%}, arrival order "
        f"{padding_in_arrival_order(services[-1], requests, args.batch_size, news):.1%}"
    )


if __name__ == "__main__":
    main()
