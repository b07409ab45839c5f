"""One log-likelihood service for every task of a run, and the bridge from a scorer to the choice tasks.

A :class:`~harness.definitions.protocols.LoglikelihoodScorer` is a generator that can also say how likely a
given continuation is after a context (``hf-generator``; ``openai-compatible`` on the completions
endpoint). Choice tasks run language models with it as lm-evaluation-harness and lighteval do:
each option is a continuation of the same context, and the option the model finds most likely is
its answer. The harness puts a :class:`LoglikelihoodService` in front of the scorer, as the
generation service is put in front of a generator, which

* keys every request by the model's identity, the context, the continuation and the system
  prompt, so a request asked twice is scored once, and requests already in the on-disk cache
  (``<cache>/loglikelihoods/<model-key>/``, beside ``generations/``) are not scored at all;
* sorts requests by length (context and continuation, in tokens when the scorer can count them)
  and cuts them into batches of similar length, halving a batch that runs out of GPU memory
  (:class:`~harness.models.batching.AdaptiveBatcher`);
* under torchrun deals the batches out to the ranks, one per rank a round, and gathers the scores
  so every rank holds all of them (:class:`~harness.models.distributed.World`);
* saves what it scored batch by batch (rank 0 writes), so a killed run loses one round at most;
* counts requests, cache hits, continuation tokens and seconds for the result's execution record.

A run's generator that is also a scorer gets a :class:`ScoringService`: the generation service
with this one beside it, which also scores a generated answer whose engine returned no token
log-probabilities where a task asked for them (MKQA's No-Answer probability). A task that needs a :class:`~harness.definitions.protocols.MultipleChoice` or a
:class:`~harness.definitions.protocols.PairClassifier` is handed :class:`LikelihoodChoice` (the adapter
:mod:`harness.models.capabilities` registers), finds the scorer behind it with :func:`choice_target`, and
asks its own prompts through :func:`decide`, which names which option wins by the summed
log-likelihood and by the length-normalised variants beside it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from harness.definitions.protocols import (
    Generation,
    GenerationRequest,
    Generator,
    Loglikelihood,
    LoglikelihoodRequest,
    LoglikelihoodScorer,
)
from harness.display.progress import Progress
from harness.errors import HarnessError
from harness.files.io import sha256_text
from harness.models.batching import AdaptiveBatcher, ServiceStats
from harness.models.distributed import World, current_world
from harness.models.generation import DEFAULT_BATCH_SIZE, GenerationService, PromptCounter, RecordCache, recall

# -- the cache ----------------------------------------------------------------------------------


def request_key(request: LoglikelihoodRequest) -> str:
    """The cache key of a request (the model is the cache folder): context, continuation, system."""
    return sha256_text(json.dumps(asdict(request), sort_keys=True, ensure_ascii=False))


class LoglikelihoodCache(RecordCache[Loglikelihood]):
    """Scores of one model on disk (``<root>/loglikelihoods/<model-key>/``), laid out as the
    generation cache is."""

    folder_name = "loglikelihoods"
    field_name = "loglikelihood"
    label = "log-likelihood"
    redone = "scored"

    @staticmethod
    def decode(raw: dict[str, Any]) -> Loglikelihood:
        return Loglikelihood(float(raw["logprob"]), int(raw["tokens"]), bool(raw["greedy"]))


# -- the service --------------------------------------------------------------------------------


@dataclass
class LoglikelihoodStats(ServiceStats):
    """What the service did, for the result's execution record. ``tokens``: the lengths the
    batches were planned by (context and continuation, in tokens when the scorer counts them, else
    characters: ``length_unit`` says which), so ``padding_share`` is the share of a batch's slots
    that padding filled; ``continuation_tokens``: the scored tokens the scorer reported."""

    batch_size: int = DEFAULT_BATCH_SIZE
    scored: int = 0
    tokens: int = 0
    continuation_tokens: int = 0
    length_unit: str = "tokens"
    damaged_cache_lines: list[str] = field(default_factory=list)

    SUMMED = (*ServiceStats.SUMMED, "scored", "tokens", "continuation_tokens")
    RATES = ("requests_per_s", "padding_share")

    @property
    def padding_share(self) -> float:
        return 1 - self.tokens / self.padded_tokens if self.padded_tokens else 0.0

    @property
    def requests_per_s(self) -> float | None:
        """Requests scored per second of scoring (cache reads not timed)."""
        return self.scored / self.seconds if self.seconds > 0 else None

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["padding_share"] = round(self.padding_share, 4)
        out["seconds"] = round(self.seconds, 3)
        out["requests_per_s"] = None if self.requests_per_s is None else round(self.requests_per_s, 2)
        return out


class LoglikelihoodService:
    """A :class:`~harness.definitions.protocols.LoglikelihoodScorer` in front of a model: memoised, cached on
    disk, batched by length, shared across ranks (see the module docstring)."""

    def __init__(
        self,
        scorer: LoglikelihoodScorer,
        *,
        cache: LoglikelihoodCache | None = None,
        batch_size: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        world: World | None = None,
    ) -> None:
        self.scorer = scorer
        self.cache = cache
        self.clock = clock
        self.world = world or World()
        self.batcher = AdaptiveBatcher(batch_size or DEFAULT_BATCH_SIZE)
        self.stats = LoglikelihoodStats(
            batch_size=self.batcher.batch_size,
            length_unit="tokens" if isinstance(scorer, PromptCounter) else "characters",
            damaged_cache_lines=list(cache.damaged) if cache is not None else [],
        )
        self._memory: dict[str, Loglikelihood] = {}

    @classmethod
    def for_model(cls, scorer: LoglikelihoodScorer, runtime: Any, identity: dict[str, Any]) -> LoglikelihoodService:
        """The service a run puts in front of a scoring model: the cache under ``runtime.cache_dir``
        (none if it is None), the run's batch size or the model's own, the run's ranks."""
        cache = LoglikelihoodCache(runtime.cache_dir, identity) if runtime.cache_dir is not None else None
        return cls(
            scorer,
            cache=cache,
            batch_size=runtime.batch_size or getattr(scorer, "batch_size", None),
            world=current_world(),
        )

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], *, progress: Progress | None = None
    ) -> list[Loglikelihood]:
        """One score per request, in order; ``progress`` moves by one per request answered."""
        keys = [request_key(request) for request in requests]
        pending = recall(keys, requests, self._memory, self.cache, self.stats)
        if progress is not None:
            progress.update(len(requests) - len(pending))
        if pending:
            self._score(list(pending.values()), list(pending), progress)
        return [self._memory[key] for key in keys]

    def _lengths(self, requests: list[LoglikelihoodRequest]) -> list[int]:
        texts = [request.context + request.continuation for request in requests]
        if isinstance(self.scorer, PromptCounter):
            return list(self.scorer.prompt_lengths(texts))
        return [len(text) for text in texts]

    def _score(self, requests: list[LoglikelihoodRequest], keys: list[str], progress: Progress | None) -> None:
        """Score in length-sorted batches, one batch per rank a round (every rank asks for the
        same requests in the same order, so all plan the same batches)."""
        lengths = self._lengths(requests)
        world = self.world
        batches = self.batcher.plan(lengths, world)
        for first in range(0, len(batches), world.size):
            start = self.clock()  # the round, waiting for the other ranks included, as generation times it
            round_batches = batches[first : first + world.size]
            mine = (
                self._batch(requests, keys, lengths, round_batches[world.rank])
                if world.rank < len(round_batches)
                else []
            )
            done = [pair for share in world.gather_objects(mine) for pair in share]
            self.stats.seconds += self.clock() - start
            self._memory.update(done)
            if self.cache is not None and world.is_main:
                self.cache.put(done)
            if progress is not None:
                progress.update(len(done), tokens=sum(score.tokens for _, score in done))

    def _batch(
        self, requests: list[LoglikelihoodRequest], keys: list[str], lengths: list[int], batch: np.ndarray
    ) -> list[tuple[str, Loglikelihood]]:
        """One batch (halved on out-of-memory), counted in this rank's statistics."""

        def work(part: np.ndarray) -> list[Loglikelihood]:
            out = list(self.scorer.loglikelihood([requests[i] for i in part]))
            if len(out) != len(part):
                raise HarnessError(f"the model returned {len(out)} log-likelihoods for {len(part)} requests")
            self.stats.batches += 1
            self.stats.padded_tokens += len(part) * max(lengths[i] for i in part)
            self.stats.tokens += sum(lengths[i] for i in part)
            return out

        scores = self.batcher.run(batch, work)
        self.stats.batch_size, self.stats.oom_halvings = self.batcher.batch_size, self.batcher.halvings
        self.stats.scored += len(scores)
        self.stats.continuation_tokens += sum(score.tokens for score in scores)
        return [(keys[i], score) for i, score in zip(batch, scores)]


class ScoringService(GenerationService):
    """The generation service of a model that can also score continuations: a Generator and a
    :class:`~harness.definitions.protocols.LoglikelihoodScorer`, each request kind with its own memo, cache and
    statistics (:attr:`scoring`)."""

    def __init__(self, generator: Generator, **options: Any) -> None:
        super().__init__(generator, **options)
        self.scoring = LoglikelihoodService(
            generator,  # type: ignore[arg-type]
            batch_size=self.batcher.batch_size,
            clock=self.clock,
            world=self.world,
        )

    @classmethod
    def for_model(cls, generator: Generator, runtime: Any, identity: dict[str, Any]) -> ScoringService:
        service = super().for_model(generator, runtime, identity)
        assert isinstance(service, ScoringService)
        service.scoring = LoglikelihoodService.for_model(generator, runtime, identity)  # type: ignore[arg-type]
        return service

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], *, progress: Progress | None = None
    ) -> list[Loglikelihood]:
        return self.scoring.loglikelihood(requests, progress=progress)

    def generate(self, requests: Sequence[GenerationRequest], *, progress: Progress | None = None) -> list[Generation]:
        """Completions as the generation service gives them; where a request asked for the answer's
        log-probability and the engine returned no token log-probabilities (a server that gives
        none with its completions), it is scored instead (:func:`answer_requests`)."""
        generations = super().generate(requests, progress=progress)
        missing = [
            i
            for i, (request, generation) in enumerate(zip(requests, generations))
            if request.options.logprobs and generation.logprob is None
        ]
        if not missing:
            return generations
        asked = [answer_requests(requests[i], generations[i].text) for i in missing]
        scores = iter(self.scoring.loglikelihood([request for forms in asked for request in forms]))
        out = list(generations)
        for i, forms in zip(missing, asked):
            logprobs = [next(scores).logprob for _ in forms]
            out[i] = replace(generations[i], logprob=float(np.logaddexp.reduce(logprobs)) if logprobs else 0.0)
        return out


def answer_requests(request: GenerationRequest, answer: str) -> list[LoglikelihoodRequest]:
    """The continuations whose probability is a generated answer's, after the request's prompt: the
    answer and its end (the first stop string; without one the end-of-sequence token, which no
    text can stand for, is left out), once as it is and once after a space. The answer is scored
    with surrounding white space stripped, so its probability is that of every form that strips
    to it; these two carry nearly all of it (a completion prompt ending in ``Answer:`` is answered
    `` Paris``, a chat model's turn starts ``Paris``), and their probabilities add up."""
    end = request.options.stop[0] if request.options.stop else ""
    if not answer and not end:
        return []
    return [LoglikelihoodRequest(request.prompt, f"{lead}{answer}{end}", request.options.system) for lead in ("", " ")]


def scoring_service(scorer: LoglikelihoodScorer) -> LoglikelihoodService:
    """``scorer`` behind a service: the run's own (a :class:`ScoringService`'s, or a service
    itself), else one of its own without a disk cache, for a scorer used directly."""
    if isinstance(scorer, ScoringService):
        return scorer.scoring
    if isinstance(scorer, LoglikelihoodService):
        return scorer
    return LoglikelihoodService(scorer, batch_size=getattr(scorer, "batch_size", None))


# -- choosing among continuations -----------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceQuestion:
    """One choice asked of a language model: a context and the options that may follow it, each a
    continuation written out in full (with the space that joins it to the context, if any)."""

    context: str
    options: tuple[str, ...]
    system: str | None = None


#: The ways an option can win (:class:`Decision`), as lm-evaluation-harness names its metrics:
#: the highest summed log-likelihood (``acc``); divided by the option's length in characters
#: (``acc_norm``, Python's ``len``) or in UTF-8 bytes (``acc_bytes``).
NORMALISATIONS = ("sum", "chars", "bytes")


@dataclass(frozen=True)
class Decision:
    """Which option a model chose: ``loglikelihoods`` of each option, and the index of the winner
    by each of :data:`NORMALISATIONS` (the first of equal scores wins, as ``numpy.argmax``)."""

    loglikelihoods: tuple[float, ...]
    chosen: dict[str, int]


def _first_best(values: Sequence[float]) -> int:
    return max(range(len(values)), key=lambda i: (values[i], -i))


def choose(question: ChoiceQuestion, scores: Sequence[Loglikelihood]) -> Decision:
    """The option chosen by each normalisation, from the options' scores."""
    logprobs = tuple(score.logprob for score in scores)
    per = {
        "sum": [1.0] * len(logprobs),
        "chars": [float(len(o)) for o in question.options],
        "bytes": [float(len(o.encode("utf-8"))) for o in question.options],
    }
    return Decision(
        logprobs,
        {
            name: _first_best([lp / size if size else lp for lp, size in zip(logprobs, per[name])])
            for name in NORMALISATIONS
        },
    )


def decide(
    service: LoglikelihoodService, questions: Sequence[ChoiceQuestion], progress: Progress | None = None
) -> list[Decision]:
    """Every option of every question scored in one batch of requests, and each question's choice."""
    requests = [LoglikelihoodRequest(q.context, option, q.system) for q in questions for option in q.options]
    scores = service.loglikelihood(requests, progress=progress)
    out, position = [], 0
    for question in questions:
        out.append(choose(question, scores[position : position + len(question.options)]))
        position += len(question.options)
    return out


class LikelihoodChoice:
    """A :class:`~harness.definitions.protocols.MultipleChoice` model made from a LoglikelihoodScorer (the
    adapter for choice tasks, :mod:`harness.models.capabilities`): each candidate, after a space, as a
    continuation of the question's text, the most likely chosen. The choice tasks (XCOPA, XNLI,
    PAWS-X, also handed this adapter where they need a PairClassifier) ask the scorer behind it
    (:func:`choice_target`) with prompts of their own, as lm-evaluation-harness writes them."""

    def __init__(self, scorer: LoglikelihoodScorer) -> None:
        self.service = scoring_service(scorer)

    def choice_target(self) -> LoglikelihoodService:
        return self.service

    def choose(self, questions: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
        asked = [
            ChoiceQuestion(text, tuple(f" {candidate}" for candidate in candidates)) for text, candidates in questions
        ]
        return [decision.chosen["sum"] for decision in decide(self.service, asked)]


def choice_target(capability: object) -> LoglikelihoodService | None:
    """The scorer behind ``capability`` (a :class:`LikelihoodChoice`), or None for a model that
    chooses by itself (a fine-tuned multiple-choice or pair classifier)."""
    return capability.choice_target() if isinstance(capability, LikelihoodChoice) else None
