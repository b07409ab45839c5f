"""Corpus vectors in shards on disk, encoded and searched shard by shard, on one process or many.

A corpus of ``n`` passages is cut into shards of ``shard_size`` consecutive passages; shard ``i``
is the file ``vectors-{i:05d}.npy`` (float16 by default; float32, or int8 codes with a
per-dimension scale, on request: :class:`Shard`), encoded and written on its own, atomically. Under torch.distributed (:mod:`harness.models.distributed`) rank ``r`` of ``N``
owns shards ``r, r + N, r + 2N, ...``: it encodes them, keeps them and searches them, and the
ranks exchange only each query's top k, so no rank ever holds more than its share of the vectors.
On one process the same code owns every shard.

Resuming is shard by shard: a shard file present and whole is kept, a missing one encoded, so a
killed rank (or run) starts again where it stopped, from its own shards. A shard is encoded with
a length-batched :class:`~harness.models.encoding.EncodingService` of its own (not the run's, whose
memory would keep every vector it ever encoded and which, distributed, gathers every rank's
vectors onto every rank); its batches depend on its passages alone, so a passage gets the same
vector whichever rank encodes it, and the merged ranking of N ranks equals the one-process
ranking exactly.

Search kinds:

* ``exact``: inner products of the queries with one shard at a time
  (:func:`harness.models.search.exact_search`, itself blocked; a float16 shard is widened a block at a
  time), top-k lists merged across shards and ranks with :func:`harness.models.search.merge_top_k` —
  bounded memory, deterministic tie order (corpus position);
* ``flat``: faiss ``IndexFlatIP`` (exact, the rank's vectors in memory as float32);
* ``hnsw``: faiss ``IndexHNSWFlat`` (approximate; ``hnsw_m``, ``ef_construction``, ``ef_search``);
* ``ivf``: faiss ``IndexIVFFlat`` (approximate; ``nlist`` lists trained on the first vectors,
  ``nprobe`` searched);
* ``ivfpq``: faiss ``IndexIVFPQ`` (approximate and compressed to ``pq_m`` bytes a vector: 48
  bytes for e5-small's 384 dimensions, where float16 takes 768; ``nlist``, ``nprobe``); its
  ``refine`` x k best are scored again exactly with their vectors read from the shards (the
  compressed codes alone blur close neighbours), so memory holds the codes and the disk the
  vectors.

A faiss index is built per rank over its own shards (``faiss-{kind}.index``, with the rank in the
name when there are several) and described by a ``.json`` beside it (its build parameters).

The folder also holds ``index.json``: what was encoded (corpus fingerprint, encoder identity,
vector type) and the shard size, so a reload over another corpus or encoder is refused instead
of misused. A damaged folder is never searched. When ``index.json`` is unreadable the folder
cannot be told to be a dense index, and loading stops with one line naming the file (delete the
folder to rebuild). A shard that is cut short, of another shape or type, or a faiss index that
does not hold the shards' vectors, is reported as a warning and computed again. What is checked
is the structure (files, shapes, types, counts), not each vector's bytes: a checksum over tens of
GB would cost every reload.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from harness.plugin import Corpus, HarnessError, InputError, Ranking
from harness.plugin.io import dump_json, read_json, remove_temporaries, write_atomic
from harness.plugin.scoring import exact_search, merge_top_k
from harness.plugin.services import Progress, World

IndexKind = Literal["exact", "flat", "hnsw", "ivf", "ivfpq"]
VectorType = Literal["float16", "float32", "int8"]
#: Encodes texts (with their languages, if known) into float32 vectors, one row a text.
TextEncoder = Callable[[Sequence[Any], Sequence[str] | None], np.ndarray]
FORMAT = 2
#: Vectors an IVF index is trained on, per list (faiss asks for at least 39).
TRAIN_PER_LIST = 50
#: Codes per sub-quantizer of an IVF-PQ index (8 bits each) and the vectors it needs to train them.
PQ_CENTROIDS = 256


@dataclass(frozen=True)
class IndexSettings:
    """How the vectors are searched; recorded in the result's model identity."""

    kind: IndexKind = "exact"
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int = 1024
    nprobe: int = 16
    pq_m: int = 48
    refine: int = 4

    def describe(self) -> dict[str, Any]:
        """The parameters that matter for this kind (and so for the scores)."""
        relevant = {
            "exact": (),
            "flat": (),
            "hnsw": ("hnsw_m", "ef_construction", "ef_search"),
            "ivf": ("nlist", "nprobe"),
            "ivfpq": ("nlist", "nprobe", "pq_m", "refine"),
        }[self.kind]
        return {"kind": self.kind, **{name: value for name, value in asdict(self).items() if name in relevant}}

    def build_parameters(self) -> dict[str, Any]:
        """The parameters baked into a saved faiss index (the search-time ones are set on load)."""
        return {k: v for k, v in self.describe().items() if k not in ("ef_search", "nprobe", "refine")}


@dataclass(frozen=True)
class Layout:
    """Which passages each shard holds, and which shards this rank owns."""

    documents: int
    shard_size: int
    world: World

    @property
    def n_shards(self) -> int:
        return -(-self.documents // self.shard_size)

    def bounds(self, shard: int) -> tuple[int, int]:
        return shard * self.shard_size, min(self.documents, (shard + 1) * self.shard_size)

    def owned(self) -> list[int]:
        return list(range(self.world.rank, self.n_shards, self.world.size))

    def owned_documents(self) -> int:
        return sum(stop - start for start, stop in map(self.bounds, self.owned()))


def shard_name(number: int) -> str:
    return f"vectors-{number:05d}.npy"


def faiss_name(kind: IndexKind, world: World) -> str:
    """One faiss index per rank: over the shards the rank owns."""
    return f"faiss-{kind}.index" if world.size == 1 else f"faiss-{kind}-rank{world.rank}of{world.size}.index"


class DamagedIndex(Exception):
    """A file of a dense index folder does not hold what ``index.json`` says."""


@dataclass(frozen=True, eq=False)
class Shard:
    """One shard's vectors as stored, memory-mapped: float16 or float32 rows, or int8 codes with
    a per-dimension ``scale`` (a vector is ``codes * scale``).

    int8 takes a quarter of float32's bytes (384 a passage for e5-small, 8 GB for psgs_w100) and
    needs no training, unlike product quantisation. Each dimension's scale maps the shard's
    largest absolute value in it to 127 (symmetric, rounded to nearest), so the error is at most
    half a step in every dimension, and the scale depends on the shard's passages alone: a shard
    gets the same codes whichever rank encodes it. Scores are computed from the codes with the
    scale folded into the query, ``q . (c * s) = (q * s) . c``, never widening the shard."""

    rows: np.ndarray
    scale: np.ndarray | None = None

    @classmethod
    def quantized(cls, vectors: np.ndarray) -> Shard:
        """int8 codes of float32 ``vectors`` and their per-dimension scale."""
        largest = np.abs(vectors).max(axis=0) if len(vectors) else np.zeros(vectors.shape[1], np.float32)
        scale = np.where(largest > 0, largest / 127, 1).astype(np.float32)
        return cls(np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8), scale)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])

    def vectors(self, rows: slice | np.ndarray = slice(None)) -> np.ndarray:
        """The vectors of ``rows`` as float32 (decoded for int8)."""
        out = np.asarray(self.rows[rows], dtype=np.float32)
        return out if self.scale is None else out * self.scale

    def search(self, queries: np.ndarray, k: int) -> Ranking:
        """Exact top ``k`` of the shard for each query (positions within the shard)."""
        if self.scale is None:
            return exact_search(queries, self.rows, k)
        return exact_search(queries * self.scale, self.rows, k)


def scale_name(number: int) -> str:
    """The per-dimension scale of an int8 shard, beside its codes."""
    return f"vectors-{number:05d}.scale.npy"


def _load_array(path: Path) -> np.ndarray:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # a cut-short file cannot be mapped
        raise DamagedIndex(f"{path.name} cannot be read ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise DamagedIndex(f"{path.name} is not an array")
    return array


def load_shard(folder: Path, number: int, rows: int, dtype: VectorType) -> Shard:
    """Shard ``number`` of ``folder``, memory-mapped, checked to be a 2-D array of ``rows`` rows of
    ``dtype`` that the file holds whole (and for int8 a scale of one float32 a dimension);
    :class:`FileNotFoundError` when it is missing (not yet encoded)."""
    path = folder / shard_name(number)
    if not path.is_file():
        raise FileNotFoundError(path)
    codes = _load_array(path)
    if codes.ndim != 2 or codes.dtype != np.dtype(dtype):
        raise DamagedIndex(f"{path.name} is not a 2-D {dtype} array")
    if len(codes) != rows:
        raise DamagedIndex(f"{path.name} holds {len(codes)} vectors, its passages are {rows}")
    if dtype != "int8":
        return Shard(codes)
    scale_path = folder / scale_name(number)
    if not scale_path.is_file():
        raise DamagedIndex(f"{scale_path.name} is missing")
    scale = _load_array(scale_path)
    if scale.shape != (codes.shape[1],) or scale.dtype != np.float32:
        raise DamagedIndex(f"{scale_path.name} is not one float32 a dimension of {path.name}")
    return Shard(codes, np.asarray(scale))


def _save_shard(folder: Path, number: int, vectors: np.ndarray, dtype: VectorType) -> None:
    """Write a shard atomically; an int8 shard's scale first, so codes on disk always have theirs."""
    shard = Shard.quantized(vectors) if dtype == "int8" else Shard(vectors.astype(dtype))
    if shard.scale is not None:
        _save_npy(folder / scale_name(number), shard.scale)
    _save_npy(folder / shard_name(number), shard.rows)


def _save_npy(path: Path, array: np.ndarray) -> None:
    """Write ``array`` at ``path`` atomically, clearing what a killed or damaged write left there
    (a temporary beside it, an empty folder in its place)."""
    if path.is_dir():
        path.rmdir()
    remove_temporaries(path.parent, path.name)
    write_atomic(path, lambda handle: np.save(handle, array, allow_pickle=False))


class ShardedVectors:
    """The shards of one rank, searched exactly or through its faiss index, merged across ranks."""

    def __init__(
        self,
        layout: Layout,
        shards: list[Shard],
        settings: IndexSettings,
        query_encoder: TextEncoder,
        faiss_index: Any = None,
        owned: tempfile.TemporaryDirectory[str] | None = None,
    ) -> None:
        """``shards``: the vectors of the shards the rank owns, in order; ``faiss_index``: the
        rank's faiss index over them (None for exact search)."""
        self.layout = layout
        self.settings = settings
        self.encode_queries = query_encoder
        self._owned = owned  # a temporary folder lives as long as the index
        self.shards = [(layout.bounds(number)[0], shard) for number, shard in zip(layout.owned(), shards)]
        # The rank's passages numbered 0, 1, ... (as its faiss index numbers them): shard i
        # holds local positions firsts[i] to firsts[i + 1] - 1.
        self._firsts = np.concatenate([[0], np.cumsum([len(shard) for shard in shards], dtype=np.int64)])
        self.faiss = faiss_index
        if settings.kind == "hnsw" and faiss_index is not None:
            faiss_index.hnsw.efSearch = settings.ef_search
        elif settings.kind in ("ivf", "ivfpq") and faiss_index is not None:
            faiss_index.nprobe = settings.nprobe

    def __len__(self) -> int:
        return self.layout.documents

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        vectors = np.ascontiguousarray(self.encode_queries(queries, langs), dtype=np.float32)
        k_eff = len(self) if k is None else min(int(k), len(self))
        local = self._faiss_top(vectors, k_eff) if self.faiss is not None else self._exact_top(vectors, k_eff)
        indices, scores = self.layout.world.merge_top_k(_padded(local, len(vectors), k_eff), k_eff)
        return Ranking(indices, scores)

    def _exact_top(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        best = None
        for start, shard in self.shards:
            part = shard.search(vectors, min(k, len(shard)))
            best = merge_top_k(best, (part.indices + start, part.scores), k)
        return best

    def _faiss_top(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        assert self.faiss is not None
        owned = self.layout.owned_documents()
        refine = self.settings.refine if self.settings.kind == "ivfpq" else 1
        scores, found = self.faiss.search(vectors, min(k * max(1, refine), owned))
        if (found < 0).any():  # faiss pads with -1 when an approximate search finds too few
            raise HarnessError(
                f"model dense: the {self.settings.kind} index returned fewer than k={k} passages "
                "for some query; raise ef_search (hnsw) or nprobe (ivf, ivfpq)"
            )
        which = np.searchsorted(self._firsts, found, side="right") - 1  # the shard of each
        positions = np.array([start for start, _ in self.shards], dtype=np.int64)[which] + found - self._firsts[which]
        if refine > 1:
            scores = np.einsum(
                "qd,qcd->qc", vectors, self._vectors(found.ravel(), which.ravel()).reshape(*found.shape, -1)
            )
            order = np.lexsort((positions, -scores), axis=1)[:, : min(k, owned)]
            positions, scores = np.take_along_axis(positions, order, 1), np.take_along_axis(scores, order, 1)
        return positions, scores.astype(np.float32)

    def _vectors(self, local: np.ndarray, which: np.ndarray) -> np.ndarray:
        """The float32 vectors at positions ``local`` among the rank's passages, in shards ``which``."""
        out = np.empty((len(local), self.shards[0][1].dim), dtype=np.float32)
        for number in np.unique(which):
            chosen = np.flatnonzero(which == number)
            rows = local[chosen] - self._firsts[number]
            order = np.argsort(rows)  # read the memory-mapped shard in file order
            out[chosen[order]] = self.shards[number][1].vectors(rows[order])
        return out


def _padded(local: tuple[np.ndarray, np.ndarray] | None, n_queries: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A rank's top lists widened to ``k`` columns (a rank may own fewer passages, or none):
    position -1 and score -inf, which every real passage outranks."""
    indices = np.full((n_queries, k), -1, dtype=np.int64)
    scores = np.full((n_queries, k), -np.inf, dtype=np.float32)
    if local is not None:
        width = local[0].shape[1]
        indices[:, :width], scores[:, :width] = local
    return indices, scores


# -- faiss ----------------------------------------------------------------------------------------


def _read_faiss(folder: Path, settings: IndexSettings, world: World, documents: int, dim: int) -> Any:
    """The rank's faiss index, checked to hold ``documents`` vectors of ``dim`` dimensions; None
    when it is not built yet, or was built with other parameters than ``settings``'."""
    import faiss

    path = folder / faiss_name(settings.kind, world)
    described = path.with_suffix(".json")
    if not described.is_file():
        return None
    if not path.is_file():
        raise DamagedIndex(f"{path.name} is missing")
    try:
        index = faiss.read_index(str(path))
        built = read_json(described)
    except (RuntimeError, InputError) as exc:
        raise DamagedIndex(f"{path.name} cannot be read ({str(exc).splitlines()[0][:120]})") from None
    if built != settings.build_parameters():
        return None
    if index.ntotal != documents or index.d != dim:
        raise DamagedIndex(
            f"{path.name} holds {index.ntotal} vectors of dimension {index.d}, the shards "
            f"{documents} of dimension {dim}"
        )
    return index


def _training_vectors(shards: list[Shard], wanted: int) -> np.ndarray:
    """The first ``wanted`` vectors of the rank's shards, as float32 (IVF lists are trained on them)."""
    parts, count = [], 0
    for shard in shards:
        if count >= wanted:
            break
        parts.append(shard.vectors(slice(0, wanted - count)))
        count += len(parts[-1])
    return np.ascontiguousarray(np.concatenate(parts))


def _new_faiss(settings: IndexSettings, shards: list[Shard]) -> Any:
    import faiss

    dim, n_vectors = shards[0].dim, sum(len(s) for s in shards)
    if settings.kind == "flat":
        return faiss.IndexFlatIP(dim)
    if settings.kind == "hnsw":
        graph = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = settings.ef_construction
        return graph
    nlist = min(settings.nlist, n_vectors)
    index: faiss.IndexIVF
    if settings.kind == "ivf":
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
        needed = nlist
    else:
        if dim % settings.pq_m:
            raise HarnessError(f"model dense: pq_m={settings.pq_m} must divide the vectors' {dim} dimensions")
        index = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, settings.pq_m, 8, faiss.METRIC_INNER_PRODUCT)
        needed = max(nlist, PQ_CENTROIDS)
    if n_vectors < needed:
        raise HarnessError(
            f"model dense: {settings.kind} needs at least {needed} vectors to train on and a rank "
            f"holds {n_vectors}; lower nlist or use index=exact"
        )
    index.train(_training_vectors(shards, max(needed, TRAIN_PER_LIST * nlist)))
    return index


def _write_faiss(folder: Path, settings: IndexSettings, world: World, shards: list[Shard]) -> Any:
    """Build the faiss index of ``settings`` over the rank's shards and write it atomically (a
    kill while writing leaves a temporary, removed by the next write, never a cut-short index),
    then its description; return it."""
    import faiss

    index = _new_faiss(settings, shards)
    for shard in shards:
        for start in range(0, len(shard), 1 << 16):  # a shard widened a block at a time
            index.add(np.ascontiguousarray(shard.vectors(slice(start, start + (1 << 16)))))

    def write(handle: IO[bytes]) -> None:
        writer = faiss.PyCallbackIOWriter(handle.write)  # type: ignore[attr-defined]  # not in faiss's stubs
        faiss.write_index(index, writer)
        del writer  # its destructor writes the last buffered bytes, before write_atomic flushes the file

    path = folder / faiss_name(settings.kind, world)
    remove_temporaries(folder, path.name)
    write_atomic(path, write)
    dump_json(settings.build_parameters(), path.with_suffix(".json"))
    return index


# -- building and reloading -----------------------------------------------------------------------


def _description(folder: Path) -> dict[str, Any] | None:
    """``index.json`` of the folder, None if there is none; one clear error if it is unreadable."""
    path = folder / "index.json"
    if not path.exists():
        if folder.exists() and any(folder.iterdir()):
            raise HarnessError(f"model dense: index_dir={folder} is not empty and holds no dense index")
        return None
    saved = read_json(path)
    if not isinstance(saved, dict) or not isinstance(saved.get("shard_size"), int) or saved["shard_size"] < 1:
        raise InputError("not a dense index description (delete the folder to build the index again)", file=path)
    return saved


def build_or_load(
    corpus: Corpus,
    *,
    folder: Path | None,
    settings: IndexSettings,
    encoder_identity: dict[str, Any],
    encode_passages: TextEncoder,
    encode_queries: TextEncoder,
    shard_size: int,
    dtype: VectorType = "float16",
    world: World | None = None,
) -> ShardedVectors:
    """The rank's shards of ``corpus`` in ``folder`` (a temporary folder when None): reused when
    this corpus and encoder made them, encoded where missing or damaged; then its faiss index.

    ``shard_size`` applies to a new index; an existing one keeps the size it was built with.
    """
    world = world or World()
    owned = None
    if folder is None:
        owned = tempfile.TemporaryDirectory(prefix="harness-dense-")
        folder = Path(owned.name) / "index"
    wanted = {
        "format": FORMAT,
        "corpus": corpus.fingerprint,
        "documents": len(corpus),
        "encoder": encoder_identity,
        "dtype": dtype,
    }
    saved = _description(folder)
    if saved is not None:
        stale = [key for key, value in wanted.items() if saved.get(key) != value]
        if stale:
            raise HarnessError(
                f"model dense: index_dir={folder} holds vectors of another corpus or encoder "
                f"(differs in {', '.join(stale)}); use another folder or delete it"
            )
        shard_size = saved["shard_size"]
    world.barrier()  # every rank has looked at the folder before any rank writes there
    if saved is None and world.local_rank == 0:
        folder.mkdir(parents=True, exist_ok=True)
        dump_json({**wanted, "shard_size": shard_size}, folder / "index.json")
    world.barrier()
    layout = Layout(len(corpus), shard_size, world)
    shards = _encode_missing(corpus, folder, layout, dtype, encode_passages, complain=saved is not None)
    dims = {shard.dim for shard in shards}
    if len(dims) > 1:
        raise HarnessError(
            f"model dense: the shards in {folder} hold vectors of dimensions {sorted(dims)}; "
            "delete the folder to build the index again"
        )
    faiss_index = None
    if settings.kind != "exact" and shards:
        try:
            faiss_index = _read_faiss(folder, settings, world, layout.owned_documents(), dims.pop())
        except DamagedIndex as damage:
            warnings.warn(
                f"dense index {folder} is damaged ({damage}): building its faiss index again",
                RuntimeWarning,
                stacklevel=2,
            )
        if faiss_index is None:
            faiss_index = _write_faiss(folder, settings, world, shards)
    return ShardedVectors(layout, shards, settings, encode_queries, faiss_index, owned)


def _encode_missing(
    corpus: Corpus, folder: Path, layout: Layout, dtype: VectorType, encode: TextEncoder, *, complain: bool
) -> list[Shard]:
    """Every shard the rank owns, from disk where it is whole, else encoded and written. A damaged
    shard is reported on its own; shards missing from an existing index (when ``complain``: a run
    cut short, resumed) in one line per rank, not one per shard: a resumed 21 M-passage build would
    otherwise print hundreds."""
    shards: dict[int, Shard] = {}
    missing: list[int] = []
    damaged: dict[int, str] = {}
    for number in layout.owned():
        start, stop = layout.bounds(number)
        try:
            shards[number] = load_shard(folder, number, stop - start, dtype)
        except FileNotFoundError:  # not encoded yet: in an existing index, a run was cut short
            missing.append(number)
        except DamagedIndex as damage:
            damaged[number] = str(damage)
    if complain and missing:
        warnings.warn(
            f"dense index {folder} is damaged or was cut short ({_missing(missing, len(layout.owned()))}): "
            f"encoding {_passages(layout, missing)} again",
            RuntimeWarning,
            stacklevel=3,
        )
    for number, problem in damaged.items():
        warnings.warn(
            f"dense index {folder} is damaged or was cut short ({problem}): encoding "
            f"{_passages(layout, [number])} again",
            RuntimeWarning,
            stacklevel=3,
        )
    world = layout.world
    what = "encoding passages" + (f" (rank {world.rank} of {world.size})" if world.size > 1 else "")
    with Progress(layout.owned_documents(), what, unit="passage") as bar:
        bar.update(sum(len(shard) for shard in shards.values()))
        for number in sorted([*missing, *damaged]):
            start, stop = layout.bounds(number)
            vectors = np.asarray(encode(corpus.texts[start:stop], list(corpus.langs[start:stop])), dtype=np.float32)
            _save_shard(folder, number, vectors, dtype)
            shards[number] = load_shard(folder, number, stop - start, dtype)
            bar.update(stop - start)
    return [shards[number] for number in layout.owned()]


def _missing(numbers: list[int], owned: int) -> str:
    """``vectors-00001.npy is missing``, or for several ``12 of the 31 shards ... are missing``."""
    if len(numbers) == 1:
        return f"{shard_name(numbers[0])} is missing"
    return (
        f"{len(numbers)} of the {owned} shards of this rank are missing, "
        f"from {shard_name(numbers[0])} to {shard_name(numbers[-1])}"
    )


def _passages(layout: Layout, numbers: list[int]) -> str:
    """``passages 25-49``, or the count of passages several shards hold."""
    if len(numbers) == 1:
        start, stop = layout.bounds(numbers[0])
        return f"passages {start}-{stop - 1}"
    return f"{sum(b - a for a, b in map(layout.bounds, numbers)):,} passages"
