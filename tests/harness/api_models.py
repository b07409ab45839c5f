"""A plugin for the API tests: ``registered-object``, a registered model that encodes with the
Python object a test puts in :data:`OBJECT`, as a plugin author would wrap a SentenceTransformer.
The CLI can then run the very object the API is handed (``--plugin tests.harness.api_models``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Encoder
from harness.definitions.specs import ModelSpec

#: The object the registered model encodes with (set by the test).
OBJECT: Any = None


class RegisteredObject(Model):
    """:data:`OBJECT`'s ``encode_query`` for questions and ``encode_document`` for passages."""

    provides = frozenset({Encoder})

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="registered-object", label="registered-object")

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        method = OBJECT.encode_query if role == "query" else OBJECT.encode_document
        return np.asarray(method(list(texts)), dtype=np.float32)


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("registered-object", f"{__name__}:RegisteredObject")]
