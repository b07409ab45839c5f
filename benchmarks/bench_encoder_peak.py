"""How close an encoder comes to this machine's matrix-multiply peak on real XQuAD-R passages.

First it measures the peak (harness.models.peak): the rate of a (2048 x 384) @ (384 x 1536) matmul in
float32, bfloat16 and int8 (torch._int_mm), min and median over repeats, at the thread count
given. That measured matmul rate, not a datasheet figure, is the limit the encoder is compared
with: an encoder is a stack of such products, so it can approach it but not pass it.

Then it encodes a seeded sample of the XQuAD-R candidate pool, built as the LAReQA task builds it
(sentence + paragraph, ``candidates=concat``, or as given by ``--task``), through the harness's
own model loading and EncodingService (length-sorted batches, no cache), and prints tokens/s and,
when the model counts its FLOPs (harness.models.encoding.FlopCounter), the achieved GFLOP/s over the
encoding seconds and its share of the peak in the model's compute dtype. ``--corpus`` encodes the
first passages of a corpus file instead, as the ``dense`` model hands them to the encoder (title,
text), e.g. a synthetic psgs_w100 (``benchmarks/synthetic_corpus.py``). Run:

    python benchmarks/bench_encoder_peak.py --model e5-small --texts 512
    python benchmarks/bench_encoder_peak.py --corpus /work/scale-data/psgs-1m.tsv --texts 2000
    python benchmarks/bench_encoder_peak.py --model "hf-encoder:path=/models/e5" --threads 2 --device cpu

On an NVIDIA H200 (2026-11-27, ``benchmarks/gpu_checks.sh``; e5-small's shape and tokenizer with
random weights, ``benchmarks/shaped_checkpoint.py``), bf16, 4,096 XQuAD-R candidates (1.13 M
tokens): at batch 32, 82,233 tokens/s, 3.97 TFLOP/s, 4.8% of the 82.7 TFLOP/s this peak's small
matmul reaches there (a large 8192^3 bf16 product reached 796 TFLOP/s); at batch 256, 777,292
tokens/s, 37.5 TFLOP/s, 36.7% (9.5x), which made 256 hf-encoder's default batch on a GPU. A whole
cold ``harness run lareqa`` at batch 32 took 96 s of wall time, 41 s of it encoding (94k tokens/s).
Run again later that day on another H200 (stop 40, same script): 8192^3 at 781 TFLOP/s; batch 32,
111,027 tokens/s, 5.35 TFLOP/s, 4.9% of 108.6; batch 256, 848,464 tokens/s, 40.9 TFLOP/s, 37.2%;
the cold ``harness run lareqa`` at the default GPU batch (256) in 59 s of wall time, 2.29 GB peak RSS.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from harness.definitions.model import Runtime, apply_threads, default_threads
from harness.definitions.registry import Registry
from harness.models import peak
from harness.models.compose import resolve_model
from harness.models.encoding import EncodingService, FlopCounter
from harness.running.planning import load_data, load_task
from harness.running.settings import DataOptions

DEFAULT_DATA = Path("../shared/data/lareqa/xquad-r")


def print_peaks(device: str, threads: int, repeats: int) -> dict[str, float]:
    """Measure and print the peak of every dtype; return the best rates."""
    best: dict[str, float] = {}
    print(
        f"matmul peak on {device}, {peak.SHAPE[0]}x{peak.SHAPE[1]} @ {peak.SHAPE[1]}x{peak.SHAPE[2]}, "
        f"{repeats} repeats of ~{peak.SECONDS} s:"
    )
    for dtype in peak.DTYPES:
        unit = "GOP/s" if dtype == "int8" else "GFLOP/s"
        m = peak.measure(dtype, device=device, threads=threads, repeats=repeats)
        print(f"  {dtype:<9} best {m.best_gflops:8.1f}  median {m.median_gflops:8.1f} {unit}  ({m.threads} threads)")
        best[dtype] = m.best_gflops
    return best


def sample_passages(task_text: str, data_dir: Path, count: int, seed: int) -> list[str | tuple[str, str]]:
    """``count`` candidates of the task's pool, in a seeded random order."""
    task, _ = load_task(Registry.discover(), task_text)
    data = load_data(task, DataOptions(data_dir=data_dir))
    pool = [text for request in task.encoding_requests(data) if request.role == "passage" for text in request.texts]
    return random.Random(seed).sample(pool, min(count, len(pool)))


def corpus_passages(path: Path, count: int) -> list[str | tuple[str, str]]:
    """The first ``count`` passages of a corpus file as (title, text), read by the harness's reader."""
    from harness.data.passages import read_passages

    return [(p.title, p.text) for p in read_passages(path).stream(0, count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="e5-small", help="model as on the command line (name:key=value,...)")
    parser.add_argument("--task", default="lareqa", help="task whose candidate pool is sampled (default: lareqa)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help=f"XQuAD-R folder (default: {DEFAULT_DATA})")
    parser.add_argument("--corpus", type=Path, help="encode the first --texts passages of this corpus file instead")
    parser.add_argument("--texts", type=int, default=512, help="candidates to encode (default: 512)")
    parser.add_argument("--threads", type=int, help="CPU threads (default: the cores this process may use)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--batch-size", type=int, help="default: the model's")
    parser.add_argument("--repeats", type=int, default=5, help="repeats per peak measurement (default: 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    texts = (
        corpus_passages(args.corpus, args.texts)
        if args.corpus
        else sample_passages(args.task, args.data_dir, args.texts, args.seed)
    )
    runtime = Runtime(
        device_request=args.device,
        batch_size=args.batch_size,
        threads=default_threads() if args.threads is None else args.threads,
    )
    model = resolve_model(args.model, Registry.discover()).instantiate(runtime)
    apply_threads(runtime)
    print(
        f"model: {model.identity().label}  device: {runtime.device_used}  precision: {model.precision}  "
        f"threads: {runtime.threads}"
    )
    peaks = print_peaks(runtime.device_used, runtime.threads, args.repeats)

    service = EncodingService(
        model,
        batch_size=runtime.batch_size or getattr(model, "batch_size", None),
        show_progress=True,
        device=runtime.device_used,
        peak=lambda dtype, device, threads: peaks.get(dtype),
    )  # the peaks printed above
    service.encode(texts, role="passage")
    stats = service.stats
    print(
        f"encoded {stats.encoded} passages, {stats.tokens} tokens ({stats.tokens / stats.encoded:.0f} per passage), "
        f"padding share {stats.as_dict()['padding_share']:.1%}, batch size {stats.batch_size}, "
        f"in {stats.seconds:.2f} s"
    )
    print(f"tokens/s: {stats.tokens_per_s:,.0f}")
    forward = getattr(model, "openvino", None)  # hf-encoder:engine=openvino
    if forward is not None and forward.graph is not None:
        print(f"of which compiling static lengths (static_step): {forward.compile_seconds:.2f} s")
    if not isinstance(model, FlopCounter):
        print(
            "achieved GFLOP/s: n/a (the model has no flop_count/compute_dtype, see harness.models.encoding.FlopCounter)"
        )
        return
    print(f"achieved GFLOP/s: {stats.achieved_gflops:.1f} ({stats.compute_dtype}, real token lengths, no padding)")
    if stats.peak_share is None:
        print(f"share of peak: n/a (no matmul peak measured for {stats.compute_dtype})")
    else:
        print(f"share of the {stats.compute_dtype} matmul peak ({stats.peak_gflops:.1f}): {stats.peak_share:.1%}")


if __name__ == "__main__":
    main()
