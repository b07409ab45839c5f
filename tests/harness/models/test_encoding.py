"""The encoding service: each text encoded once, cached on disk safely, batched by length."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.protocols import EncodingRequest
from harness.models.batching import across_ranks, length_batches
from harness.models.cache import EmbeddingCache, clear, describe
from harness.models.encoding import EncodingService, EncodingStats

IDENTITY = {"name": "fake", "label": "fake-encoder", "weights": "sha256:0", "options": {"dim": 4}}


class CountingEncoder:
    """Vectors derived from the text; records every batch it is given."""

    def __init__(self, oom_above: int | None = None) -> None:
        self.batches: list[list[str]] = []
        self.oom_above = oom_above

    def token_lengths(self, texts: Sequence[str], *, role: str) -> list[int]:
        return [len(t.split()) for t in texts]

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        if self.oom_above is not None and len(texts) > self.oom_above:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.batches.append(list(texts))
        return np.array(
            [[len(t), t.count("a"), ord(t[0]), 1.0 if role == "query" else 0.0] for t in texts], dtype=np.float32
        )


def test_duplicates_are_encoded_once_and_order_is_kept() -> None:
    encoder = CountingEncoder()
    service = EncodingService(encoder, batch_size=2, show_progress=False)
    texts = ["a b c", "x", "a b c", "long text with many words", "x"]
    vectors = service.encode(texts, role="query")
    assert np.array_equal(vectors, encoder.encode(texts, role="query"))
    assert sorted(t for batch in encoder.batches[:-1] for t in batch) == ["a b c", "long text with many words", "x"]
    # longest first, two per batch: [5 words, 3 words], [1 word]
    assert encoder.batches[:2] == [["long text with many words", "a b c"], ["x"]]
    stats = service.stats.as_dict()
    assert (stats["requested"], stats["unique"], stats["encoded"], stats["batches"]) == (5, 3, 3, 2)
    # tokens 5 + 3 + 1 = 9; padded 2 x 5 + 1 x 1 = 11; padding share = 1 - 9/11
    assert (stats["tokens"], stats["padded_tokens"], stats["padding_share"]) == (9, 11, round(2 / 11, 4))
    service.encode(["x"], role="passage")  # another role is another text
    assert service.stats.encoded == 4


def test_length_batches_are_stable_for_equal_lengths() -> None:
    batches = length_batches([3, 1, 3, 2, 1], batch_size=2)
    assert [b.tolist() for b in batches] == [[0, 2], [3, 1], [4]]


def test_a_suite_prefetch_shares_one_queue() -> None:
    encoder = CountingEncoder()
    service = EncodingService(encoder, batch_size=8, show_progress=False)
    requests = [
        EncodingRequest("passage", ["p1 a", "p2"]),
        EncodingRequest("passage", ["p2", "p3 a a"]),
        EncodingRequest("query", ["q"]),
    ]
    plan = service.plan(requests)
    assert (
        plan.texts_requested,
        plan.unique_texts,
        plan.cache_hits,
        plan.to_encode,
        plan.estimated_tokens,
        plan.tokens_exact,
    ) == (5, 4, 0, 4, 7, True)
    encoder.batches.clear()  # the plan's calibration encode, which neither memoises nor caches
    service.prefetch(requests)
    assert [sorted(b) for b in encoder.batches] == [["p1 a", "p2", "p3 a a"], ["q"]]
    service.encode(["p3 a a", "q"], role="passage")
    assert len(encoder.batches) == 3  # only "q" as a passage was new


def test_warm_cache_encodes_nothing_and_survives_a_new_process(tmp_path: Path) -> None:
    texts = ["alpha", "beta gamma", "delta"]
    first = EncodingService(CountingEncoder(), cache=EmbeddingCache(tmp_path, IDENTITY), show_progress=False)
    expected = first.encode(texts, role="passage")
    encoder = CountingEncoder()
    second = EncodingService(encoder, cache=EmbeddingCache(tmp_path, IDENTITY), show_progress=False)
    assert np.array_equal(second.encode(texts, role="passage"), expected)
    assert encoder.batches == [] and second.stats.cache_hits == 3
    other = {**IDENTITY, "options": {"dim": 4, "query_prefix": "query: "}}  # other options, other namespace
    assert len(EmbeddingCache(tmp_path, other)) == 0
    assert describe(tmp_path)[0]["entries"] == 3 and describe(tmp_path)[0]["label"] == "fake-encoder"
    assert clear(tmp_path, "fake-encoder") == ["fake-encoder"] and describe(tmp_path) == []


def test_a_corrupted_shard_is_reported_and_recomputed(tmp_path: Path) -> None:
    texts = ["alpha", "beta"]
    expected = EncodingService(CountingEncoder(), cache=EmbeddingCache(tmp_path, IDENTITY), show_progress=False).encode(
        texts, role="query"
    )
    shard = next(tmp_path.rglob("*.vectors.npy"))
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # flip bits of the last vector
    shard.write_bytes(bytes(data))
    with pytest.warns(
        RuntimeWarning, match="is corrupted \\(checksum mismatch\\): removed; its texts are encoded again"
    ):
        cache = EmbeddingCache(tmp_path, IDENTITY)
    encoder = CountingEncoder()
    service = EncodingService(encoder, cache=cache, show_progress=False)
    assert np.array_equal(service.encode(texts, role="query"), expected)
    assert len(encoder.batches) == 1 and service.stats.as_dict()["corrupted_cache_shards"] == [str(shard)]


def test_an_unfinished_shard_is_ignored(tmp_path: Path) -> None:
    EncodingService(CountingEncoder(), cache=EmbeddingCache(tmp_path, IDENTITY), show_progress=False).encode(
        ["alpha"], role="query"
    )
    next(tmp_path.rglob("*.sha256")).unlink()  # as if the run died before marking the shard complete
    assert len(EmbeddingCache(tmp_path, IDENTITY)) == 0


def test_out_of_memory_halves_the_batch_and_keeps_the_results() -> None:
    texts = [f"text {'a ' * i}" for i in range(10)]
    reference = CountingEncoder().encode(texts, role="passage")
    encoder = CountingEncoder(oom_above=2)
    service = EncodingService(encoder, batch_size=8, show_progress=False)
    assert np.array_equal(service.encode(texts, role="passage"), reference)
    assert service.stats.oom_halvings >= 2 and service.stats.batch_size == 2
    assert max(len(b) for b in encoder.batches) == 2


def test_other_errors_are_not_swallowed() -> None:
    class Broken(CountingEncoder):
        def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
            raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        EncodingService(Broken(), show_progress=False).encode(["a", "b"], role="query")


def test_a_killed_encoding_keeps_the_rounds_it_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.models.encoding

    monkeypatch.setattr(harness.models.encoding, "ROUND_TEXTS", 4)  # rounds of 4 texts = 2 batches of 2

    class Killed(CountingEncoder):
        def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
            if len(self.batches) == 3:
                raise KeyboardInterrupt
            return super().encode(texts, role=role, langs=langs)

    texts = [f"text {'a ' * i}" for i in range(10)]
    with pytest.raises(KeyboardInterrupt):
        EncodingService(Killed(), cache=EmbeddingCache(tmp_path, IDENTITY), batch_size=2, show_progress=False).encode(
            texts, role="passage"
        )
    assert len(EmbeddingCache(tmp_path, IDENTITY)) == 4  # the first round was saved, the second was not
    encoder = CountingEncoder()
    resumed = EncodingService(encoder, cache=EmbeddingCache(tmp_path, IDENTITY), batch_size=2, show_progress=False)
    assert np.array_equal(resumed.encode(texts, role="passage"), CountingEncoder().encode(texts, role="passage"))
    assert resumed.stats.cache_hits == 4 and resumed.stats.encoded == 6


def test_the_work_of_all_ranks_is_summed_and_timed_by_the_slowest() -> None:
    # Two ranks that encoded their own halves at once: 3,000 + 1,000 tokens in 2 s and 4 s, each
    # on a 100 GFLOP/s core, 300 + 100 GFLOP computed. The run: 4,000 tokens in 4 s = 1,000
    # tokens/s, 400 GFLOP / 4 s = 100 GFLOP/s of a 200 GFLOP/s peak = 0.5. What the ranks were
    # asked for (a pool both saw) is not summed.
    ranks = [
        EncodingStats(
            requested=10,
            unique=8,
            encoded=6,
            tokens=3000,
            seconds=2.0,
            batches=3,
            padded_tokens=3200,
            flops=300e9,
            peak_gflops=100.0,
        ),
        EncodingStats(
            requested=10,
            unique=8,
            encoded=2,
            tokens=1000,
            seconds=4.0,
            batches=1,
            padded_tokens=1000,
            flops=100e9,
            peak_gflops=100.0,
        ),
    ]
    whole = across_ranks(ranks)
    assert whole == {
        "batches": 4,
        "padded_tokens": 4200,
        "oom_halvings": 0,
        "encoded": 8,
        "tokens": 4000,
        "flops": 400e9,
        "peak_gflops": 200.0,
        "seconds": 4.0,
        "padding_share": round(1 - 4000 / 4200, 4),
        "tokens_per_s": 1000.0,
        "achieved_gflops": 100.0,
        "peak_share": 0.5,
    }
    # A rank that ran no batch (its shards on disk: no stats, or stats of nothing) adds no work.
    assert across_ranks([None, *ranks]) == across_ranks([*ranks, EncodingStats(requested=10, unique=8)]) == whole
    assert across_ranks([None, None]) is None
    ranks[1].flops = None  # a working rank that could not count its FLOPs: no share of the peak for the run
    assert across_ranks(ranks)["peak_share"] is None
