"""The language-bias analyses equal a per-question reference that literally re-ranks a changed pool,
on XQuAD-R (``lareqa``) and on MLQA-R (``mlqa-r``, whose questions have 1 to 4 correct answers).

The reference below sorts candidates by score (ties by pool position, the official order),
removes candidates from the pool by filtering them out, and walks the ranked lists, one question
at a time; the harness instead works from the target ranks of one ranking. The test model gives
small integer scores (many ties) with a bonus for the question's own language, so every
analysis has something to show.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Corpus, Ranking, Retriever
from harness.definitions.registry import Registry
from harness.definitions.specs import ModelSpec, PluginInfo
from harness.definitions.task import DataRequest
from harness.definitions.validation import validate
from harness.demo import parallel_qa_dir
from harness.models.search import rank_descending
from harness.running import runner, settings
from harness_bm25.model import BM25
from harness_lareqa.mlqa_r import MLQAR
from harness_lareqa.task import LAReQA
from tests.harness.scoring.test_ranking_metrics import official_style_ap
from tests.plugins.harness_lareqa.test_mlqa_r import write_mlqa_fixture


def tie_score(query: str, query_lang: str, candidate: str, candidate_lang: str) -> float:
    """0..3 from a hash of the pair, +2 when the languages agree: ties everywhere, and a bias."""
    digest = hashlib.sha256(f"{query}\x00{candidate}".encode()).digest()
    return float(digest[0] % 4 + (2 if query_lang == candidate_lang else 0))


class TiedScores(Model):
    """A Retriever scoring with :func:`tie_score`, either as a ScoringIndex or by search only."""

    provides = frozenset({Retriever})
    scoring = True

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="tied-scores", label="tied-scores")

    def index(self, corpus: Corpus) -> Any:
        def scores(queries: Sequence[str], langs: Sequence[str]) -> np.ndarray:
            return np.asarray(
                [
                    [tie_score(q, ql, str(c), cl) for c, cl in zip(corpus.texts, corpus.langs)]
                    for q, ql in zip(queries, langs)
                ],
                dtype=np.float32,
            )

        class SearchOnly:
            def search(self, queries: Sequence[str], *, langs: Sequence[str], k: Any = None) -> Ranking:
                s = scores(queries, langs)
                order = rank_descending(s)
                return Ranking(order, np.take_along_axis(s, order, axis=1))

        class Scoring(SearchOnly):
            def scores(self, queries: Sequence[str], *, langs: Sequence[str]) -> np.ndarray:
                return scores(queries, langs)

        return Scoring() if self.scoring else SearchOnly()


class TiedSearch(TiedScores):
    scoring = False


@pytest.fixture
def registry() -> Registry:
    registry = Registry.discover()
    registry.add_plugin(
        types.SimpleNamespace(
            harness_models=hookimpl(
                lambda: [
                    ModelSpec("tied-scores", f"{__name__}:TiedScores"),
                    ModelSpec("tied-search", f"{__name__}:TiedSearch"),
                ]
            )
        ),
        PluginInfo("test-models"),
    )
    return registry


class Reference:
    """The analyses, one question at a time, from every question's score of every candidate."""

    def __init__(
        self, task: LAReQA, data_dir: Path, limit: int | None, scores: Callable[[Corpus, list[Any]], np.ndarray]
    ) -> None:
        self.data = task.load(DataRequest(data_dir, task.metadata.splits[0], limit=limit))
        corpus = task.corpus(self.data)
        self.langs = self.data.pool.langs
        self.languages = list(self.data.languages)
        # questions in the order the task scores them: by language, then file order
        self.questions = [q for lang in task.units(self.data) for q in self.data.questions_in(lang)]
        matrix = scores(corpus, self.questions)
        self.scores = {q.uid: [float(x) for x in row] for q, row in zip(self.questions, matrix)}

    def ranked(self, question: Any, pool: list[int]) -> list[int]:
        """``pool`` (positions) best first, ties by pool position."""
        return sorted(pool, key=lambda p: (-self.scores[question.uid][p], p))

    def targets(self, question: Any) -> list[int]:
        return [int(t) for t in self.data.targets[question.xling_id]]

    def monolingual_ap(self, question: Any) -> float:
        """AP against the candidates of the question's language only (Table 4)."""
        pool = [p for p in range(len(self.langs)) if self.langs[p] == question.lang]
        targets = {t for t in self.targets(question) if self.langs[t] == question.lang}
        return official_style_ap(targets, self.ranked(question, pool), None)

    def ap_without(self, question: Any, removed: list[int]) -> float:
        """AP once ``removed`` leave the pool; 0 for a question left without a correct answer."""
        pool = [p for p in range(len(self.langs)) if p not in removed]
        kept = {t for t in self.targets(question) if t not in removed}
        return official_style_ap(kept, self.ranked(question, pool), None) if kept else 0.0


def tie_scores(corpus: Corpus, questions: list[Any]) -> np.ndarray:
    return np.asarray(
        [[tie_score(q.text, q.lang, str(c), cl) for c, cl in zip(corpus.texts, corpus.langs)] for q in questions]
    )


def bm25_scores(corpus: Corpus, questions: list[Any]) -> np.ndarray:
    index = BM25(runtime=Runtime()).index(corpus)
    return index.scores([q.text for q in questions], langs=[q.lang for q in questions])


#: (task, model, data, --limit): the tie model on the demo data through both index kinds and on a
#: small MLQA-R built in the test, and BM25 on real XQuAD-R and real MLQA-R (MLQA dev) for a
#: sample of 3 questions per language against the full pools (13,014 and 21,220 candidates).
CASES = [
    ("lareqa", "tied-scores", "demo", None),
    ("lareqa", "tied-search", "demo", None),
    ("mlqa-r", "tied-scores", "fixture", None),
    ("lareqa", "bm25", "real", 3),
    ("mlqa-r", "bm25", "real", 3),
]
_built: dict[tuple[str, str, str, int | None], tuple[dict[str, Any], Reference]] = {}


def _data_dir(request: pytest.FixtureRequest, task: str, where: str, tmp_path: Path) -> Path:
    if where == "real":
        return request.getfixturevalue("real_data") / ("lareqa/xquad-r" if task == "lareqa" else "mlqa")
    if where == "fixture":
        return write_mlqa_fixture(tmp_path / "mlqa")
    return parallel_qa_dir()


@pytest.fixture(params=CASES, ids=[f"{task}-{model}-{data}" for task, model, data, _ in CASES])
def case(request: pytest.FixtureRequest, registry: Registry, tmp_path: Path) -> tuple[dict[str, Any], Reference]:
    """(the run's diagnostics, the reference), built once per case."""
    task, model, where, limit = request.param
    if request.param not in _built:
        data_dir = _data_dir(request, task, where, tmp_path)
        outcome = runner.run(
            task,
            model,
            registry=registry,
            data=settings.DataOptions(data_dir=data_dir, limit=limit),
            output=settings.OutputOptions(output_dir=tmp_path / "results", leaderboard=None, show_progress=False),
        )
        validate(outcome.result.to_dict(), "run-result", file=tmp_path / "result.json")  # the runner did too
        assert outcome.result.diagnostics["remove_one_target"]["full"] == outcome.result.rows[0].metrics["map"]
        _built[request.param] = (
            outcome.result.diagnostics,
            Reference(
                LAReQA() if task == "lareqa" else MLQAR(),
                data_dir,
                limit,
                bm25_scores if model == "bm25" else tie_scores,
            ),
        )
    return _built[request.param]


def test_monolingual_pools_table_4(case: tuple[dict[str, Any], Reference]) -> None:
    diagnostics, reference = case
    per_language: dict[str, list[float]] = {}
    for q in reference.questions:
        per_language.setdefault(q.lang, []).append(reference.monolingual_ap(q))
    expected = {lang: sum(v) / len(v) for lang, v in per_language.items()}
    got = diagnostics["monolingual_pools"]
    assert got["map"] == pytest.approx(expected, abs=1e-12)
    assert got["average"] == pytest.approx(sum(expected.values()) / len(expected), abs=1e-12)


def test_remove_one_target_table_3(case: tuple[dict[str, Any], Reference]) -> None:
    diagnostics, reference = case
    rng = np.random.default_rng(0)  # the task's seed, drawn once per question in scoring order
    full, same, rand = [], [], []
    for q in reference.questions:
        targets = reference.targets(q)
        full.append(reference.ap_without(q, []))
        same.append(reference.ap_without(q, [t for t in targets if reference.langs[t] == q.lang]))
        others = sorted({reference.langs[t] for t in targets} - {q.lang})
        if not others:  # answered in its own language only: nothing to remove, nothing drawn
            rand.append(full[-1])
            continue
        drop = others[int(rng.integers(len(others)))]
        rand.append(reference.ap_without(q, [t for t in targets if reference.langs[t] == drop]))
    got = diagnostics["remove_one_target"]
    minus_same, minus_random = sum(same) / len(same), sum(rand) / len(rand)
    assert got["full"] == pytest.approx(sum(full) / len(full), abs=1e-12)
    assert got["minus_same"] == pytest.approx(minus_same, abs=1e-12)
    assert got["minus_random"] == pytest.approx(minus_random, abs=1e-12)
    assert got["relative_difference"] == pytest.approx((minus_same - minus_random) / minus_random, abs=1e-12)
    assert got["seed"] == 0
    assert minus_same < minus_random  # the own-language bonus: losing that answer costs more


def test_limit_to_one_target_figure_4(case: tuple[dict[str, Any], Reference]) -> None:
    diagnostics, reference = case
    sums: dict[tuple[str, str], list[float]] = {}
    for q in reference.questions:
        targets = reference.targets(q)
        for a in reference.languages:
            kept = [t for t in targets if reference.langs[t] == a]
            if not kept:
                continue
            pool = [p for p in range(len(reference.langs)) if p not in targets or p in kept]
            ranking = reference.ranked(q, pool)
            first = next(i for i, p in enumerate(ranking, start=1) if p in kept)
            sums.setdefault((q.lang, a), []).append(1.0 / first)
    got = diagnostics["one_target_mrr"]
    assert set(got) == set(reference.languages)
    for q_lang in reference.languages:
        for a in reference.languages:
            values = sums.get((q_lang, a))
            assert got[q_lang][a] == (pytest.approx(sum(values) / len(values), abs=1e-12) if values else None)


def test_answer_language_mix_of_the_top_100_figure_6(case: tuple[dict[str, Any], Reference]) -> None:
    # A candidate above the 100th score counts 1; the candidates tied with the 100th share the
    # places left: the mix expected over every order of the ties (a pool under 100: all of it).
    diagnostics, reference = case
    k = min(100, len(reference.langs))
    counts: dict[str, dict[str, float]] = {}
    for q in reference.questions:
        row = counts.setdefault(q.lang, {lang: 0.0 for lang in reference.languages})
        scores = reference.scores[q.uid]
        cut = scores[reference.ranked(q, list(range(len(reference.langs))))[k - 1]]
        above = [p for p in range(len(scores)) if scores[p] > cut]
        tied = [p for p in range(len(scores)) if scores[p] == cut]
        for p in above:
            row[reference.langs[p]] += 1
        for p in tied:
            row[reference.langs[p]] += (k - len(above)) / len(tied)
    assert diagnostics["top_k"] == k
    got = diagnostics["top_language_mix"]
    for q_lang, row in counts.items():
        assert got[q_lang] == pytest.approx({a: n / sum(row.values()) for a, n in row.items()}, abs=1e-12)
        assert sum(got[q_lang].values()) == pytest.approx(1.0)


def test_mean_ranks_average_ties_and_first_correct_keeps_pool_order(case: tuple[dict[str, Any], Reference]) -> None:
    diagnostics, reference = case
    mid: dict[tuple[str, str], list[float]] = {}
    first: dict[tuple[str, str], int] = {}
    everything = list(range(len(reference.langs)))
    for q in reference.questions:
        scores = reference.scores[q.uid]
        ranking = reference.ranked(q, everything)
        for a in reference.languages:
            ranks = []
            for t in (t for t in reference.targets(q) if reference.langs[t] == a):
                block = [i for i, p in enumerate(ranking, start=1) if scores[p] == scores[t]]
                ranks.append(sum(block) / len(block))
            if ranks:
                mid.setdefault((q.lang, a), []).append(min(ranks))
        best = next(p for p in ranking if p in reference.targets(q))
        first[q.lang, reference.langs[best]] = first.get((q.lang, reference.langs[best]), 0) + 1
    per_language = {lang: sum(q.lang == lang for q in reference.questions) for lang in reference.languages}
    for (q_lang, a), values in mid.items():
        assert diagnostics["mean_rank"][q_lang][a] == round(sum(values) / len(values), 2)
    for q_lang in reference.languages:
        for a in reference.languages:
            share = round(first.get((q_lang, a), 0) / per_language[q_lang], 4)
            assert diagnostics["first_correct_share"][q_lang][a] == share


def test_pool_mono_scores_each_language_against_its_own_candidates(registry: Registry, tmp_path: Path) -> None:
    reference = Reference(LAReQA(), parallel_qa_dir(), None, tie_scores)
    output = settings.OutputOptions(output_dir=tmp_path / "results", leaderboard=None, show_progress=False)
    mono = runner.run("lareqa:pool=mono", "tied-scores", registry=registry, output=output)
    assert mono.result.task.options == {"candidates": "concat", "pool": "mono"}
    expected = [reference.monolingual_ap(q) for q in reference.questions]
    assert mono.result.rows[0].metrics["map"] == pytest.approx(sum(expected) / len(expected), abs=1e-12)
    for row in mono.result.rows[1:]:
        values = [ap for q, ap in zip(reference.questions, expected) if q.lang == row.subset]
        assert row.metrics["map"] == pytest.approx(sum(values) / len(values), abs=1e-12)
    # the same predictions, made for the multilingual pool, rescored with pool=mono
    multilingual = runner.run("lareqa", "tied-scores", registry=registry, output=output)
    rescored = runner.score("lareqa:pool=mono", Path(multilingual.result.predictions.path), output=output)
    assert rescored.result.rows == mono.result.rows
    assert multilingual.result.rows[0].metrics["map"] != mono.result.rows[0].metrics["map"]
