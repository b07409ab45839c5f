"""Work across processes with torch.distributed (``torchrun --nproc-per-node N -m harness run``).

Every rank runs the same tasks in the same order and only rank 0 writes results, predictions and
the leaderboard. Two ways of sharing the work:

* small pools (a task's questions and candidates): each text to encode is assigned to one rank and
  the vectors are gathered so that every rank holds all of them (:meth:`World.gather_rows`);
* corpora (millions of passages, :mod:`harness_dense`): each rank encodes, keeps and searches its
  own shards, and the ranks exchange only each query's top k (:meth:`World.merge_top_k`), so no
  rank ever holds every vector.

gloo on CPU (so it is tested on this machine), NCCL on GPUs. Multi-node runs work the same way
through torchrun's rendezvous (``--nnodes``, ``--rdzv-endpoint``). A collective waits at most
``HARNESS_DIST_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`): long, because a rank that
resumes a killed encoding may reach the first collective hours after the others.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from harness.models.search import merge_top_k

if TYPE_CHECKING:
    import torch

#: Seconds a collective may wait for the slowest rank (``HARNESS_DIST_TIMEOUT`` overrides it).
DEFAULT_TIMEOUT = 6 * 3600

T = TypeVar("T")


@dataclass(frozen=True)
class World:
    """This process's place among the ranks of a run (one rank when not launched by torchrun).
    ``local_rank``: its place among the ranks of its machine (the first of them writes what every
    machine needs once, on node-local disks as on a shared one)."""

    rank: int = 0
    size: int = 1
    backend: str | None = None
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.size > 1:
            import torch.distributed as dist

            dist.barrier()

    def _device(self) -> torch.device:
        import torch

        return torch.device("cuda", torch.cuda.current_device()) if self.backend == "nccl" else torch.device("cpu")

    def gather_rows(self, local: np.ndarray, counts: list[int], dim: int) -> list[np.ndarray]:
        """All ranks' row blocks (``counts[r]`` rows from rank r), on every rank."""
        if self.size == 1:
            return [local]
        import torch
        import torch.distributed as dist

        device = self._device()
        width = max(counts) if counts else 0
        padded = torch.zeros((width, dim), dtype=torch.float32, device=device)
        if len(local):
            padded[: len(local)] = torch.from_numpy(np.ascontiguousarray(local, dtype=np.float32)).to(device)
        gathered = [torch.empty_like(padded) for _ in range(self.size)]
        dist.all_gather(gathered, padded)
        return [block[:count].cpu().numpy() for block, count in zip(gathered, counts)]

    def gather_objects(self, local: T) -> list[T]:
        """Every rank's ``local`` (a small picklable object), in rank order, on every rank."""
        if self.size == 1:
            return [local]
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.size
        dist.all_gather_object(gathered, local)
        return gathered

    def merge_top_k(self, local: tuple[np.ndarray, np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Every query's ``k`` best (corpus positions, scores) over all ranks, on every rank, from
        each rank's own top lists (``(queries, k)`` arrays, int64 and float32, a rank with fewer
        than k passages padding with score -inf). Merged by :func:`harness.models.search.merge_top_k`'s
        order (score, then position), a total order, so the result is the one-process ranking
        whatever the ranks and shards."""
        indices, scores = local
        if self.size > 1:
            import torch
            import torch.distributed as dist

            device = self._device()
            mine = (
                torch.from_numpy(np.ascontiguousarray(indices, dtype=np.int64)).to(device),
                torch.from_numpy(np.ascontiguousarray(scores, dtype=np.float32)).to(device),
            )
            lists = []
            for tensor in mine:
                gathered = [torch.empty_like(tensor) for _ in range(self.size)]
                dist.all_gather(gathered, tensor)
                lists.append([block.cpu().numpy() for block in gathered])
            best: tuple[np.ndarray, np.ndarray] | None = None
            for rank_indices, rank_scores in zip(*lists):
                best = merge_top_k(best, (rank_indices, rank_scores), k)
            assert best is not None
            indices, scores = best
        return indices[:, :k], scores[:, :k]


@cache
def current_world() -> World:
    """Join the process group torchrun set up (env RANK/WORLD_SIZE), once; else a single rank."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    import torch
    import torch.distributed as dist

    backend = "nccl" if torch.cuda.is_available() else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if not dist.is_initialized():
        if backend == "nccl":
            torch.cuda.set_device(local_rank)
        timeout = timedelta(seconds=float(os.environ.get("HARNESS_DIST_TIMEOUT", DEFAULT_TIMEOUT)))
        dist.init_process_group(backend=backend, timeout=timeout)
        # Torn down before the interpreter exits: left to the C++ destructors, gloo's threads
        # abort the process now and then ("terminate called without an active exception") and
        # torchrun reports a run that finished as failed.
        atexit.register(dist.destroy_process_group)
    return World(rank=dist.get_rank(), size=dist.get_world_size(), backend=backend, local_rank=local_rank)
