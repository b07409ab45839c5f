"""Give a task the capability it asks for, adapting a model where the harness knows how.

A task names one protocol (say :class:`~harness.definitions.protocols.Retriever`). A model that implements
it is used as it is; otherwise a registered adapter may build it from another capability (an
:class:`~harness.definitions.protocols.Encoder` becomes a Retriever through exact inner-product search).
If neither works the run stops before any work with "model M cannot run task T: T needs ...".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harness.definitions.model import Model
from harness.definitions.protocols import (
    CAPABILITIES,
    Corpus,
    Encoder,
    Generator,
    LoglikelihoodScorer,
    MultipleChoice,
    OpenDomainQA,
    PairClassifier,
    Ranking,
    Reader,
    Retriever,
    SearchIndex,
    Translator,
    protocol_methods,
)
from harness.display.progress import Progress
from harness.errors import CapabilityError
from harness.models.loglikelihood import LikelihoodChoice
from harness.models.prompting import GenerativeQA
from harness.models.search import exact_search


class DenseIndex:
    """A corpus encoded as passage vectors, searched exactly by inner product."""

    def __init__(self, encoder: Encoder, vectors: np.ndarray) -> None:
        self.encoder = encoder
        self.vectors = vectors

    def _queries(self, queries: Sequence[str], langs: Sequence[str] | None) -> np.ndarray:
        return np.asarray(self.encoder.encode(queries, role="query", langs=langs), dtype=np.float32)

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        return exact_search(self._queries(queries, langs), self.vectors, k)

    def scores(self, queries: Sequence[str], *, langs: Sequence[str] | None = None) -> np.ndarray:
        scores: np.ndarray = self._queries(queries, langs) @ self.vectors.T
        return scores


class EncoderRetriever:
    """Turns an :class:`Encoder` into a :class:`Retriever` (exact search, bounded memory)."""

    #: Passages handed to the encoder per call, so progress shows on long corpora.
    chunk = 1024

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder

    def index(self, corpus: Corpus) -> SearchIndex:
        n = len(corpus)
        if n == 0:
            return DenseIndex(self.encoder, np.zeros((0, 0), dtype=np.float32))
        parts = []
        with Progress(n, "encoding passages") as bar:
            for start in range(0, n, self.chunk):
                stop = min(n, start + self.chunk)
                parts.append(
                    np.asarray(
                        self.encoder.encode(corpus.texts[start:stop], role="passage", langs=corpus.langs[start:stop]),
                        dtype=np.float32,
                    )
                )
                bar.update(stop - start)
        return DenseIndex(self.encoder, np.concatenate(parts))


#: For each capability, the other capabilities it can be built from, and how. A Generator reads
#: and answers through :class:`~harness.models.prompting.GenerativeQA`, behind the shared generation
#: service; the QA tasks find the generator behind it and prompt it with their own templates. A
#: generator that scores continuations (a LoglikelihoodScorer) chooses through
#: :class:`~harness.models.loglikelihood.LikelihoodChoice`, the choice tasks asking it their own prompts.
ADAPTERS: dict[type, list[tuple[type, Callable[[Any], Any]]]] = {
    Retriever: [(Encoder, EncoderRetriever)],
    Encoder: [],
    Reader: [(Generator, GenerativeQA)],
    OpenDomainQA: [(Generator, GenerativeQA)],
    Translator: [],
    MultipleChoice: [(LoglikelihoodScorer, LikelihoodChoice)],
    PairClassifier: [(LoglikelihoodScorer, LikelihoodChoice)],
}


def declared(model: object) -> frozenset[type]:
    """What ``model`` (an instance or a class) provides: a :class:`~harness.definitions.model.Model`'s own
    declaration. Objects that are not models (the harness's adapters and wrappers, which a model
    never sees) are taken by their methods."""
    cls = model if isinstance(model, type) else type(model)
    if issubclass(cls, Model):
        return cls.provides
    return frozenset(p for p in CAPABILITIES if all(callable(getattr(cls, m, None)) for m in protocol_methods(p)))


def is_plain_encoder(model: object) -> bool:
    """An encoder that does not retrieve by itself: the harness's shared encoding queue serves it."""
    capabilities = declared(model)
    return Encoder in capabilities and Retriever not in capabilities


def _implements(model: object, protocol: type) -> bool:
    return protocol in declared(model)


def _route(model: object, needs: type) -> Callable[[Any], Any] | None:
    """How to get a ``needs`` from ``model`` (an instance or its class), or None."""
    if _implements(model, needs):
        return lambda m: m
    for source, adapter in ADAPTERS.get(needs, []):
        if _implements(model, source):
            return adapter
    return None


def provide(model: object, needs: type, *, model_name: str, task_name: str) -> Any:
    """Return ``model`` as a ``needs``, adapted if necessary, or raise a clear CapabilityError.

    Given a class instead of an instance, only checks, so a run can stop before loading weights.
    """
    route = _route(model, needs)
    if route is None:
        accepted = [needs.__name__] + [source.__name__ for source, _ in ADAPTERS.get(needs, [])]
        wanted = " or ".join(f"a{'n' if n[0] in 'AEIOU' else ''} {n}" for n in accepted)
        raise CapabilityError(f"model {model_name} cannot run task {task_name}: {task_name} needs {wanted}")
    return model if isinstance(model, type) else route(model)
