"""One generation service for every task of a run, and the bridge from a Generator to the QA tasks.

A :class:`~harness.definitions.protocols.Generator` model (``hf-generator``, ``openai-compatible``, ``vllm``)
completes prompts. The harness puts a :class:`GenerationService` in front of it, itself a
Generator, which

* keys every request by the model's identity, the prompt and the decoding options, so a request
  asked twice is generated once, and requests already in the on-disk cache
  (``<cache>/generations/<model-key>/``) are not generated at all;
* groups requests by decoding options, sorts them by prompt length and cuts them into batches of
  similar length, which keeps left padding small (the padding share is measured: the token slots
  a batch computes, ``batch x (longest prompt + longest completion)``, that hold no real token);
* halves a batch that runs out of GPU memory and carries on with the smaller size;
* under torchrun, deals the batches out to the ranks (one per rank a round, each rank generating
  with its own copy of the model, on its own GPU) and gathers the completions, so every rank
  holds all of them and N GPUs share the work instead of each doing all of it;
* saves what it generated to the cache batch by batch (rank 0 writes), so a killed run loses one
  round at most;
* measures prompt and generated tokens, and generated tokens per second.

The tasks build the prompts themselves (:mod:`harness.models.prompting`), from a template named in their
options, so that the template is recorded in the result and the scorer signature. A task asks the
runner for its usual capability (a Reader, an OpenDomainQA model); the adapters here make one from
a Generator (:class:`GenerativeQA`), and the task finds the generator behind it with
:func:`prompt_target`. A retrieval-augmented model (``retrieve-read`` with ``generator=...``)
offers its generator and its retrieval the same way.

Reasoning models write a trace before the answer (``<think> ... </think> answer``): the trace is
split off (:func:`split_reasoning`) before the answer is cut at a stop string and scored, and is
kept in the per-instance records.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from harness.data.passages import Passage
from harness.definitions.protocols import Generation, GenerationOptions, GenerationRequest, Generator, OpenQuestion
from harness.display.progress import Progress
from harness.errors import HarnessError
from harness.files.io import dump_json, sha256_text, write_atomic
from harness.models.batching import AdaptiveBatcher, ServiceStats
from harness.models.cache import model_key
from harness.models.distributed import World, current_world

#: The marker that ends a reasoning trace, by default (Qwen3, DeepSeek-R1 and their kind).
REASONING_END = "</think>"
REASONING_START = "<think>"
DEFAULT_BATCH_SIZE = 16


# -- turning a raw completion into an answer ----------------------------------------------------


def answer_start(text: str, reasoning_end: str, opened: bool = False) -> int | None:
    """Where the answer begins in a raw completion: after the last ``reasoning_end`` and the white
    space that follows it, when there is one; at 0 when the completion does not open a trace; None
    while a trace is still open (a completion that starts with ``<think>``, or any completion when
    the prompt ``opened`` the trace, as chat templates ending in ``<think>`` do, and has no end
    marker yet). Engines use it to look for stop strings in the answer only: never inside the
    trace, nor in the blank lines right after it (``</think>\n\nVolga`` with the stop string
    ``"\n"`` is the answer "Volga", not "")."""
    if reasoning_end and reasoning_end in text:
        end = text.rindex(reasoning_end) + len(reasoning_end)
        return len(text) - len(text[end:].lstrip())
    if opened or text.lstrip().startswith(REASONING_START):
        return None
    return 0


def split_reasoning(text: str, reasoning_end: str = REASONING_END, opened: bool = False) -> tuple[str | None, str]:
    """``(trace, rest)`` of a raw completion: the trace without its ``<think>`` / end markers (None
    when there is none), and the text after it; ``opened``: the prompt opened the trace (see
    :func:`answer_start`). A trace never closed leaves no answer."""
    start = answer_start(text, reasoning_end, opened)
    if start == 0:
        return None, text
    if start is None:
        return text.strip().removeprefix(REASONING_START).strip(), ""
    head = text[: text.rindex(reasoning_end)].strip().removeprefix(REASONING_START).strip()
    return head, text[start:]


def stop_position(text: str, stops: Sequence[str], start: int = 0) -> int | None:
    """The index of the first stop string in ``text[start:]`` (None: none occurs)."""
    found = [text.find(stop, start) for stop in stops if stop]
    found = [i for i in found if i >= 0]
    return min(found) if found else None


@dataclass(frozen=True)
class Completion:
    """What an engine returns for one request before the harness finishes it: the raw text, and,
    when log-probabilities were asked for, the text of each generated token with its log-probability
    (their concatenation is the raw text, up to tokens that decode to nothing, such as EOS);
    ``ended``: why the engine stopped (one of :data:`~harness.definitions.protocols.ENDINGS`, None: it does
    not say). :func:`finish` reports "stop" instead when a stop string cut the answer.
    ``opened``: the prompt itself opened the reasoning trace (a chat template that ends in
    ``<think>``), so the completion is inside it until ``reasoning_end``."""

    text: str
    prompt_tokens: int
    new_tokens: int
    pieces: Sequence[str] | None = None
    logprobs: Sequence[float] | None = None
    ended: str | None = None
    opened: bool = False


def finish(completion: Completion, options: GenerationOptions, reasoning_end: str = REASONING_END) -> Generation:
    """The answer of a raw completion, the one path every engine's text takes (``hf-generator``,
    a server, vLLM, a Python object): the trace split off, the rest cut before the first stop
    string (searched in the answer only, see :func:`answer_start`) and stripped of surrounding
    white space; with log-probabilities, the sum over the tokens that produced the answer *and its
    end* (the stop string, or the end-of-sequence token), so the figure is the model's probability
    of answering exactly this and stopping there. A trace never closed gives no answer, and says
    so (``trace_open``), as ``ended`` says why generation stopped."""
    raw = completion.text
    start = answer_start(raw, reasoning_end, completion.opened)
    reasoning, _ = split_reasoning(raw, reasoning_end, completion.opened)
    if start is None:
        return Generation(
            "",
            reasoning,
            0.0 if options.logprobs else None,
            completion.prompt_tokens,
            completion.new_tokens,
            completion.ended,
            trace_open=True,
        )
    stop = stop_position(raw, options.stop, start)
    cut = len(raw) if stop is None else stop
    body = raw[start:cut]
    text = body.strip()
    logprob = None
    if options.logprobs and completion.pieces is not None and completion.logprobs is not None:
        # an engine that gives none leaves logprob None: a model that scores continuations fills it
        # in (harness.models.loglikelihood.ScoringService), and a task that needs it says so
        first = start + (len(body) - len(body.lstrip()))  # the answer's own first character
        end = len(raw) if stop is None else stop + max(len(s) for s in options.stop if s and raw.startswith(s, stop))
        logprob = _span_logprob(completion.pieces, completion.logprobs, first, end)
    return Generation(
        text,
        reasoning,
        logprob,
        completion.prompt_tokens,
        completion.new_tokens,
        "stop" if stop is not None else completion.ended,
    )


def _span_logprob(pieces: Sequence[str], logprobs: Sequence[float], first: int, end: int) -> float:
    """Summed log-probabilities of the tokens whose text overlaps ``[first, end)``, plus those that
    decode to nothing inside it or at its end (EOS)."""
    total, position = 0.0, 0
    for piece, logprob in zip(pieces, logprobs):
        stop = position + len(piece)
        if (piece and stop > first and position < end) or (not piece and first <= position <= end):
            total += float(logprob)
        position = stop
    return total


if TYPE_CHECKING:
    import numpy as np
    from _typeshed import DataclassInstance

#: A cached record: a dataclass, written with :func:`dataclasses.asdict`.
T = TypeVar("T", bound="DataclassInstance")


# -- the cache ----------------------------------------------------------------------------------


#: The decoding options every cache key names; the others (sampling, the trace's budget, the system
#: prompt) came later and name a key only when set, so entries cached before them stay valid.
KEYED_ALWAYS = ("max_new_tokens", "stop", "logprobs")


def request_key(request: GenerationRequest) -> str:
    """The cache key of a request (the model is the cache folder): prompt and decoding options."""
    default = GenerationOptions()
    options = {
        name: value
        for name, value in asdict(request.options).items()
        if name in KEYED_ALWAYS or value != getattr(default, name)
    }
    return sha256_text(request.prompt, json.dumps(options, sort_keys=True))


class RecordCache(Generic[T]):
    """One model's results on disk: ``<root>/<folder>/<model-key>/`` holds ``model.json`` (the
    identity the key was made from) and JSON-lines shards, each written whole (atomically). A line
    that does not parse as a record is skipped with a warning, and its request asked again. The
    generation and log-likelihood caches are this, each with its folder and record type."""

    #: The folder under the cache root, and the field that holds each line's record.
    folder_name: ClassVar[str]
    field_name: ClassVar[str]
    #: What the warning about a damaged line says (``"generation"``, ``"generated"``).
    label: ClassVar[str]
    redone: ClassVar[str]

    def __init__(self, root: Path, identity: dict[str, Any]) -> None:
        self.folder = root / self.folder_name / model_key(identity)
        self.identity = identity
        self.entries: dict[str, T] = {}
        self.damaged: list[str] = []
        for shard in sorted(self.folder.glob("*.jsonl")) if self.folder.is_dir() else []:
            self._load(shard)

    @staticmethod
    def decode(raw: dict[str, Any]) -> T:
        """A record as read from its line (raises ValueError, KeyError or TypeError if damaged)."""
        raise NotImplementedError

    def _load(self, shard: Path) -> None:
        for number, line in enumerate(shard.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            try:
                raw = json.loads(line)
                self.entries[raw["key"]] = self.decode(raw[self.field_name])
            except (ValueError, KeyError, TypeError):
                self.damaged.append(f"{shard}:{number}")
                warnings.warn(
                    f"{self.label} cache {shard} line {number} is damaged: that request is {self.redone} again",
                    RuntimeWarning,
                    stacklevel=3,
                )

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def put(self, items: Sequence[tuple[str, T]]) -> None:
        """Write one new shard with these records."""
        if not items:
            return
        if not (self.folder / "model.json").exists():
            dump_json(self.identity, self.folder / "model.json")
        payload = "".join(
            json.dumps({"key": key, self.field_name: asdict(record)}, ensure_ascii=False) + "\n"
            for key, record in items
        ).encode("utf-8")
        write_atomic(self.folder / f"{uuid.uuid4().hex}.jsonl", lambda handle: handle.write(payload))
        self.entries.update(items)


class GenerationCache(RecordCache[Generation]):
    """Completions of one model on disk (``<root>/generations/<model-key>/``)."""

    folder_name = "generations"
    field_name = "generation"
    label = "generation"
    redone = "generated"

    @staticmethod
    def decode(raw: dict[str, Any]) -> Generation:
        return Generation(**raw)


R = TypeVar("R")


def recall(
    keys: Sequence[str], requests: Sequence[R], memory: dict[str, T], cache: RecordCache[T] | None, stats: ServiceStats
) -> dict[str, R]:
    """The requests still to compute, by key (each once), after those remembered or found in the
    cache (taken into ``memory``); ``stats`` counts them as requested, unique and cache hits. The
    generation and log-likelihood services both start here."""
    stats.requested += len(requests)
    pending: dict[str, R] = {}
    for key, request in zip(keys, requests):
        if key in memory or key in pending:
            continue
        stats.unique += 1
        if cache is not None and key in cache:
            memory[key] = cache.entries[key]
            stats.cache_hits += 1
        else:
            pending[key] = request
    return pending


# -- the service --------------------------------------------------------------------------------


@runtime_checkable
class PromptCounter(Protocol):
    """A generator that can say how many tokens each prompt takes (for length-sorted batches);
    without it prompts are sorted by characters."""

    def prompt_lengths(self, prompts: Sequence[str]) -> list[int]: ...


@dataclass
class GenerationStats(ServiceStats):
    """What the service did, for the result's execution record and the benchmark."""

    batch_size: int = DEFAULT_BATCH_SIZE
    generated: int = 0
    prompt_tokens: int = 0
    new_tokens: int = 0
    damaged_cache_lines: list[str] = field(default_factory=list)

    SUMMED = (*ServiceStats.SUMMED, "generated", "prompt_tokens", "new_tokens")
    RATES = ("tokens_per_s", "padding_share")

    @property
    def padding_share(self) -> float:
        """The share of computed token slots that held padding."""
        real = self.prompt_tokens + self.new_tokens
        return 1 - real / self.padded_tokens if self.padded_tokens else 0.0

    @property
    def tokens_per_s(self) -> float | None:
        """Generated tokens per second of generation (cache reads not timed)."""
        return self.new_tokens / self.seconds if self.seconds > 0 else None

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["padding_share"] = round(self.padding_share, 4)
        out["seconds"] = round(self.seconds, 3)
        out["tokens_per_s"] = None if self.tokens_per_s is None else round(self.tokens_per_s, 1)
        return out


@runtime_checkable
class ReportsGeneration(Protocol):
    """A composite model that generates through an inner generator's service (retrieve-read): what
    that service did goes into the result's execution record as a top-level generator's would.
    None: no generator inside."""

    @property
    def generation_stats(self) -> GenerationStats | None: ...


class GenerationService:
    """A :class:`~harness.definitions.protocols.Generator` in front of a model: memoised, cached on disk,
    batched by prompt length (see the module docstring)."""

    def __init__(
        self,
        generator: Generator,
        *,
        cache: GenerationCache | None = None,
        batch_size: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        world: World | None = None,
    ) -> None:
        """``world``: the ranks that share the work (each rank's own completions are in its
        :attr:`stats`); by default this process alone."""
        self.generator = generator
        self.cache = cache
        self.clock = clock
        self.world = world or World()
        self.batcher = AdaptiveBatcher(batch_size or DEFAULT_BATCH_SIZE)
        self.stats = GenerationStats(
            batch_size=self.batcher.batch_size, damaged_cache_lines=list(cache.damaged) if cache is not None else []
        )
        self._memory: dict[str, Generation] = {}

    @classmethod
    def for_model(cls, generator: Generator, runtime: Any, identity: dict[str, Any]) -> GenerationService:
        """The service a run puts in front of a generator model, as the encoding queue is put in
        front of an encoder: the on-disk cache under ``runtime.cache_dir`` (none if it is None),
        the run's batch size or the model's own. One per loaded model, so every task of a suite
        shares its memo and statistics. Under torchrun the ranks share the batches."""
        cache = GenerationCache(runtime.cache_dir, identity) if runtime.cache_dir is not None else None
        return cls(
            generator,
            cache=cache,
            batch_size=runtime.batch_size or getattr(generator, "batch_size", None),
            world=current_world(),
        )

    def generate(self, requests: Sequence[GenerationRequest], *, progress: Progress | None = None) -> list[Generation]:
        """One completion per request, in order; ``progress`` moves by one per request answered."""
        keys = [request_key(request) for request in requests]
        pending = recall(keys, requests, self._memory, self.cache, self.stats)
        if progress is not None:
            progress.update(len(requests) - len(pending))
        by_options: dict[GenerationOptions, list[str]] = {}
        for key, request in pending.items():
            by_options.setdefault(request.options, []).append(key)
        for group in by_options.values():
            self._generate_group([pending[key] for key in group], group, progress)
        return [self._memory[key] for key in keys]

    def _lengths(self, prompts: list[str]) -> list[int]:
        if isinstance(self.generator, PromptCounter):
            return list(self.generator.prompt_lengths(prompts))
        return [len(prompt) for prompt in prompts]

    def _generate_group(self, requests: list[GenerationRequest], keys: list[str], progress: Progress | None) -> None:
        """Generate requests that share decoding options, in length-sorted batches, one batch per
        rank a round (every rank asks for the same requests in the same order, so all plan the
        same batches)."""
        lengths = self._lengths([request.prompt for request in requests])
        world = self.world
        batches = self.batcher.plan(lengths, world)
        for first in range(0, len(batches), world.size):
            start = self.clock()  # the round, waiting for the other ranks included, as encoding times it
            round_batches = batches[first : first + world.size]
            mine = (
                self._generate_batch(requests, keys, round_batches[world.rank])
                if world.rank < len(round_batches)
                else []
            )
            done = [pair for share in world.gather_objects(mine) for pair in share]
            self.stats.seconds += self.clock() - start
            for key, generation in done:
                self._memory[key] = generation
            if self.cache is not None and world.is_main:
                self.cache.put(done)
            if progress is not None:
                progress.update(len(done), tokens=sum(g.new_tokens for _, g in done))

    def _generate_batch(
        self, requests: list[GenerationRequest], keys: list[str], batch: np.ndarray
    ) -> list[tuple[str, Generation]]:
        """One batch (halved on out-of-memory), counted in this rank's statistics."""

        def work(part: np.ndarray) -> list[Generation]:
            out = list(self.generator.generate([requests[i] for i in part]))
            if len(out) != len(part):
                raise HarnessError(f"the generator returned {len(out)} completions for {len(part)} prompts")
            self.stats.batches += 1
            self.stats.padded_tokens += len(part) * (max(g.prompt_tokens for g in out) + max(g.new_tokens for g in out))
            return out

        generations = self.batcher.run(batch, work)
        self.stats.batch_size, self.stats.oom_halvings = self.batcher.batch_size, self.batcher.halvings
        for generation in generations:
            self.stats.generated += 1
            self.stats.prompt_tokens += generation.prompt_tokens
            self.stats.new_tokens += generation.new_tokens
        return [(keys[i], generation) for i, generation in zip(batch, generations)]


#: Prompts a dry run tokenises to estimate the prompt tokens of all (a seeded sample).
PLAN_SAMPLE = 256
#: Prompts a dry run generates, as one batch, to estimate the generation time.
CALIBRATION_BATCH = 4


@dataclass(frozen=True)
class GenerationPlan:
    """What a run would generate (``--dry-run``): the requests, those the cache already holds, the
    prompt tokens (exact when every prompt was tokenised, else tokens per character of a seeded
    sample times all characters; None when the model cannot count tokens), the budget of new tokens
    a request may use (the trace's and the answer's), one rendered prompt, and the time estimated
    from generating one small batch of sample prompts (None when it could not be measured,
    ``calibration`` saying how or why not)."""

    requests: int
    unique: int
    cache_hits: int
    to_generate: int
    prompt_tokens: int | None
    tokens_exact: bool
    max_new_tokens: int
    reasoning_tokens: int
    example_prompt: str
    estimated_seconds: float | None
    calibration: str


def plan_generation(
    service: GenerationService, requests: Sequence[GenerationRequest], *, seed: int = 0, sample_size: int = PLAN_SAMPLE
) -> GenerationPlan | None:
    """What ``service`` would do with ``requests``, without generating them all (None: no request).
    The time is the per-prompt time of one batch of :data:`CALIBRATION_BATCH` sampled prompts,
    generated for real (not cached) after a one-token warm-up, times the prompts to generate,
    shared by the ranks: an upper bound for engines whose larger batches take little longer."""
    if not requests:
        return None
    unique = {request_key(request): request for request in requests}
    cached = {key for key in unique if key in service._memory or (service.cache is not None and key in service.cache)}
    missing = [request for key, request in unique.items() if key not in cached]
    rng = random.Random(seed)
    sample = missing if len(missing) <= sample_size else rng.sample(missing, sample_size)
    tokens: int | None = None
    exact = sample is missing
    if isinstance(service.generator, PromptCounter) and sample:
        counted = sum(service.generator.prompt_lengths([request.prompt for request in sample]))
        characters = sum(len(request.prompt) for request in sample)
        tokens = counted if exact else round(counted / max(characters, 1) * sum(len(r.prompt) for r in missing))
    seconds: float | None = 0.0
    how = "nothing to generate"
    if missing:
        batch = rng.sample(missing, min(CALIBRATION_BATCH, len(missing)))
        try:
            warm = batch[0]  # one token first: lazy loading and first-call work are no part of the rate
            service.generator.generate(
                [GenerationRequest(warm.prompt, replace(warm.options, max_new_tokens=1, reasoning_tokens=0))]
            )
            start = service.clock()
            service.generator.generate(batch)
            elapsed = service.clock() - start
        except Exception as error:  # an estimate must not stop the plan; the run would show the error
            seconds, how = None, f"unknown: the calibration generation failed ({type(error).__name__}: {error})"
        else:
            batches = -(-len(missing) // service.batcher.batch_size)
            per_batch = elapsed / len(batch) * min(service.batcher.batch_size, len(missing))
            seconds = per_batch * batches / service.world.size
            how = (
                f"{elapsed:.2f} s for a batch of {len(batch)} sample prompt(s), scaled to {batches} batch(es) of "
                f"up to {service.batcher.batch_size}: an upper bound where larger batches cost little more"
            )
    options = requests[0].options
    return GenerationPlan(
        len(requests),
        len(unique),
        len(cached),
        len(missing),
        tokens,
        exact and tokens is not None,
        options.max_new_tokens,
        options.reasoning_tokens,
        requests[0].prompt,
        seconds,
        how,
    )


def generation_service(generator: Generator) -> GenerationService:
    """``generator`` behind a service: itself when it is one (what the runner and the composite
    models hand a task: :meth:`GenerationService.for_model`), else a service of its own without
    a disk cache, for a generator used directly."""
    if isinstance(generator, GenerationService):
        return generator
    return GenerationService(generator, batch_size=getattr(generator, "batch_size", None))


# -- a run's generation options -------------------------------------------------------------------

#: The keys of ``--gen-kwargs`` (as lm-eval's ``--gen_kwargs``), with the type each value is read as.
GEN_KWARGS: dict[str, type] = {
    "max_new_tokens": int,
    "stop": str,
    "reasoning_tokens": int,
    "temperature": float,
    "top_p": float,
    "seed": int,
    "samples": int,
}


@dataclass(frozen=True)
class GenerationSettings:
    """A run's generation options (``--gen-kwargs``, ``--system-prompt``; the API's ``gen_kwargs``
    and ``system_prompt``), laid over each prompt template's own: ``max_new_tokens`` and ``stop``
    replace the template's when given (None: the template's); ``reasoning_tokens``, sampling
    (``temperature`` above 0, ``top_p``, ``seed``), the system prompt and ``samples`` (answers
    drawn per prompt, seeds ``seed``, ``seed + 1``, ...) are as in
    :class:`~harness.definitions.protocols.GenerationOptions`. Those not at their default are recorded in the
    task's options and its scorer signature, so runs made with other options never rank together."""

    max_new_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    reasoning_tokens: int = 0
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    samples: int = 1
    system: str | None = None

    def __post_init__(self) -> None:
        problem = (
            "max_new_tokens must be at least 1"
            if self.max_new_tokens is not None and self.max_new_tokens < 1
            else "reasoning_tokens must be 0 or more"
            if self.reasoning_tokens < 0
            else "temperature must be 0 (greedy) or more"
            if self.temperature < 0
            else "top_p must be above 0 and at most 1"
            if not 0 < self.top_p <= 1
            else "samples must be at least 1"
            if self.samples < 1
            else f"samples={self.samples} with temperature 0 draws {self.samples} equal greedy answers: set a temperature "
            "above 0"
            if self.samples > 1 and self.temperature == 0
            else "stop strings must not be empty"
            if self.stop is not None and not all(self.stop)
            else None
        )
        if problem:
            raise HarnessError(f"gen_kwargs (--gen-kwargs): {problem}")

    @classmethod
    def parse(cls, gen_kwargs: str | Mapping[str, Any] | None = None, system: str | None = None) -> GenerationSettings:
        """From ``key=value,...`` (lm-eval's form; ``stop=\\n`` with backslash escapes, repeated for
        several stop strings), a JSON object, or a mapping; ``system``: the system prompt."""
        if isinstance(gen_kwargs, str) and gen_kwargs.strip().startswith("{"):
            try:
                gen_kwargs = json.loads(gen_kwargs)
            except ValueError as error:
                raise HarnessError(f"gen_kwargs (--gen-kwargs): not a JSON object ({error})") from None
            if not isinstance(gen_kwargs, dict):
                raise HarnessError("gen_kwargs (--gen-kwargs): not a JSON object")
        pairs: list[tuple[str, Any]] = []
        if isinstance(gen_kwargs, str):
            for item in filter(None, (part.strip() for part in gen_kwargs.split(","))):
                key, sep, value = item.partition("=")
                if not sep:
                    raise HarnessError(f"gen_kwargs (--gen-kwargs): '{item}' is not key=value")
                pairs.append((key.strip(), _unescape(value) if key.strip() == "stop" else value.strip()))
        elif gen_kwargs is not None:
            for key, value in gen_kwargs.items():
                pairs += (
                    [(key, v) for v in value] if key == "stop" and isinstance(value, (list, tuple)) else [(key, value)]
                )
        values: dict[str, Any] = {}
        for key, value in pairs:
            if key not in GEN_KWARGS:
                raise HarnessError(
                    f"gen_kwargs (--gen-kwargs): unknown option '{key}' (options: "
                    f"{', '.join(GEN_KWARGS)}; the system prompt is system_prompt, --system-prompt)"
                )
            kind = GEN_KWARGS[key]
            try:
                typed = kind(value) if not (kind is int and isinstance(value, float)) else None
            except (TypeError, ValueError):
                typed = None
            if typed is None or isinstance(value, bool):
                raise HarnessError(
                    f"gen_kwargs (--gen-kwargs): {key}={value!r} is not {'an' if kind is int else 'a'} "
                    f"{ {int: 'integer', float: 'number', str: 'text'}[kind] }"
                )
            if key == "stop":
                values["stop"] = (*values.get("stop", ()), typed)
            else:
                values[key] = typed
        return cls(**values, system=system)

    def options(self, template: GenerationOptions, *, logprobs: bool = False, sample: int = 0) -> GenerationOptions:
        """The decoding options of a request: the template's, with these laid over them; ``sample``:
        which of the :attr:`samples` (its seed)."""
        return GenerationOptions(
            max_new_tokens=self.max_new_tokens or template.max_new_tokens,
            stop=template.stop if self.stop is None else self.stop,
            logprobs=logprobs,
            reasoning_tokens=self.reasoning_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            seed=self.seed + sample,
            system=self.system,
        )

    def recorded(self) -> dict[str, Any]:
        """The options not at their default, as results record them."""
        default = GenerationSettings()
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in asdict(self).items()
            if value != getattr(default, name)
        }

    def signature(self) -> str:
        """The scorer signature's part (``|gen:...``; "" at the defaults)."""
        recorded = self.recorded()
        if not recorded:
            return ""
        if "system" in recorded:  # the text may be long: its digest
            recorded["system"] = sha256_text(recorded["system"])[:12]
        return "|gen:" + ",".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in recorded.items())


def _unescape(text: str) -> str:
    """``\\n``, ``\\t``, ``\\r`` and ``\\\\`` in a stop string typed on a command line."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), text)


# -- what tasks prompt ------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptTarget:
    """What a task prompts when its model generates: the generator (behind its service) and, for a
    retrieval-augmented model, how to find each question's passages."""

    generator: GenerationService
    retrieve: Callable[[Sequence[OpenQuestion]], list[list[Passage]]] | None = None


@runtime_checkable
class Prompted(Protocol):
    """A capability with a generator behind it, which tasks prompt with their own templates."""

    def prompt_target(self) -> PromptTarget | None: ...


def prompt_target(capability: object) -> PromptTarget | None:
    """The generator (and retrieval) behind ``capability``, or None for a model that does not generate."""
    return capability.prompt_target() if isinstance(capability, Prompted) else None


@dataclass(frozen=True)
class GeneratedAnswer:
    """A generated answer as a unit's predictions keep it (JSON in the saved parts, and the
    prediction of its per-instance record): the answer that is scored, and what is kept beside it
    to inspect the run (lm-eval's ``--log_samples``): the reasoning trace, the ids of the passages
    in the prompt, why generation ended (``ended``, ``trace_open``: see
    :class:`~harness.definitions.protocols.Generation`), the rendered prompt's SHA-256 (of its UTF-8 text, as
    ``sha256sum`` computes it: always) and the text itself (with
    ``log_samples``), and the answers of the further samples when several were drawn."""

    answer: str
    reasoning: str | None = None
    passages: tuple[str, ...] = ()
    ended: str | None = None
    trace_open: bool = False
    prompt_sha256: str | None = None
    prompt: str | None = None
    samples: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        generation: Generation,
        prompt: str,
        *,
        answer: str | None = None,
        passages: Sequence[str] = (),
        log_samples: bool = False,
        samples: Sequence[Generation] = (),
    ) -> GeneratedAnswer:
        """The record of ``generation`` (``answer``: what is scored, when not its text) for ``prompt``."""
        return cls(
            generation.text if answer is None else answer,
            generation.reasoning,
            tuple(passages),
            generation.ended,
            generation.trace_open,
            hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
            prompt if log_samples else None,
            tuple(sample.text for sample in samples),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answer": self.answer}
        for name in KEPT_FIELDS:
            value = getattr(self, name)
            if value not in (None, (), False):
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, record: dict[str, Any], answer: str | None = None) -> GeneratedAnswer:
        kept_values: dict[str, Any] = {
            name: tuple(record[name]) if name in ("passages", "samples") else record[name]
            for name in KEPT_FIELDS
            if name in record
        }
        return cls(record.get("answer", "") if answer is None else answer, **kept_values)


#: The fields of a prediction record that hold what a generated answer keeps beside the answer.
KEPT_FIELDS = ("reasoning", "passages", "ended", "trace_open", "prompt_sha256", "prompt", "samples")


def kept(answer: str, record: dict[str, Any]) -> str | dict[str, Any]:
    """What a per-instance record shows as the prediction: the answer, with what a generated
    answer keeps beside it when the prediction ``record`` carries it (a generative run's)."""
    if not any(name in record for name in KEPT_FIELDS):
        return answer
    return GeneratedAnswer.from_json(record, answer).to_json()


def answer_text(value: str | dict[str, Any]) -> str:
    """The scored answer of a prediction: the text itself, or a :class:`GeneratedAnswer`'s answer."""
    return value["answer"] if isinstance(value, dict) else value


def generated(value: object) -> bool:
    """Whether a prediction is a generated answer's record (:meth:`GeneratedAnswer.to_json`)."""
    return isinstance(value, dict) and isinstance(value.get("answer"), str) and "prompt_sha256" in value


def with_sample(predictions: Any, sample: int) -> Any:
    """``predictions`` (any task's unit -> predictions) with each generated answer replaced by its
    ``sample``-th further sample (1: the second answer drawn), to score every sample alike: the
    answer is a record's ``answer`` or, in a task's own line format (MKQA), its ``prediction``."""
    if isinstance(predictions, list):
        return [with_sample(item, sample) for item in predictions]
    if not isinstance(predictions, dict):
        return predictions
    if isinstance(predictions.get("samples"), list) and len(predictions["samples"]) >= sample:
        name = "answer" if "answer" in predictions else "prediction"
        return {**predictions, name: predictions["samples"][sample - 1]}
    return {key: with_sample(value, sample) for key, value in predictions.items()}


# -- answers that never came ----------------------------------------------------------------------


@dataclass
class AnswerCounts:
    """Of a unit's generated answers: how many there are, how many came back empty and why (a
    reasoning trace never closed; the token budget ran out before any answer), and how many
    answers the budget cut short, so no 0 is silent."""

    answers: int = 0
    empty: int = 0
    trace_open: int = 0
    empty_cut_by_budget: int = 0
    cut_by_budget: int = 0

    def add(self, record: dict[str, Any]) -> None:
        self.answers += 1
        empty, trace_open = not record["answer"].strip(), bool(record.get("trace_open"))
        at_budget = record.get("ended") == "length"
        self.empty += empty
        self.trace_open += empty and trace_open
        self.empty_cut_by_budget += empty and at_budget and not trace_open
        self.cut_by_budget += at_budget and not empty

    @property
    def empty_otherwise(self) -> int:
        """Empty answers the model ended itself: it answered nothing."""
        return self.empty - self.trace_open - self.empty_cut_by_budget


def answer_counts(units: Mapping[str, Sequence[object]]) -> dict[str, AnswerCounts]:
    """:class:`AnswerCounts` per unit (a language, a file) of its generated predictions; units
    without any are left out."""
    out: dict[str, AnswerCounts] = {}
    for unit, predictions in units.items():
        for prediction in predictions:
            if generated(prediction):
                out.setdefault(unit, AnswerCounts()).add(prediction)  # type: ignore[arg-type]
    return out


def answer_notes(counts: dict[str, AnswerCounts], options: GenerationOptions | None) -> list[str]:
    """The lines under a table that say where answers are missing or cut, e.g. "37 of 1,190
    answers empty: trace not closed within 512 tokens (de 30, ja 7)"; none when all came."""
    total = sum(c.answers for c in counts.values())
    budget = "" if options is None else f" within {options.budget:,} tokens"
    answer_budget = "" if options is None else f" ({options.max_new_tokens:,} new tokens)"
    notes = []
    hint = (
        ""
        if options is None or options.reasoning_tokens
        else ": give the trace a budget of its own (--gen-kwargs reasoning_tokens=N)"
    )
    for field_name, text, after in (
        ("trace_open", f"empty: trace not closed{budget}", hint),
        ("empty_cut_by_budget", f"empty: cut by the token budget{answer_budget}", ""),
    ):
        per_unit = {unit: getattr(c, field_name) for unit, c in counts.items() if getattr(c, field_name)}
        if per_unit:
            notes.append(f"{sum(per_unit.values()):,} of {total:,} answers {text}{_by_unit(per_unit, counts)}{after}")
    other_empty = {unit: c.empty_otherwise for unit, c in counts.items() if c.empty_otherwise}
    if other_empty:
        notes.append(
            f"{sum(other_empty.values()):,} of {total:,} answers empty: the model answered nothing"
            f"{_by_unit(other_empty, counts)}"
        )
    cut = {unit: c.cut_by_budget for unit, c in counts.items() if c.cut_by_budget}
    if cut:
        notes.append(
            f"{sum(cut.values()):,} of {total:,} answers cut by the token budget{answer_budget} before "
            f"a stop string or the end of sequence{_by_unit(cut, counts)}"
        )
    return notes


def _by_unit(per_unit: dict[str, int], counts: dict[str, AnswerCounts]) -> str:
    """`` (de 30, ja 7)`` where more than one unit was scored."""
    if len(counts) < 2:
        return ""
    return " (" + ", ".join(f"{unit} {n:,}" for unit, n in per_unit.items()) + ")"
