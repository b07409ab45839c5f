"""The plugin contract's scorers: the shared official scorers and the statistics a task reports.

SQuAD v1.1's and MLQA's exact match and F1 (:func:`score_questions`, the normalisers named for
what they do), token F1 over several golds, ranking metrics (mean average precision, ranks),
LAReQA's language-bias analyses and probe, exact top-k search, and the per-question records
(:class:`Instance`, :class:`InstanceTable`) and row statistics (:class:`Mean`, :class:`Macro`,
:class:`Pooled`...) by which a task says how its numbers follow from its questions. See
:mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.models.search import exact_search, merge_top_k, rank_descending, ranks_of, top_k
from harness.scoring.answer_language import foreign_script, refuse_or_warn, script_share
from harness.scoring.answers import best_over_golds, token_f1
from harness.scoring.bias import TOP_K_MIX, PoolRanks, TopTie, analyse, language_bias
from harness.scoring.normalize import Normalizer, ascii_english, multilingual
from harness.scoring.probe import language_id_probe
from harness.scoring.ranking import NOT_RETRIEVED, average_precision, mid_ranks
from harness.scoring.spans import SpanScores, memoize, score_questions
from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import (
    Gathered,
    Macro,
    Mean,
    Pooled,
    RowStatistics,
    Statistic,
    UnitStatistic,
    numpy_mean,
    percent_of_sum,
)

__all__ = [
    "NOT_RETRIEVED",
    "TOP_K_MIX",
    "Gathered",
    "Instance",
    "InstanceTable",
    "Macro",
    "Mean",
    "Normalizer",
    "PoolRanks",
    "Pooled",
    "RowStatistics",
    "SpanScores",
    "Statistic",
    "TopTie",
    "UnitStatistic",
    "analyse",
    "ascii_english",
    "average_precision",
    "best_over_golds",
    "exact_search",
    "foreign_script",
    "language_bias",
    "language_id_probe",
    "memoize",
    "merge_top_k",
    "mid_ranks",
    "multilingual",
    "numpy_mean",
    "percent_of_sum",
    "rank_descending",
    "ranks_of",
    "refuse_or_warn",
    "score_questions",
    "script_share",
    "token_f1",
    "top_k",
]
