"""The matmul peak: the rate arithmetic on a fake clock, and a real (tiny) measurement per dtype."""

from __future__ import annotations

import pytest

from harness.models import peak


def test_the_rate_is_operations_over_the_time_of_whole_calls() -> None:
    ticks = iter(range(100))
    calls: list[int] = []
    # the clock reads 0 at the start and one second more after each call: 3 calls reach 3 s
    rate = peak.timed_rate(lambda: calls.append(1), operations=6.0, seconds=3.0, clock=lambda: float(next(ticks)))
    assert (len(calls), rate) == (3, 6.0 * 3 / 3.0)


def test_a_slow_call_still_counts_once() -> None:
    ticks = iter([0.0, 10.0])
    assert peak.timed_rate(lambda: None, operations=5.0, seconds=1.0, clock=lambda: next(ticks)) == 0.5


@pytest.mark.parametrize("dtype", peak.DTYPES)
def test_each_dtype_is_measured(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        result = peak.measure(dtype, threads=1, seconds=0.01, repeats=2, shape=(32, 64, 48))
    finally:
        torch.set_num_threads(before)
    assert (result.dtype, result.device, result.threads, result.repeats) == (dtype, "cpu", 1, 2)
    assert result.best_gflops >= result.median_gflops > 0


def test_dtypes_without_a_measurement_have_no_peak() -> None:
    assert peak.peak_gflops("int4") is None
    with pytest.raises(ValueError, match="no matmul peak for dtype 'float16'"):
        peak.measure("float16")
