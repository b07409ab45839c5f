"""What the LAReQA task is, in a module that imports nothing heavy: ``plugin.py`` builds the
registry's entry from it for ``harness list``, and the task class uses it as its metadata."""

from harness.protocols import Retriever
from harness.task import TaskMetadata

#: The languages of XQuAD-R (the files ``{lang}.json`` of the official release).
XQUAD_R_LANGUAGES: tuple[str, ...] = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")

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
    unit="question language",
)
