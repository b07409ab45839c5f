"""One encoding service for every task of a run: deduplication, cache, length buckets, OOM halving.

The runner wraps any :class:`~harness.protocols.Encoder` model in an :class:`EncodingService`,
which is itself an Encoder, so tasks and adapters are unchanged. For each call it

* keys every text by role and content, so a text asked for twice (by one task or by several)
  is encoded once, and texts already in the on-disk :mod:`harness.cache` are not encoded at all;
* sorts the texts still to encode by token length and cuts them into batches of similar length,
  which keeps padding small (the padding share is measured and reported);
* on a GPU out-of-memory error, halves the batch and carries on with the smaller size;
* under torch.distributed, deals the batches out to the ranks and gathers the vectors.

A suite run calls :meth:`EncodingService.prefetch` with every text of every task first, so all of
them share one queue and one set of length buckets.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from harness.batching import AdaptiveBatcher
from harness.cache import EmbeddingCache, text_key
from harness.distributed import World, current_world
from harness.progress import Progress
from harness.protocols import Encoder, Role

Text = str | tuple[str, str]
DEFAULT_BATCH_SIZE = 32
#: Texts encoded between two saves to the cache (and, distributed, between two gathers).
ROUND_TEXTS = 4096


@runtime_checkable
class TokenCounter(Protocol):
    """An encoder that can say how many tokens each text will take (for length buckets)."""

    def token_lengths(self, texts: Sequence[Text], *, role: Role) -> list[int]: ...


@dataclass(frozen=True)
class EncodingRequest:
    """Texts a task will encode in one role (declared up front so a suite can share batches)."""

    role: Role
    texts: Sequence[Text]
    langs: Sequence[str] | None = None


@dataclass
class EncodingStats:
    """What the service did, recorded in every result's provenance."""

    requested: int = 0
    unique: int = 0
    cache_hits: int = 0
    encoded: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    batches: int = 0
    batch_size: int = DEFAULT_BATCH_SIZE
    oom_halvings: int = 0
    seconds: float = 0.0
    corrupted_cache_shards: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["cache_misses"] = self.unique - self.cache_hits
        out["padding_share"] = round(1 - self.tokens / self.padded_tokens, 4) if self.padded_tokens else 0.0
        out["seconds"] = round(self.seconds, 3)
        return out


class EncodingService:
    """An :class:`Encoder` in front of a model: memoised, cached on disk, batched by length."""

    def __init__(self, encoder: Encoder, *, cache: EmbeddingCache | None = None, batch_size: int | None = None,
                 world: World | None = None, show_progress: bool = True) -> None:
        self.encoder = encoder
        self.cache = cache
        self.world = world or World()
        self.show_progress = show_progress
        self.batcher = AdaptiveBatcher(batch_size or DEFAULT_BATCH_SIZE)
        self.stats = EncodingStats(batch_size=self.batcher.batch_size,
                                   corrupted_cache_shards=list(cache.corrupted) if cache is not None else [])
        self._memory: dict[bytes, np.ndarray] = {}

    @classmethod
    def for_model(cls, encoder: Encoder, runtime: Any, identity: dict[str, Any], *,
                  show_progress: bool = True) -> EncodingService:
        """The service a run puts in front of an encoder model: the embedding cache under
        ``runtime.cache_dir`` (none if it is None), the run's batch size, this process's rank."""
        world = current_world()
        cache = EmbeddingCache(runtime.cache_dir, identity) if runtime.cache_dir is not None else None
        service = cls(encoder, cache=cache, batch_size=runtime.batch_size or getattr(encoder, "batch_size", None),
                      world=world, show_progress=show_progress)
        world.barrier()  # every rank has read the cache before any rank writes to it
        return service

    # -- Encoder ------------------------------------------------------------------------------

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        keys = [text_key(role, text) for text in texts]
        self._fill(keys, texts, role, langs)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memory[key] for key in keys])

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

    def plan(self, requests: Iterable[EncodingRequest]) -> dict[str, Any]:
        """What :meth:`prefetch` would do, without encoding: for ``--dry-run``."""
        unique: dict[bytes, tuple[Text, Role]] = {}
        requested = 0
        for request in requests:
            requested += len(request.texts)
            for text in request.texts:
                unique.setdefault(text_key(request.role, text), (text, request.role))
        cached = {key for key in unique if key in self._memory or (self.cache is not None and key in self.cache)}
        tokens = 0
        for role in ("query", "passage"):
            missing = [text for key, (text, r) in unique.items() if r == role and key not in cached]
            tokens += sum(self._lengths(missing, role))
        return {"texts_requested": requested, "unique_texts": len(unique), "cache_hits": len(cached),
                "to_encode": len(unique) - len(cached), "estimated_tokens": int(tokens)}

    # -- internals ----------------------------------------------------------------------------

    def _lengths(self, texts: Sequence[Text], role: Role) -> list[int]:
        if not texts:
            return []
        if isinstance(self.encoder, TokenCounter):
            return list(self.encoder.token_lengths(texts, role=role))
        return [len(t) if isinstance(t, str) else len(t[0]) + len(t[1]) for t in texts]

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
        for done, vectors in self._encode_new([texts[p] for p in positions], new_langs, role):
            done_keys = [new_keys[i] for i in done]
            for key, vector in zip(done_keys, vectors):
                self._memory[key] = vector
            if self.cache is not None and self.world.is_main:
                self.cache.put(done_keys, vectors)  # saved round by round: a killed run keeps them

    def _encode_new(self, texts: list[Text], langs: list[str] | None,
                    role: Role) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Encode ``texts`` in rounds of about :data:`ROUND_TEXTS`; yield (positions, vectors) per round.

        Within a round the length-sorted batches are dealt out to the ranks, each rank encodes its
        share, and the vectors are gathered, so every rank holds every vector of the round.
        """
        lengths = self._lengths(texts, role)
        batches = self.batcher.plan(lengths)
        per_round = max(self.world.size, ROUND_TEXTS // max(self.batcher.batch_size, 1))
        with Progress(len(texts), f"encoding {role} texts", enabled=self.show_progress) as bar:
            for first in range(0, len(batches), per_round):
                start = time.perf_counter()
                round_batches = batches[first : first + per_round]
                shares = [round_batches[rank :: self.world.size] for rank in range(self.world.size)]
                local = [self._encode_batch(batch, texts, langs, role, lengths) for batch in shares[self.world.rank]]
                for batch in shares[self.world.rank]:
                    self.stats.tokens += int(sum(lengths[i] for i in batch))
                    self.stats.encoded += len(batch)
                dim = local[0].shape[1] if local else self._dimension(texts, langs, role)
                blocks = self.world.gather_rows(np.concatenate(local) if local else np.zeros((0, dim), np.float32),
                                                [sum(len(b) for b in share) for share in shares], dim)
                positions = np.concatenate([np.concatenate(share) for share in shares if share])
                self.stats.seconds += time.perf_counter() - start
                bar.update(len(positions))
                yield positions, np.concatenate(blocks)

    def _dimension(self, texts: list[Text], langs: list[str] | None, role: Role) -> int:
        """Width of the vectors, for a rank that got no batch: encode one text to find out."""
        return int(np.asarray(self.encoder.encode(texts[:1], role=role, langs=langs[:1] if langs else None)).shape[1])

    def _encode_batch(self, batch: np.ndarray, texts: list[Text], langs: list[str] | None, role: Role,
                      lengths: list[int]) -> np.ndarray:
        """Encode one batch (halved on out-of-memory by the batcher); count its padding."""

        def work(part: Sequence[int]) -> list[np.ndarray]:
            vectors = self.encoder.encode([texts[i] for i in part], role=role,
                                          langs=[langs[i] for i in part] if langs is not None else None)
            self.stats.batches += 1
            self.stats.padded_tokens += max(lengths[i] for i in part) * len(part)
            return list(np.asarray(vectors, dtype=np.float32))

        rows = self.batcher.run(batch, work)
        self.stats.batch_size, self.stats.oom_halvings = self.batcher.batch_size, self.batcher.halvings
        return np.stack(rows)
