"""The dense index across torchrun processes on a corpus of 200,000 passages: the merged ranking
against the one-process ranking (equal, bit for bit, or the script fails), and the wall time.

    python benchmarks/synthetic_corpus.py 200000 /work/scale-data/psgs-200k.tsv
    python benchmarks/bench_dense_distributed.py /work/scale-data/psgs-200k.tsv --work /work/scale-data/dist

Runs the test suite's worker (``tests/plugins/harness_dense/distributed_worker.py``: the corpus
read by the harness's streaming reader, a hash encoder that gives a text the same vector in any
process, ``build_or_load`` and exact top-100 search) on one plain process, then under
``torchrun --standalone --nproc-per-node N`` for each N of ``--processes``, each in a fresh index
folder, every process with one BLAS thread (``OMP_NUM_THREADS=1``: the same arithmetic in every
configuration). gloo on this machine; the same code path runs NCCL on GPUs.

Measured on the 2-core machine (200,000 passages, shards of 16,384): one process 4.0 s, 2 ranks
4.5 s, 4 ranks 6.4 s, both rankings equal to the one-process ranking bit for bit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
WORKER = REPO / "tests" / "plugins" / "harness_dense" / "distributed_worker.py"


def run(corpus: Path, folder: Path, processes: int | None, shard_size: int, k: int) -> float:
    """Wall seconds of one configuration (``processes=None``: a plain process, no torchrun)."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "logs").mkdir(parents=True)
    launcher = (
        [] if processes is None else ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes)]
    )
    command = [
        sys.executable,
        *launcher,
        str(WORKER),
        str(corpus),
        str(folder / "index"),
        str(folder / "out.npz"),
        str(folder / "logs"),
        str(shard_size),
        str(k),
    ]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode:
        raise SystemExit(f"{processes or 1} process(es) failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, required=True, help="folder for the indexes (outside the repository)")
    parser.add_argument("--processes", default="2,4")
    parser.add_argument("--shard-size", type=int, default=16384)
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args()
    single = args.work / "single"
    seconds = run(args.corpus, single, None, args.shard_size, args.k)
    reference = np.load(single / "out.npz")
    print(
        f"1 plain process: {seconds:.1f} s (encode, write and search; {reference['indices'].shape[0]} queries, "
        f"top {args.k})"
    )
    for processes in map(int, args.processes.split(",")):
        folder = args.work / f"ranks-{processes}"
        seconds = run(args.corpus, folder, processes, args.shard_size, args.k)
        merged = np.load(folder / "out.npz")
        equal = np.array_equal(merged["indices"], reference["indices"]) and np.array_equal(
            merged["scores"].view(np.uint32), reference["scores"].view(np.uint32)
        )
        print(
            f"{processes} torchrun ranks: {seconds:.1f} s; ranking {'equal, bit for bit,' if equal else 'DIFFERENT from'} "
            "the one-process ranking"
        )
        if not equal:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
