"""A damaged dense index folder is never searched: an unreadable ``index.json`` is one clear error;
any other damaged file is reported and what it holds computed again, that file alone (issue 11)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.protocols import Corpus
from harness.errors import InputError
from tests.plugins.harness_dense.test_dense import QUERIES, _dense
from tests.plugins.harness_dense.test_dense import corpus as full_corpus  # noqa: F401 (a fixture)

SHARD_SIZE = 25
HNSW = {"index": "hnsw", "hnsw_m": 8}


@pytest.fixture(scope="module")
def corpus(full_corpus: Corpus) -> Corpus:
    """60 passages: shards of 25, 25 and 10."""
    return Corpus(ids=full_corpus.ids[:60], texts=full_corpus.texts[:60], langs=full_corpus.langs[:60])


@pytest.fixture
def built(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    _dense(tiny_encoder_dir, index_dir=folder, shard_size=SHARD_SIZE, **HNSW).index(corpus)
    assert sorted(p.name for p in folder.iterdir()) == [
        "faiss-hnsw.index",
        "faiss-hnsw.json",
        "index.json",
        "vectors-00000.npy",
        "vectors-00001.npy",
        "vectors-00002.npy",
    ]
    return folder


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _as_float64(path: Path) -> None:
    vectors = np.load(path)
    path.unlink()
    np.save(path, vectors.astype(np.float64))


def _drop_a_row(path: Path) -> None:
    vectors = np.load(path)
    path.unlink()
    np.save(path, vectors[1:])


def _a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _faiss_of_fewer_vectors(path: Path) -> None:
    import faiss

    index = faiss.read_index(str(path))
    smaller = faiss.IndexHNSWFlat(index.d, 8, faiss.METRIC_INNER_PRODUCT)
    smaller.add(np.eye(3, index.d, dtype=np.float32))
    faiss.write_index(smaller, str(path))


#: (file, damage, what the warning says, whether the shard is encoded again)
DAMAGE: list[tuple[str, Callable[[Path], None], str, bool]] = [
    ("vectors-00001.npy", Path.unlink, "vectors-00001.npy is missing", True),
    ("vectors-00001.npy", _cut, "vectors-00001.npy cannot be read", True),
    ("vectors-00001.npy", _as_float64, "vectors-00001.npy is not a 2-D float16 array", True),
    ("vectors-00001.npy", _drop_a_row, "vectors-00001.npy holds 24 vectors, its passages are 25", True),
    ("vectors-00001.npy", _a_folder, "vectors-00001.npy is missing", True),
    ("faiss-hnsw.index", Path.unlink, "faiss-hnsw.index is missing", False),
    ("faiss-hnsw.index", _cut, "faiss-hnsw.index cannot be read", False),
    (
        "faiss-hnsw.index",
        _faiss_of_fewer_vectors,
        "faiss-hnsw.index holds 3 vectors of dimension 32, the shards 60 of dimension 32",
        False,
    ),
]


@pytest.mark.parametrize(
    "name, damage, problem, reencoded",
    DAMAGE,
    ids=[f"{name}-{damage.__name__.strip('_')}" for name, damage, _, _ in DAMAGE],
)
def test_damage_is_reported_and_repaired(
    tiny_encoder_dir: Path,
    corpus: Corpus,
    built: Path,
    tmp_path: Path,
    name: str,
    damage: Callable[[Path], None],
    problem: str,
    reencoded: bool,
) -> None:
    fresh = tmp_path / "fresh"
    shutil.copytree(built, fresh)
    expected = _dense(tiny_encoder_dir, index_dir=fresh, **HNSW).index(corpus).search(QUERIES, k=10)
    untouched = "vectors-00000.npy"
    stamp = (built / untouched).stat().st_mtime_ns
    damage(built / name)
    with pytest.warns(RuntimeWarning, match="dense index .* is damaged") as caught:
        index = _dense(tiny_encoder_dir, index_dir=built, shard_size=SHARD_SIZE, **HNSW).index(corpus)
    (warning,) = [w for w in caught if "dense index" in str(w.message)]
    message = str(warning.message)
    if reencoded:
        assert message.startswith(f"dense index {built} is damaged or was cut short ({problem}")
        assert message.endswith("): encoding passages 25-49 again")
    else:
        assert message.startswith(f"dense index {built} is damaged ({problem}")
        assert message.endswith("): building its faiss index again")
    found = index.search(QUERIES, k=10)
    np.testing.assert_array_equal(found.indices, expected.indices)
    np.testing.assert_allclose(found.scores, expected.scores, rtol=1e-5)
    assert (built / untouched).stat().st_mtime_ns == stamp  # only the damaged shard is encoded again
    assert sorted(p.name for p in built.iterdir()) == sorted(p.name for p in fresh.iterdir())  # no leftovers


def test_a_resumed_index_says_once_what_is_missing(tiny_encoder_dir: Path, corpus: Corpus, built: Path) -> None:
    """A run cut short leaves many shards missing: one line for them all (25 + 10 passages), and a
    damaged shard still its own line."""
    (built / "vectors-00000.npy").unlink()
    (built / "vectors-00002.npy").unlink()
    _cut(built / "vectors-00001.npy")
    with pytest.warns(RuntimeWarning) as caught:
        _dense(tiny_encoder_dir, index_dir=built, **HNSW).index(corpus)
    messages = [str(w.message) for w in caught if "vectors-" in str(w.message)]
    assert messages == [
        f"dense index {built} is damaged or was cut short (2 of the 3 shards of this rank are missing, from "
        "vectors-00000.npy to vectors-00002.npy): encoding 35 passages again",
        f"dense index {built} is damaged or was cut short (vectors-00001.npy cannot be read (mmap length is "
        "greater than file size)): encoding passages 25-49 again",
    ]
    assert sorted(p.name for p in built.iterdir() if p.suffix == ".npy") == [
        "vectors-00000.npy",
        "vectors-00001.npy",
        "vectors-00002.npy",
    ]


@pytest.mark.parametrize(
    "text, reason",
    [
        ('{"format": 2, "shard_size": [', "malformed JSON"),
        ("[1, 2]", "not a dense index description"),
        ('{"format": 2, "shard_size": "25"}', "not a dense index description"),
    ],
)
def test_an_unreadable_description_is_one_clear_error(
    tiny_encoder_dir: Path, corpus: Corpus, built: Path, text: str, reason: str
) -> None:
    (built / "index.json").write_text(text, encoding="utf-8")
    before = sorted(p.name for p in built.iterdir())
    with pytest.raises(InputError) as error:
        _dense(tiny_encoder_dir, index_dir=built, **HNSW).index(corpus)
    assert str(error.value).startswith(f"{built / 'index.json'}: {reason}") and "\n" not in str(error.value)
    assert sorted(p.name for p in built.iterdir()) == before  # not the harness's to delete
