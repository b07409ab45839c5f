"""The XOR-TyDi QA tasks (Asai et al., NAACL 2021), scored as ``AkariAsai/XORQA``'s ``evals/`` do.

* **XOR-Retrieve** — for a question in one of 7 languages, retrieve English passages holding its
  answer. R@2kt / R@5kt: is an answer (yes/no excluded) a raw substring of the first 2,000 / 5,000
  NLTK tokens of the ranked passages? Each question counts for the language its *prediction*
  names; per-language recall is macro-averaged over the languages with a counted question, so
  questions missing from the predictions are simply not counted (reported in the diagnostics).
  The leaderboard ranks by R@5kt.
* **XOR-EnglishSpan** — answer in English: SQuAD v1.1 F1 / EM per language (a missing answer
  scores 0), plain mean over the languages present. Ranked by F1.
* **XOR-Full** — answer in the question's language: F1 / EM after counter deletion (MeCab for
  Japanese) and character BLEU-4; per-language means, then the sum over languages divided by 7
  whatever the number of languages present, as the official script does. Corrected variants
  (``f1_symmetric``, ``em_symmetric``, ``bleu_effective_order``) are reported beside them.

XOR-Retrieve runs any :class:`~harness.definitions.protocols.Retriever` over a passage corpus the user
supplies (``xor-retrieve:corpus=psgs_w100.tsv``). EnglishSpan and Full run any
:class:`~harness.definitions.protocols.OpenDomainQA` model, which finds its own passages: the
``retrieve-read`` pipeline (:mod:`harness_opendomain.model`: retrieve from the user's English or
English + question-language corpus, read, translate answers from English passages back) takes
the corpus as a model option. Each question is asked with the language its answer is scored in
(English for EnglishSpan, the question's for Full). A yes/no answer is written as "yes"/"no",
as in the gold files. Both also score prediction files (``harness score``, or the
``predictions``/``oracle``/``empty`` models).

EnglishSpan and Full also run a generative model, prompted with the task's ``prompt`` template:
closed-book (``closed-book``: the question alone) or, as ``retrieve-read:generator=...``,
retrieval-augmented (``rag``: the top-k passages with their ids, then the question), with
``shots`` solved questions of the same language drawn with ``shot_seed`` (never the question
itself). Answers are scored by the same official scorers; the per-instance records keep each
answer's reasoning trace and the ids of the passages in its prompt.
"""

from __future__ import annotations

import statistics
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.plugin import (
    DataRequest,
    Evaluation,
    HarnessError,
    InputError,
    OpenDomainQA,
    OpenQuestion,
    Retriever,
    RunContext,
    ScoreRow,
    Task,
)
from harness.plugin.formats import validate
from harness.plugin.io import check_known_ids, dump_json, read_json
from harness.plugin.scoring import (
    Instance,
    InstanceTable,
    Macro,
    Mean,
    RowStatistics,
    Statistic,
    ascii_english,
    percent_of_sum,
    script_share,
)
from harness.plugin.services import PromptTarget, answer_text, prompt_target
from harness.plugin.tasks import PromptedTask, Shot, ask, ask_open, corpus_files, read_passages
from harness_xor import data as xor_data
from harness_xor.data import XorData
from harness_xor.metadata import XOR_ENGSPAN, XOR_FULL, XOR_LANGUAGES, XOR_RETRIEVE
from harness_xor.metrics import (
    char_bleu,
    f1_and_em,
    first_tokens,
    full_normalize,
    full_prediction,
    full_references,
    recall_hit,
)
from harness_xor.tokens import word_tokenize

#: XOR-Retrieve's token budgets: R@2kt and R@5kt read the first 2,000 and 5,000 tokens.
TOKEN_BUDGETS = {"r@2kt": 2000, "r@5kt": 5000}
#: The official XOR-Full average divides the per-language sums by 7, whatever is present.
FULL_DIVISOR = 7
#: The order eval_xor_full.py sums the languages in (its ``lang_dic``), which decides the last bit.
FULL_SUM_ORDER = ("te", "fi", "ja", "ru", "ar", "bn", "ko")
QUERY_CHUNK = 256


def _percent(total: float, count: int) -> float:
    return 100.0 * total / count if count else 0.0


def plain_mean(values: Sequence[float]) -> float:
    """``sum / n``: EnglishSpan's average of the language scores, a language's fraction in XOR-Full."""
    return sum(values) / len(values)


def fraction_percent(values: Sequence[float]) -> float:
    """``sum / n * 100`` in that order: XOR-Full's and XOR-Retrieve's per-language score."""
    return plain_mean(values) * 100


@dataclass(frozen=True, eq=False)
class FullOverall(Macro):
    """XOR-Full's ``all``: the languages' fractions summed in the script's order, ``/ 7 * 100``
    (``eval_xor_full.py``); resampled, the languages' scores summed over 7, the same number."""

    def point(self, table: InstanceTable) -> float:
        fractions = {
            part.unit: plain_mean(table.unit(part.unit).values[part.metric].tolist())
            for part in self.parts
            if isinstance(part, Mean)
        }
        return sum(fractions[lang] for lang in FULL_SUM_ORDER if lang in fractions) / FULL_DIVISOR * 100


def macro_statistics(
    table: InstanceTable,
    metrics: Mapping[str, bool],
    language_score: Any,
    overall: Callable[[tuple[Mean, ...]], Statistic],
) -> RowStatistics:
    """Per language, each per-question metric's score (``metrics``: name -> 0/1 valued) as
    ``language_score`` computes it from the questions' values; ``all`` as ``overall`` makes it
    from the languages' statistics."""
    per_language = {
        lang: {m: Mean(lang, m, official=language_score, binary=binary) for m, binary in metrics.items()}
        for lang in table.units
    }
    # dict(row): a row of Means as a row of Statistics (a dict's value type is invariant)
    return {
        "all": {m: overall(tuple(per_language[lang][m] for lang in table.units)) for m in metrics},
        **{lang: dict(row) for lang, row in per_language.items()},
    }


#: Why XOR-Retrieve predictions cannot be scored when none counts (yes/no questions are skipped).
NOTHING_TO_SCORE = "no prediction is for a question with a span answer: nothing to score"


class _XorTask(Task[XorData]):
    """Shared loading and unit handling of the three XOR tasks."""

    family = "retrieve_eng_span"

    def load(self, request: DataRequest) -> XorData:
        return xor_data.load(request, self.family, self.metadata.languages)

    def units(self, data: XorData) -> list[str]:
        return list(data.languages)


class _AnswerTask(PromptedTask, _XorTask):
    """EnglishSpan and Full: predictions are ``{question id: answer}``, one dict per language;
    prompts for generative models as the module docstring says."""

    @abstractmethod
    def answer_lang(self, question_lang: str) -> str:
        """The language this task scores answers to questions in ``question_lang`` in."""

    def predict(self, model: OpenDomainQA, data: XorData, unit: str, context: RunContext) -> dict[str, Any]:
        """Ask the model every question of language ``unit``; ``{question id: answer}`` (a
        generated answer with what the records keep beside it)."""
        questions = data.questions_in(unit)
        asked = [OpenQuestion(q.id, q.text, q.lang, self.answer_lang(q.lang)) for q in questions]
        target = prompt_target(model)
        if target is not None and self.prompt_for(model, target) is not None:
            return self.generate(target, data, asked, context)
        answers = ask(model, asked, context, f"{self.metadata.name} {unit}")
        return {q.id: a.yes_no or a.text for q, a in zip(questions, answers)}

    def generate(
        self, target: PromptTarget, data: XorData, questions: list[OpenQuestion], context: RunContext
    ) -> dict[str, Any]:
        """Prompt the generator with each question (and its shots, from the loaded questions of the
        same language, first answer as the solution)."""
        pool = (
            [Shot(q.id, {"question": q.text}, data.by_id[q.id].answers[0], q) for q in questions]
            if self.prompting.shots
            else []
        )
        with context.progress(len(questions), f"{self.metadata.name} {questions[0].lang if questions else ''}") as bar:
            answers = ask_open(target, self.prompting, questions, lambda q: self.prompting.draw(pool, q.id), bar)
        return {q.id: a.answer.to_json() for q, a in zip(questions, answers)}

    def reference_predictions(self, data: XorData, kind: str) -> dict[str, dict[str, str]]:
        """``gold``: each question's first answer; ``empty``: the empty string."""
        if kind not in ("gold", "empty"):
            return super().reference_predictions(data, kind)
        return {
            lang: {q.id: q.answers[0] if kind == "gold" else "" for q in data.questions_in(lang)}
            for lang in data.languages
        }

    def answer_of(self, value: str) -> str:
        """The answer in a prediction file's value (its format, validated, makes it a string)."""
        return value

    def question_id(self, key: str) -> str:
        return key

    def read_predictions(self, path: Path, data: XorData) -> dict[str, dict[str, str]]:
        """Answers of the questions in ``data``; answers to questions of the file outside the
        selected languages or ``--limit`` are ignored (a file for all languages can be scored on a
        subset), but an id of no question of the file is refused (see :func:`check_known_ids`).
        Under ``--input-rules official`` they are ignored, and of two keys naming one question
        (``ID`` and ``LANG_ID``) or a key given twice the later wins, as in the official scripts."""
        official = data.input_rules == "official"
        raw = read_json(path, unique_keys=not official)
        validate(raw, self.metadata.prediction_format, file=path)
        if not official:
            check_known_ids([self.question_id(key) for key in raw], data.known_ids, file=path, what=data.files[0].name)
        out: dict[str, dict[str, str]] = {lang: {} for lang in data.languages}
        keys: dict[str, str] = {}
        for key, value in raw.items():
            qid = self.question_id(key)
            if qid in keys and not official:
                raise InputError(f"keys '{keys[qid]}' and '{key}' name the same question", file=path, field=key)
            keys[qid] = key
            question = data.by_id.get(qid)
            if question is not None:
                out[question.lang][qid] = self.answer_of(value)
        return out

    def write_predictions(self, data: XorData, predictions: Mapping[str, dict[str, str]], path: Path) -> None:
        dump_json(
            {
                qid: answer_text(answer)
                for lang in self.units(data)
                for qid, answer in predictions.get(lang, {}).items()
            },
            path,
        )

    @abstractmethod
    def summarise(
        self, sums: dict[str, tuple[dict[str, float], int]]
    ) -> tuple[dict[str, float], list[ScoreRow], list[str]]:
        """From each language's metric sums and question count (see :meth:`language_sums`): the
        ``all`` row's metrics, the per-language rows (percent), and notes saying how, each figure
        computed with the official script's operations in its order, so the floats are its floats."""

    def evaluate(self, data: XorData, predictions: Mapping[str, dict[str, str]]) -> Evaluation:
        sums, instances = self.language_sums(data, predictions)
        overall, rows, notes = self.summarise(sums)
        unanswered = sum(q.id not in predictions.get(q.lang, {}) for q in data.questions)
        # whether answers come back in the script of the language scored (the question's, for Full)
        scripts = {
            lang: script_share([answer_text(a) for a in predictions.get(lang, {}).values()], self.answer_lang(lang))
            for lang in data.languages
        }
        return Evaluation(
            overall["f1"],
            [ScoreRow("all", overall, len(data.questions)), *rows],
            diagnostics={"unanswered": unanswered, "answer_script": scripts},
            notes=notes,
            instances=instances,
        )

    #: The metrics of one answer, in the order :meth:`question_scores` gives them.
    metric_names: tuple[str, ...] = ()
    #: The metrics whose per-question values are 0/1 (McNemar applies).
    binary_metrics: frozenset[str] = frozenset()

    @abstractmethod
    def question_scores(self, prediction: str, golds: tuple[str, ...], lang: str) -> dict[str, float]:
        """The metrics of one answer, as fractions."""

    def language_sums(
        self, data: XorData, predictions: Mapping[str, dict[str, str]]
    ) -> tuple[dict[str, tuple[dict[str, float], int]], list[Instance]]:
        """Per language: each metric summed over its questions in file order (a question without an
        answer adds 0, as in both official scripts), and the number of its questions; and each
        question's values."""
        out, instances = {}, []
        for lang in self.units(data):
            answers = predictions.get(lang, {})
            questions = data.questions_in(lang)
            sums = dict.fromkeys(self.metric_names, 0.0)
            for question in questions:
                values = dict.fromkeys(self.metric_names, 0.0)
                if question.id in answers:
                    values = self.question_scores(answer_text(answers[question.id]), question.answers, lang)
                    for name, value in values.items():
                        sums[name] += value
                instances.append(
                    Instance(question.id, lang, (lang,), list(question.answers), answers.get(question.id), values)
                )
            out[lang] = (sums, len(questions))
        return out, instances

    def statistics(self, table: InstanceTable) -> RowStatistics:
        return macro_statistics(
            table, {m: m in self.binary_metrics for m in self.metric_names}, self.language_score, self.overall_statistic
        )

    #: A language's score from its questions' values, in the official script's arithmetic.
    language_score: Any = staticmethod(percent_of_sum)

    @staticmethod
    def overall_statistic(parts: tuple[Mean, ...]) -> Statistic:
        """``all`` from the languages' scores (EnglishSpan: their plain mean, ``sum / n``)."""
        return Macro(parts, plain_mean)


class XorEnglishSpan(_AnswerTask):
    """XOR-EnglishSpan: English answers to questions in 7 languages, SQuAD v1.1 F1/EM."""

    metadata = XOR_ENGSPAN
    metric_names = ("f1", "em")
    binary_metrics = frozenset({"em"})

    def answer_lang(self, question_lang: str) -> str:
        return "en"

    def answer_of(self, value: str | dict[str, str]) -> str:
        return value["answer"] if isinstance(value, dict) else value

    def question_scores(self, prediction: str, golds: tuple[str, ...], lang: str) -> dict[str, float]:
        f1, em = f1_and_em(prediction, golds, ascii_english)
        return {"f1": f1, "em": em}

    def summarise(
        self, sums: dict[str, tuple[dict[str, float], int]]
    ) -> tuple[dict[str, float], list[ScoreRow], list[str]]:
        """``100.0 * sum / count`` per language; the sum of those over the languages in XOR order,
        divided by their number (``eval_xor_engspan.py``)."""
        rows = [
            ScoreRow(lang, {n: _percent(total[n], count) for n in self.metric_names}, count, (lang,))
            for lang, (total, count) in sums.items()
        ]
        overall = {m: sum(r.score(m) for r in rows) / len(rows) for m in self.metric_names}
        return overall, rows, ["all: plain mean of the per-language scores (official eval_xor_engspan.py)"]


class XorFull(_AnswerTask):
    """XOR-Full: answers in the question's language, F1/EM/BLEU as ``eval_xor_full.py``."""

    family = "full"
    metadata = XOR_FULL
    metric_names = ("f1", "em", "bleu", "f1_symmetric", "em_symmetric", "bleu_effective_order")
    binary_metrics = frozenset({"em", "em_symmetric"})
    language_score = staticmethod(fraction_percent)

    @staticmethod
    def overall_statistic(parts: tuple[Mean, ...]) -> Statistic:
        """``all``: the languages' fractions summed in the script's order, over 7 (see :class:`FullOverall`)."""
        return FullOverall(parts, plain_mean, FULL_DIVISOR)

    def answer_lang(self, question_lang: str) -> str:
        return question_lang

    def question_id(self, key: str) -> str:
        """Keys may carry a language prefix: the official script keeps what follows the last "_"."""
        return key.split("_")[-1]

    def question_scores(self, prediction: str, golds: tuple[str, ...], lang: str) -> dict[str, float]:
        """Official F1/EM/BLEU of one answer, and the corrected variants."""
        references = full_references(golds, lang)
        final = full_prediction(prediction, lang)
        f1, em = f1_and_em(final, references, full_normalize)
        f1_sym, em_sym = f1_and_em(final, full_references(golds, lang, symmetric=True), full_normalize)
        return {
            "f1": f1,
            "em": em,
            "bleu": char_bleu(references, prediction),
            "f1_symmetric": f1_sym,
            "em_symmetric": em_sym,
            "bleu_effective_order": char_bleu(references, prediction, effective_order=True),
        }

    def summarise(
        self, sums: dict[str, tuple[dict[str, float], int]]
    ) -> tuple[dict[str, float], list[ScoreRow], list[str]]:
        """``sum / count`` per language (shown ``* 100``); those fractions summed in the script's
        language order, ``/ 7 * 100`` (``eval_xor_full.py``)."""
        fractions = {lang: {n: total[n] / count for n in self.metric_names} for lang, (total, count) in sums.items()}
        rows = [
            ScoreRow(lang, {n: value * 100 for n, value in fractions[lang].items()}, sums[lang][1], (lang,))
            for lang in sums
        ]
        ordered = [fractions[lang] for lang in FULL_SUM_ORDER if lang in fractions]
        overall = {n: sum(f[n] for f in ordered) / FULL_DIVISOR * 100 for n in self.metric_names}
        return (
            overall,
            rows,
            [
                f"all: per-language scores summed and divided by {FULL_DIVISOR} whatever the number of languages "
                f"present ({len(rows)} here), as eval_xor_full.py does",
                "corrected variants: *_symmetric applies the prediction's ・/、 replacement to Japanese golds too; "
                "bleu_effective_order scores answers under 4 characters on orders 1..length",
            ],
        )


class XorRetrieve(_XorTask):
    """XOR-Retrieve: English passages for questions in 7 languages, R@2kt and R@5kt."""

    metadata = XOR_RETRIEVE

    def __init__(self, corpus: Path | None = None, top_k: int = 100, titles: bool = True) -> None:
        """``corpus``: the passage file or folder a retriever searches (see :mod:`harness.data.passages`);
        ``top_k``: passages kept per question (enough for 5,000 tokens of 100-word passages);
        ``titles``: index (title, text) pairs rather than texts alone."""
        if top_k < 1:
            raise HarnessError("task xor-retrieve: top_k must be at least 1")
        self.corpus = corpus
        self.top_k = top_k
        self.titles = titles

    def options(self) -> dict[str, Any]:
        """The corpus by its file name: its content is in the data's fingerprint (its files are among
        the data files), so two maintainers with the same corpus in different folders share a
        leaderboard scope, which its absolute path would split."""
        return {"top_k": self.top_k, "titles": self.titles, "corpus": None if self.corpus is None else self.corpus.name}

    def load(self, request: DataRequest) -> XorData:
        """The questions, and the corpus files among the files a result hashes (they decide the scores).
        A corpus named by its file name alone, as a result records it, is looked for in the data
        folder when it is not in the current one (``harness validate --rescore``)."""
        data = super().load(request)
        if self.corpus is not None:
            if not self.corpus.exists() and self.corpus.name == str(self.corpus) and request.data_dir is not None:
                self.corpus = request.data_dir / self.corpus.name
            if not self.corpus.exists():
                raise HarnessError(
                    f"task xor-retrieve: corpus {self.corpus} not found (a result names its corpus by "
                    "file name: pass xor-retrieve:corpus=PATH, or put it in the data folder)"
                )
            data.files += [path for path, _ in corpus_files(self.corpus)]
        return data

    # -- prediction ---------------------------------------------------------------------------

    def predict(self, model: Retriever, data: XorData, unit: str, context: RunContext) -> list[dict[str, Any]]:
        """Rank the corpus for each question of language ``unit``; keep the top passages' texts."""
        corpus = self.corpus
        if corpus is None:
            raise HarnessError(
                "task xor-retrieve needs a passage corpus to run a retriever: "
                "xor-retrieve:corpus=/path/psgs_w100.tsv (or a folder of {lang}.tsv files)"
            )
        passages = context.shared("passages", lambda: read_passages(corpus))
        index = context.shared("index", lambda: model.index(passages.as_corpus(self.titles)))
        questions = data.questions_in(unit)
        out = []
        with context.progress(len(questions), f"xor-retrieve {unit}") as bar:
            for start in range(0, len(questions), QUERY_CHUNK):
                chunk = questions[start : start + QUERY_CHUNK]
                ranking = index.search([q.text for q in chunk], langs=[q.lang for q in chunk], k=self.top_k)
                for question, row in zip(chunk, ranking.indices):
                    out.append({"id": question.id, "lang": question.lang, "ctxs": [passages.texts[i] for i in row]})
                bar.update(len(chunk))
        return out

    def reference_predictions(self, data: XorData, kind: str) -> dict[str, list[dict[str, Any]]]:
        """``gold``: the question's answers as its passages; ``empty``: no passage."""
        if kind not in ("gold", "empty"):
            return super().reference_predictions(data, kind)
        return {
            lang: [
                {"id": q.id, "lang": q.lang, "ctxs": list(q.answers) if kind == "gold" else []}
                for q in data.questions_in(lang)
            ]
            for lang in data.languages
        }

    # -- scoring ------------------------------------------------------------------------------

    def evaluate(self, data: XorData, predictions: Mapping[str, list[dict[str, Any]]]) -> Evaluation:
        """R@kt per language the predictions name, macro-averaged. Every listed item counts, so a
        question listed twice counts twice, and a language outside the seven is a row of its own
        in the mean: both reach here only under ``--input-rules official``, as the script scores them."""
        tokenize = lru_cache(maxsize=1 << 16)(word_tokenize)  # ranked lists share passages
        budget = max(TOKEN_BUDGETS.values())
        languages = _listed_languages(predictions)
        counted: Counter[str] = Counter()
        hits: dict[str, Counter[str]] = {lang: Counter() for lang in languages}
        listings: Counter[str] = Counter()
        other_language = yes_no = 0
        instances = []
        for lang in languages:
            for item in predictions[lang]:
                question = data.by_id[item["id"]]
                listings[question.id] += 1
                other_language += question.lang != lang
                if not question.span_answers:
                    yes_no += 1
                    continue
                counted[lang] += 1
                tokens = first_tokens(item["ctxs"], budget, tokenize)
                found = {
                    metric: recall_hit(tokens[:max_tokens], question.span_answers)
                    for metric, max_tokens in TOKEN_BUDGETS.items()
                }
                for metric, hit in found.items():
                    hits[lang][metric] += hit
                instances.append(
                    Instance(
                        question.id,
                        lang,
                        (lang,),
                        list(question.span_answers),
                        None,
                        {metric: float(hit) for metric, hit in found.items()},
                    )
                )
        if not counted:
            raise HarnessError(NOTHING_TO_SCORE)
        # hit / count * 100 in that order, as the script computes it (100 * hit / count can differ in the last bit)
        rows = [
            ScoreRow(lang, {m: hits[lang][m] / counted[lang] * 100 for m in TOKEN_BUDGETS}, counted[lang], (lang,))
            for lang in languages
            if counted[lang]
        ]
        overall = {m: statistics.mean(r.score(m) for r in rows) for m in TOKEN_BUDGETS}
        not_predicted = sum(q.id not in listings and bool(q.span_answers) for q in data.questions)
        diagnostics = {
            "not_predicted": not_predicted,
            "yes_no_skipped": yes_no,
            "language_differs_from_data": other_language,
        }
        evaluation = Evaluation(
            overall["r@5kt"], [ScoreRow("all", overall, counted.total()), *rows], diagnostics, instances=instances
        )
        evaluation.notes.append(
            "all: macro mean over the languages with a counted question; yes/no questions are "
            "skipped and each question counts for the language its prediction names (official)"
        )
        if not_predicted:
            evaluation.notes.append(
                f"{not_predicted} questions with span answers have no prediction and are not "
                "counted, as in eval_xor_retrieve.py"
            )
        repeated = sum(count > 1 for count in listings.values())
        if repeated:
            evaluation.notes.append(
                f"{repeated} question(s) listed more than once: every listing counted, as in eval_xor_retrieve.py"
            )
        foreign = [lang for lang in languages if lang not in XOR_LANGUAGES and counted[lang]]
        if foreign:
            evaluation.notes.append(
                f"language(s) outside XOR-TyDi QA's seven: {', '.join(foreign)}, each a row of "
                "its own in the mean, as in eval_xor_retrieve.py"
            )
        return evaluation

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """Per language, the hit rate of each budget; ``all``, their mean (``statistics.mean``)."""
        return macro_statistics(
            table, dict.fromkeys(TOKEN_BUDGETS, True), fraction_percent, lambda parts: Macro(parts, statistics.mean)
        )

    # -- prediction files ---------------------------------------------------------------------

    def read_predictions(self, path: Path, data: XorData) -> dict[str, list[dict[str, Any]]]:
        """The official JSON array; items for questions of the file outside the selection are
        ignored, items for no question of the file refused (see :func:`check_known_ids`), as are
        a question listed twice and a language outside the seven. Under ``--input-rules official``
        all three are scored as ``eval_xor_retrieve.py`` scores them: ids of no question ignored,
        every listing of a question counted, and a language of its own a row of its own."""
        official = data.input_rules == "official"
        raw = read_json(path, unique_keys=not official)
        if not isinstance(raw, list):
            kind = "an object" if isinstance(raw, dict) else type(raw).__name__
            raise InputError(f"must be a JSON array of {{id, lang, ctxs}} objects, not {kind}", file=path)
        validate(raw, self.metadata.prediction_format, file=path)
        if not official:
            _refuse_what_hides_mistakes(raw, path, data)
        out: dict[str, list[dict[str, Any]]] = {}
        for item in raw:
            if item["id"] in data.by_id:
                out.setdefault(item["lang"], []).append({"id": item["id"], "lang": item["lang"], "ctxs": item["ctxs"]})
        if not any(data.by_id[item["id"]].span_answers for items in out.values() for item in items):
            raise InputError(NOTHING_TO_SCORE, file=path)  # said here, where the file can be named
        return out

    def write_predictions(self, data: XorData, predictions: Mapping[str, list[dict[str, Any]]], path: Path) -> None:
        dump_json([item for lang in _listed_languages(predictions) for item in predictions[lang]], path, indent=None)


def _refuse_what_hides_mistakes(items: list[dict[str, Any]], path: Path, data: XorData) -> None:
    """The strict reading of XOR-Retrieve predictions: a language outside the seven, a question
    listed twice and an id of no question of the data file are errors (see :func:`check_known_ids`)."""
    seen: dict[str, None] = {}  # in file order, so the error names the first unknown id
    for number, item in enumerate(items):
        record = f"item {number}"
        if item["lang"] not in XOR_LANGUAGES:
            raise InputError(
                f"unknown language '{item['lang']}' (XOR-TyDi QA: {', '.join(XOR_LANGUAGES)})",
                file=path,
                record=record,
                field="lang",
            )
        if item["id"] in seen:
            raise InputError(f"question id '{item['id']}' appears twice", file=path, record=record, field="id")
        seen[item["id"]] = None
    check_known_ids(seen, data.known_ids, file=path, what=data.files[0].name)


def _listed_languages(predictions: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """The languages XOR-Retrieve predictions are listed under: the seven in their order, then any
    other (only ``--input-rules official`` reads those) in the order the file names them."""
    return [lang for lang in XOR_LANGUAGES if lang in predictions] + [
        lang for lang in predictions if lang not in XOR_LANGUAGES
    ]
