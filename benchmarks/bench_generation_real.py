"""Generation speed of a real packaged model (Gemma 3 270M, SmolLM2-135M-Instruct) on this CPU, on real
XQuAD prompts: prefill and decode rates with their share of the measured matmul peak, the prefill's
last-position-only output layer against the full one, bf16 against float32 (speed and the greedy
answers themselves), and the harness's shared batches against one question at a time.

Baseline (``one at a time``): the way the issue measured it and a loop over ``model.generate``
per question does: float32, batch 1, no padding. Harness (``shared batches``): the same prompts
through :class:`harness.models.generation.GenerationService` (length-sorted batches of ``--batch-size``,
left-padded) in the model's ``precision=auto`` (bf16 on a CPU with AVX512-BF16/AMX). Both sides
generate greedily with the ``qa`` template's stop strings and ``--max-new-tokens``, zero-shot.
Printed for each side: min and median seconds over ``--repeat`` alternated rounds and the ratio.

Rates: prefill = one forward pass over a batch of prompts (``logits_to_keep=1``, what
``generate`` passes: only the last position goes through the output layer; ``0`` computes all,
shown beside it); decode = ``generate`` with every row forced to ``--decode-tokens`` new tokens,
less ``generate`` of one token (its prefill), the two alternated. FLOPs count the matrix products: 2 x the linear layers' weights
per token, attention's QK^T and AV over the real (causal) context, and the output layer at the
positions it runs at; the share is of :func:`harness.models.peak.measure`'s matmul peak for the dtype at
the run's threads. Decode at batch B reads every weight once per step for B tokens, so it is
memory-bound and its share of the matmul peak is low by nature.

    python benchmarks/bench_generation_real.py --model gemma3-270m --data-dir /work/shared/data/xquad \\
        --prompts 32 --batch-size 16 --repeat 2

Measured on the 2-core AMD EPYC (AVX512-BF16), quiet (load average 1-2, nothing else running),
``--prompts 16 --batch-size 16 --repeat 3 --rates-only``, on 2026-11-27 (matmul peak measured beside
each: float32 182-192 GFLOP/s, bfloat16 429-433):

=================  ====================  ====================  =====================  ==================
model (tokens)     prefill float32       prefill bfloat16      decode float32         decode bfloat16
=================  ====================  ====================  =====================  ==================
Gemma 3 270M       662 tokens/s, 73%     1,210 tokens/s, 59%   73 tokens/s, 21%       161 tokens/s, 21%
(4,369)            (all logits: 213)     (all logits: 501)
SmolLM2 (chat,     643 tokens/s, 79%     1,027 tokens/s, 54%   107 tokens/s, 17%      175 tokens/s, 12%
5,177)             (all logits: 498)     (all logits: 847)
=================  ====================  ====================  =====================  ==================

(percentages: of the matmul peak of the dtype; decode: 16 rows x 15 tokens.) Computing the output
layer at every position costs Gemma 3.1x in float32 (its 262k-word vocabulary), SmolLM2 1.3x.
Decode is bound by reading the weights once a step for the whole batch: Gemma in bf16 reads its
536 MB ten times a second at batch 16 (5.4 GB/s), which is why its share of the matmul peak is low.
End to end, the whole of XQuAD en (1,190 questions, the default ``qa`` prompt, greedy, bf16, batches
of 32), ``harness run xquad MODEL --langs en`` with an empty generation cache on the quiet machine
(``/usr/bin/time``): Gemma 378 s wall (F1 24.17, peak RSS 2.2 GB), SmolLM2 430 s (F1 12.60; its
reference run, ``benchmarks/reference_runs.py``, wall time in ``leaderboard/reference-runs.json``).
Gemma's reference run took 670 s with other jobs on the CPU for its last seven minutes, with the
same answers. Of Gemma's answers 327 ran to the template's 32 new tokens without a line break,
which holds their batch for all 32 steps.
Earlier, with other jobs at load 7-18 (2026-11-26): shared batches in bf16 against one question at
a time in float32 (the issue's way), SmolLM2, 4 prompts: 58.6 s against 121.4 s (2.07x).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._timing import Side, alternate, report
from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest
from harness.models.generation import GenerationService
from harness.models.peak import measure
from harness.models.prompting import load_template
from harness.scoring.normalize import ascii_english
from harness.scoring.span_file import read_span_file
from harness.scoring.spans import score_questions

MODELS = {"gemma3-270m": "Gemma3Base", "smollm2-135m-instruct": "SmolLM2Instruct"}


def linear_weights(network) -> tuple[int, int, int]:
    """(weights of the transformer layers' linear maps, output-layer weights, layers)."""
    import torch

    layers = sum(
        m.weight.numel() for name, m in network.named_modules() if isinstance(m, torch.nn.Linear) and ".layers." in name
    )
    head = network.get_output_embeddings().weight.numel()
    return layers, head, network.config.num_hidden_layers


def prefill_flops(network, lengths: list[int], head_positions: int) -> float:
    """Matrix-product FLOPs of one prefill over prompts of ``lengths`` (see the module docstring)."""
    layers_weights, head, layers = linear_weights(network)
    config = network.config
    width = config.num_attention_heads * getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    attention = sum(2 * 2 * layers * width * n * (n + 1) / 2 for n in lengths)  # QK^T and AV, causal
    return 2 * layers_weights * sum(lengths) + attention + 2 * head * head_positions


def decode_flops(network, lengths: list[int], steps: int) -> float:
    layers_weights, head, layers = linear_weights(network)
    config = network.config
    width = config.num_attention_heads * getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    attention = sum(2 * 2 * layers * width * (n + s) for n in lengths for s in range(steps))
    return (2 * layers_weights + 2 * head) * len(lengths) * steps + attention


def read_bandwidth(threads: int, gib: float = 1.0, repeat: int = 5) -> float:
    """The memory read rate in GB/s this process reaches: the best of ``repeat`` sums over a
    ``gib``-GiB float32 tensor (far larger than the caches) at ``threads`` threads, the bound of a
    decode step, which reads every weight once for the whole batch."""
    import torch

    torch.set_num_threads(threads)
    data = torch.ones(int(gib * 2**30) // 4)
    data.sum()  # pages touched before timing
    best = min(timed(data.sum, repeat))
    return data.numel() * 4 / best / 1e9


def weight_bytes(network) -> int:
    """Bytes of the parameters (tied embeddings once), what one decode step reads."""
    return sum(p.numel() * p.element_size() for p in network.parameters())


def timed(step, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="gemma3-270m")
    parser.add_argument("--data-dir", type=Path, required=True, help="folder with xquad.{lang}.json")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--decode-tokens", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chat", default="auto", choices=["auto", "on", "off"])
    parser.add_argument(
        "--rates-only",
        action="store_true",
        help="only the prefill and decode rates (no answer comparison, no one-at-a-time baseline)",
    )
    parser.add_argument(
        "--no-full-logits",
        action="store_true",
        help="skip the prefill with the output layer at every position (slow: 4x with Gemma's vocabulary)",
    )
    args = parser.parse_args()

    import torch

    import harness_hf.packaged as packaged

    torch.set_num_threads(args.threads)
    runtime = Runtime(device_request="cpu", batch_size=args.batch_size, threads=args.threads)
    cls = getattr(packaged, MODELS[args.model])
    models = {dtype: cls(runtime=runtime, precision=dtype, chat=args.chat) for dtype in ("float32", "bfloat16")}
    questions = read_span_file(args.data_dir / f"xquad.{args.lang}.json")[: args.prompts]
    template = load_template("qa")
    options = GenerationOptions(max_new_tokens=args.max_new_tokens, stop=template.stop)
    requests = [
        GenerationRequest(template.render({"context": q.context, "question": q.question}, args.lang), options)
        for q in questions
    ]
    print(
        f"{args.model}: {len(requests)} XQuAD {args.lang} prompts (qa template, chat={models['float32'].chat}), "
        f"{args.threads} threads, CPU: {cpu_name()}"
    )

    peaks = {dtype: measure(dtype, threads=args.threads).best_gflops for dtype in models}
    bandwidth = read_bandwidth(args.threads)
    print(
        "matmul peak (GFLOP/s): "
        + ", ".join(f"{d} {g:,.0f}" for d, g in peaks.items())
        + f"; memory read rate {bandwidth:,.1f} GB/s"
    )

    # -- prefill and decode rates, one batch of prompts ------------------------------------------
    batch_prompts = [r.prompt for r in requests[: args.batch_size]]
    for dtype, model in models.items():
        network = model.model
        batch = model._encode(batch_prompts, options, return_tensors="pt", padding=True)
        lengths = batch["attention_mask"].sum(1).tolist()
        with torch.inference_mode():
            network(**batch, logits_to_keep=1)  # warm-up
            for keep in (1,) if args.no_full_logits else (1, 0):
                best, median = timed(functools.partial(network, **batch, logits_to_keep=keep), args.repeat)
                positions = len(lengths) if keep == 1 else batch["input_ids"].numel()
                flops = prefill_flops(network, lengths, positions)
                print(
                    f"prefill {dtype:8s} logits_to_keep={keep}: {len(lengths)} prompts, {sum(lengths)} tokens, "
                    f"min {best:.2f} s / median {median:.2f} s, {sum(lengths) / best:,.0f} tokens/s, "
                    f"{flops / best / 1e9:,.0f} GFLOP/s = {flops / best / 1e9 / peaks[dtype]:.0%} of the peak"
                )
            steps = args.decode_tokens

            generate = functools.partial(
                network.generate, **batch, do_sample=False, pad_token_id=model.tokenizer.pad_token_id
            )

            timings: dict[int, list[float]] = {1: [], steps: []}
            for _ in range(args.repeat):  # alternated, so the difference is of like conditions
                for tokens in timings:
                    start = time.perf_counter()
                    generate(max_new_tokens=tokens, min_new_tokens=tokens)
                    timings[tokens].append(time.perf_counter() - start)
            decode = min(timings[steps]) - min(timings[1])
            flops = decode_flops(network, lengths, steps - 1)
            read = weight_bytes(network) * (steps - 1) / decode / 1e9  # the weights, once a step
            print(
                f"decode  {dtype:8s}: {len(lengths)} rows x {steps - 1} tokens after the first "
                f"(generate {steps} tokens min {min(timings[steps]):.2f} s - 1 token min {min(timings[1]):.2f} s): "
                f"{len(lengths) * (steps - 1) / decode:,.0f} tokens/s, "
                f"{flops / decode / 1e9:,.0f} GFLOP/s = {flops / decode / 1e9 / peaks[dtype]:.0%} of the peak; "
                f"weights read {read:,.1f} GB/s = {read / bandwidth:.0%} of the read rate"
            )

    if args.rates_only:
        return

    # -- bf16 against float32: the greedy answers ----------------------------------------------
    answers = {}
    for dtype, model in models.items():
        answers[dtype] = [g.text for g in GenerationService(model, batch_size=args.batch_size).generate(requests)]
    same = sum(a == b for a, b in zip(answers["float32"], answers["bfloat16"]))
    scores = {
        dtype: score_questions(questions, {q.id: a for q, a in zip(questions, texts)}, ascii_english)
        for dtype, texts in answers.items()
    }
    print(
        f"bf16 vs float32 greedy answers: {same} of {len(requests)} identical; "
        + "; ".join(f"{d} EM {s.exact_match:.1f} F1 {s.f1:.1f}" for d, s in scores.items())
    )

    # -- the harness against one question at a time ----------------------------------------------
    baseline_model, harness_model = models["float32"], cls(runtime=runtime, chat=args.chat)

    def one_at_a_time() -> list[str]:
        return [baseline_model.generate([request])[0].text for request in requests]

    def shared() -> list[str]:
        return [g.text for g in GenerationService(harness_model, batch_size=args.batch_size).generate(requests)]

    sides = alternate(
        [Side("one at a time (float32)", one_at_a_time), Side(f"shared batches ({harness_model.precision})", shared)],
        args.repeat,
    )
    report(*sides)
    per_question = sides[1].median / len(requests)
    print(
        f"per question: one at a time {sides[0].median / len(requests):.2f} s, shared {per_question:.2f} s "
        f"(medians); XQuAD {args.lang}'s 1,190 questions at that rate: {per_question * 1190 / 60:.1f} min"
    )


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
