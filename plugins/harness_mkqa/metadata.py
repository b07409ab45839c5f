"""What the MKQA task is, in a module that imports nothing heavy: ``plugin.py`` builds the
registry's entry from it for ``harness list``, and the task class uses it as its metadata."""

from harness.plugin import BenchmarkRef, Clusters, OpenDomainQA, TaskMetadata
from harness_mkqa.languages import MKQA_LANGUAGES

MKQA = TaskMetadata(
    name="mkqa",
    description="Open-domain QA in 26 languages; best F1 over a No-Answer threshold, macro-averaged.",
    reference="Longpre, Lu & Daiber, MKQA, TACL 2021; apple/ml-mkqa mkqa_eval.py",
    languages=MKQA_LANGUAGES,
    splits=("test",),
    main_metric="best_f1",
    needs=OpenDomainQA,
    prediction_format="mkqa-predictions",
    prediction_file="predictions",  # a folder of <lang>.jsonl files, the official layout
    data_subdir="mkqa",
    scorer="mkqa|norm:mkqa|sweep:best-threshold,file-order-ties|round:2|avg:macro",
    scale="percent",
    unscaled=("best_f1_threshold",),  # the no-answer probability the best F1 is reached at
    clusters=Clusters("example id"),  # each of the 10,000 examples in all 26 languages
    data=BenchmarkRef.beside(__file__, "mkqa"),
)
