"""Long encodings: per-batch progress, rounds saved by time, the dry-run estimate, FLOP/s and
the share of the matmul peak, and padding counted on truncated lengths. Time is a fake clock
that the fake encoders advance, so nothing here depends on how fast the machine is."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import harness.models.encoding
from harness.definitions.protocols import EncodingRequest
from harness.models.cache import EmbeddingCache
from harness.models.distributed import World
from harness.models.encoding import EncodingService, FlopCounter

IDENTITY = {"name": "fake", "label": "fake-encoder", "weights": "sha256:0", "options": {}}


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEncoder:
    """One token per word (at most ``max_tokens``, as a truncating tokenizer would), vectors from
    the text; every call takes ``seconds_per_call`` plus ``seconds_per_token`` per token of the
    fake clock."""

    def __init__(
        self, clock: Clock, *, seconds_per_call: float = 0.0, seconds_per_token: float = 0.0, max_tokens: int = 512
    ) -> None:
        self.clock, self.seconds_per_call, self.seconds_per_token = clock, seconds_per_call, seconds_per_token
        self.max_tokens = max_tokens
        self.tokenised = 0

    def tokens(self, text: str) -> int:
        return min(len(text.split()), self.max_tokens)

    def token_lengths(self, texts: Sequence[str], *, role: str) -> list[int]:
        self.tokenised += len(texts)
        return [self.tokens(t) for t in texts]

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        self.clock.now += self.seconds_per_call + self.seconds_per_token * sum(map(self.tokens, texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def words(n: int, tag: str = "a") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


TEXTS = [words(n, f"t{n}x") for n in range(1, 11)]  # 1..10 words, all different


def recorded_saves(cache: EmbeddingCache, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, int]]:
    saves: list[tuple[float, int]] = []
    put = cache.put

    def recording_put(role: str, texts: Sequence[str], vectors: np.ndarray, langs: Sequence[str] | None) -> None:
        saves.append((clock.now, len(texts)))
        put(role, texts, vectors, langs)

    monkeypatch.setattr(cache, "put", recording_put)
    return saves


def test_the_cache_is_saved_after_each_minute_of_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    cache = EmbeddingCache(tmp_path, IDENTITY)
    saves = recorded_saves(cache, clock, monkeypatch)
    service = EncodingService(
        SlowEncoder(clock, seconds_per_call=25.0), cache=cache, batch_size=2, show_progress=False, clock=clock
    )
    service.encode(TEXTS, role="passage")
    # 5 batches of 25 s: the first round ends after the batch that passes 60 s (3 batches, 6 texts,
    # at 75 s), the second holds the remaining 2 batches (4 texts, at 125 s)
    assert saves == [(75.0, 6), (125.0, 4)]
    assert service.stats.seconds == 125.0 and len(EmbeddingCache(tmp_path, IDENTITY)) == 10


def test_distributed_rounds_are_cut_by_count_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class TwoRanks(World):
        """Rank 0 of two; the other rank's vectors arrive as zeros."""

        def gather_rows(self, local: np.ndarray, counts: list[int], dim: int) -> list[np.ndarray]:
            return [local, np.zeros((counts[1], dim), np.float32)]

        def gather_objects(self, local: object) -> list[object]:  # the other rank's batch size: the same
            return [local, local]

    clock = Clock()
    cache = EmbeddingCache(tmp_path, IDENTITY)
    saves = recorded_saves(cache, clock, monkeypatch)
    service = EncodingService(
        SlowEncoder(clock, seconds_per_call=25.0),
        cache=cache,
        batch_size=2,
        show_progress=False,
        clock=clock,
        world=TwoRanks(rank=0, size=2),
    )
    service.encode(TEXTS, role="passage")
    # rank 0 encodes batches 1, 3 and 5 (75 s) in one round: both ranks must agree on its end
    assert saves == [(75.0, 10)]


def test_progress_moves_after_every_batch_with_its_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    updates: list[tuple[int, int]] = []

    class Recorder:
        def __init__(self, total: int, description: str, enabled: bool = True, unit: str = "it") -> None:
            assert (total, unit) == (10, "text")

        def update(self, n: int = 1, *, tokens: int = 0) -> None:
            updates.append((n, tokens))

        def __enter__(self) -> Recorder:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(harness.models.encoding, "Progress", Recorder)
    EncodingService(SlowEncoder(Clock()), batch_size=3, show_progress=False).encode(TEXTS, role="query")
    # longest first in threes: 10+9+8, 7+6+5, 4+3+2, 1
    assert updates == [(3, 27), (3, 18), (3, 9), (1, 1)]


class QuarterTokens(SlowEncoder):
    """One token per four characters, so tokens per character is the same in any sample."""

    def tokens(self, text: str) -> int:
        return len(text) // 4


def test_a_dry_run_tokenises_a_sample_and_estimates_the_rest() -> None:
    texts = [("abcd" * (1 + i % 7)) + f"{i:04d}" for i in range(50)]  # lengths multiple of 4
    expected_tokens = sum(len(t) for t in texts) // 4
    encoder = QuarterTokens(Clock())
    plan = EncodingService(encoder, show_progress=False).plan([EncodingRequest("passage", texts)], sample_size=8)
    assert (plan.to_encode, plan.estimated_tokens, plan.tokens_exact) == (50, expected_tokens, False)
    assert encoder.tokenised == 8
    exact = EncodingService(QuarterTokens(Clock()), show_progress=False).plan(
        [EncodingRequest("passage", texts)], sample_size=50
    )
    assert (exact.estimated_tokens, exact.tokens_exact) == (expected_tokens, True)


def test_a_dry_run_estimates_the_time_from_a_calibration_encode(tmp_path: Path) -> None:
    clock = Clock()
    cache = EmbeddingCache(tmp_path, IDENTITY)
    service = EncodingService(
        SlowEncoder(clock, seconds_per_token=0.002), cache=cache, show_progress=False, clock=clock
    )
    texts = [words(n, f"p{n}x") for n in range(20, 80)]
    questions = [words(3, f"q{n}x") for n in range(5)]
    plan = service.plan([EncodingRequest("passage", texts), EncodingRequest("query", questions)])
    tokens = sum(range(20, 80)) + 5 * 3
    # 0.002 s per token: the estimate is the tokens times 0.002 s
    assert plan.estimated_tokens == tokens and plan.estimated_seconds == pytest.approx(tokens * 0.002)
    assert plan.calibration == "500 tokens/s measured on passage texts"
    assert service.stats.encoded == 0 and len(cache) == 0  # calibrating is not encoding


def test_a_model_that_cannot_encode_gets_an_unknown_time() -> None:
    class Broken(SlowEncoder):
        def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
            raise RuntimeError("no weights")

    plan = EncodingService(Broken(Clock()), show_progress=False).plan([EncodingRequest("query", ["a b"])])
    assert plan.estimated_tokens == 2 and plan.estimated_seconds is None
    assert plan.calibration == "unknown: the calibration encode failed (RuntimeError: no weights)"


class Counted(SlowEncoder):
    """Declares 1e9 FLOPs per token, computed in bfloat16."""

    compute_dtype = "bfloat16"

    def flop_count(self, lengths: Sequence[int]) -> float:
        return 1e9 * sum(lengths)


def test_achieved_flops_and_share_of_the_peak_are_recorded() -> None:
    clock = Clock()
    peaks: list[tuple[str, str, int | None]] = []

    def peak(dtype: str, device: str, threads: int | None) -> float:
        peaks.append((dtype, device, threads))
        return 40.0

    encoder = Counted(clock, seconds_per_call=2.0)
    assert isinstance(encoder, FlopCounter) and not isinstance(SlowEncoder(clock), FlopCounter)
    service = EncodingService(encoder, batch_size=4, show_progress=False, clock=clock, peak=peak, threads=3)
    service.encode(TEXTS, role="passage")
    service.encode([words(5, "new")], role="passage")
    # 55 + 5 tokens = 60 GFLOP in 3 + 1 batches of 2 s = 8 s: 7.5 GFLOP/s, 7.5 / 40 of the peak
    stats = service.stats.as_dict()
    assert (stats["flops"], stats["seconds"], stats["tokens_per_s"]) == (60e9, 8.0, 7.5)
    assert (stats["achieved_gflops"], stats["peak_gflops"], stats["peak_share"]) == (7.5, 40.0, round(7.5 / 40, 4))
    assert stats["compute_dtype"] == "bfloat16" and peaks == [("bfloat16", "cpu", 3)]  # measured once


def test_an_encoder_without_a_flop_count_records_no_flops() -> None:
    clock = Clock()
    service = EncodingService(
        SlowEncoder(clock, seconds_per_call=1.0),
        batch_size=5,
        show_progress=False,
        clock=clock,
        peak=lambda dtype, device, threads: pytest.fail("no peak without a flop count"),
    )
    service.encode(TEXTS, role="query")
    stats = service.stats.as_dict()
    assert (stats["flops"], stats["achieved_gflops"], stats["peak_share"], stats["tokens_per_s"]) == (
        None,
        None,
        None,
        27.5,
    )  # 55 tokens in 2 batches of 1 s


def test_padding_counts_truncated_lengths() -> None:
    service = EncodingService(SlowEncoder(Clock(), max_tokens=4), batch_size=8, show_progress=False)
    service.encode([words(2), words(6, "b"), words(10, "c")], role="passage")
    # truncated to 2, 4, 4 tokens: 10 real in a batch padded to 3 x 4 = 12 (not 18 and 30)
    stats: dict[str, Any] = service.stats.as_dict()
    assert (stats["tokens"], stats["padded_tokens"], stats["padding_share"]) == (10, 12, round(2 / 12, 4))


def test_a_slow_model_is_calibrated_on_one_batch_of_typical_texts() -> None:
    clock = Clock()
    encoder = SlowEncoder(clock, seconds_per_token=1.0)
    plan = EncodingService(encoder, show_progress=False, clock=clock).plan(
        [EncodingRequest("passage", [words(n, f"s{n}x") for n in (3, 5, 7, 9, 11, 13, 30, 40)])]
    )
    # the shortest text (3 s, untimed), then the 4 around the median (7 + 9 + 11 + 13 tokens in
    # 40 s) spend the budget: 1 token/s for 118 tokens; nothing else is encoded
    assert (plan.estimated_tokens, plan.estimated_seconds, clock.now) == (118, 118.0, 43.0)
