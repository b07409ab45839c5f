"""The LAReQA task: retrieve the answer sentence of a question from a pool of all languages.

Evaluation (LAReQA paper section 4; XTREME-R's ``utils_lareqa.py``):

* every question, in each of the 11 languages, is scored against the one multilingual pool;
  its correct answers are the answer sentences of the same question in every language (11);
* the candidate is encoded from ``(sentence + paragraph).replace("\\n", "")`` (XTREME-R), or as
  a (sentence, paragraph) pair (the paper's response encoder input), or the sentence alone;
* metrics: mean average precision over the full ranking (``map``, the paper's metric) and
  mAP@20 (``map@20``, XTREME-R; divisor min(#correct, 20)), each one global mean over all
  questions, as fractions in [0, 1] like the official output; plus one row per question language;
* diagnostics of language bias: where the correct answer of each language is ranked, and in
  which language the first correct answer is found (the paper's weak vs strong alignment);
* the paper's analyses, from the same ranking (:mod:`harness.scoring.bias`): zero-shot
  monolingual pools (Table 4), removing the same-language or a random other-language target
  (Table 3), one target left in the pool (Figure 4), the answer-language mix of the top 100
  (Figure 6); and, when the model is an encoder, a language-ID probe on the question and the
  candidate vectors (:mod:`harness.scoring.probe`; English vs Chinese unless ``probe=`` says).

``--limit N`` samples N questions per language (seeded, the same ids in every language) and
keeps the whole pool, so a limited score estimates the full one.

Ties between equal scores are ordered by pool position for every mAP and MRR. (The official
code sorts with numpy's unstable quicksort and reverses it, which leaves tie order unspecified;
for real-valued dense scores ties do not occur.) The diagnostic mean ranks instead give a block
of tied scores its mean rank, so that BM25's many zero scores do not favour the languages that
come first in the pool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness.plugin import (
    Corpus,
    DataRequest,
    Encoder,
    Evaluation,
    HarnessError,
    InputError,
    KeyedSearchIndex,
    Retriever,
    Role,
    RunContext,
    ScoreRow,
    ScoringIndex,
    Task,
    Text,
)
from harness.plugin.formats import validate
from harness.plugin.io import iter_jsonl, write_atomic
from harness.plugin.scoring import (
    NOT_RETRIEVED,
    TOP_K_MIX,
    Instance,
    InstanceTable,
    Mean,
    Pooled,
    PoolRanks,
    RowStatistics,
    Statistic,
    TopTie,
    analyse,
    average_precision,
    language_bias,
    language_id_probe,
    mid_ranks,
    numpy_mean,
    ranks_of,
    top_k,
)
from harness.plugin.services import EncodingRequest
from harness.plugin.tasks import ParallelQADemo
from harness_lareqa.data import LAReQAData, read_language, sample_questions, statistics
from harness_lareqa.metadata import LAREQA

CandidateForm = Literal["concat", "pair", "sentence"]
PoolKind = Literal["multilingual", "all", "mono"]
QUERY_CHUNK = 256
#: Row metric -> the per-question value it is the mean of.
ROW_METRICS = {"map": "ap", "map@20": "ap@20"}
#: The paper's language-ID probe: English vs Chinese.
DEFAULT_PROBE = "en-zh"
#: Seeds the ``--limit`` question sample and Table 3's random other language.
SEED = 0


class LAReQA(ParallelQADemo, Task[LAReQAData]):
    """XQuAD-R, scored like XTREME-R's official LAReQA evaluation."""

    metadata = LAREQA

    def __init__(
        self,
        candidates: CandidateForm = "concat",
        save_top_k: int = 100,
        pool: PoolKind = "multilingual",
        probe: str = DEFAULT_PROBE,
    ) -> None:
        """``candidates``: how a candidate is put to the model (``concat``: sentence + paragraph, the
        official XTREME-R input; ``pair``: (sentence, paragraph); ``sentence``: the sentence alone).
        ``save_top_k``: length of the ranked list kept per question in the predictions file.
        ``pool``: ``multilingual`` (the official one) pools the candidates of the languages run, so
        ``--langs de`` is German questions against German candidates alone, a smaller and different
        task (the result says so); ``all`` keeps every language's candidates in the pool whatever
        ``--langs`` selects (the questions of those languages against the official 11-language
        pool: their rows of a full run); ``mono`` scores each question against its own language's
        candidates only (the paper's zero-shot monolingual pools, Table 4), every language in one
        run, from the same predictions; the diagnostics still describe the multilingual ranking.
        ``probe``: the two languages (``A-B``) of the language-ID probe on an encoder's vectors."""
        name = self.metadata.name
        if save_top_k < 1:
            raise HarnessError(f"task {name}: save_top_k must be at least 1")
        first, _, second = probe.partition("-")
        if "-" in second or first == second or not {first, second} <= set(self.metadata.languages):
            raise HarnessError(
                f"task {name}: probe must name two different languages of the task as A-B "
                f"(e.g. {DEFAULT_PROBE}; languages: {', '.join(self.metadata.languages)}), got '{probe}'"
            )
        self.candidates = candidates
        self.save_top_k = save_top_k
        self.pool = pool
        self.probe = probe
        self.probe_languages = (first, second)

    def options(self) -> dict[str, Any]:
        """``pool`` and ``probe`` only when not the defaults, so that the results of official runs
        keep the options (and run ids) they had before the options existed."""
        return {
            "candidates": self.candidates,
            **({"pool": self.pool} if self.pool != "multilingual" else {}),
            **({"probe": self.probe} if self.probe != DEFAULT_PROBE else {}),
        }

    def scorer_signature(self) -> str:
        """The official signature, marked ``|pool:mono`` when each question is scored against its
        own language's candidates (a different metric from the same ranking)."""
        signature = super().scorer_signature()
        return signature if self.pool == "multilingual" else f"{signature}|pool:{self.pool}"

    # -- data ---------------------------------------------------------------------------------

    def language_file(self, data_dir: Path, split: str, lang: str) -> Path:
        """Where one language's file is (XQuAD-R: ``{lang}.json``, a single split)."""
        return data_dir / f"{lang}.json"

    def read_file(self, path: Path, lang: str, data: LAReQAData, seen: set[str]) -> None:
        """Add one language's file to ``data`` (XQuAD-R: its own sentence offsets)."""
        read_language(path, lang, data, seen)

    def load(self, request: DataRequest) -> LAReQAData:
        assert request.data_dir is not None
        explicit = request.languages is not None and request.languages != self.metadata.languages
        paths = {
            lang: self.language_file(request.data_dir, request.split, lang)
            for lang in (request.languages or self.metadata.languages)
        }
        languages = [lang for lang, path in paths.items() if explicit or path.exists()]
        if not languages:
            example = self.language_file(request.data_dir, request.split, "{lang}")
            raise HarnessError(f"no {self.metadata.name} files in {request.data_dir} (expected {example})")
        others = [
            lang
            for lang in self.metadata.languages
            if lang not in languages and self.language_file(request.data_dir, request.split, lang).exists()
        ]
        data = LAReQAData(
            split=request.split, languages=tuple(languages), files=[], statistics={}, source=str(request.data_dir)
        )
        if self.pool == "multilingual":
            data.left_out_of_pool = tuple(others)
        seen: set[str] = set()
        for lang in sorted(
            [*languages, *others] if self.pool == "all" else languages, key=self.metadata.languages.index
        ):
            path = self.language_file(request.data_dir, request.split, lang)
            self.read_file(path, lang, data, seen)
            data.files.append(path)
        data.questions = [q for q in data.questions if q.lang in languages]  # pool=all: the others' candidates only
        if request.limit:
            sample_questions(data, request.limit, SEED)
        data.statistics = statistics(data)
        return data

    def corpus(self, data: LAReQAData) -> Corpus:
        pool = data.pool
        if self.candidates == "concat":
            texts: list[Any] = [(s + c).replace("\n", "") for s, c in zip(pool.sentences, pool.contexts)]
        elif self.candidates == "pair":
            texts = list(zip(pool.sentences, pool.contexts))
        else:
            texts = list(pool.sentences)
        return Corpus(ids=pool.ids, texts=texts, langs=pool.langs)

    # -- prediction ---------------------------------------------------------------------------

    def encoding_requests(self, data: LAReQAData) -> list[EncodingRequest]:
        corpus = self.corpus(data)
        return [
            EncodingRequest("passage", corpus.texts, corpus.langs),
            EncodingRequest("query", [q.text for q in data.questions], [q.lang for q in data.questions]),
        ]

    def units(self, data: LAReQAData) -> list[str]:
        return [lang for lang in data.languages if any(q.lang == lang for q in data.questions)]

    def predict(self, model: Retriever, data: LAReQAData, unit: str, context: RunContext) -> list[dict[str, Any]]:
        """Rank the whole pool for each question of language ``unit``; keep the top of the ranking,
        the ranks of the correct candidates (enough to recompute every metric), and what the
        language-bias analyses need besides: tie-averaged ranks where scores tie, and the ranks of
        the same-language targets among the candidates of that language (Table 4's pool)."""
        index = context.shared("pool-index", lambda: model.index(self.corpus(data)))
        questions = data.questions_in(unit)
        ids = data.pool.ids
        pool_langs = np.asarray(data.pool.langs)
        in_language = np.flatnonzero(pool_langs == unit)
        position_in_language = np.full(len(ids), -1, dtype=np.int64)
        position_in_language[in_language] = np.arange(len(in_language))
        mix_k = min(TOP_K_MIX, len(ids))
        out: list[dict[str, Any]] = []
        with context.progress(len(questions), f"lareqa {unit}") as bar:
            for start in range(0, len(questions), QUERY_CHUNK):
                chunk = questions[start : start + QUERY_CHUNK]
                texts, langs = [q.text for q in chunk], [q.lang for q in chunk]
                targets = self._target_matrix(data, chunk)
                if isinstance(index, ScoringIndex):  # rank the targets by counting, no full sort
                    scores = index.scores(texts, langs=langs)
                    top = top_k(scores, min(self.save_top_k, scores.shape[1]))[0]
                    ranks = ranks_of(scores, targets)
                else:  # by id where the index takes ids (translate-test: a question's translation)
                    ranking = (
                        index.search_ids(texts, [q.xling_id for q in chunk], langs=langs, k=None)
                        if isinstance(index, KeyedSearchIndex)
                        else index.search(texts, langs=langs, k=None)
                    )
                    top = ranking.indices[:, : self.save_top_k]
                    positions = np.empty_like(ranking.indices)
                    np.put_along_axis(positions, ranking.indices, np.arange(ranking.indices.shape[1])[None, :], axis=1)
                    ranks = np.where(
                        targets >= 0, np.take_along_axis(positions, np.maximum(targets, 0), axis=1) + 1, np.inf
                    )
                    scores = np.empty(ranking.scores.shape, dtype=ranking.scores.dtype)
                    np.put_along_axis(scores, ranking.indices, ranking.scores, axis=1)
                tied = mid_ranks(scores, targets)
                same = np.where(
                    (targets >= 0) & (pool_langs[np.maximum(targets, 0)] == unit),
                    position_in_language[np.maximum(targets, 0)],
                    -1,
                )
                monolingual = ranks_of(scores[:, in_language], same)
                top_ties = (
                    self._top_ties(scores, top, pool_langs, mix_k) if top.shape[1] >= mix_k else [None] * len(chunk)
                )
                for question, row_top, row_targets, row_ranks, row_tied, row_mono, top_tie in zip(
                    chunk, top, targets, ranks, tied, monolingual, top_ties
                ):
                    beyond = {ids[t]: int(r) for t, r in zip(row_targets, row_ranks) if t >= 0 and r > self.save_top_k}
                    item: dict[str, Any] = {"question_id": question.uid, "ranking": [ids[i] for i in row_top]}
                    if beyond:
                        item["ranks"] = beyond
                    averaged = {
                        ids[t]: float(m) for t, r, m in zip(row_targets, row_ranks, row_tied) if t >= 0 and m != r
                    }
                    if averaged:
                        item["tied_ranks"] = averaged
                    item["monolingual_ranks"] = {
                        ids[t]: int(m) for t, m in zip(row_targets, row_mono) if np.isfinite(m)
                    }
                    if top_tie is not None:
                        item["top_tie"] = top_tie
                    out.append(item)
                bar.update(len(chunk))
        return out

    @staticmethod
    def _top_ties(scores: np.ndarray, top: np.ndarray, pool_langs: np.ndarray, k: int) -> list[dict[str, Any] | None]:
        """Per row, the block of scores equal to the k-th best where it straddles the top-k cut:
        its first rank and its candidates per language (for the top-k language mix)."""
        kth = np.take_along_axis(scores, top[:, k - 1 : k], axis=1)
        greater = (scores > kth).sum(axis=1)
        equal = scores == kth
        out: list[dict[str, Any] | None] = []
        for row in range(len(scores)):
            if greater[row] + equal[row].sum() > k:
                langs, counts = np.unique(pool_langs[equal[row]], return_counts=True)
                out.append({"rank": int(greater[row]) + 1, "languages": dict(zip(langs.tolist(), counts.tolist()))})
            else:
                out.append(None)
        return out

    @staticmethod
    def _target_matrix(data: LAReQAData, questions: list[Any]) -> np.ndarray:
        """Pool positions of each question's correct candidates, padded with -1."""
        rows = [data.targets.get(q.xling_id, np.empty(0, dtype=np.int64)) for q in questions]
        matrix = np.full((len(rows), max((len(r) for r in rows), default=0)), -1, dtype=np.int64)
        for i, row in enumerate(rows):
            matrix[i, : len(row)] = row
        return matrix

    def reference_predictions(self, data: LAReQAData, kind: str) -> dict[str, list[dict[str, Any]]]:
        """``gold``: every correct candidate ranked first (AP 1); ``empty``: nothing ranked (AP 0)."""
        if kind not in ("gold", "empty"):
            return super().reference_predictions(data, kind)
        out: dict[str, list[dict[str, Any]]] = {}
        for question in data.questions:
            ranking = [data.pool.ids[t] for t in data.targets.get(question.xling_id, [])] if kind == "gold" else []
            out.setdefault(question.lang, []).append({"question_id": question.uid, "ranking": ranking})
        return out

    # -- scoring ------------------------------------------------------------------------------

    def target_ranks(
        self, data: LAReQAData, predictions: Mapping[str, list[dict[str, Any]]]
    ) -> tuple[list[PoolRanks], np.ndarray, np.ndarray]:
        """For every question with predictions: where its correct candidates sit (padded with
        NOT_RETRIEVED in the rank matrix), and its number of correct candidates."""
        by_uid = {q.uid: q for q in data.questions}
        position = {cid: i for i, cid in enumerate(data.pool.ids)}
        langs = data.pool.langs
        max_targets = max((len(t) for t in data.targets.values()), default=0)
        questions, ranks, counts = [], [], []
        for unit in self.units(data):
            for item in predictions.get(unit, []):
                question = by_uid[item["question_id"]]
                targets = [int(t) for t in data.targets.get(question.xling_id, ())]
                ranking = [position[cid] for cid in item["ranking"]]
                known = {p: r for r, p in enumerate(ranking, start=1)}
                for cid, r in item.get("ranks", {}).items():
                    known.setdefault(position[cid], r)
                tied = {position[cid]: r for cid, r in item.get("tied_ranks", {}).items()}
                row = [float(known.get(t, NOT_RETRIEVED)) for t in targets]
                questions.append(
                    PoolRanks(
                        lang=question.lang,
                        target_langs=tuple(langs[t] for t in targets),
                        ranks=tuple(row),
                        mid_ranks=tuple(float(tied.get(t, r)) for t, r in zip(targets, row)),
                        monolingual_ranks=self._monolingual_ranks(
                            item, question.lang, targets, ranking, position, langs
                        ),
                        top_langs=tuple(langs[p] for p in ranking),
                        top_tie=TopTie(**item["top_tie"]) if "top_tie" in item else None,
                    )
                )
                ranks.append(row + [NOT_RETRIEVED] * (max_targets - len(row)))
                counts.append(len(targets))
        return questions, np.asarray(ranks).reshape(len(ranks), max_targets), np.asarray(counts)

    @staticmethod
    def _monolingual_ranks(
        item: Mapping[str, Any],
        lang: str,
        targets: list[int],
        ranking: list[int],
        position: Mapping[str, int],
        langs: list[str],
    ) -> tuple[float, ...]:
        """Ranks of the same-language targets among the candidates of their language: as the
        harness recorded them, else read off the ranking (exact for a target it lists, since
        every candidate ranked above it is listed too), else NOT_RETRIEVED, as the official AP
        treats a correct candidate a truncated ranking leaves out."""
        given = {position[cid]: r for cid, r in item.get("monolingual_ranks", {}).items()}
        in_ranking = [p for p in ranking if langs[p] == lang]
        out = []
        for t in (t for t in targets if langs[t] == lang):
            if t in given:
                out.append(float(given[t]))
            elif t in in_ranking:
                out.append(float(in_ranking.index(t) + 1))
            else:
                out.append(NOT_RETRIEVED)
        return tuple(out)

    def evaluate(self, data: LAReQAData, predictions: Mapping[str, list[dict[str, Any]]]) -> Evaluation:
        questions, ranks, counts = self.target_ranks(data, predictions)
        if self.pool == "mono":
            ranks, counts = self._monolingual_rank_matrix(questions)
        full = average_precision(ranks, counts)
        at20 = average_precision(ranks, counts, k=20)
        langs = np.asarray([q.lang for q in questions])
        rows = [ScoreRow("all", {"map": float(full.mean()), "map@20": float(at20.mean())}, len(questions))]
        for lang in self.units(data):
            mask = langs == lang
            rows.append(
                ScoreRow(
                    lang,
                    {"map": float(full[mask].mean()), "map@20": float(at20[mask].mean())},
                    int(mask.sum()),
                    (lang,),
                )
            )
        evaluation = Evaluation(
            main_score=rows[0].score("map"),
            rows=rows,
            instances=self._instances(data, predictions, questions, ranks, counts, full, at20),
        )
        if self.pool == "mono":
            evaluation.notes.append(
                "pool=mono: every question against its own language's candidates only "
                "(zero-shot monolingual pools, LAReQA Table 4)"
            )
        if data.left_out_of_pool:
            evaluation.notes.append(
                f"pool: the candidates of the {len(set(data.pool.langs))} language(s) run only "
                f"({len(data.pool.ids)} candidates; --langs left {', '.join(data.left_out_of_pool)} out of the pool), "
                "an easier task than the official pool of every language: these scores are not that pool's; "
                f"{self.metadata.name}:pool=all scores the same questions against every language's candidates"
            )
        if data.sample is not None:
            evaluation.notes.append(
                f"questions: a seeded sample (seed {data.sample.seed}) of {data.sample.per_language} per language, "
                f"{len(questions)} of {data.sample.of_questions}, ranked against the full pool of "
                f"{len(data.pool.ids)} candidates: the scores estimate the full run's"
            )
        if all(np.isfinite(q.ranks).all() for q in questions):
            evaluation.diagnostics = self.analyses(data, questions)
        else:
            evaluation.notes.append(
                "language-bias diagnostics need the rank of every correct candidate; "
                "the predictions leave some unranked"
            )
        evaluation.diagnostics["pool"] = {
            "kind": self.pool,
            "languages": sorted(set(data.pool.langs)),
            "candidates": len(data.pool.ids),
            "left_out_by_langs": list(data.left_out_of_pool),
        }
        return evaluation

    def _instances(
        self,
        data: LAReQAData,
        predictions: Mapping[str, list[dict[str, Any]]],
        questions: list[PoolRanks],
        ranks: np.ndarray,
        counts: np.ndarray,
        full: np.ndarray,
        at20: np.ndarray,
    ) -> list[Instance]:
        """One record per question: its correct candidates (gold), their ranks (prediction; null:
        not retrieved), AP, AP@20 and, when every question has a ranked correct answer, the rank
        of the first one."""
        uids = [item["question_id"] for unit in self.units(data) for item in predictions.get(unit, [])]
        by_uid = {q.uid: q for q in data.questions}
        first = ranks.min(axis=1, initial=np.inf)
        with_first = bool(np.isfinite(first).all())
        out = []
        for i, (uid, question) in enumerate(zip(uids, questions)):
            targets = [
                data.pool.ids[t]
                for t in data.targets.get(by_uid[uid].xling_id, ())
                if self.pool != "mono" or data.pool.langs[t] == question.lang
            ]
            values = {"ap": float(full[i]), "ap@20": float(at20[i])}
            if with_first:
                values["first_correct_rank"] = float(first[i])
            out.append(
                Instance(
                    uid,
                    question.lang,
                    (question.lang,),
                    targets,
                    [None if not np.isfinite(r) else int(r) for r in ranks[i, : counts[i]]],
                    values,
                )
            )
        return out

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """Per question language, the numpy mean of AP (AP@20); ``all``, one mean over every question
        (resampling each question with its translations)."""
        per_language = {
            lang: {row: Mean(lang, value, scale=1.0, official=numpy_mean) for row, value in ROW_METRICS.items()}
            for lang in table.units
        }
        overall: dict[str, Statistic] = {
            row: Pooled(tuple(per_language[lang][row] for lang in table.units), self.metadata.clusters)
            for row in ROW_METRICS
        }
        # dict(row): a row of Means as a row of Statistics (a dict's value type is invariant)
        return {"all": overall, **{lang: dict(row) for lang, row in per_language.items()}}

    @staticmethod
    def _monolingual_rank_matrix(questions: list[PoolRanks]) -> tuple[np.ndarray, np.ndarray]:
        """Ranks of each question's same-language targets among its language's candidates (padded
        with NOT_RETRIEVED), and their number per question."""
        rows = [list(q.monolingual_ranks) for q in questions]
        width = max((len(r) for r in rows), default=0)
        matrix = np.asarray([r + [NOT_RETRIEVED] * (width - len(r)) for r in rows]).reshape(len(rows), width)
        return matrix, np.asarray([len(r) for r in rows])

    def analyses(self, data: LAReQAData, questions: list[PoolRanks]) -> dict[str, Any]:
        """The paper's language-bias analyses (section 5; Tables 3 and 4, Figures 4 and 6), all
        from the one ranking of the multilingual pool (over the pool's languages: with pool=all,
        more than the questions')."""
        languages = tuple(dict.fromkeys(data.pool.langs))
        results = analyse(questions, languages, pool_size=len(data.pool.ids), seed=SEED)
        return {**language_bias(questions, languages), **results.to_dict()}

    def vector_analyses(self, data: LAReQAData, encoder: Encoder) -> dict[str, Any]:
        """The paper's language-ID probe, once on the question vectors and once on the candidate
        vectors of the two ``probe`` languages (``None`` where the data lacks one of them)."""
        languages = self.probe_languages
        corpus = self.corpus(data)
        out: dict[str, Any] = {"languages": list(languages)}
        sides: tuple[tuple[str, Role, Sequence[Text], Sequence[str]], ...] = (
            ("questions", "query", [q.text for q in data.questions], [q.lang for q in data.questions]),
            ("candidates", "passage", corpus.texts, corpus.langs),
        )
        for name, role, texts, langs in sides:
            keep = [i for i, lang in enumerate(langs) if lang in languages]
            vectors = encoder.encode([texts[i] for i in keep], role=role, langs=[langs[i] for i in keep])
            result = language_id_probe(vectors, [langs[i] for i in keep], languages, seed=SEED)
            out[name] = None if result is None else {k: v for k, v in asdict(result).items() if k != "languages"}
        return {"language_id_probe": out}

    # -- prediction files ---------------------------------------------------------------------

    def read_predictions(self, path: Path, data: LAReQAData) -> dict[str, list[dict[str, Any]]]:
        by_uid = {q.uid: q for q in data.questions}
        pool_ids = set(data.pool.ids)
        out: dict[str, list[dict[str, Any]]] = {}
        seen: set[str] = set()
        for line, item in iter_jsonl(path):
            record = f"line {line}"
            validate(item, "lareqa-predictions", file=path, record=record)
            uid = item["question_id"]
            if uid not in by_uid:
                raise InputError(
                    f"unknown question id '{uid}' (not in the data)", file=path, record=record, field="question_id"
                )
            if uid in seen:
                raise InputError(f"question id '{uid}' appears twice", file=path, record=record, field="question_id")
            seen.add(uid)
            for where in ("ranking", "ranks", "tied_ranks", "monolingual_ranks"):
                cids = item.get(where, ())
                unknown = next((cid for cid in cids if cid not in pool_ids), None)
                if unknown is not None:
                    raise InputError(f"unknown candidate id '{unknown}'", file=path, record=record, field=where)
            out.setdefault(by_uid[uid].lang, []).append(item)
        missing = [q.uid for q in data.questions if q.uid not in seen]
        if missing:
            raise InputError(f"no predictions for {len(missing)} question(s), e.g. '{missing[0]}'", file=path)
        return out

    def write_predictions(self, data: LAReQAData, predictions: Mapping[str, list[dict[str, Any]]], path: Path) -> None:
        lines = [
            json.dumps(item, ensure_ascii=False) for unit in self.units(data) for item in predictions.get(unit, [])
        ]
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        write_atomic(path, lambda handle: handle.write(payload))
