"""Declares the retrieve-then-read model; importing this module imports nothing heavy."""

from harness.plugin import ModelSpec, hookimpl


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "retrieve-read",
            "harness_opendomain.model:RetrieveRead",
            "open-domain QA: any retriever (retriever=bm25) over a passage corpus (corpus=...), top_k passages "
            "read by a reader (reader=hf-reader:path=...), best span; optional question/answer translators",
        ),
    ]
