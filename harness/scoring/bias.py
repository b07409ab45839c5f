"""Language-bias analyses of retrieval from one candidate pool that mixes languages.

The LAReQA paper separates "weak" alignment (a question finds answers in its own language
first) from "strong" alignment (answers in every language are equally close) with analyses
beyond its main mAP. Every one of them follows from where each question's correct candidates
sit in a single ranking of the whole pool (:class:`PoolRanks`), so they all come from one
encoding pass:

* removing correct candidates from the pool moves each remaining correct candidate up by the
  number of removed ones ranked above it (the other candidates keep their order);
* a pool of the question's language only needs each same-language target's rank among that
  language's candidates, which the task records while it ranks.

Any retrieval task whose pool mixes languages can hand :func:`analyse` its :class:`PoolRanks`.
Rankings keep the task's official tie order (LAReQA: pool position) so that the ``full`` mAP
here is the task's own mAP; only the diagnostic mean ranks average over ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.files.records import JsonRecord
from harness.scoring.ranking import average_precision

#: Figure 6 of the paper: the answer-language mix among the top 100 retrieved candidates.
TOP_K_MIX = 100


@dataclass(frozen=True)
class TopTie:
    """A block of equal scores that straddles the top-k cut: it starts at ``rank`` and holds
    ``languages[lang]`` candidates of each language. Its places inside the top k are shared in
    proportion, the mix expected over every order of the ties, so that the order a ranking must
    give them (e.g. pool position, where one language comes first) does not decide the mix."""

    rank: int
    languages: dict[str, int]


@dataclass(frozen=True)
class PoolRanks:
    """Where one question's correct candidates sit in one ranking of a multilingual pool."""

    lang: str
    target_langs: tuple[str, ...]
    #: 1-based ranks of the targets in the whole pool, official tie order (target order).
    ranks: tuple[float, ...]
    #: The same with each block of tied scores sharing its mean rank.
    mid_ranks: tuple[float, ...]
    #: Ranks of the targets in ``lang`` among the pool's candidates in ``lang`` (official tie
    #: order), in target order; +inf where the predictions do not say.
    monolingual_ranks: tuple[float, ...]
    #: Languages of the best-ranked candidates, best first (as many as the predictions list).
    top_langs: tuple[str, ...]
    #: The tied block across the top-``TOP_K_MIX`` cut, if any.
    top_tie: TopTie | None = None


Matrix = dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class MonolingualPools:
    """Paper Table 4 (zero-shot monolingual pools): each question language against the
    candidates of its own language only, every language in one run."""

    map: dict[str, float]
    average: float  # mean over the question languages


@dataclass(frozen=True)
class RemoveOneTarget:
    """Paper Table 3: mAP after removing the same-language target(s) (``minus_same``) or the
    targets of one other language drawn at random per question (``minus_random``, seeded).

    ``relative_difference`` = (minus_same - minus_random) / minus_random: how much more the
    score loses without the same-language answer; a language-agnostic model is near 0, a model
    that finds its own language first is clearly below it."""

    full: float
    minus_same: float
    minus_random: float
    relative_difference: float | None
    seed: int


@dataclass(frozen=True)
class Analyses(JsonRecord):
    """The analyses carried in a result's diagnostics (``None``: not computable from the input);
    :meth:`to_dict` gives them as the result's schema lays them out."""

    monolingual_pools: MonolingualPools | None
    remove_one_target: RemoveOneTarget
    #: Paper Figure 4: MRR[question language][answer language] with that language's answer as
    #: the only correct candidate left in the pool.
    one_target_mrr: Matrix
    #: Paper Figure 6: share[question language][candidate language] among the top ``top_k``.
    top_language_mix: Matrix | None
    top_k: int


def ranks_without(ranks: Sequence[float], removed: Sequence[int]) -> list[float]:
    """Ranks of the targets not in ``removed`` (indices) once the removed targets leave the pool."""
    gone = [ranks[i] for i in removed]
    return [r - sum(g < r for g in gone) for i, r in enumerate(ranks) if i not in removed]


def _ap(ranks: Sequence[float]) -> float:
    """Full-ranking AP of one question whose correct candidates are exactly ``ranks`` (0 when
    none is left, e.g. ``-same`` on a question answered only in its own language)."""
    row = np.asarray([list(ranks)], dtype=np.float64).reshape(1, len(ranks))
    return float(average_precision(row, np.asarray([len(ranks)]))[0])


def _matrix(
    sums: dict[tuple[str, str], float], counts: dict[tuple[str, str], int], rows: Sequence[str], columns: Sequence[str]
) -> Matrix:
    return {q: {a: (sums[q, a] / counts[q, a] if counts.get((q, a)) else None) for a in columns} for q in rows}


def monolingual_pools(questions: Sequence[PoolRanks], languages: Sequence[str]) -> MonolingualPools | None:
    """Table 4: AP of the same-language targets ranked among same-language candidates only
    (``None`` unless every such rank is known)."""
    if not all(np.isfinite(q.monolingual_ranks).all() for q in questions):
        return None
    per_language: dict[str, list[float]] = {}
    for q in questions:
        per_language.setdefault(q.lang, []).append(_ap(q.monolingual_ranks))
    scores = {lang: float(np.mean(per_language[lang])) for lang in languages if lang in per_language}
    return MonolingualPools(map=scores, average=float(np.mean(list(scores.values()))))


def remove_one_target(questions: Sequence[PoolRanks], seed: int) -> RemoveOneTarget:
    """Table 3. A question without targets in another language keeps its full AP in ``-rand``;
    the random language is drawn per question, in question order, from the sorted other ones."""
    rng = np.random.default_rng(seed)
    full, same, rand = [], [], []
    for q in questions:
        full.append(_ap(q.ranks))
        same.append(_ap(ranks_without(q.ranks, [i for i, a in enumerate(q.target_langs) if a == q.lang])))
        others = sorted({a for a in q.target_langs if a != q.lang})
        drop = others[int(rng.integers(len(others)))] if others else None
        rand.append(_ap(ranks_without(q.ranks, [i for i, a in enumerate(q.target_langs) if a == drop])))
    minus_same, minus_random = float(np.mean(same)), float(np.mean(rand))
    return RemoveOneTarget(
        full=float(np.mean(full)),
        minus_same=minus_same,
        minus_random=minus_random,
        relative_difference=(minus_same - minus_random) / minus_random if minus_random else None,
        seed=seed,
    )


def one_target_mrr(questions: Sequence[PoolRanks], languages: Sequence[str]) -> Matrix:
    """Figure 4: for each answer language, the reciprocal rank of its best target once every
    target in another language has left the pool."""
    sums: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for q in questions:
        for a in sorted(set(q.target_langs)):
            kept = ranks_without(q.ranks, [i for i, lang in enumerate(q.target_langs) if lang != a])
            sums[q.lang, a] = sums.get((q.lang, a), 0.0) + 1.0 / min(kept)
            counts[q.lang, a] = counts.get((q.lang, a), 0) + 1
    return _matrix(sums, counts, [lang for lang in languages if any(q.lang == lang for q in questions)], languages)


def top_language_mix(questions: Sequence[PoolRanks], languages: Sequence[str], k: int) -> Matrix:
    """Figure 6: the share of each language among the top ``k`` candidates of every question of
    a language (all questions' top lists pooled, so each row sums to 1); a tied block across the
    cut counts in proportion (:class:`TopTie`)."""
    sums: dict[tuple[str, str], float] = {}
    totals: dict[str, int] = {}
    for q in questions:
        tie = q.top_tie if q.top_tie is not None and q.top_tie.rank <= k else None
        for lang in q.top_langs[: tie.rank - 1 if tie else k]:
            sums[q.lang, lang] = sums.get((q.lang, lang), 0.0) + 1.0
        if tie:
            slots, size = k - tie.rank + 1, sum(tie.languages.values())
            for lang, n in tie.languages.items():
                sums[q.lang, lang] = sums.get((q.lang, lang), 0.0) + slots * n / size
        totals[q.lang] = totals.get(q.lang, 0) + len(q.top_langs[:k])
    rows = [lang for lang in languages if totals.get(lang)]
    return {q: {a: sums.get((q, a), 0.0) / totals[q] for a in languages} for q in rows}


def analyse(questions: Sequence[PoolRanks], languages: Sequence[str], *, pool_size: int, seed: int) -> Analyses:
    """Every analysis above. The top-language mix needs each question's top ``min(100, pool)``
    candidates; it is ``None`` when the predictions list fewer (e.g. a run with a small
    ``save_top_k``)."""
    k = min(TOP_K_MIX, pool_size)
    complete = all(len(q.top_langs) >= k for q in questions)
    return Analyses(
        monolingual_pools=monolingual_pools(questions, languages),
        remove_one_target=remove_one_target(questions, seed),
        one_target_mrr=one_target_mrr(questions, languages),
        top_language_mix=top_language_mix(questions, languages, k) if complete else None,
        top_k=k,
    )


def language_bias(questions: Sequence[PoolRanks], languages: Sequence[str]) -> dict[str, Any]:
    """How much a model prefers answers in the question's own language.

    * ``mean_rank``: for questions in language q (rows) the mean rank, in the whole pool, of the
      correct answer in language a (columns), tied scores sharing their mean rank. A
      language-agnostic model has a flat matrix; a weakly aligned one a small diagonal.
    * ``first_correct_share``: the share of questions in language q whose best-ranked correct
      answer (official tie order) is in language a. Chance is 1/#languages; a biased model puts
      ~1 on the diagonal.
    * ``same_language_first``: the diagonal of the latter, per question language.
    """
    index = {lang: i for i, lang in enumerate(languages)}
    n = len(languages)
    rank_sum = np.zeros((n, n))
    rank_count = np.zeros((n, n))
    first = np.zeros((n, n))
    per_question = np.zeros(n)
    for question in questions:
        q = index[question.lang]
        per_question[q] += 1
        best: dict[int, float] = {}
        best_mid: dict[int, float] = {}
        for lang, rank, mid in zip(question.target_langs, question.ranks, question.mid_ranks):
            a = index[lang]
            best[a] = min(best.get(a, np.inf), rank)
            best_mid[a] = min(best_mid.get(a, np.inf), mid)
        for a, rank in best_mid.items():
            rank_sum[q, a] += rank
            rank_count[q, a] += 1
        first[q, min(best, key=best.__getitem__)] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_rank = rank_sum / rank_count
        share = first / per_question[:, None]

    def table(matrix: np.ndarray, digits: int) -> dict[str, dict[str, float | None]]:
        return {
            languages[i]: {
                languages[j]: (None if not np.isfinite(matrix[i, j]) else round(float(matrix[i, j]), digits))
                for j in range(n)
            }
            for i in range(n)
            if per_question[i]
        }

    return {
        "languages": list(languages),
        "mean_rank": table(mean_rank, 2),
        "first_correct_share": table(share, 4),
        "same_language_first": {languages[i]: round(float(share[i, i]), 4) for i in range(n) if per_question[i]},
        "chance_share": round(1.0 / n, 4),
    }
