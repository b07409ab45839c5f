"""What the LAReQA tasks (XQuAD-R, MLQA-R) are, in a module that imports nothing heavy: ``plugin.py``
builds the registry's entries from it for ``harness list``, and the task classes use it as their
metadata."""

from dataclasses import replace

from harness.plugin import BenchmarkRef, Clusters, Retriever, TaskMetadata

#: The languages of XQuAD-R (the files ``{lang}.json`` of the official release).
XQUAD_R_LANGUAGES: tuple[str, ...] = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")


def xling_id(unit: str, uid: str) -> str:
    """A question's group: its translations share the ``xling_id`` its uid begins with
    (``f"{xling_id}_{lang}"``, the unit being the question's language)."""
    return uid.removesuffix(f"_{unit}")


LAREQA = TaskMetadata(
    name="lareqa",
    description="Answer-sentence retrieval from one pool of 11 languages (XQuAD-R).",
    reference="Roy et al., LAReQA, EMNLP 2020; google-research/xtreme third_party/utils_lareqa.py",
    languages=XQUAD_R_LANGUAGES,
    splits=("test",),
    main_metric="map",
    needs=Retriever,
    prediction_format="lareqa-predictions",
    prediction_file="predictions.jsonl",
    data_subdir="lareqa/xquad-r",
    scorer="lareqa|map,map@20|ties:pool-order|avg:global",
    scale="fraction",  # XTREME-R's utils_lareqa.py prints mAP as a fraction in [0, 1]
    unit="question language",
    clusters=Clusters("question group (xling_id)", xling_id),
    data=BenchmarkRef.beside(__file__, "xquad-r"),
)

#: The languages of MLQA-R (MLQA's 7), in the order of the LAReQA paper's tables.
MLQA_R_LANGUAGES: tuple[str, ...] = ("ar", "de", "en", "es", "hi", "vi", "zh")

#: Scored like LAReQA (same metric, capability and prediction format); other data.
MLQA_R = replace(
    LAREQA,
    name="mlqa-r",
    description="Answer-sentence retrieval from one pool of 7 languages, built from MLQA's files (MLQA-R).",
    reference="Roy et al., LAReQA, EMNLP 2020 (MLQA-R, section 3.1); Lewis et al., MLQA, ACL 2020",
    languages=MLQA_R_LANGUAGES,
    splits=("dev", "test"),
    data_subdir="mlqa",
    data=None,  # MLQA's files, which the mlqa plugin declares (`harness data get mlqa`)
)
