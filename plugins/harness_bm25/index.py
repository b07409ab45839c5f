"""BM25 with postings per term, built in bounded memory and searched from disk: a query reads
only the posting lists of its terms, a few million postings at a time, and the index of a
21-million-passage corpus is built and searched without ever being held in memory.

Scores equal rank-bm25's ``BM25Okapi`` (the reference Python implementation): for each query token
(repeated tokens count again) ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` with
``idf = ln((N - n + 0.5) / (n + 0.5))``, and negative idfs replaced by ``epsilon * mean(idf)``; or,
asked by name (``idf="lucene"``, never the default), Lucene's ``idf = ln(1 + (N - n + 0.5) / (n +
0.5))`` (see :data:`IDF_KINDS`). The postings of a term are one contiguous slice of document ids
and term counts (a (vocabulary x documents) CSR layout), beside one idf per term and one length
norm ``k1 * (1 - b + b * dl / avgdl)`` per document, so a query gathers the slices of its tokens,
weights them (in rank-bm25's operation order, so equal documents get bit-identical scores) and sums
them per document in the query's token order, as rank-bm25 does; top-k search never holds a
(queries x documents) block. A posting takes 5 bytes (a count under 256 in one byte), where
precomputed float64 weights would take 12, plus a 2-byte impact (its weight in whole steps, rounded
up) that lets top-k search sum a long query's postings as integers and score exactly only the
passages those sums cannot tell apart from the k best.

Construction is an external sort in two passes. The documents stream through once: tokens are
mapped to ids at C speed (``map`` over a dict whose ``__missing__`` numbers new terms) and, every
:data:`RUN_TOKENS` tokens, the run's postings are counted per (term, document) and sorted by term
with scipy's compiled sparse transpose, then written to a scratch file. Runs cover consecutive
documents, so a term's postings in run order are already in document order: the merge is a
scatter, not a sort. It then writes the index term block by term block (about
:data:`MERGE_POSTINGS` postings at a time), reading each run's slice of the block and appending
it to the output files. Memory is the vocabulary, 4 bytes a document (its length), one run and
one block, whatever the corpus size. An index is plain ``.npy`` arrays plus a JSON vocabulary (no
pickle), written in a staging folder moved into place whole; on reload the per-term and
per-document arrays are read (8 bytes a term or a document) and the postings stay on disk.

Top-k search skips postings (see :mod:`harness_bm25.kernel`): the build writes, per block of
:data:`BLOCK` postings of a term, its largest weight and last document, and per term its largest
weight, so a compiled MaxScore search returns the exact top k of the full ranking (ties by
position) while reading a fraction of the long lists. For that search the postings and block
bounds are memory-mapped, and the pages it has touched are handed back to the page cache
(``madvise(MADV_DONTNEED)``) whenever they pass :data:`MAPPED_BUDGET`, so the search's resident
memory stays about that budget above the per-document arrays and the vocabulary. An index of
format 3 (before the bounds) gains them in place on first load, in one pass over its postings.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import sys
import tempfile
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numba
import numpy as np
from scipy import sparse

from harness.plugin import HarnessError
from harness.plugin.io import atomic_folder, parse_json
from harness.plugin.scoring import top_k
from harness_bm25 import kernel

#: Bumped when the saved layout changes; an index of another format is rebuilt, never misread
#: (format 3, the same without the block bounds, is upgraded in place on load).
FORMAT = 7
#: Formats upgraded in place on load (the same postings, without the block bounds, the impacts or
#: the dense rows, or with impacts of 65,534 steps).
_UPGRADABLE = (3, 4, 5, 6)
#: Read whole on load (8 bytes a term or a document); the postings are read as queries need them.
_IN_MEMORY = ("indptr", "idf", "norms", "term_max", "dense_terms")

#: Postings per block of a term's list whose largest weight is kept (12 bytes a block: 0.1 byte a
#: posting). Smaller blocks bound scores more tightly and take more room; PISA and Lucene use 64
#: to 128.
BLOCK = 128
#: Queries searched per call of the compiled kernel. The memory no longer grows with it (the
#: mapped pages are dropped by :data:`MAPPED_BUDGET`, the sums are a chunk a thread): a batch
#: only spreads the per-call work and the chunks' reads over more queries. Measured on synthetic
#: corpora (2 quiet AMD EPYC cores, one process each, two rounds): 1 M passages, 16 / 64 / 128 /
#: 256 / 512 queries a batch 671-815 / 876-1,015 / 1,122-1,273 / 1,238-1,262 / 1,148-1,242
#: queries/s at 417 / 498 / 555 / 602 / 606 MiB; 21 M 43-54 / 65-67 / 67-68 / 69 / 71 at
#: 821-872 MiB.
QUERY_BATCH = 256
#: Documents of a query's shortest posting list scored before the search, whose k-th best score
#: starts the pruning threshold (see :func:`harness_bm25.kernel._seed`).
SEED = 2048
#: A query whose tokens' posting lists hold this many times the passages or more adds every
#: posting's impact (a dense pass, :func:`harness_bm25.kernel.impact_sums`) instead of the
#: pruned walk. On 600 synthetic queries of 5 words over 1 M passages (one thread, each query
#: timed both ways, the faster of two rounds, dense rows on) impacts for every query took 1.04 s,
#: the walk for every query 2.86 s, and no threshold did better than impacts for all (0.1: 1.05 s,
#: 1.0: 1.21, 2.0, the rule before impacts: 1.82); 0.1 leaves the walk the queries of rare words,
#: whose dense pass would still read every passage's sum.
DENSE_SHARE = 0.1
#: The dense pass takes the largest impact sum of each span of this many passages, and scores
#: exactly only in spans whose largest could reach the top k: the spans of a million passages fit
#: the cache, and most are never read again.
SUM_SPAN = 256
#: The dense pass adds impacts this many passages at a time for every query of a batch (at 21 M
#: passages, 2 MiB of each dense row), so that the pages it has read can be dropped between
#: chunks, and the batch's queries read each chunk while it is in the cache.
SUM_CHUNK = 1 << 20
#: The exact pass then scores this many queries a thread at a time, so that the pages it has read
#: can be dropped between groups: its lookups are scattered over every term's postings and
#: blocks, and each page read maps its neighbours too (the kernel's fault-around, 64 KiB), so a
#: batch of 64 queries at 21 M passages held 600 MiB of them at its end.
EXACT_GROUP = 4
#: A search drops the index pages it has mapped (they stay in the page cache) once the process
#: has grown by this much since the search began (see :class:`_MappedPages`).
MAPPED_BUDGET = 256 << 20
#: Impacts are whole steps of ``largest idf * (k1 + 1) / IMPACT_STEPS`` (the most a weight can
#: be), so the largest, 4,095, leaves a query of up to 16 tokens sums of 2 bytes (half the
#: traffic of 4-byte sums, which longer queries take), at a resolution of a 4,094th of the largest
#: weight.
IMPACT_STEPS = 4094
#: A term in more than this share of the passages also gets a dense row of impacts (2 bytes a
#: passage, zero where it is absent), which the dense pass adds in whole vectors instead of one
#: posting at a time: fewer bytes read than its postings (6 a posting) and no scattered writes.
#: At 1 M synthetic passages 19 terms have one (38 MiB) and hold 91% of the benchmark queries'
#: postings.
DENSE_ROW_SHARE = 1 / 3

#: A query whose postings number less than ``n_docs / SPARSE_SHARE`` is summed over the union of
#: its postings (a sort of that union); a longer one into a dense vector of all documents, which
#: then costs less than sorting.
SPARSE_SHARE = 8

#: Postings read and weighted at a time while a query is scored over every document.
READ_POSTINGS = 1 << 22

#: Token ids converted to int32 at a time while building (a list of them costs 8 bytes an id).
_CHUNK = 1 << 20
#: Tokens per sorted run: the run's postings take about 16 bytes a token while they are sorted.
RUN_TOKENS = 1 << 25
#: Postings written per merge step (about 25 bytes each meanwhile); a term with more postings than
#: this is one step of its own.
MERGE_POSTINGS = 1 << 23


class _Numbering(dict[str, int]):
    """A vocabulary that numbers a token the first time it is looked up, so mapping a document's
    tokens to ids is one ``map(numbering.__getitem__, tokens)`` run by the interpreter in C."""

    def __missing__(self, token: str) -> int:
        self[token] = number = len(self)
        return number


#: The idf a BM25 index weights terms by. ``rank-bm25`` (the default): rank-bm25's BM25Okapi,
#: ``ln((N - n + 0.5) / (n + 0.5))`` with negative values (terms in over half the documents) raised
#: to ``epsilon`` times the mean idf, what the harness's official numbers use. ``lucene``: Lucene's
#: BM25Similarity (Elasticsearch, Pyserini/Anserini: XOR-TyDi's BM25 baseline ran on
#: Elasticsearch), ``ln(1 + (N - n + 0.5) / (n + 0.5))``, never negative, so a term in nearly
#: every document weighs almost nothing (the MaxScore walk, which the queries of rarer words take,
#: skips its postings; the impact sums still add them, at an impact of a step or two). ``epsilon``
#: does not apply to it. The rest of the weight stays rank-bm25's expression: Lucene's scores lack
#: its constant factor ``k1 + 1`` (the same ranking) and Lucene stores document lengths rounded
#: into one byte, the harness exactly, so a few near-ties can order differently.
IDF_KINDS = ("rank-bm25", "lucene")
IdfKind = Literal["rank-bm25", "lucene"]


def idf_kind(name: str) -> IdfKind:
    """``name`` as one of :data:`IDF_KINDS`, or one error naming them."""
    if name == "lucene":
        return "lucene"
    if name == "rank-bm25":
        return "rank-bm25"
    raise HarnessError(f"bm25: idf must be one of {', '.join(IDF_KINDS)} (got idf={name})")


def bm25_parameters(k1: float, b: float, epsilon: float, idf: IdfKind) -> dict[str, Any]:
    """The settings an index's weights depend on, as its ``index.json`` records them and a model
    compares them: the idf named only where it is not rank-bm25's, so the indexes and results
    written before it could be chosen keep their settings (and the models their cache keys);
    ``epsilon`` only with rank-bm25's idf, the one it floors."""
    if idf == "lucene":
        return {"k1": k1, "b": b, "idf": idf}
    return {"k1": k1, "b": b, "epsilon": epsilon}


def _idf(doc_freq: np.ndarray, n_docs: int, epsilon: float, kind: IdfKind = "rank-bm25") -> np.ndarray:
    """Each term's idf (terms numbered in order of first appearance), by :data:`IDF_KINDS`;
    rank-bm25's bit for bit as rank-bm25 computes it, so documents that tie there tie here:
    ``math.log`` (numpy's log differs from it in the last bit for some numbers), once per distinct
    document frequency; the mean for the floor summed left to right in term order, as rank-bm25
    sums it, not pairwise as ``mean`` does."""
    freqs, of_term = np.unique(doc_freq, return_inverse=True)
    if kind == "lucene":  # Lucene's expression, in its order of operations
        return np.array([math.log(1 + (n_docs - f + 0.5) / (f + 0.5)) for f in freqs.tolist()])[of_term]
    idf = np.array([math.log(n_docs - f + 0.5) - math.log(f + 0.5) for f in freqs.tolist()])[of_term]
    if len(idf):
        idf[idf < 0] = epsilon * (np.cumsum(idf)[-1] / len(idf))
    return idf


class StoredArray:
    """A 1-D array in a ``.npy`` file, read a slice at a time into a buffer of its own, or mapped
    whole for the compiled search, which hands the pages it touched back (:meth:`release`): a
    search's memory is what it reads now, never the pages of every list read so far (those stay
    in the OS's page cache, shared and evictable)."""

    def __init__(self, path: Path) -> None:
        header = np.load(path, mmap_mode="r", allow_pickle=False)  # the dtype, length and data offset
        if header.ndim != 1 or path.stat().st_size != header.offset + header.nbytes:
            raise ValueError(f"{path.name} is not a whole 1-D array")
        self.path, self.dtype, self.length, self._offset = path, header.dtype, len(header), header.offset
        self._handle = open(path, "rb")  # noqa: SIM115 (open as long as the index)

    def __len__(self) -> int:
        return self.length

    def read(self, start: int, stop: int) -> np.ndarray:
        self._handle.seek(self._offset + start * self.dtype.itemsize)
        values = np.fromfile(self._handle, dtype=self.dtype, count=stop - start)
        if len(values) != stop - start:
            raise HarnessError(f"{self.path} was cut short while the index was open")
        return values

    def mapped(self) -> np.ndarray:
        """The whole array, memory-mapped read-only (mapped once; see :meth:`release`)."""
        if not hasattr(self, "_map"):
            self._map = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ) if self.length else None
            self._array = (
                np.frombuffer(self._map, dtype=self.dtype, count=self.length, offset=self._offset)
                if self._map is not None
                else np.empty(0, dtype=self.dtype)
            )
        return self._array

    def release(self) -> None:
        """Drop the mapped pages from the process (they stay in the page cache, shared)."""
        mapping: mmap.mmap | None = getattr(self, "_map", None)  # None: never mapped, or empty
        if mapping is not None:
            mapping.madvise(mmap.MADV_DONTNEED)


def _resident_bytes() -> int | None:
    """The process's resident memory now (Linux's ``/proc/self/statm``), or None where unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return None


class _MappedPages:
    """Stored arrays mapped for one search, whose pages are dropped (:meth:`StoredArray.release`)
    at :meth:`trim` once the process has grown by more than :data:`MAPPED_BUDGET` since the search
    began (at every :meth:`trim` where the memory cannot be read). Why not at every step: dropping
    costs a system call over each mapping and the faults that map the pages again (at 21 M
    passages, dropping after every chunk of a batch took 73.2 queries/s to 61.0 at chunks of 1 Mi
    passages, 69.9 to 49.2 at 256 Ki)."""

    def __init__(self, *stored: StoredArray) -> None:
        self.stored = stored
        self.arrays = [each.mapped() for each in stored]
        self.start = _resident_bytes()

    def trim(self) -> None:
        now = _resident_bytes()
        if now is None or self.start is None or now - self.start > MAPPED_BUDGET:
            self.release()

    def release(self) -> None:
        for each in self.stored:
            each.release()


@dataclass(frozen=True)
class Postings:
    """The documents of term ``t`` are positions ``indptr[t]`` to ``indptr[t + 1]`` of
    ``indices``, in order, with the term's count in each at the same positions of ``counts``
    (both read from disk as needed); ``idf`` holds each term's idf and ``norms`` each document's
    ``k1 * (1 - b + b * dl / avgdl)`` (in memory: 8 bytes a document). Plain arrays rather than
    a scipy matrix, whose constructor would copy int32 indices to int64 when ``indptr`` needs 64
    bits (an index of over 2**31 postings)."""

    counts: StoredArray  # uint8 (uint16, uint32 when a count needs it)
    indices: StoredArray  # int32 document ids
    impacts: StoredArray  # uint16: each posting's weight in whole steps, rounded up (see _write_bounds)
    impact_steps: int  # the largest impact is this plus one (see largest_sum)
    #: The terms in over DENSE_ROW_SHARE of the documents, and their impacts, one row of n_docs each
    #: (uint16, flat), in the order of ``dense_terms``.
    dense_terms: np.ndarray
    dense_rows: StoredArray
    indptr: np.ndarray  # int64, vocabulary + 1
    idf: np.ndarray  # float64, vocabulary
    norms: np.ndarray  # float64, documents
    k1: float
    bounds: BlockBounds

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, len(self.norms)

    def size(self, term: int) -> int:
        return int(self.indptr[term + 1] - self.indptr[term])

    def largest_sum(self, tokens: Sequence[int]) -> int:
        """The largest impact sum a query of these tokens can reach (what its sums must hold)."""
        return len(tokens) * (self.impact_steps + 1)

    def weights(self, term: int, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Document ids and BM25 weights of the term's postings ``start`` to ``stop`` (all by
        default): ``idf * (tf * (k1 + 1) / (tf + norm))`` in that order, as rank-bm25 computes it."""
        first = int(self.indptr[term])
        stop = self.size(term) if stop is None else stop
        docs = self.indices.read(first + start, first + stop)
        tf = self.counts.read(first + start, first + stop).astype(np.float64)
        weights = tf * (self.k1 + 1.0)
        tf += self.norms[docs]
        weights /= tf
        weights *= self.idf[term]
        return docs, weights


@dataclass(frozen=True)
class BlockBounds:
    """What pruning knows without reading postings: term ``t``'s postings form blocks
    ``bptr[t]`` to ``bptr[t + 1]`` of ``block`` postings (the last one shorter), each with its
    largest weight (``block_max``) and last document (``block_last``), both read from disk as
    needed; ``term_max`` is each term's largest weight (in memory)."""

    block: int
    bptr: np.ndarray  # int64, vocabulary + 1 (computed from indptr on load)
    block_max: StoredArray  # float64, blocks
    block_last: StoredArray  # int32, blocks
    term_max: np.ndarray  # float64, vocabulary

    @staticmethod
    def pointers(indptr: np.ndarray, block: int) -> np.ndarray:
        """Where each term's blocks start (and the number of blocks, last)."""
        return np.concatenate([[0], np.cumsum((np.diff(indptr) + block - 1) // block)]).astype(np.int64)


# -- building -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """One sorted run on disk: postings of documents ``first_doc`` onwards, term by term."""

    folder: Path
    n_terms: int
    largest_count: int

    def read(self, name: str, dtype: type, start: int, stop: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize
        return np.fromfile(self.folder / f"{name}.bin", dtype=dtype, count=stop - start, offset=start * size)


def _write_run(folder: Path, token_ids: np.ndarray, lengths: np.ndarray, first_doc: int, n_terms: int) -> _Run:
    """Count the run's (term, document) pairs and write them sorted by term, then document."""
    folder.mkdir()
    starts = np.concatenate([[0], np.cumsum(lengths)])
    # (documents x vocabulary) with a 1 per token. Its transpose by a stable counting sort lists
    # each term's documents in order, a document's repeats of the term side by side, so summing
    # those repeats (the term's count in the document) needs no sort.
    by_document = sparse.csr_matrix(
        (np.ones(len(token_ids), dtype=np.float32), token_ids, starts), shape=(len(lengths), n_terms)
    )
    postings = by_document.tocsc()
    del by_document
    postings.sum_duplicates()
    postings.indptr.astype(np.int64).tofile(folder / "indptr.bin")
    (postings.indices.astype(np.int32) + np.int32(first_doc)).tofile(folder / "docs.bin")
    counts = postings.data.astype(np.int32)
    counts.tofile(folder / "tfs.bin")
    return _Run(folder, n_terms, int(counts.max(initial=0)))


class _Runs:
    """Documents turned into sorted runs as they stream by (the first pass of the build)."""

    def __init__(self, scratch: Path, run_tokens: int) -> None:
        self.scratch, self.run_tokens = scratch, run_tokens
        self.vocabulary = _Numbering()
        self.lengths = array("i")  # every document's length: 4 bytes a document
        self.runs: list[_Run] = []
        self._ids = array("i")
        self._pending: list[int] = []  # ids go through a list: array.extend parses each int on its own
        self._first_doc = 0

    def add(self, documents: Iterable[Sequence[str]]) -> None:
        vocabulary, pending = self.vocabulary, self._pending
        chunk = min(_CHUNK, self.run_tokens)
        for tokens in documents:
            pending += map(vocabulary.__getitem__, tokens)
            self.lengths.append(len(tokens))
            if len(pending) >= chunk:
                self._ids.frombytes(np.array(pending, dtype=np.int32).tobytes())
                pending.clear()
                if len(self._ids) >= self.run_tokens:
                    self.flush()
        self.flush()

    def flush(self) -> None:
        """Write the documents since the last run as a run."""
        self._ids.frombytes(np.array(self._pending, dtype=np.int32).tobytes())
        self._pending.clear()
        if len(self.lengths) == self._first_doc:
            return
        lengths = np.array(self.lengths[self._first_doc :], dtype=np.int32)  # a copy: self.lengths grows on
        self.runs.append(
            _write_run(
                self.scratch / f"run-{len(self.runs):05d}",
                np.frombuffer(self._ids, dtype=np.int32),
                lengths,
                self._first_doc,
                len(self.vocabulary),
            )
        )
        self._ids = array("i")
        self._first_doc = len(self.lengths)

    def doc_freq(self) -> np.ndarray:
        """Each term's number of documents, summed over the runs."""
        freq = np.zeros(len(self.vocabulary), dtype=np.int64)
        for run in self.runs:
            freq[: run.n_terms] += np.diff(run.read("indptr", np.int64, 0, run.n_terms + 1))
        return freq


def _npy_writer(path: Path, dtype: type, length: int) -> IO[bytes]:
    """A ``.npy`` file of ``length`` values opened for appending them in order."""
    handle = open(path, "wb")  # noqa: SIM115 (the caller writes and closes it)
    np.lib.format.write_array_header_1_0(
        handle, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (length,)}
    )
    return handle


def _count_type(largest: int) -> type[np.unsignedinteger[Any]]:
    return next(t for t in (np.uint8, np.uint16, np.uint32) if largest <= np.iinfo(t).max)


def _merge(runs: _Runs, folder: Path, k1: float, b: float, epsilon: float, idf: IdfKind) -> None:
    """The second pass: the runs' postings term by term into ``folder``, with the idfs and norms."""
    n_docs = len(runs.lengths)
    doc_freq = runs.doc_freq()
    indptr = np.concatenate([[0], np.cumsum(doc_freq)]).astype(np.int64)
    np.save(folder / "indptr.npy", indptr, allow_pickle=False)
    np.save(folder / "idf.npy", _idf(doc_freq, n_docs, epsilon, idf), allow_pickle=False)
    norms = np.frombuffer(runs.lengths, dtype=np.int32).astype(np.float64)
    avgdl = norms.sum() / n_docs if n_docs else 0.0
    # In place, in rank-bm25's operation order: k1 * (1 - b + b * dl / avgdl).
    norms *= b
    norms /= avgdl
    norms += 1.0 - b
    norms *= k1
    np.save(folder / "norms.npy", norms, allow_pickle=False)
    del norms
    count_type = _count_type(max((run.largest_count for run in runs.runs), default=0))
    total = int(indptr[-1])
    with (
        _npy_writer(folder / "counts.npy", count_type, total) as counts,
        _npy_writer(folder / "indices.npy", np.int32, total) as indices,
    ):
        for t0, t1 in _term_steps(indptr):
            base = int(indptr[t0])
            docs = np.empty(int(indptr[t1]) - base, dtype=np.int32)
            tf = np.empty(len(docs), dtype=count_type)
            cursor = indptr[t0:t1] - base  # where each term's next postings go in this block
            for run in runs.runs:
                stop = min(t1, run.n_terms)
                if stop <= t0:
                    continue
                run_ptr = run.read("indptr", np.int64, t0, stop + 1)
                lo, hi = int(run_ptr[0]), int(run_ptr[-1])
                if hi == lo:
                    continue
                run_counts = np.diff(run_ptr)
                into = np.repeat(cursor[: stop - t0] - (run_ptr[:-1] - lo), run_counts) + np.arange(hi - lo)
                docs[into] = run.read("docs", np.int32, lo, hi)
                tf[into] = run.read("tfs", np.int32, lo, hi)
                cursor[: stop - t0] += run_counts
            counts.write(tf.tobytes())
            indices.write(docs.tobytes())


def _term_steps(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive term ranges of about :data:`MERGE_POSTINGS` postings each (a longer term alone)."""
    bounds = np.unique(
        np.concatenate(
            [
                np.searchsorted(indptr, np.arange(0, int(indptr[-1]), MERGE_POSTINGS), side="right") - 1,
                [len(indptr) - 1],
            ]
        )
    )
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _write_bounds(folder: Path, k1: float, block: int) -> dict[str, int]:
    """Write the block bounds and impacts of the index in ``folder`` (``block_max.npy``,
    ``block_last.npy``, ``term_max.npy``, ``impacts.npy``, and the dense rows of the frequent
    terms, ``dense_terms.npy`` and ``dense_rows.npy``) from its postings, term range by term range
    (the merge's memory bound). An impact is a weight in whole steps of the largest a weight
    can be over :data:`IMPACT_STEPS`, rounded up; only sums of impacts are compared, so the step
    itself is never needed again. Each file is written under a temporary name and renamed, so a
    reader, or another process upgrading the same index, never sees one half-written. Returns what
    the index's description says of them."""
    indptr, idf, norms = (np.load(folder / f"{name}.npy", allow_pickle=False) for name in ("indptr", "idf", "norms"))
    counts, indices = StoredArray(folder / "counts.npy"), StoredArray(folder / "indices.npy")
    bptr = BlockBounds.pointers(indptr, block)
    term_max = np.zeros(len(idf))
    # A weight is idf * tf * (k1 + 1) / (tf + norm) with norm >= 0: never above idf * (k1 + 1).
    largest = float(idf.max()) * (k1 + 1.0) if len(idf) else 0.0
    step = largest / IMPACT_STEPS if largest > 0 else 1.0
    n_docs = len(norms)
    dense_terms = np.flatnonzero(np.diff(indptr) > DENSE_ROW_SHARE * n_docs).astype(np.int64)
    suffix = f".{os.getpid()}.tmp"
    with (
        _npy_writer(folder / f"block_max.npy{suffix}", np.float64, int(bptr[-1])) as block_max,
        _npy_writer(folder / f"block_last.npy{suffix}", np.int32, int(bptr[-1])) as block_last,
        _npy_writer(folder / f"impacts.npy{suffix}", np.uint16, int(indptr[-1])) as impacts,
        _npy_writer(folder / f"dense_rows.npy{suffix}", np.uint16, len(dense_terms) * n_docs) as dense_rows,
    ):
        for t0, t1 in _term_steps(indptr):
            lo, hi = int(indptr[t0]), int(indptr[t1])
            maxima, lasts = np.empty(int(bptr[t1] - bptr[t0])), np.empty(int(bptr[t1] - bptr[t0]), dtype=np.int32)
            steps = np.empty(hi - lo, dtype=np.uint16)
            docs = indices.read(lo, hi)
            kernel.block_bounds(
                indptr[t0 : t1 + 1] - lo,
                docs,
                counts.read(lo, hi),
                idf[t0:t1],
                norms,
                k1,
                block,
                step,
                maxima,
                lasts,
                term_max[t0:t1],
                steps,
            )
            block_max.write(maxima.tobytes())
            block_last.write(lasts.tobytes())
            impacts.write(steps.tobytes())
            for t in dense_terms[(dense_terms >= t0) & (dense_terms < t1)].tolist():
                row = np.zeros(n_docs, dtype=np.uint16)
                first, last = int(indptr[t]) - lo, int(indptr[t + 1]) - lo
                row[docs[first:last]] = steps[first:last]
                dense_rows.write(row.tobytes())
    for name, values in (("term_max", term_max), ("dense_terms", dense_terms)):
        np.save(folder / f"{name}.npy{suffix}.npy", values, allow_pickle=False)
    for name in ("block_max.npy", "block_last.npy", "impacts.npy", "dense_rows.npy"):
        os.replace(folder / f"{name}{suffix}", folder / name)
    for name in ("term_max.npy", "dense_terms.npy"):
        os.replace(folder / f"{name}{suffix}.npy", folder / name)
    return {"block": block, "impact_steps": IMPACT_STEPS}


def _lower_bound(totals: np.ndarray, k: int) -> float:
    """A value the k best of ``totals`` all reach: the k-th largest of an evenly spaced subset of
    about ``sqrt(k * n)`` of them (a subset's k-th largest is at most the whole's), which costs a
    selection among that subset rather than among all n, and leaves about as many candidates."""
    step = max(1, int(len(totals) / math.sqrt(k * len(totals))))
    sample = totals[::step]
    # Selecting the k-th smallest of the negated scores: numpy's selection of the k-th largest is
    # ten times slower on a vector of mostly equal scores (zeros) than this.
    return float(-np.partition(-sample, k - 1)[k - 1]) if len(sample) >= k else -math.inf


def _write_vocabulary(vocabulary: dict[str, int], folder: Path) -> None:
    with open(folder / "vocabulary.json", "w", encoding="utf-8") as handle:
        json.dump(list(vocabulary), handle, ensure_ascii=False)  # numbered in insertion order


@dataclass(frozen=True)
class _QueryShape:
    """A batch of queries as the compiled search takes them: query q's distinct terms are
    ``terms[query_ptr[q]:query_ptr[q + 1]]``, each with how often it occurs (``mult``), and its
    tokens ``tokens[token_ptr[q]:token_ptr[q + 1]]`` as positions among its distinct terms (the
    order rank-bm25 adds their weights in)."""

    query_ptr: np.ndarray
    terms: np.ndarray
    mult: np.ndarray
    token_ptr: np.ndarray
    tokens: np.ndarray

    @classmethod
    def of(cls, queries: list[list[int]]) -> _QueryShape:
        query_ptr, token_ptr = [0], [0]
        distinct: list[int] = []
        mult: list[int] = []
        tokens: list[int] = []
        for terms in queries:
            position: dict[int, int] = {}
            for term in terms:
                position.setdefault(term, len(position))
            occurrences = np.bincount([position[term] for term in terms], minlength=len(position))
            distinct += position
            mult += occurrences.tolist()
            tokens += [position[term] for term in terms]
            query_ptr.append(len(distinct))
            token_ptr.append(len(tokens))
        return cls(
            np.array(query_ptr, dtype=np.int64),
            np.array(distinct, dtype=np.int64),
            np.array(mult, dtype=np.float64),
            np.array(token_ptr, dtype=np.int64),
            np.array(tokens, dtype=np.int64),
        )


class BM25Index:
    """Term weights of a tokenised corpus, read from an index folder (see the module docstring)."""

    def __init__(
        self,
        postings: Postings,
        vocabulary: dict[str, int],
        parameters: dict[str, float],
        owned: tempfile.TemporaryDirectory[str] | None = None,
    ) -> None:
        self.postings = postings
        self.vocabulary = vocabulary
        self.n_docs = postings.shape[1]
        self.parameters = parameters
        self._owned = owned  # a temporary folder lives as long as the index

    @classmethod
    def build(
        cls,
        documents: Iterable[Sequence[str]],
        folder: Path | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        idf: IdfKind = "rank-bm25",
        metadata: dict[str, Any] | None = None,
        run_tokens: int = RUN_TOKENS,
    ) -> BM25Index:
        """Index tokenised documents (any iterable, consumed once) into ``folder`` (created whole
        or not at all; a temporary folder when None) and load it. ``metadata`` says what is
        indexed (corpus fingerprint, tokenisers), recorded so :meth:`load` callers can refuse a
        stale index; ``run_tokens``: tokens per sorted run (a bound on the memory used)."""
        owned = None
        if folder is None:
            owned = tempfile.TemporaryDirectory(prefix="harness-bm25-")
            folder = Path(owned.name) / "index"
        idf = idf_kind(idf)  # a caller of the library may pass any string
        parameters = bm25_parameters(k1, b, epsilon, idf)
        with atomic_folder(folder) as staging:
            with tempfile.TemporaryDirectory(prefix=".runs-", dir=staging) as scratch:
                runs = _Runs(Path(scratch), max(1, run_tokens))
                runs.add(documents)
                _merge(runs, staging, k1, b, epsilon, idf)
            bounds = _write_bounds(staging, float(k1), BLOCK)
            _write_vocabulary(runs.vocabulary, staging)
            info = {
                "format": FORMAT,
                "shape": [len(runs.vocabulary), len(runs.lengths)],
                **bounds,
                "parameters": parameters,
                **(metadata or {}),
            }
            (staging / "index.json").write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")
        index = cls.load(folder)
        index._owned = owned
        return index

    # -- scoring ------------------------------------------------------------------------------

    def _terms(self, tokens: Sequence[str]) -> list[int]:
        """The query's known tokens as term ids, in query order (a repeated token repeats)."""
        return [term for term in map(self.vocabulary.get, tokens) if term is not None]

    def _gathered(self, terms: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Document ids and weights of the terms' postings, term after term."""
        parts = [self.postings.weights(term) for term in terms]
        if not parts:
            return np.empty(0, dtype=np.int32), np.empty(0)
        return np.concatenate([docs for docs, _ in parts]), np.concatenate([weights for _, weights in parts])

    def _dense_scores(self, terms: Sequence[int]) -> np.ndarray:
        """Every document's score, its weights added in the query's token order, as rank-bm25
        sums them: with one ``bincount`` over the postings gathered in that order, or, past
        :data:`READ_POSTINGS` postings, term after term and at most that many at a time (a
        document is in a term's list once), so the memory stays bounded."""
        if sum(map(self.postings.size, terms)) <= READ_POSTINGS:
            docs, weights = self._gathered(terms)
            return np.bincount(docs, weights=weights, minlength=self.n_docs)
        totals = np.zeros(self.n_docs)
        for term in terms:
            size = self.postings.size(term)
            for start in range(0, size, READ_POSTINGS):
                docs, weights = self.postings.weights(term, start, min(size, start + READ_POSTINGS))
                totals[docs] += weights
        return totals

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores, float64 (for callers that need every score)."""
        out = np.empty((len(queries), self.n_docs), dtype=np.float64)
        for row, tokens in zip(out, queries):
            row[:] = self._dense_scores(self._terms(tokens))
        return out

    def top_k(
        self, queries: Sequence[Sequence[str]], k: int, *, exhaustive: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``min(k, n_docs)`` best documents of each query and their scores, best first, ties
        by document position (lower first), as a stable sort of all scores would order them.

        Queries whose terms all have idf > 0 (any corpus where no term is in half the documents)
        go to the compiled pruned search, :data:`QUERY_BATCH` at a time over every core; the
        others, or all with ``exhaustive=True``, are scored over every posting of their terms (the
        pruned search's reference, and the way a negative idf floor ranks)."""
        k = min(k, self.n_docs)
        indices = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float64)
        if k == 0:
            return indices, scores
        terms = [self._terms(tokens) for tokens in queries]
        idf = self.postings.idf
        pruned = [] if exhaustive else [q for q, query in enumerate(terms) if bool(np.all(idf[query] > 0))]
        for q in sorted(set(range(len(queries))) - set(pruned)):
            indices[q], scores[q] = self._best(terms[q], k)
        for start in range(0, len(pruned), QUERY_BATCH):
            batch = pruned[start : start + QUERY_BATCH]
            indices[batch], scores[batch] = self._pruned([terms[q] for q in batch], k)
        return indices, scores

    def _pruned(self, queries: list[list[int]], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The top k of each query: by impact sums (:meth:`_by_impacts`) where its postings reach
        :data:`DENSE_SHARE` of the passages, else by the compiled MaxScore walk
        (:func:`kernel.top_k_batch`)."""
        postings = self.postings
        docs = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float64)
        # (a query whose sums would not fit 4 bytes takes the walk)
        dense = [
            sum(map(postings.size, terms)) >= DENSE_SHARE * self.n_docs and postings.largest_sum(terms) <= 0xFFFFFFFF
            for terms in queries
        ]
        by_impacts = [q for q, d in enumerate(dense) if d]
        walked = [q for q, d in enumerate(dense) if not d]
        if by_impacts:
            docs[by_impacts], scores[by_impacts] = self._by_impacts([queries[q] for q in by_impacts], k)
        if walked:
            docs[walked], scores[walked] = self._walked([queries[q] for q in walked], k)
        return docs, scores

    def _walked(self, queries: list[list[int]], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The top k of each query by the compiled MaxScore search (:func:`kernel.top_k_batch`)."""
        shape = _QueryShape.of(queries)
        postings, bounds = self.postings, self.postings.bounds
        docs = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float64)
        pages = _MappedPages(postings.indices, postings.counts, bounds.block_max, bounds.block_last)
        indices, counts, block_max, block_last = pages.arrays
        kernel.top_k_batch(
            shape.query_ptr,
            shape.terms,
            shape.mult,
            shape.token_ptr,
            shape.tokens,
            k,
            postings.indptr,
            bounds.bptr,
            indices,
            counts,
            block_max,
            block_last,
            bounds.term_max,
            postings.idf,
            postings.norms,
            postings.k1,
            bounds.block,
            SEED,
            docs,
            scores,
        )
        pages.release()
        return docs, scores

    def _by_impacts(self, queries: list[list[int]], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The top k of each query by impact sums, in two passes (see :mod:`harness_bm25.kernel`):
        :func:`kernel.impact_sums` over :data:`SUM_CHUNK` passages at a time for every query of the
        batch, then :func:`kernel.impact_top_k` scores exactly the passages of the spans that could
        reach each top k, :data:`EXACT_GROUP` queries a thread at a time; between steps the pages
        read are dropped once they pass :data:`MAPPED_BUDGET` (:class:`_MappedPages`), so a search
        holds a few chunks of the dense rows and postings, not all it reads."""
        shape = _QueryShape.of(queries)
        postings, bounds = self.postings, self.postings.bounds
        # Sums of 2 bytes when every query of the batch fits them, else 4.
        wide = any(postings.largest_sum(terms) > 0xFFFF for terms in queries)
        span = SUM_SPAN
        chunk = min(self.n_docs, max(span, SUM_CHUNK // span * span))
        sums = np.zeros((numba.get_num_threads(), chunk), np.uint32 if wide else np.uint16)
        spans = np.empty((len(queries), -(-self.n_docs // span)), sums.dtype)
        row_of = {int(term): row for row, term in enumerate(postings.dense_terms)}
        rows = np.array([row_of.get(int(term), -1) for term in shape.terms], dtype=np.int64)
        # Each token's place in its term's postings, moved along chunk by chunk.
        token_terms = shape.terms[np.repeat(shape.query_ptr[:-1], np.diff(shape.token_ptr)) + shape.tokens]
        cursor = postings.indptr[token_terms].astype(np.int64)
        pages = _MappedPages(
            postings.indices, postings.impacts, postings.dense_rows, postings.counts, bounds.block_last
        )
        indices, impacts, dense_rows, counts, block_last = pages.arrays
        for lo in range(0, self.n_docs, chunk):
            kernel.impact_sums(
                shape.query_ptr,
                shape.terms,
                shape.token_ptr,
                shape.tokens,
                rows,
                cursor,
                lo,
                min(self.n_docs, lo + chunk),
                postings.indptr,
                indices,
                impacts,
                dense_rows,
                self.n_docs,
                span,
                sums,
                spans,
            )
            pages.trim()
        docs = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float64)
        group = EXACT_GROUP * numba.get_num_threads()
        for first in range(0, len(queries), group):
            kernel.impact_top_k(
                shape.query_ptr,
                shape.terms,
                shape.token_ptr,
                shape.tokens,
                rows,
                k,
                postings.indptr,
                bounds.bptr,
                indices,
                counts,
                impacts,
                dense_rows,
                block_last,
                postings.idf,
                postings.norms,
                postings.k1,
                bounds.block,
                span,
                spans,
                first,
                min(len(queries), first + group),
                docs,
                scores,
            )
            pages.trim()
        pages.release()
        return docs, scores

    def _best(self, terms: list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        candidates: np.ndarray | None  # document ids of ``totals``; None: totals covers every document
        totals: np.ndarray
        if sum(map(self.postings.size, terms)) * SPARSE_SHARE < self.n_docs:
            docs, weights = self._gathered(terms)
            candidates, inverse = np.unique(docs, return_inverse=True)
            totals = np.bincount(inverse, weights=weights, minlength=len(candidates))
        else:
            candidates, totals = None, self._dense_scores(terms)
        kept = None  # positions in ``totals`` of the k best and of every score tied with the k-th
        if len(totals) >= k:
            bound = _lower_bound(totals, k)
            if bound > 0:
                kept = np.flatnonzero(totals >= bound)
        if kept is None:
            # The ranking reaches documents that score 0 (no query term) or less: rank them all.
            if candidates is None:
                dense = totals
            else:
                dense = np.zeros(self.n_docs)
                dense[candidates] = totals
            best, best_scores = top_k(dense[None, :], k)
            return best[0], best_scores[0]
        ids = kept if candidates is None else candidates[kept]
        order = np.lexsort((ids, -totals[kept]))[:k]
        return ids[order], totals[kept][order]

    # -- on disk ------------------------------------------------------------------------------

    @staticmethod
    def saved_metadata(folder: Path) -> dict[str, Any] | None:
        """The metadata of the index saved in ``folder``, or None if there is none."""
        path = folder / "index.json"
        if not path.is_file():
            return None
        try:
            info = parse_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # ValueError: malformed, nested too deep, not UTF-8
            raise HarnessError(f"{path} is not a BM25 index description: {exc}") from None
        return info if isinstance(info, dict) else None

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        """Reload an index written by :meth:`build`; the postings stay on disk (see :class:`StoredArray`).
        An index of an older format first gets what it lacks written (see :func:`_upgrade`)."""
        info = cls.saved_metadata(folder)
        if info is not None and info.get("format") in _UPGRADABLE:
            info = _upgrade(folder, info)
        if info is None or info.get("format") != FORMAT:
            found = "" if info is None else f" (it holds format {info.get('format')}: delete the folder to rebuild it)"
            raise HarnessError(f"{folder} holds no BM25 index of format {FORMAT}{found}")
        try:
            counts, indices = StoredArray(folder / "counts.npy"), StoredArray(folder / "indices.npy")
            impacts, dense_rows = StoredArray(folder / "impacts.npy"), StoredArray(folder / "dense_rows.npy")
            block_max, block_last = StoredArray(folder / "block_max.npy"), StoredArray(folder / "block_last.npy")
            indptr, idf, norms, term_max, dense_terms = (
                np.load(folder / f"{name}.npy", allow_pickle=False) for name in _IN_MEMORY
            )
            n_terms, n_docs = info["shape"]
            bptr = BlockBounds.pointers(indptr, int(info["block"]))
            if (
                len(indptr) != n_terms + 1
                or len(idf) != n_terms
                or len(norms) != n_docs
                or len(counts) != len(indices)
                or len(counts) != indptr[-1]
                or len(impacts) != len(counts)
                or len(term_max) != n_terms
                or len(block_max) != bptr[-1]
                or len(block_last) != bptr[-1]
                or len(dense_rows) != len(dense_terms) * n_docs
            ):
                raise ValueError(
                    f"arrays of {len(counts)} counts, {len(indices)} documents, {len(impacts)} impacts, "
                    f"{len(indptr)} offsets, "
                    f"{len(idf)} idfs, {len(norms)} norms, {len(term_max)} term bounds and "
                    f"{len(block_max)}/{len(block_last)} block bounds and {len(dense_rows)} dense impacts "
                    f"of {len(dense_terms)} terms for {n_terms} terms and {n_docs} documents"
                )
            terms = parse_json((folder / "vocabulary.json").read_text(encoding="utf-8"))
            vocabulary = {term: i for i, term in enumerate(terms)}
            parameters = info["parameters"]
            bounds = BlockBounds(int(info["block"]), bptr, block_max, block_last, term_max)
            return cls(
                Postings(
                    counts,
                    indices,
                    impacts,
                    int(info["impact_steps"]),
                    dense_terms,
                    dense_rows,
                    indptr,
                    idf,
                    norms,
                    float(parameters["k1"]),
                    bounds,
                ),
                vocabulary,
                parameters,
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a file missing, cut short or replaced
            raise HarnessError(
                f"{folder} holds a damaged BM25 index ({exc.__class__.__name__}: {exc}): delete "
                "the folder to build it again"
            ) from None


def _upgrade(folder: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Give an index of format 3 to 6 (the same postings, without block bounds, impacts or dense
    rows, or with impacts of another resolution) all three, in place: one pass over its postings,
    a minute or so for 21 M passages against 40 for a rebuild. The description is replaced last,
    so a crash leaves an index that upgrades again."""
    old = info.get("format")
    print(
        f"bm25: {folder} is an index of format {old}: writing its block bounds, impacts and dense rows (one pass over "
        f"its postings) to make it format {FORMAT}",
        file=sys.stderr,
    )
    try:
        bounds = _write_bounds(folder, float(info["parameters"]["k1"]), BLOCK)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(
            f"{folder} holds a BM25 index of format {old} that could not be upgraded "
            f"({exc.__class__.__name__}: {exc}): delete the folder to build it again"
        ) from None
    info = {**info, "format": FORMAT, **bounds}
    staged = folder / f"index.json.{os.getpid()}.tmp"
    staged.write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(staged, folder / "index.json")
    return info
