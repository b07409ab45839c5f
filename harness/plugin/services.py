"""The plugin contract's model services: what a model adapter builds on.

The batched, cached, resumable services that turn a model's one-call-per-batch method into a
run's requests: encoding (:class:`EncodingService`), generation (:func:`generation_service`, with
the answer extraction every generative task shares) and log-likelihood
(:class:`LoglikelihoodService`, multiple choice by :func:`decide`); adapting one capability into
another (:func:`provide`); loading a model by name, as ``--model`` does (:func:`load_model`); the
model cache's root and file digests; the adaptive batcher, progress and the distributed world.
See :mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.definitions.protocols import EncodingRequest
from harness.display.progress import Progress
from harness.models.batching import AdaptiveBatcher
from harness.models.cache import default_root, file_digest
from harness.models.capabilities import provide
from harness.models.compose import identity_part, load_model
from harness.models.distributed import World, current_world
from harness.models.encoding import EncodingService, EncodingStats, ReportsEncoding
from harness.models.generation import (
    REASONING_END,
    REASONING_START,
    Completion,
    GenerationStats,
    PromptTarget,
    answer_start,
    answer_text,
    finish,
    generation_service,
    kept,
    prompt_target,
    stop_position,
)
from harness.models.loglikelihood import (
    NORMALISATIONS,
    ChoiceQuestion,
    Decision,
    LoglikelihoodService,
    choice_target,
    decide,
)

__all__ = [
    "NORMALISATIONS",
    "REASONING_END",
    "REASONING_START",
    "AdaptiveBatcher",
    "ChoiceQuestion",
    "Completion",
    "Decision",
    "EncodingRequest",
    "EncodingService",
    "EncodingStats",
    "GenerationStats",
    "LoglikelihoodService",
    "Progress",
    "PromptTarget",
    "ReportsEncoding",
    "World",
    "answer_start",
    "answer_text",
    "choice_target",
    "current_world",
    "decide",
    "default_root",
    "file_digest",
    "finish",
    "generation_service",
    "identity_part",
    "kept",
    "load_model",
    "prompt_target",
    "provide",
    "stop_position",
]
