"""The embedding cache: vectors on disk, shared across tasks and runs, never trusted blindly.

Layout: ``<root>/embeddings/<model-key>/`` holds ``model.json`` (the model identity the key was
made from) and shards written by runs: ``<shard>.keys.npy`` (32-byte SHA-256 keys of role + text),
``<shard>.vectors.npy`` (float32 rows) and ``<shard>.sha256`` (checksum of both, written last, so
a shard without it was never finished). Only plain ``.npy`` arrays are read, with
``allow_pickle=False``. A shard whose checksum does not match is reported, deleted and its texts
are encoded again.

The model key hashes the model's name, weights hash and options, so prefixes, maximum lengths,
pooling and precision all separate cache entries.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.io import dump_json, sha256_text, write_atomic

KEY_BYTES = 32


def default_root() -> Path:
    """``$HARNESS_CACHE_DIR``, else ``~/.cache/xlqa-harness``."""
    configured = os.environ.get("HARNESS_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "xlqa-harness"


def model_key(identity: dict[str, Any]) -> str:
    """The cache namespace of a model: everything in its identity that changes its vectors."""
    return sha256_text(json.dumps([identity["name"], identity["weights"], identity["options"]], sort_keys=True))[:16]


def text_key(role: str, text: str | tuple[str, str]) -> bytes:
    """32-byte key of one text in one role (a (sentence, context) pair keys both parts)."""
    payload = text if isinstance(text, str) else json.dumps(list(text), ensure_ascii=False)
    return hashlib.sha256(f"{role}\x00{payload}".encode("utf-8")).digest()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


@dataclass(frozen=True)
class Shard:
    keys: Path
    vectors: Path
    checksum: Path


class EmbeddingCache:
    """Vectors of one model, keyed by role and text."""

    def __init__(self, root: Path, identity: dict[str, Any]) -> None:
        self.folder = root / "embeddings" / model_key(identity)
        self.identity = identity
        self._index: dict[bytes, tuple[int, int]] = {}
        self._shards: list[np.ndarray] = []
        self.corrupted: list[str] = []
        self._load()

    def _load(self) -> None:
        if not self.folder.exists():
            return
        for checksum in sorted(self.folder.glob("*.sha256")):
            shard = _shard(checksum)
            try:
                keys_bytes, vector_bytes = shard.keys.read_bytes(), shard.vectors.read_bytes()
                intact = hashlib.sha256(keys_bytes + vector_bytes).hexdigest() == checksum.read_text().strip()
                keys = np.load(io.BytesIO(keys_bytes), allow_pickle=False) if intact else None
                vectors = np.load(shard.vectors, mmap_mode="r", allow_pickle=False) if intact else None
            except (OSError, ValueError):
                intact = False
            if not intact or keys is None or vectors is None or len(keys) != len(vectors):
                self._drop(shard)
                continue
            number = len(self._shards)
            self._shards.append(vectors)
            for row, key in enumerate(keys.tobytes()[i : i + KEY_BYTES] for i in range(0, keys.nbytes, KEY_BYTES)):
                self._index[key] = (number, row)

    def _drop(self, shard: Shard) -> None:
        self.corrupted.append(str(shard.vectors))
        warnings.warn(f"embedding cache shard {shard.vectors} is corrupted (checksum mismatch): "
                      "removed; its texts are encoded again", RuntimeWarning, stacklevel=3)
        for path in (shard.keys, shard.vectors, shard.checksum):
            path.unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: bytes) -> bool:
        return key in self._index

    def get(self, key: bytes) -> np.ndarray:
        shard, row = self._index[key]
        return np.asarray(self._shards[shard][row], dtype=np.float32)

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Write one new shard (atomically; the checksum file last marks it complete)."""
        if not len(keys):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.folder / "model.json").exists():
            dump_json(self.identity, self.folder / "model.json")
        keys_bytes = _npy_bytes(np.frombuffer(b"".join(keys), dtype=f"V{KEY_BYTES}"))
        vector_bytes = _npy_bytes(np.ascontiguousarray(vectors, dtype=np.float32))
        shard = _shard(self.folder / f"{uuid.uuid4().hex}.sha256")
        write_atomic(shard.keys, lambda handle: handle.write(keys_bytes))
        write_atomic(shard.vectors, lambda handle: handle.write(vector_bytes))
        digest = hashlib.sha256(keys_bytes + vector_bytes).hexdigest()
        write_atomic(shard.checksum, lambda handle: handle.write(digest.encode()))
        number = len(self._shards)
        self._shards.append(np.load(shard.vectors, mmap_mode="r", allow_pickle=False))
        for row, key in enumerate(keys):
            self._index[key] = (number, row)


def _shard(checksum: Path) -> Shard:
    stem = checksum.name.removesuffix(".sha256")
    return Shard(checksum.with_name(f"{stem}.keys.npy"), checksum.with_name(f"{stem}.vectors.npy"), checksum)


def describe(root: Path) -> list[dict[str, Any]]:
    """One line per cached model: label, entries, bytes (for ``harness cache info``)."""
    out = []
    for folder in sorted((root / "embeddings").glob("*")) if (root / "embeddings").exists() else []:
        meta = folder / "model.json"
        label = json.loads(meta.read_text(encoding="utf-8")).get("label", "?") if meta.exists() else "?"
        entries = 0
        for keys in folder.glob("*.keys.npy"):
            entries += int(np.load(keys, mmap_mode="r", allow_pickle=False).shape[0])
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        out.append({"key": folder.name, "label": label, "entries": entries, "bytes": size, "path": str(folder)})
    return out


def clear(root: Path, label: str | None = None) -> list[str]:
    """Delete the cache of every model (or of the models with this label); return what was removed."""
    removed = []
    for item in describe(root):
        if label is None or item["label"] == label:
            shutil.rmtree(item["path"])
            removed.append(item["label"])
    return removed
