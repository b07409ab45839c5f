"""The machine's measured matrix-multiply peak, the yardstick for an encoder's achieved FLOP/s.

A transformer encoder spends nearly all its work in matrix products, so the fastest a matmul of
encoder-like shapes runs on this device, in the encoder's compute dtype and at the run's thread
count, is the ceiling its FLOP/s can be compared with. A vendor's datasheet figure would not do:
it ignores the cores this process may use, the thread count and the library actually installed.

Each measurement multiplies a (2048 x 384) by a (384 x 1536) matrix (e5-small's hidden and
feed-forward widths) for about 0.3 s, a few times, and keeps the best and the median rate. int8
uses ``torch._int_mm`` (int8 inputs, int32 accumulation) and is counted in GOP/s. Results are
cached per process, so a run measures each (dtype, device, threads) once.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

#: The dtypes measured, as an encoder's ``compute_dtype`` names them.
DTYPES = ("float32", "bfloat16", "int8")
SHAPE = (2048, 384, 1536)
SECONDS = 0.3
REPEATS = 3


@dataclass(frozen=True)
class PeakMeasurement:
    """The matmul rate of one dtype on one device: best and median over the repeats, in GFLOP/s
    (GOP/s for int8), at ``threads`` intra-op threads."""

    dtype: str
    device: str
    threads: int
    best_gflops: float
    median_gflops: float
    repeats: int


def timed_rate(
    step: Callable[[], None], operations: float, seconds: float, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Operations per second of ``step`` (each call does ``operations``), calling it until
    ``seconds`` have passed (at least once)."""
    start, calls = clock(), 0
    while True:
        step()
        calls += 1
        elapsed = clock() - start
        if elapsed >= seconds:
            return calls * operations / elapsed


def measure(
    dtype: str,
    *,
    device: str = "cpu",
    threads: int | None = None,
    seconds: float = SECONDS,
    repeats: int = REPEATS,
    shape: tuple[int, int, int] = SHAPE,
) -> PeakMeasurement:
    """Measure the matmul rate of ``dtype`` (one of :data:`DTYPES`) on ``device`` now, with
    ``threads`` torch threads (set for the process; None: torch's current number)."""
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"no matmul peak for dtype {dtype!r} (measured: {', '.join(DTYPES)})")
    if threads is not None:
        torch.set_num_threads(threads)
    m, k, n = shape
    generator = torch.Generator().manual_seed(0)
    if dtype == "int8":
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=generator).to(device)
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, generator=generator).to(device)
        product: Callable[[], object] = lambda: torch._int_mm(a, b)  # noqa: E731
    else:
        torch_dtype = getattr(torch, dtype)
        a = torch.randn((m, k), generator=generator).to(device=device, dtype=torch_dtype)
        b = torch.randn((k, n), generator=generator).to(device=device, dtype=torch_dtype)
        product = lambda: torch.mm(a, b)  # noqa: E731
    synchronize: Callable[[], None] = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def step() -> None:
        product()
        synchronize()

    with torch.inference_mode():
        step()  # warm-up: first-call allocation and kernel selection are not the steady state
        rates = [timed_rate(step, 2.0 * m * k * n, seconds) / 1e9 for _ in range(repeats)]
    return PeakMeasurement(dtype, device, torch.get_num_threads(), max(rates), statistics.median(rates), repeats)


def peak_gflops(dtype: str, device: str = "cpu", threads: int | None = None) -> float | None:
    """The best measured matmul rate of ``dtype`` on ``device`` with ``threads`` threads (the
    run's: an encoder that is not torch's still gets the yardstick of its thread count; None:
    torch's current number), measured once per process; None for a dtype not in :data:`DTYPES`
    or without torch."""
    if dtype not in DTYPES:
        return None
    try:
        import torch
    except ImportError:
        return None
    return _best(dtype, device, torch.get_num_threads() if threads is None else threads)


@cache
def _best(dtype: str, device: str, threads: int) -> float:
    return measure(dtype, device=device, threads=threads).best_gflops
