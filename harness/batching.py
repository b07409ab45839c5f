"""Batching shared by every model that runs batches: encoders, readers, translators.

Inputs are sorted by length and cut into batches of similar length, so padding stays small, and
a batch that runs out of accelerator memory is split in half (and the batch size lowered for
what follows) instead of failing the run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

T = TypeVar("T")


@dataclass
class ServiceStats:
    """The counters every batching service (encoding, generation) keeps for the result's execution
    record: inputs asked for, distinct ones, found in the cache, and the batches run."""

    requested: int = 0
    unique: int = 0
    cache_hits: int = 0
    padded_tokens: int = 0
    batches: int = 0
    batch_size: int = 0
    oom_halvings: int = 0
    seconds: float = 0.0


def length_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Positions grouped into batches of similar length, longest first (stable for equal lengths)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def is_out_of_memory(error: BaseException) -> bool:
    """torch's CUDA OOM (``torch.OutOfMemoryError``) or an allocator message saying so."""
    return type(error).__name__ == "OutOfMemoryError" or "out of memory" in str(error).lower()


def free_accelerator_memory() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


class AdaptiveBatcher:
    """Runs batches, halving any that runs out of memory; remembers the size that fits."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.halvings = 0

    def plan(self, lengths: Sequence[int]) -> list[np.ndarray]:
        """Length-sorted batches at the current batch size."""
        return length_batches(lengths, self.batch_size)

    def run(self, batch: Sequence[int], work: Callable[[Sequence[int]], list[T]]) -> list[T]:
        """``work(batch)``, or, on out-of-memory, ``work`` on each half (recursively)."""
        try:
            return work(batch)
        except Exception as error:
            if not is_out_of_memory(error) or len(batch) == 1:
                raise
        free_accelerator_memory()
        self.halvings += 1
        half = len(batch) // 2
        self.batch_size = max(1, min(self.batch_size, half))
        return self.run(batch[:half], work) + self.run(batch[half:], work)
