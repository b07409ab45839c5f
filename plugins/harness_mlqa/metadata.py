"""What the MLQA task is, in a module that imports nothing heavy: ``plugin.py`` builds the
registry's entry from it for ``harness list``, and the task class uses it as its metadata."""

from harness.plugin import BenchmarkRef, Clusters, Reader, TaskMetadata

#: MLQA's languages in the paper's order (the order of G-XLT matrices).
MLQA_LANGUAGES: tuple[str, ...] = ("en", "es", "de", "ar", "hi", "vi", "zh")

MLQA = TaskMetadata(
    name="mlqa",
    description="Cross-lingual extractive QA (MLQA): EM/F1 per file with the official MLQA scorer; "
    "XLT (same-language files) or G-XLT (mlqa:mode=gxlt, all context x question language pairs).",
    reference="Lewis et al., MLQA: Evaluating Cross-lingual Extractive Question Answering, ACL 2020; "
    "facebookresearch/MLQA mlqa_evaluation_v1.py",
    languages=MLQA_LANGUAGES,
    splits=("dev", "test"),
    main_metric="f1",
    needs=Reader,
    prediction_format="span-qa-predictions",
    prediction_file="predictions",
    data_subdir="mlqa",
    scorer="mlqa|norm:mlqa-context|em+f1|avg:mean",
    scale="percent",
    unit="language (XLT) or context-question pair (G-XLT)",
    clusters=Clusters("question id"),  # a question's translations share its id (in 2 to 7 languages)
    data=BenchmarkRef.beside(__file__, "mlqa"),
)
