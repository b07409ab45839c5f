"""One model over a suite of tasks: naive per-task batching against the harness's shared queue.

Baseline (naive): each task encodes its own texts in its own order, in fixed batches of
``BATCH``, duplicates and all: what a harness without a shared engine does. Harness (shared): the
texts of all tasks in one queue (``harness.models.encoding.EncodingService``, no embedding cache), each
distinct text once, sorted by length into batches.

The suite is ``lareqa-candidates``: LAReQA with its three candidate forms (concat, sentence,
pair) on the real XQuAD-R data under ``--data-dir`` (no demo default); the questions recur in all
three tasks (the candidate forms are distinct texts). Encoding the whole pool three ways takes
long on a CPU, so ``--texts N`` keeps a seeded sample of N pool positions and N questions, the same positions in
every task (so the real duplication between tasks is kept). The model is e5-small (the real
multilingual-e5-small weights, default precision). ``--forward packed`` (e5-small's default on a
CPU) computes no padded token, so there the queue saves only the repeated texts;
``--forward transformers`` is the padded forward GPUs and other architectures run, where the
padding share of the batches is real work. The two sides run alternately ``--repeat`` times after
a warm-up; min and median seconds per side and their ratio are printed, with the texts each
encoded and the padding share of its batches.

    python benchmarks/bench_shared_batching.py --data-dir ../shared/data/lareqa/xquad-r --texts 300 [--forward transformers]

Measured on the 2-core machine with other work paused (300 texts, 3 rounds, bf16): packed
forward naive 27.9/29.8 s, shared 27.4/27.8 s (min/median; 1.07x median: 1,800 texts requested,
1,200 encoded, the 600 saved being short questions); transformers' padded forward naive
61.8/66.8 s, shared 31.0/31.1 s (2.15x median; padding 45.4% naive, 4.8% shared).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from harness.definitions.model import Runtime
from harness.definitions.protocols import EncodingRequest
from harness.definitions.registry import Registry
from harness.models.encoding import EncodingService
from harness.running.planning import expand_tasks, load_data, load_task
from harness.running.settings import DataOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, alternate, report

BATCH = 32
SUITE = "lareqa-candidates"


def sampled(request: EncodingRequest, n: int, seed: int) -> EncodingRequest:
    """The request cut to a seeded sample of ``n`` positions: the same positions for every request
    of the same length (every form of the pool has one text per pool position)."""
    rng = np.random.default_rng(seed)
    keep = sorted(rng.choice(len(request.texts), size=min(n, len(request.texts)), replace=False))
    langs = None if request.langs is None else [request.langs[i] for i in keep]
    return EncodingRequest(request.role, [request.texts[i] for i in keep], langs)


def naive(model: Any, requests: list[EncodingRequest]) -> dict[str, float]:
    """Every request encoded as it comes: input order, fixed batches, no deduplication."""
    texts = tokens = padded = 0
    for request in requests:
        lengths = model.token_lengths(request.texts, role=request.role)
        for first in range(0, len(request.texts), BATCH):
            batch = list(request.texts[first : first + BATCH])
            model.encode(batch, role=request.role)
            texts += len(batch)
            tokens += sum(lengths[first : first + BATCH])
            padded += max(lengths[first : first + BATCH]) * len(batch)
    return {"texts": texts, "padding": 1 - tokens / padded}


def shared(model: Any, requests: list[EncodingRequest]) -> dict[str, float]:
    """All requests through one encoding service without a cache: distinct texts, length-sorted batches."""
    service = EncodingService(model, cache=None, batch_size=BATCH, show_progress=False)
    service.prefetch(requests)
    stats = service.stats.as_dict()
    return {"texts": stats["encoded"], "padding": stats["padding_share"], "requested": stats["requested"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data-dir", type=Path, required=True, help="the real XQuAD-R data folder, as `harness run` takes it"
    )
    parser.add_argument("--texts", type=int, default=300, help="pool positions and questions sampled (seeded)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each running both sides once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--forward",
        choices=("packed", "transformers"),
        default="packed",
        help="e5-small's packed CPU forward (its default) or transformers' padded one",
    )
    args = parser.parse_args()
    registry = Registry.discover()
    requests: list[EncodingRequest] = []
    for text in expand_tasks(SUITE, registry):
        task, _ = load_task(registry, text)
        data = load_data(task, DataOptions(data_dir=args.data_dir))
        requests += [sampled(request, args.texts, args.seed) for request in task.encoding_requests(data)]
    print(
        f"real XQuAD-R ({args.data_dir}), suite {SUITE}: {args.texts} sampled pool positions and questions "
        f"(seed {args.seed}); e5-small (its default precision, {args.forward} forward), batch {BATCH}; "
        f"baseline: naive per-task batching",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as folder:
        model_cls = registry.model("e5-small")[0].load()
        model = model_cls(runtime=Runtime(device_request="auto", batch_size=BATCH, cache_dir=Path(folder)))
        if args.forward == "transformers":
            model.engine.use_transformers_forward()
        model.encode(["warm-up"], role="query")
        baseline, harness = alternate(
            [
                Side("naive per-task batching", lambda: naive(model, requests)),
                Side("shared length-bucketed queue", lambda: shared(model, requests)),
            ],
            args.repeat,
        )
    print(
        f"texts requested: {harness.result['requested']}; encoded: naive {baseline.result['texts']}, "
        f"shared {harness.result['texts']}; padding share: naive {baseline.result['padding']:.1%}, "
        f"shared {harness.result['padding']:.1%}"
    )
    report(baseline, harness)


if __name__ == "__main__":
    main()
