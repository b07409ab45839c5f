"""One model over a suite of tasks, three ways: naive per-task batching, the shared length-bucketed
queue, and a warm-cache re-run. Prints padding share, texts encoded and the time ratios.

* naive: each task encodes its own texts in its own order, fixed-size batches, duplicates and all
  (what a harness without a shared engine does);
* shared: the texts of all tasks in one queue (harness.encoding.EncodingService, no cache):
  each distinct text once, sorted by length into batches;
* warm: the same run again with the embedding cache filled by a cold run.

The suite is LAReQA with its three candidate forms (the questions, and the sentences of the
``sentence`` and ``pair`` forms, recur across tasks). The model is e5-small (real
multilingual-e5-small weights through transformers, so padding is real). Run:

    python benchmarks/bench_shared_batching.py                       # built-in demo data
    python benchmarks/bench_shared_batching.py --data-dir ../shared/data --limit 20
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.cache import EmbeddingCache
from harness.encoding import EncodingRequest, EncodingService
from harness.model import Runtime
from harness.registry import Registry
from harness.runner import DataOptions, expand_tasks, load_data, load_task

BATCH = 32


def naive(model: Any, requests: list[EncodingRequest]) -> dict[str, float]:
    """Every request encoded as it comes: input order, fixed batches, no deduplication."""
    start = time.perf_counter()
    texts = tokens = padded = 0
    for request in requests:
        lengths = model.token_lengths(request.texts, role=request.role)
        for first in range(0, len(request.texts), BATCH):
            batch = list(request.texts[first : first + BATCH])
            model.encode(batch, role=request.role)
            texts += len(batch)
            tokens += sum(lengths[first : first + BATCH])
            padded += max(lengths[first : first + BATCH]) * len(batch)
    return {"seconds": time.perf_counter() - start, "texts": texts, "padding": 1 - tokens / padded}


def shared(model: Any, requests: list[EncodingRequest], cache: EmbeddingCache | None) -> dict[str, float]:
    service = EncodingService(model, cache=cache, batch_size=BATCH, show_progress=False)
    start = time.perf_counter()
    service.prefetch(requests)
    stats = service.stats.as_dict()
    return {"seconds": time.perf_counter() - start, "texts": stats["encoded"], "padding": stats["padding_share"],
            "requested": stats["requested"], "unique": stats["unique"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="benchmark folder (default: the built-in demo data)")
    parser.add_argument("--limit", type=int, help="questions per language (real data is slow on a CPU)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate naive and shared runs this many times and keep each one's best time")
    args = parser.parse_args()
    registry = Registry.discover()
    requests: list[EncodingRequest] = []
    for text in expand_tasks("lareqa-candidates", registry):
        task, _ = load_task(registry, text)
        data = load_data(task, DataOptions(data_dir=args.data_dir, limit=args.limit))
        requests += task.encoding_requests(data)
    with tempfile.TemporaryDirectory() as folder:
        model_cls = registry.model("e5-small")[0].load()
        model = model_cls(runtime=Runtime(device_request="auto", batch_size=BATCH, cache_dir=Path(folder)))
        model.encode(["warm-up"], role="query")
        naive_runs, shared_runs = [], []
        for _ in range(args.repeat):  # alternating cancels slow drifts of a shared machine
            naive_runs.append(naive(model, requests))
            shared_runs.append(shared(model, requests, None))
        plain = min(naive_runs, key=lambda r: r["seconds"])
        one_queue = min(shared_runs, key=lambda r: r["seconds"])
        cache = EmbeddingCache(Path(folder), model.identity().as_dict())
        cold = shared(model, requests, cache)
        warm = shared(model, requests, EmbeddingCache(Path(folder), model.identity().as_dict()))
    print(f"data: {args.data_dir or 'built-in demo data'}, limit {args.limit}, device {model.device}, batch {BATCH}")
    print(f"texts requested by the 3 tasks: {one_queue['requested']}, distinct: {one_queue['unique']}")
    rows = [("naive per-task batching", plain), ("shared length-bucketed", one_queue), ("shared, cold cache", cold),
            ("warm-cache re-run", warm)]
    for name, row in rows:
        print(f"{name:26s} {row['seconds']:8.2f} s  texts encoded {int(row['texts']):6d}  padding {row['padding']:.1%}")
    print(f"shared vs naive: {plain['seconds'] / one_queue['seconds']:.1f}x faster")
    print(f"warm vs cold:    {cold['seconds'] / max(warm['seconds'], 1e-9):.1f}x faster")


if __name__ == "__main__":
    main()
