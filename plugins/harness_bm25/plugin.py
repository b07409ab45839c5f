"""Declares the BM25 model; importing this module imports nothing heavy."""

from harness.plugin import ModelSpec, hookimpl


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "bm25",
            "harness_bm25.model:BM25",
            "Okapi BM25 (rank-bm25's BM25Okapi scores) on sparse matrices; jieba/MeCab/PyThaiNLP for zh/ja/th",
        )
    ]
