"""Corpus vectors on disk, searched exactly shard by shard or through a faiss index.

Passages are encoded ``shard_size`` at a time and each shard is written as one ``.npy`` file, so
encoding a collection of millions never holds more than a shard of vectors; shards are read back
memory-mapped. Search kinds:

* ``exact``: inner products of the queries with one shard at a time
  (:func:`harness.search.exact_search`, itself blocked), top-k lists merged across shards with
  :func:`harness.search.merge_top_k` — bounded memory, deterministic tie order (corpus position);
* ``flat``: faiss ``IndexFlatIP`` (exact, all vectors in memory);
* ``hnsw``: faiss ``IndexHNSWFlat`` (approximate; ``hnsw_m``, ``ef_construction``, ``ef_search``);
* ``ivf``: faiss ``IndexIVFFlat`` (approximate; ``nlist`` lists trained on the first vectors,
  ``nprobe`` searched).

The folder also holds ``index.json``: what was encoded (corpus fingerprint, encoder identity) and
how it is searched, so a reload over another corpus or encoder is refused instead of misused.

A damaged folder is never searched. When ``index.json`` is unreadable the folder cannot be told
to be a dense index, and loading stops with one line naming the file (delete the folder to
rebuild). When ``index.json`` names this corpus and encoder but a file it lists is missing, cut
short, of another shape or type, or a faiss index does not hold the shards' vectors, the damage
is reported as a warning and repaired the way the embedding cache repairs a bad shard: what is
damaged is computed again (the faiss index alone from the shards when only it is damaged,
otherwise every shard). Files are written atomically, so an interrupted build or faiss update
leaves the previous state, not a half-written file. What is checked is the structure (files,
shapes, types, counts), not each vector's bytes: a checksum over tens of GB would cost every reload.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from harness.errors import HarnessError, InputError
from harness.io import atomic_folder, dump_json, read_json, remove_temporaries, write_atomic
from harness.progress import Progress
from harness.protocols import Corpus, Encoder, Ranking
from harness.search import exact_search, merge_top_k

IndexKind = Literal["exact", "flat", "hnsw", "ivf"]
#: Encodes query texts (with their languages, if known) into vectors.
QueryEncoder = Callable[[Sequence[str], Sequence[str] | None], np.ndarray]
FORMAT = 1


@dataclass(frozen=True)
class IndexSettings:
    """How the vectors are searched; recorded in the result's model identity."""

    kind: IndexKind = "exact"
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int = 1024
    nprobe: int = 16

    def describe(self) -> dict[str, Any]:
        """The parameters that matter for this kind (and so for the scores)."""
        relevant = {"exact": (), "flat": (), "hnsw": ("hnsw_m", "ef_construction", "ef_search"),
                    "ivf": ("nlist", "nprobe")}[self.kind]
        return {"kind": self.kind, **{name: value for name, value in asdict(self).items() if name in relevant}}

    def build_parameters(self) -> dict[str, Any]:
        """The parameters baked into a saved faiss index (the search-time ones are set on load)."""
        return {k: v for k, v in self.describe().items() if k not in ("ef_search", "nprobe")}


def _shard_name(number: int) -> str:
    return f"vectors-{number:05d}.npy"


#: What :func:`_shard_name` writes: the only names ``index.json`` may list (no path outside the folder).
_SHARD_NAME = re.compile(r"vectors-[0-9]{5,}\.npy")


def _faiss_name(kind: IndexKind) -> str:
    return f"faiss-{kind}.index"


class DamagedIndex(Exception):
    """A file of a dense index folder is missing or does not hold what ``index.json`` says.
    ``faiss_only``: the vectors are sound and only the faiss index must be built again."""

    def __init__(self, problem: str, *, faiss_only: bool = False) -> None:
        super().__init__(problem)
        self.faiss_only = faiss_only


def _load_shard(path: Path) -> np.ndarray:
    """One shard, memory-mapped, checked to be a 2-D float32 array that the file holds whole."""
    if not path.is_file():
        raise DamagedIndex(f"{path.name} is missing")
    try:
        shard = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # a cut-short file cannot be mapped
        raise DamagedIndex(f"{path.name} cannot be read ({exc})") from None
    if not isinstance(shard, np.ndarray) or shard.ndim != 2 or shard.dtype != np.float32:
        raise DamagedIndex(f"{path.name} is not a 2-D float32 array")
    return shard


def _load_shards(folder: Path, info: dict[str, Any]) -> list[np.ndarray]:
    """The shards ``index.json`` lists, each checked by :func:`_load_shard`."""
    names = info.get("shards")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and _SHARD_NAME.fullmatch(n)
                                                           for n in names):
        raise DamagedIndex("index.json lists no shard files")
    return [_load_shard(folder / name) for name in names]


def _read_faiss(path: Path, documents: int, dim: int) -> Any:
    """The faiss index at ``path``, checked to hold ``documents`` vectors of ``dim`` dimensions."""
    import faiss

    if not path.is_file():
        raise DamagedIndex(f"{path.name} is missing", faiss_only=True)
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as exc:
        raise DamagedIndex(f"{path.name} cannot be read ({str(exc).splitlines()[0][:120]})", faiss_only=True) from None
    if index.ntotal != documents or index.d != dim:
        raise DamagedIndex(f"{path.name} holds {index.ntotal} vectors of dimension {index.d}, the shards "
                           f"{documents} of dimension {dim}", faiss_only=True)
    return index


def encode_shards(encoder: Encoder, corpus: Corpus, folder: Path, shard_size: int) -> list[Path]:
    """Encode ``corpus`` ``shard_size`` passages at a time, one ``.npy`` file per shard."""
    paths = []
    with Progress(len(corpus), "encoding passages") as bar:
        for number, start in enumerate(range(0, len(corpus), shard_size)):
            stop = min(len(corpus), start + shard_size)
            vectors = np.asarray(encoder.encode(corpus.texts[start:stop], role="passage", langs=corpus.langs[start:stop]),
                                 dtype=np.float32)
            path = folder / _shard_name(number)
            np.save(path, vectors, allow_pickle=False)
            paths.append(path)
            bar.update(stop - start)
    return paths


def _faiss_index(settings: IndexSettings, dim: int, n_vectors: int, first_shard: np.ndarray) -> Any:
    import faiss

    if settings.kind == "flat":
        return faiss.IndexFlatIP(dim)
    if settings.kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.ef_construction
        return index
    nlist = min(settings.nlist, n_vectors)
    if len(first_shard) < nlist:
        raise HarnessError(f"model dense: ivf needs at least nlist={nlist} vectors in the first shard to train on; "
                           "raise shard_size or lower nlist")
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
    index.train(np.ascontiguousarray(first_shard))
    return index


class ShardedVectors:
    """A searchable on-disk set of corpus vectors (see the module docstring)."""

    def __init__(self, folder: Path, settings: IndexSettings, query_encoder: QueryEncoder,
                 owned: tempfile.TemporaryDirectory[str] | None = None) -> None:
        self.folder = folder
        self.settings = settings
        self.encode_queries = query_encoder
        self._owned = owned  # a temporary folder lives as long as the index
        info = read_json(folder / "index.json")
        self.shards = _load_shards(folder, info)
        dims = {shard.shape[1] for shard in self.shards}
        self.offsets = np.cumsum([0] + [len(s) for s in self.shards])
        if len(dims) != 1 or int(self.offsets[-1]) != info["documents"]:
            raise DamagedIndex(f"the shards hold {int(self.offsets[-1])} vectors of dimensions "
                               f"{sorted(dims)}, for {info['documents']} documents")
        self.faiss = None
        if settings.kind != "exact":
            self.faiss = _read_faiss(folder / _faiss_name(settings.kind), len(self), dims.pop())
            if settings.kind == "hnsw":
                self.faiss.hnsw.efSearch = settings.ef_search
            elif settings.kind == "ivf":
                self.faiss.nprobe = settings.nprobe

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        vectors = np.ascontiguousarray(self.encode_queries(queries, langs), dtype=np.float32)
        k_eff = len(self) if k is None else min(int(k), len(self))
        if self.faiss is not None:
            scores, indices = self.faiss.search(vectors, k_eff)
            if (indices < 0).any():  # faiss pads with -1 when an approximate search finds too few
                raise HarnessError(f"model dense: the {self.settings.kind} index returned fewer than k={k_eff} passages "
                                   "for some query; raise ef_search (hnsw) or nprobe (ivf)")
            return Ranking(indices.astype(np.int64), scores.astype(np.float32))
        best: tuple[np.ndarray, np.ndarray] | None = None
        for shard, offset in zip(self.shards, self.offsets[:-1]):
            part = exact_search(vectors, shard, k_eff)
            best = merge_top_k(best, (part.indices + offset, part.scores), k_eff)
        assert best is not None
        return Ranking(best[0][:, :k_eff], best[1][:, :k_eff])


def build_or_load(encoder: Encoder, corpus: Corpus, *, folder: Path | None, settings: IndexSettings,
                  encoder_identity: dict[str, Any], shard_size: int) -> ShardedVectors:
    """Reuse the index in ``folder`` if it was built from this corpus, encoder and settings;
    otherwise encode and build it there (or in a temporary folder when ``folder`` is None)."""
    owned = None
    if folder is None:
        owned = tempfile.TemporaryDirectory(prefix="harness-dense-")
        folder = Path(owned.name) / "index"
    wanted = {"format": FORMAT, "corpus": corpus.fingerprint, "documents": len(corpus), "encoder": encoder_identity}
    info_path = folder / "index.json"
    query_encoder = lambda texts, langs: encoder.encode(texts, role="query", langs=langs)  # noqa: E731
    if not info_path.exists():
        if folder.exists() and any(folder.iterdir()):
            raise HarnessError(f"model dense: index_dir={folder} is not empty and holds no dense index")
        _build(encoder, corpus, folder, settings, wanted, shard_size)
        return ShardedVectors(folder, settings, query_encoder, owned)
    saved = read_json(info_path)
    if not isinstance(saved, dict):
        raise InputError("not a dense index description (delete the folder to build the index again)",
                         file=info_path)
    stale = [key for key, value in wanted.items() if saved.get(key) != value]
    if stale:
        raise HarnessError(f"model dense: index_dir={folder} holds vectors of another corpus or encoder "
                           f"(differs in {', '.join(stale)}); use another folder or delete it")
    built = saved.get("faiss")
    if settings.kind != "exact" and (not isinstance(built, dict) or built.get(settings.kind) != settings.build_parameters()):
        _add_faiss(folder, saved, settings)
    try:
        return ShardedVectors(folder, settings, query_encoder, owned)
    except DamagedIndex as damage:
        action = "building its faiss index again" if damage.faiss_only else "encoding the corpus again"
        warnings.warn(f"dense index {folder} is damaged ({damage}): {action}", RuntimeWarning, stacklevel=2)
        if damage.faiss_only:
            _add_faiss(folder, saved, settings)
        else:
            _build(encoder, corpus, folder, settings, wanted, shard_size)
    return ShardedVectors(folder, settings, query_encoder, owned)


def _build(encoder: Encoder, corpus: Corpus, folder: Path, settings: IndexSettings, wanted: dict[str, Any],
           shard_size: int) -> None:
    """Encode into a staging folder and move it into place whole (replacing a damaged index there),
    so a crash leaves nothing half-built."""
    with atomic_folder(folder) as staging:  # an existing folder is empty or a damaged index, checked by the caller
        shards = encode_shards(encoder, corpus, staging, shard_size)
        info = {**wanted, "shards": [p.name for p in shards], "faiss": {}}
        if settings.kind != "exact":
            _write_faiss(staging, info, settings)
        dump_json(info, staging / "index.json")


def _write_faiss(folder: Path, info: dict[str, Any], settings: IndexSettings) -> None:
    """Build the faiss index of ``settings`` over the shards and write it atomically (a kill while
    writing leaves a temporary, removed by the next write, never a cut-short index)."""
    import faiss

    shards = _load_shards(folder, info)
    dim = shards[0].shape[1]
    index = _faiss_index(settings, dim, sum(len(s) for s in shards), np.asarray(shards[0]))
    for shard in shards:
        index.add(np.ascontiguousarray(shard))
    def write(handle: IO[bytes]) -> None:
        writer = faiss.PyCallbackIOWriter(handle.write)
        faiss.write_index(index, writer)
        del writer  # its destructor writes the last buffered bytes, before write_atomic flushes the file

    name = _faiss_name(settings.kind)
    remove_temporaries(folder, name)
    write_atomic(folder / name, write)
    info["faiss"] = {**(info["faiss"] if isinstance(info.get("faiss"), dict) else {}),
                     settings.kind: settings.build_parameters()}


def _add_faiss(folder: Path, info: dict[str, Any], settings: IndexSettings) -> None:
    """Build a faiss index of another kind (or parameters), or a damaged one again, over vectors
    already on disk (damaged vectors are found when the index is loaded, and re-encoded then)."""
    try:
        _write_faiss(folder, info, settings)
    except DamagedIndex:
        return  # the shards are damaged: loading the index says so and rebuilds everything
    dump_json(info, folder / "index.json")
