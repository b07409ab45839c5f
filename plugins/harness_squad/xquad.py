"""XQuAD: SQuAD v1.1 paragraphs professionally translated into 11 languages (Artetxe et al., 2020).

Evaluation (XQuAD README; XTREME ``evaluate.py``): each language file is scored on its own with
the SQuAD v1.1 scorer -- English normalisation for every language, deliberately -- giving EM and
F1 (0-100) per language; the benchmark figure is their unweighted mean. Files:
``xquad.{lang}.json`` (deepmind/xquad), or XTREME's renamed ``test-{lang}.json``. Romanian was
added after XTREME v1 (XTREME-R includes it). The built-in demo data has 9 of the languages.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from harness.protocols import Reader
from harness.task import DataRequest, TaskMetadata

from harness_squad.normalize import Normalizer, squad_v1
from harness_squad.task import SpanQAData, SpanQATask, SpanUnit, find_language_files, task_data_from_files

XQUAD_LANGUAGES: tuple[str, ...] = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")

#: File names tried in order: the official release, then XTREME's layout.
LAYOUTS = ("xquad.{lang}.json", "{split}-{lang}.json")
#: The built-in demo set names its files ``{lang}.json`` (XQuAD-R format, a superset of SQuAD's).
DEMO_LAYOUT = "{lang}.json"


class XQuAD(SpanQATask):
    """XQuAD scored like XTREME: the SQuAD v1.1 scorer on every language file."""

    metadata = TaskMetadata(
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
    )

    #: File names tried in order (see :func:`find_language_files`), the language names they use,
    #: and the benchmark's name in messages: a subclass with another layout changes these.
    layouts: ClassVar[tuple[str, ...]] = LAYOUTS
    language_names: ClassVar[Mapping[str, str]] = {}
    benchmark: ClassVar[str] = "XQuAD"

    def demo_data_dir(self) -> Path:
        from harness_demo import xquad_r_dir

        return xquad_r_dir()

    def normalizer(self, unit: SpanUnit) -> Normalizer:
        return squad_v1

    def load(self, request: DataRequest) -> SpanQAData:
        assert request.data_dir is not None
        layouts = (DEMO_LAYOUT,) if request.data_dir == self.demo_data_dir() else self.layouts
        languages = request.languages or self.metadata.languages
        files = find_language_files(request.data_dir, languages, layouts, split=request.split,
                                    explicit=languages != self.metadata.languages, what=self.benchmark,
                                    names=self.language_names)
        return task_data_from_files(request, files)
