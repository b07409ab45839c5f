"""``char-trigram``, a whole model plugin in one module: bags of hashed character trigrams,
L2-normalised, no weights. An Encoder; the harness turns it into a Retriever for retrieval tasks.

numpy is imported where the vectors are made, not at the top: the harness imports this module to
list its plugins, and ``harness list`` should not pay for a library no listing uses.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.plugin import Encoder, Model, ModelIdentity, ModelSpec, Runtime, hookimpl

if TYPE_CHECKING:
    import numpy as np


class CharTrigram(Model):
    provides = frozenset({Encoder})

    def __init__(self, *, runtime: Runtime, dim: int = 512) -> None:
        """``dim``: the number of hash buckets (the vectors' length)."""
        self.dim = dim

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="char-trigram", label=f"char-trigram-{self.dim}", options={"dim": self.dim})

    def encode(
        self, texts: Sequence[str | tuple[str, str]], *, role: str, langs: Sequence[str] | None = None
    ) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            text = text if isinstance(text, str) else " ".join(text)
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):
                out[row, zlib.crc32(padded[i : i + 3].encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("char-trigram", f"{__name__}:CharTrigram", "hashed character trigrams (toy encoder; dim=512)")]
