"""``char-trigram``: bag of hashed character trigrams, L2-normalised (an Encoder; the harness
turns it into a Retriever for retrieval tasks)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import Encoder


class CharTrigram(Model):
    provides = frozenset({Encoder})

    def __init__(self, *, runtime: Runtime, dim: int = 512) -> None:
        self.dim = dim

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="char-trigram", label=f"char-trigram-{self.dim}", options={"dim": self.dim})

    def encode(self, texts: Sequence[str | tuple[str, str]], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            text = text if isinstance(text, str) else " ".join(text)
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):
                out[row, zlib.crc32(padded[i : i + 3].encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
