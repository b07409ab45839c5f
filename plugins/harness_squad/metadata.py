"""What the XQuAD task is, in a module that imports nothing heavy: ``plugin.py`` builds the
registry's entry from it for ``harness list``, and the task class uses it as its metadata."""

from harness.plugin import BenchmarkRef, Clusters, Reader, TaskMetadata

XQUAD_LANGUAGES: tuple[str, ...] = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")

XQUAD = TaskMetadata(
    name="xquad",
    description="Extractive QA on XQuAD (12 languages), SQuAD v1.1 EM/F1 per language and their mean.",
    reference="Artetxe et al., On the Cross-lingual Transferability of Monolingual Representations, ACL 2020; "
    "deepmind/xquad; SQuAD v1.1 evaluate-v1.1.py as used by google-research/xtreme",
    languages=XQUAD_LANGUAGES,
    splits=("test",),
    main_metric="f1",
    needs=Reader,
    prediction_format="span-qa-predictions",
    prediction_file="predictions",
    data_subdir="xquad",
    scorer="squad-v1.1|norm:ascii-english|em+f1|avg:mean",
    scale="percent",
    clusters=Clusters("question id"),  # every question in all 12 languages, under the same id
    data=BenchmarkRef.beside(__file__, "xquad"),
)
