"""A deterministic fake language model that scores continuations, declared as a plugin
(``--plugin tests.harness.fake_scorer``): ``fake-scorer:seed=S`` gives each (context,
continuation) the log-likelihood :func:`known_logprob`, a per-character rate fixed by a hash of the
two texts and the seed, times the continuation's length. A registered model with an identity, so
runs keep its scores in the on-disk cache."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import (
    Generation,
    GenerationRequest,
    Generator,
    Loglikelihood,
    LoglikelihoodRequest,
    LoglikelihoodScorer,
)
from harness.definitions.specs import ModelSpec


def known_logprob(context: str, continuation: str, seed: int = 0) -> float:
    """A rate in [1, 1.1) per character of the continuation, fixed by the texts and ``seed``: close
    rates, so that the choice per character and per UTF-8 byte often differ where options differ
    in script, and both from the summed choice."""
    digest = hashlib.sha256(f"{seed}\x00{context}\x00{continuation}".encode()).digest()
    return -(1 + 0.1 * int.from_bytes(digest[:4], "big") / 2**32) * len(continuation)


class FakeScorer(Model):
    provides = frozenset({Generator, LoglikelihoodScorer})

    def __init__(self, *, runtime: Runtime, seed: int = 0) -> None:
        self.runtime = runtime
        self.seed = seed
        self.batches: list[list[LoglikelihoodRequest]] = []

    def identity(self) -> ModelIdentity:
        return ModelIdentity("fake-scorer", "fake-scorer", weights=f"seed-{self.seed}")

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        return [Generation("") for _ in requests]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.batches.append(list(requests))
        return [
            Loglikelihood(known_logprob(r.context, r.continuation, self.seed), len(r.continuation), False)
            for r in requests
        ]


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("fake-scorer", f"{__name__}:FakeScorer", "log-likelihoods from a hash (tests)")]
