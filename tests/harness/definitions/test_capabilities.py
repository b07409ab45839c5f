"""Models are routed by what they declare in ``provides``, never by the names of their attributes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Corpus, Encoder, Retriever
from harness.errors import CapabilityError
from harness.models.capabilities import EncoderRetriever, is_plain_encoder, provide


class EncoderWithIndex(Model):
    """An encoder that keeps a vocabulary in ``self.index``: structurally it looks like a Retriever."""

    provides = frozenset({Encoder})

    def __init__(self, *, runtime: Runtime) -> None:
        self.index = {"paris": 0, "berlin": 1}

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="indexed", label="indexed")

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), len(self.index)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word, column in self.index.items():
                out[row, column] = float(word in text.lower())
        return out


class Undeclared(EncoderWithIndex):
    provides = frozenset()


def test_a_model_with_an_index_attribute_that_declares_encoder_is_routed_as_an_encoder() -> None:
    model = EncoderWithIndex(runtime=Runtime(device_request="cpu"))
    assert isinstance(model, Retriever)  # the runtime-checkable protocol only sees the attribute name
    assert is_plain_encoder(model)
    retriever = provide(model, Retriever, model_name="indexed", task_name="t")
    assert isinstance(retriever, EncoderRetriever)
    ranking = retriever.index(Corpus(["a", "b"], ["Berlin is big", "Paris is old"], ["en", "en"])).search(
        ["where is paris"], k=2
    )
    assert ranking.indices.tolist() == [[1, 0]]  # "paris" matches the second passage only: scores 1 and 0
    assert provide(model, Encoder, model_name="indexed", task_name="t") is model


def test_a_model_that_declares_nothing_provides_nothing() -> None:
    with pytest.raises(CapabilityError, match="model undeclared cannot run task t: t needs a Retriever or an Encoder"):
        provide(Undeclared, Retriever, model_name="undeclared", task_name="t")


def test_a_declaration_without_the_methods_fails_where_the_class_is_written() -> None:
    with pytest.raises(TypeError, match="NoEncode declares Encoder but has no method encode"):

        class NoEncode(Model):
            provides = frozenset({Encoder})

            def identity(self) -> ModelIdentity:
                return ModelIdentity(name="x", label="x")
