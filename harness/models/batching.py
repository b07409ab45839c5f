"""Batching shared by every model that runs batches: encoders, readers, translators.

Inputs are sorted by length and cut into batches of similar length, so padding stays small, and
a batch that runs out of accelerator memory is split in half (and the batch size lowered for
what follows) instead of failing the run.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

if TYPE_CHECKING:
    from harness.models.distributed import World

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

    #: The counters summed over the ranks of a torchrun run: the work each rank did itself (its
    #: share of a pool, its shards of a corpus). The others count what a rank was asked for,
    #: which ranks sharing a pool all see alike.
    SUMMED: ClassVar[tuple[str, ...]] = ("batches", "padded_tokens", "oom_halvings")
    #: What :meth:`as_dict` derives from the counters (rates), recomputed for the whole run.
    RATES: ClassVar[tuple[str, ...]] = ()

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def across_ranks(ranks: Sequence[ServiceStats | None]) -> dict[str, Any] | None:
    """The whole run's work from every rank's counters (None: a rank without such a service):
    :attr:`~ServiceStats.SUMMED` summed over the ranks that ran a batch, and the seconds of the
    slowest rank, as the ranks ran at once, so the rates are the run's. A rank that ran no batch
    (its shards all on disk, more ranks than work) adds nothing: it measured no FLOPs and no
    peak. A counter a working rank could not measure (None) makes the sum None."""
    present = [rank for rank in ranks if rank is not None]
    if not present:
        return None
    worked = [rank for rank in present if rank.batches] or present[:1]
    kind = type(worked[0])
    sums = {name: _sum([getattr(rank, name) for rank in worked]) for name in kind.SUMMED}
    whole = dataclasses.replace(worked[0], **sums, seconds=max(rank.seconds for rank in present)).as_dict()
    return {name: whole[name] for name in (*kind.SUMMED, "seconds", *kind.RATES)}


def _sum(values: Sequence[Any]) -> Any:
    return None if any(value is None for value in values) else sum(values)


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

    def plan(self, lengths: Sequence[int], world: World | None = None) -> list[np.ndarray]:
        """Length-sorted batches at the current batch size. With several ranks (``world``), the
        smallest size any rank has come down to (each halves its own on out-of-memory), so every
        rank plans the same batches to deal out."""
        if world is not None and world.size > 1:
            self.batch_size = min(world.gather_objects(self.batch_size))
        return length_batches(lengths, self.batch_size)

    def run(self, batch: np.ndarray, work: Callable[[np.ndarray], list[T]]) -> list[T]:
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
