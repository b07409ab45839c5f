"""Issue 11: every kind of damage to the embedding cache is detected on load, its texts are
encoded again, and ``cache info`` / ``cache clear`` work on a damaged cache and see all of it."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.models.cache import EmbeddingCache, clear, describe
from harness.models.encoding import EncodingService
from tests.harness.models.test_encoding import IDENTITY, CountingEncoder

Cli = Callable[..., tuple[int, str, str]]


def _fill(root: Path, texts: list[str]) -> np.ndarray:
    return EncodingService(CountingEncoder(), cache=EmbeddingCache(root, IDENTITY), show_progress=False).encode(
        texts, role="query"
    )


def rewrite_shard(shard: Path, vectors: np.ndarray) -> None:
    """Replace the vectors of a shard (its ``.vectors.npy``) and recompute its checksum, as a tool
    or a person might."""
    buffer = io.BytesIO()
    np.save(buffer, vectors, allow_pickle=False)
    shard.write_bytes(buffer.getvalue())
    keys = shard.with_name(shard.name.replace(".vectors.npy", ".keys.npy"))
    checksum = shard.with_name(shard.name.replace(".vectors.npy", ".sha256"))
    checksum.write_text(hashlib.sha256(keys.read_bytes() + buffer.getvalue()).hexdigest())


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda v: np.full_like(v, np.nan), "vectors with NaN or infinity"),
        (lambda v: v[:, :3].copy(), "rows of 3 numbers where the model's have 4"),
        (lambda v: v.astype(np.float64), "vectors of type float64 and shape (2, 4) for 2 keys"),
        (lambda v: v[:1].copy(), "vectors of type float32 and shape (1, 4) for 2 keys"),
    ],
)
def test_unsound_vectors_with_a_recomputed_checksum_are_recomputed(
    tmp_path: Path, damage: Callable[[np.ndarray], np.ndarray], problem: str
) -> None:
    texts = ["alpha", "beta"]
    expected = _fill(tmp_path, texts)
    shard = next(tmp_path.rglob("*.vectors.npy"))
    rewrite_shard(shard, damage(np.load(shard)))
    with pytest.warns(RuntimeWarning, match=f"is corrupted \\({problem.replace('(', '.').replace(')', '.')}\\)"):
        cache = EmbeddingCache(tmp_path, IDENTITY)
    encoder = CountingEncoder()
    assert np.array_equal(
        EncodingService(encoder, cache=cache, show_progress=False).encode(texts, role="query"), expected
    )
    assert len(encoder.batches) == 1 and not shard.exists()


def test_a_shard_of_another_width_than_the_others_is_dropped(tmp_path: Path) -> None:
    _fill(tmp_path, ["a", "b", "c"])
    _fill(tmp_path, ["d"])
    shards = sorted(tmp_path.rglob("*.vectors.npy"), key=lambda p: len(np.load(p)))
    rewrite_shard(shards[0], np.ones((1, 7), dtype=np.float32))
    with pytest.warns(RuntimeWarning, match="rows of 7 numbers where the model.s have 4"):
        cache = EmbeddingCache(tmp_path, IDENTITY)
    assert len(cache) == 3


def test_a_folder_in_place_of_a_shard_file_is_dropped(tmp_path: Path) -> None:
    _fill(tmp_path, ["alpha"])
    shard = next(tmp_path.rglob("*.vectors.npy"))
    shard.unlink()
    shard.mkdir()
    (shard / "x").write_text("x")
    with pytest.warns(RuntimeWarning, match="is corrupted \\(unreadable: IsADirectoryError\\)"):
        assert len(EmbeddingCache(tmp_path, IDENTITY)) == 0
    assert not shard.exists()


def test_shard_files_without_checksum_are_removed_and_not_counted(tmp_path: Path) -> None:
    _fill(tmp_path, ["alpha", "beta"])
    checksum = next(tmp_path.rglob("*.sha256"))
    checksum.unlink()
    assert describe(tmp_path)[0]["entries"] == 0
    assert len(EmbeddingCache(tmp_path, IDENTITY)) == 0
    assert sorted(p.name for p in checksum.parent.iterdir()) == ["model.json"]


def test_info_and_clear_survive_a_damaged_cache_and_see_checkpoints(tmp_path: Path, harness_cli: Cli) -> None:
    _fill(tmp_path, ["alpha", "beta"])
    folder = next((tmp_path / "embeddings").iterdir())
    (folder / "model.json").write_text("{not json", encoding="utf-8")
    next(folder.glob("*.keys.npy")).write_bytes(b"garbage")
    checkpoint = tmp_path / "models" / "e5-converted"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.safetensors").write_bytes(b"\0" * 3 * 2**20)
    code, out, err = harness_cli("cache", "info", "--cache-dir", tmp_path)
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert ["?", folder.name, "0"] == rows[3][:3]
    assert rows[4] == ["e5-converted", "models/e5-converted", "-", "3.0"]
    assert out.splitlines()[-1] == "total: 3.0 MiB"
    code, out, err = harness_cli("cache", "clear", "--cache-dir", tmp_path)
    assert code == 0, err
    assert describe(tmp_path) == [] and not checkpoint.exists()


def test_clear_one_label_keeps_the_others(tmp_path: Path) -> None:
    _fill(tmp_path, ["alpha"])
    (tmp_path / "models" / "kept").mkdir(parents=True)
    assert clear(tmp_path, "fake-encoder") == ["fake-encoder"]
    assert [item["label"] for item in describe(tmp_path)] == ["kept"]


def test_file_digests_are_remembered_by_stat_and_redone_when_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import os

    from harness.models.cache import DIGESTS_FILE, _digest, file_digest

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "root"))
    _digest.cache_clear()
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights v1")
    assert file_digest(weights) == "sha256:" + hashlib.sha256(b"weights v1").hexdigest()
    memo_path = tmp_path / "root" / DIGESTS_FILE
    memo = json.loads(memo_path.read_text())
    # the memo is what a later process reads: a planted digest for the same stat is believed...
    memo[str(weights.resolve())]["digest"] = "sha256:planted"
    memo_path.write_text(json.dumps(memo))
    _digest.cache_clear()
    assert file_digest(weights) == "sha256:planted"
    # ...but not once the file changed (new content, new mtime)
    weights.write_bytes(b"weights v2")
    os.utime(weights, ns=(1, 2))
    assert file_digest(weights) == "sha256:" + hashlib.sha256(b"weights v2").hexdigest()
    # a damaged memo only means hashing again
    memo_path.write_text("[[[ not json")
    _digest.cache_clear()
    assert file_digest(weights) == "sha256:" + hashlib.sha256(b"weights v2").hexdigest()
