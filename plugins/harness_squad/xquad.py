"""XQuAD: SQuAD v1.1 paragraphs professionally translated into 11 languages (Artetxe et al., 2020).

Evaluation (XQuAD README; XTREME ``evaluate.py``): each language file is scored on its own with
the SQuAD v1.1 scorer -- English normalisation for every language, deliberately -- giving EM and
F1 (0-100) per language; the benchmark figure is their unweighted mean. Files:
``xquad.{lang}.json`` (deepmind/xquad), or XTREME's renamed ``test-{lang}.json``. Romanian was
added after XTREME v1 (XTREME-R includes it). The built-in demo data has 9 of the languages.
"""

from __future__ import annotations

from harness.plugin.scoring import Normalizer, ascii_english
from harness.plugin.tasks import LanguageFilesTask, ParallelQADemo, SpanUnit
from harness_squad.metadata import XQUAD


class XQuAD(ParallelQADemo, LanguageFilesTask):
    """XQuAD scored like XTREME: the SQuAD v1.1 scorer on every language file."""

    metadata = XQUAD
    #: File names tried in order: the official release, then XTREME's layout.
    layouts = ("xquad.{lang}.json", "{split}-{lang}.json")
    benchmark = "XQuAD"

    def normalizer(self, unit: SpanUnit) -> Normalizer:
        return ascii_english
