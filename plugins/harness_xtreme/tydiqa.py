"""TyDiQA-GoldP as XTREME scores it (Clark et al., TACL 2020; Hu et al., ICML 2020).

The gold-passage task of TyDi QA: a question and the Wikipedia passage that holds its answer,
SQuAD v1.1 format. XTREME's "test" set is TyDi QA's GoldP dev set, one file per language.

* Each language file is scored on its own with the SQuAD v1.1 scorer (XTREME's
  ``third_party/evaluate_squad.py``: English normalisation for every language), EM and F1 0-100,
  exactly as XQuAD is (the same task base, with TyDi's languages and files).
* ``mean``, the benchmark figure and main score (F1), is the unweighted mean over all nine
  languages **including English**, as XTREME averages it. TyDi QA's own GoldP protocol leaves
  English out of the average; that figure is the separate row ``mean_without_en``.
* Files: XTREME's ``test-{lang}.json``, or the TyDi QA release's
  ``tydiqa-goldp-v1.1-dev/tydiqa-goldp-dev-{language name}.json`` (``--data-dir`` may name the
  folder holding ``tydiqa-goldp-v1.1-dev`` or that folder itself). Predictions are one
  ``{question_id: answer}`` file per language, named like the data file.

Without ``--data-dir`` the built-in demo set is used (its en, ar and ru files).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.plugin.scoring import Normalizer, ascii_english
from harness.plugin.tasks import LanguageFilesTask, ParallelQADemo, SpanUnit
from harness_xtreme.metadata import TYDIQA_GOLDP

#: Language names in the TyDi QA release's file names.
LANGUAGE_NAMES: dict[str, str] = {
    "en": "english",
    "ar": "arabic",
    "bn": "bengali",
    "fi": "finnish",
    "id": "indonesian",
    "ko": "korean",
    "ru": "russian",
    "sw": "swahili",
    "te": "telugu",
}


class TyDiQAGoldP(ParallelQADemo, LanguageFilesTask):
    """TyDiQA-GoldP with XTREME's scoring: SQuAD v1.1 EM/F1, English in the average."""

    metadata = TYDIQA_GOLDP
    #: XTREME's names first, then the TyDi QA release's (inside or at its dev folder).
    layouts = (
        "{split}-{lang}.json",
        "tydiqa-goldp-v1.1-dev/tydiqa-goldp-dev-{name}.json",
        "tydiqa-goldp-dev-{name}.json",
    )
    language_names = LANGUAGE_NAMES
    benchmark = "TyDiQA-GoldP"

    def normalizer(self, unit: SpanUnit) -> Normalizer:
        return ascii_english

    def summary_groups(self, units: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
        """``mean`` over every language (XTREME; the main score is its F1) and, when English is
        among them, ``mean_without_en`` (TyDi QA's GoldP protocol)."""
        groups = super().summary_groups(units)
        others = [lang for lang in units if lang != "en"]
        if others and len(others) < len(units):
            groups["mean_without_en"] = others
        return groups
