"""What the row check costs a cache load: a real-size shard read with and without it.

The embedding cache refuses rows no run of the model can have written (NaN or infinity, all
zeros, and for a model that normalises its vectors a norm other than 1: see
``harness.models.cache.unsound_rows``). It runs on every load, over every row, so it must cost little
next to what a load does anyway (read the files, checksum them, index the keys).

Baseline: the load as it was before the check, which looked only for NaN and infinity
(``np.isfinite(vectors).all()``). Harness: the load as it is, the check for a normalising model
(``unit_norm=True``, the most work). The shard is ``--rows`` x ``--dim`` float32 unit rows
(default 100,000 x 384, e5-small's width: a 147 MiB shard), written once through the cache
itself; the file stays in the page cache, so the read is a memory read, the hardest case for
the check's share. The sides run alternately ``--repeat`` times; min and median seconds per side
and their ratio are printed, then the same for the two checks alone on the same rows.

    python benchmarks/bench_cache_check.py [--rows 100000 --dim 384 --repeat 7]

Measured on the 2-core machine, shared with other jobs (load average 6-7; 100,000 x 384, 9 rounds):
load before 0.735/0.805 s, with the row check 0.546/0.816 s (min/median; 0.99x median: the
difference is noise); the checks alone 14.0/16.5 ms before, 8.7/11.1 ms now (one pass computing
the squared norms, instead of ``isfinite``'s full-size temporary).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import harness.models.cache as cache_module
from harness.models.cache import EmbeddingCache, unsound_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, alternate, report

IDENTITY = {"name": "bench", "label": "bench", "weights": "none", "options": {}}


def finite_only(vectors: np.ndarray, *, unit_norm: bool) -> tuple[np.ndarray, str | None]:
    """The check the cache made before: NaN and infinity only."""
    if not np.isfinite(vectors).all():
        return np.ones(len(vectors), dtype=bool), "vectors with NaN or infinity"
    return np.zeros(len(vectors), dtype=bool), None


def load(root: Path, check: object) -> int:
    cache_module.unsound_rows = check  # type: ignore[assignment]
    try:
        return len(EmbeddingCache(root, IDENTITY, unit_norm=True))
    finally:
        cache_module.unsound_rows = unsound_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((args.rows, args.dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        EmbeddingCache(root, IDENTITY, unit_norm=True).put("passage", [f"text {i}" for i in range(args.rows)], vectors)
        print(f"shard: {args.rows:,} x {args.dim} float32 ({vectors.nbytes / 2**20:.0f} MiB)")
        baseline, harness = alternate(
            [
                Side("load, NaN/inf check only (before)", lambda: load(root, finite_only)),
                Side("load, row check (unit_norm=True)", lambda: load(root, unsound_rows)),
            ],
            args.repeat,
        )
        assert baseline.result == harness.result == args.rows
        report(baseline, harness)
        mapped = np.load(next(root.rglob("*.vectors.npy")), mmap_mode="r")
        before, after = alternate(
            [
                Side("NaN/inf check alone (before)", lambda: finite_only(mapped, unit_norm=True)),
                Side("row check alone", lambda: unsound_rows(mapped, unit_norm=True)),
            ],
            args.repeat,
        )
        report(before, after, unit="ms")


if __name__ == "__main__":
    main()
