"""Encoding across processes with torch.distributed (``torchrun --nproc-per-node N -m harness run``).

Every rank runs the same tasks in the same order; each text to encode is assigned to one rank,
the vectors are gathered so that every rank holds all of them, and only rank 0 writes results,
predictions and the leaderboard. gloo on CPU (so it is tested on this machine), NCCL on GPUs.
Multi-node runs work the same way through torchrun's rendezvous.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class World:
    """This process's place among the ranks of a run (one rank when not launched by torchrun)."""

    rank: int = 0
    size: int = 1
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.size > 1:
            import torch.distributed as dist

            dist.barrier()

    def gather_rows(self, local: np.ndarray, counts: list[int], dim: int) -> list[np.ndarray]:
        """All ranks' row blocks (``counts[r]`` rows from rank r), on every rank."""
        if self.size == 1:
            return [local]
        import torch
        import torch.distributed as dist

        device = torch.device("cuda", torch.cuda.current_device()) if self.backend == "nccl" else torch.device("cpu")
        width = max(counts) if counts else 0
        padded = torch.zeros((width, dim), dtype=torch.float32, device=device)
        if len(local):
            padded[: len(local)] = torch.from_numpy(np.ascontiguousarray(local, dtype=np.float32)).to(device)
        gathered = [torch.empty_like(padded) for _ in range(self.size)]
        dist.all_gather(gathered, padded)
        return [block[:count].cpu().numpy() for block, count in zip(gathered, counts)]


@cache
def current_world() -> World:
    """Join the process group torchrun set up (env RANK/WORLD_SIZE), once; else a single rank."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    import torch
    import torch.distributed as dist

    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if not dist.is_initialized():
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group(backend=backend)
    return World(rank=dist.get_rank(), size=dist.get_world_size(), backend=backend)
