"""What a model can do, as small protocols; a task asks for one of them, never for a class.

A model adapter implements whichever of these it can. The runner hands a task the capability it
needs, adapting where the harness knows how (an :class:`Encoder` becomes a :class:`Retriever`
through exact inner-product search, see :mod:`harness.models.capabilities`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from harness.files.io import sha256_text

if TYPE_CHECKING:  # annotations only: plugins name these protocols in metadata `harness list` reads
    import numpy as np

#: Which side of a retrieval pair a text is on; dual encoders use it to pick a prefix or tower.
Role = Literal["query", "passage"]


#: A text as an encoder takes it: a string, or a (sentence, context) pair.
Text = str | tuple[str, str]


@dataclass(frozen=True)
class EncodingRequest:
    """Texts a task will encode in one role (declared up front so a suite can share batches)."""

    role: Role
    texts: Sequence[Text]
    langs: Sequence[str] | None = None


@dataclass(frozen=True, eq=False)
class Corpus:
    """Texts to search, each with an id and a language code (for language-aware tokenisers)."""

    ids: Sequence[str]
    texts: Sequence[Text]
    langs: Sequence[str]

    def __post_init__(self) -> None:
        if not len(self.ids) == len(self.texts) == len(self.langs):
            raise ValueError("Corpus ids, texts and langs must have the same length")

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the content, so indexes and caches can tell two corpora apart."""
        return sha256_text(*(f"{i}\t{lang}\t{t}" for i, t, lang in zip(self.ids, self.texts, self.langs)))


@dataclass(frozen=True)
class Ranking:
    """Search results: for each query, corpus positions best first, with their scores.

    Ties are broken by corpus position (lower first) so every ranking is reproducible.
    """

    indices: np.ndarray  # (n_queries, k) int64
    scores: np.ndarray  # (n_queries, k) float32


@runtime_checkable
class Encoder(Protocol):
    """Maps texts to vectors whose inner product scores a (query, passage) pair."""

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim)."""
        ...


@runtime_checkable
class SearchIndex(Protocol):
    """A corpus prepared for search by a :class:`Retriever`."""

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        """Rank the corpus for each query; ``k=None`` ranks the whole corpus."""
        ...


@runtime_checkable
class KeyedSearchIndex(SearchIndex, Protocol):
    """A search index that can also take the benchmark ids of its queries: translate-test looks a
    question's translation up by (language, id), since one text may have several translations."""

    def search_ids(
        self, queries: Sequence[str], ids: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None
    ) -> Ranking:
        """:meth:`search`, with ``ids[i]`` the id of ``queries[i]``."""
        ...


@runtime_checkable
class ScoringIndex(SearchIndex, Protocol):
    """A search index that can also score every corpus entry for a query.

    Tasks with a small pool and a full-ranking metric (LAReQA's mAP) use it to find the ranks of
    the correct candidates without sorting the whole pool for every question.
    """

    def scores(self, queries: Sequence[str], *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Return a (len(queries), len(corpus)) array of scores, higher is better."""
        ...


@runtime_checkable
class Retriever(Protocol):
    """Ranks a corpus for queries (BM25, a dense index, ...)."""

    def index(self, corpus: Corpus) -> SearchIndex:
        """Prepare ``corpus`` for search."""
        ...


@dataclass(frozen=True)
class ReadingExample:
    """One extractive-QA input: a question and the context to find its answer in."""

    id: str
    question: str
    context: str
    question_lang: str
    context_lang: str


@dataclass(frozen=True)
class SpanAnswer:
    """A reader's answer: the span text, its character offset in the context and its score.

    ``no_answer_score`` is the reader's score for "no answer in this context" where the model
    has one (open-domain tasks use it to abstain).
    """

    text: str
    start: int
    score: float
    no_answer_score: float | None = None


@runtime_checkable
class Reader(Protocol):
    """Extracts an answer span from a context."""

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        """Return one answer per example, in order."""
        ...


@dataclass(frozen=True)
class OpenQuestion:
    """One open-domain question: no context is given; the model finds the answer itself.

    ``answer_lang`` is the language the benchmark scores answers in, where it demands one
    (XOR-EnglishSpan: "en"; XOR-Full and MKQA: the question's language), so a pipeline that
    finds its answer in a passage of another language knows to translate it; None: any.
    """

    id: str
    text: str
    lang: str
    answer_lang: str | None = None


@dataclass(frozen=True)
class OpenAnswer:
    """An open-domain answer. ``text`` "" means no answer; ``yes_no`` ("yes"/"no") answers a
    yes/no question; ``no_answer_score`` is the model's score for "no answer" (higher = more
    likely; any real number), which benchmarks such as MKQA sweep a threshold over."""

    text: str
    no_answer_score: float | None = None
    yes_no: Literal["yes", "no"] | None = None


@runtime_checkable
class OpenDomainQA(Protocol):
    """Answers questions without a given context (retrieve-then-read, closed-book, ...)."""

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        """Return one answer per question, in order."""
        ...


@runtime_checkable
class PredictionSource(Protocol):
    """A "model" whose predictions need no inference: a file made elsewhere (replayed in the
    task's own prediction format) or a reference such as the gold answers or empty answers.

    Any task can run with one, whatever capability it otherwise needs.
    """

    def predictions_for(self, task: Any, data: Any) -> dict[str, Any]:
        """Predictions for every unit of ``data``, in the task's unit -> predictions form."""
        ...


@runtime_checkable
class Translator(Protocol):
    """Translates texts between languages (translate-test puts one in front of an English model)."""

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        """Return one translation per text, in order."""
        ...


@runtime_checkable
class PairClassifier(Protocol):
    """Labels pairs of texts (natural language inference, paraphrase identification)."""

    def classify_pairs(self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str]) -> list[str]:
        """Return one of ``labels`` (the task's label set) per pair, in order. A model whose own
        labels cannot be matched to ``labels`` raises a one-line error instead of guessing."""
        ...


@runtime_checkable
class TokenTagger(Protocol):
    """Tags each word of a pre-tokenised sentence (named entities, parts of speech)."""

    def tag(self, sentences: Sequence[Sequence[str]], *, labels: Sequence[str]) -> list[list[str]]:
        """Return one tag of ``labels`` (the task's tag set) per word of each sentence, in order;
        a model whose own tags are not among ``labels`` raises a one-line error."""
        ...


@runtime_checkable
class MultipleChoice(Protocol):
    """Chooses one of several candidate continuations of a text (XCOPA's cause or effect)."""

    def choose(self, questions: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
        """For each ``(text, candidates)``, the index of the candidate chosen, in order."""
        ...


@dataclass(frozen=True)
class GenerationOptions:
    """How to decode one request. Every field changes the text, so all of them key the cache.

    ``max_new_tokens`` is the answer's budget; a reasoning model's trace (``<think> ...
    </think>``) has a budget of its own, ``reasoning_tokens``, spent before the answer's (0: the
    trace shares the answer's budget). ``stop`` strings end the answer (the text is cut before
    the first one, after any reasoning trace, never inside or right after it); ``logprobs`` asks
    for the log-probability of the answer's tokens (MKQA's No-Answer probability is made from it).
    Decoding is greedy (the reproducible choice for scoring) while ``temperature`` is 0; above it,
    sampled with ``top_p`` and ``seed`` (several samples of one prompt are requests that differ in
    ``seed``). ``system`` is the system prompt of a chat model (None: none).
    """

    max_new_tokens: int = 32
    stop: tuple[str, ...] = ()
    logprobs: bool = False
    reasoning_tokens: int = 0
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    system: str | None = None

    @property
    def budget(self) -> int:
        """The most tokens a request may generate: the trace's budget and the answer's."""
        return self.reasoning_tokens + self.max_new_tokens


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to complete. A model with a chat template sends it as the user's message."""

    prompt: str
    options: GenerationOptions = GenerationOptions()


#: Why a generation ended (``Generation.ended``): a stop string in the answer, the model's
#: end-of-sequence token, or the token budget; None when the engine does not say.
ENDINGS = ("stop", "eos", "length")


@dataclass(frozen=True)
class Generation:
    """A completion: ``text`` is the answer (reasoning stripped, cut at the first stop string);
    ``reasoning`` the ``<think>`` trace that came before it, if any (kept for the records, never
    scored); ``logprob`` the summed log-probability of the answer's tokens, when asked for;
    ``prompt_tokens`` and ``new_tokens`` the lengths the model computed on (for throughput and
    the padding share); ``ended`` why generation stopped (one of :data:`ENDINGS`, None: not
    known); ``trace_open`` that a reasoning trace was opened and never closed (so no answer came)."""

    text: str
    reasoning: str | None = None
    logprob: float | None = None
    prompt_tokens: int = 0
    new_tokens: int = 0
    ended: str | None = None
    trace_open: bool = False


@runtime_checkable
class Generator(Protocol):
    """Completes prompts (a causal or seq2seq language model, a server, vLLM)."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Return one completion per request, in order."""
        ...


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """A continuation to score after a context, as lm-evaluation-harness's ``loglikelihood``
    request: the context is read as a generation prompt is (inside the chat template, with the
    assistant's turn opened, when the model sends prompts that way; ``system`` as in
    :class:`GenerationOptions`) and the continuation follows it verbatim."""

    context: str
    continuation: str
    system: str | None = None


@dataclass(frozen=True)
class Loglikelihood:
    """The summed log-probability of a continuation's tokens given its context, how many tokens
    it took (for per-token normalisation), and whether greedy decoding would have produced it."""

    logprob: float
    tokens: int
    greedy: bool


@runtime_checkable
class LoglikelihoodScorer(Protocol):
    """A generator that can also score given continuations (the choice tasks by log-likelihood,
    and MKQA's No-Answer probability where generation returns no token log-probabilities)."""

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Return one score per request, in order."""
        ...


#: What a model can declare it provides (``Model.provides``); a task's ``needs`` is one of these.
CAPABILITIES: tuple[type, ...] = (
    Encoder,
    Retriever,
    Reader,
    OpenDomainQA,
    PredictionSource,
    Translator,
    PairClassifier,
    TokenTagger,
    MultipleChoice,
    Generator,
    LoglikelihoodScorer,
)


def protocol_methods(protocol: type) -> list[str]:
    """The methods a class must define to provide ``protocol``."""
    return [name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")]
