"""The MKQA task: 10,000 open-domain questions in 26 languages, scored at the best No-Answer threshold.

Evaluation (Longpre, Lu & Daiber, TACL 2021, section 4; ``apple/ml-mkqa`` ``mkqa_eval.py``):

* a model answers every question of a language with no context given: an answer text, or a
  yes/no, and a score for "No Answer" (``no_answer_prob``); the gold answers are each
  example's texts and aliases, and ``unanswerable`` and ``long_answer`` examples are No Answer;
* each language is scored by exact match and token F1 after the MKQA normaliser
  (:mod:`harness_mkqa.normalize`), then by the best-threshold sweep over ``no_answer_prob``
  (:mod:`harness_mkqa.scoring`): ``best_f1`` is the language's score, reported with
  ``best_em``, the answerable / unanswerable parts at the same threshold, the threshold, the
  plain metrics without a threshold, and the order-independent ``*_tie_robust`` variant;
* the headline is the macro average of the 26 languages (the unweighted mean of the rounded
  per-language numbers). With fewer languages there is no official macro average: the summary
  row is labelled ``incomplete: k of 26 languages``, the main score is the mean over the k
  languages present, and a note says so;
* diagnostics break the scores down by answer type (entity, date, number, ...), because users
  ask which kinds of questions fail.

Numbers are stored as the official script prints them: rounded to 2 decimals.

A generative model answers closed-book (or, as ``retrieve-read:generator=...``, from retrieved
passages) with the task's ``prompt`` template (``closed-book``, ``rag``), ``shots`` solved examples
of the same language (never the question itself) drawn with ``shot_seed``. Its ``no_answer_prob``
is its own (:func:`harness.models.prompting.no_answer_probability`): the probability of the abstention
reply when it abstains, else one minus the probability of its answer; a "yes"/"no" answer is
given as ``binary_answer``. Where the engine returns no token log-probabilities, a model that
scores continuations gives its answer's probability by log-likelihood
(:class:`harness.models.loglikelihood.ScoringService`); one that can do neither stops with one line
saying what MKQA needs. Reasoning traces and passage ids ride along in each prediction line
(fields the official scorer ignores) and in the per-instance records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.plugin import (
    DataRequest,
    Evaluation,
    HarnessError,
    OpenAnswer,
    OpenDomainQA,
    OpenQuestion,
    RunContext,
    ScoreRow,
    Task,
)
from harness.plugin.scoring import Instance, InstanceTable, RowStatistics, script_share
from harness.plugin.services import PromptTarget, kept, prompt_target
from harness.plugin.tasks import OpenGeneration, PromptedTask, Shot, ask, ask_open
from harness_mkqa.data import MKQAData, find_data_file, read_mkqa
from harness_mkqa.languages import MKQA_LANGUAGES
from harness_mkqa.metadata import MKQA as MKQA_METADATA
from harness_mkqa.predictions import aligned, read_predictions, write_predictions
from harness_mkqa.scoring import (
    ExampleScores,
    LanguageResult,
    answer_type_breakdown,
    evaluate_language,
    example_values,
    language_statistics,
    macro_average,
    score_examples,
)

#: Why a generator that neither returns token log-probabilities nor scores text cannot run MKQA.
NO_LOGPROBS = (
    "mkqa: the No-Answer probability is made from the model's probability of its own answer, but this "
    "generator returned no token log-probabilities and cannot score text either: use one that does "
    "(hf-generator; openai-compatible on a server that returns logprobs, or with endpoint=completions on one "
    "that echoes them, as vLLM does)"
)


def _record(example_id: Any, answer: OpenAnswer) -> dict[str, Any]:
    """A model's answer as an official prediction line (no ``no_answer_prob`` if it has no score,
    which the official scorer reads as 0)."""
    record: dict[str, Any] = {"example_id": example_id, "prediction": answer.text, "binary_answer": answer.yes_no}
    if answer.no_answer_score is not None:
        score = float(answer.no_answer_score)
        if not math.isfinite(score):
            raise HarnessError(f"mkqa: the model's no_answer_score for example {example_id} is {score}")
        record["no_answer_prob"] = score
    return record


def _generated_record(example_id: Any, generated: OpenGeneration) -> dict[str, Any]:
    """A generated answer as an official prediction line, with what the records keep."""
    answer = generated.answer.answer
    binary = answer.strip().strip(".!").lower()
    record = {
        "example_id": example_id,
        "prediction": answer,
        "binary_answer": binary if binary in ("yes", "no") else None,
        "no_answer_prob": generated.no_answer_prob,
        **generated.answer.to_json(),
    }
    del record["answer"]
    return record


class MKQA(PromptedTask, Task[MKQAData]):
    """MKQA, scored like ``mkqa_eval.py`` / ``mkqa_eval_all_languages.py``; prompts as the module docstring says."""

    metadata = MKQA_METADATA

    def demo_data_dir(self) -> Path:
        return Path(__file__).parent / "demo"

    # -- data ---------------------------------------------------------------------------------

    def load(self, request: DataRequest) -> MKQAData:
        assert request.data_dir is not None
        languages = tuple(request.languages or MKQA_LANGUAGES)
        return read_mkqa(
            find_data_file(request.data_dir),
            languages,
            chosen=languages != MKQA_LANGUAGES,
            limit=request.limit,
            split=request.split,
        )

    def units(self, data: MKQAData) -> list[str]:
        return list(data.languages)

    # -- prediction ---------------------------------------------------------------------------

    def predict(self, model: OpenDomainQA, data: MKQAData, unit: str, context: RunContext) -> list[dict[str, Any]]:
        """Ask the model every question of language ``unit``; return official prediction lines.
        MKQA's gold answers are localised, so answers are asked for in the question's language."""
        questions = [
            OpenQuestion(id=example_id, text=text, lang=unit, answer_lang=unit)
            for example_id, text in zip(data.example_ids, data.queries[unit])
        ]
        target = prompt_target(model)
        if target is not None and self.prompt_for(model, target) is not None:
            return self.generate(target, data, unit, questions, context)
        answers = ask(model, questions, context, f"mkqa {unit}")
        return [_record(raw_id, answer) for raw_id, answer in zip(data.raw_ids, answers)]

    def generate(
        self, target: PromptTarget, data: MKQAData, unit: str, questions: list[OpenQuestion], context: RunContext
    ) -> list[dict[str, Any]]:
        """Prompt the generator with each question (and its shots: other questions of the language,
        the abstention reply answering the unanswerable); official lines with its own No-Answer
        probability."""
        template = self.prompting.template
        assert template is not None
        pool = (
            [
                Shot(q.id, {"question": q.text}, a.reference if a.answerable else (template.no_answer or ""), q)
                for q, a in zip(questions, data.annotations[unit])
            ]
            if self.prompting.shots
            else []
        )
        with context.progress(len(questions), f"mkqa {unit}") as bar:
            answers = ask_open(
                target, self.prompting, questions, lambda q: self.prompting.draw(pool, q.id), bar, logprobs=True
            )
        if any(answer.no_answer_prob is None for answer in answers):
            raise HarnessError(NO_LOGPROBS)
        return [_generated_record(raw_id, answer) for raw_id, answer in zip(data.raw_ids, answers)]

    def reference_predictions(self, data: MKQAData, kind: str) -> dict[str, list[dict[str, Any]]]:
        """``gold``: the first answer text (as ``binary_answer`` for yes/no answers), "" with
        ``no_answer_prob`` 1 on No-Answer examples (every metric 100); ``empty``: "" everywhere with
        ``no_answer_prob`` 0 (best F1 and EM = the No-Answer share)."""
        if kind == "gold":
            return {
                lang: [
                    {
                        "example_id": raw_id,
                        "prediction": a.reference,
                        "binary_answer": a.reference if a.binary else None,
                        "no_answer_prob": 0.0 if a.answerable else 1.0,
                    }
                    for raw_id, a in zip(data.raw_ids, data.annotations[lang])
                ]
                for lang in data.languages
            }
        if kind == "empty":
            return {
                lang: [
                    {"example_id": raw_id, "prediction": "", "binary_answer": None, "no_answer_prob": 0.0}
                    for raw_id in data.raw_ids
                ]
                for lang in data.languages
            }
        return super().reference_predictions(data, kind)

    # -- scoring ------------------------------------------------------------------------------

    def evaluate(self, data: MKQAData, predictions: Mapping[str, list[dict[str, Any]]]) -> Evaluation:
        """Score each language that has predictions; the summary row (``macro``, or
        ``incomplete: k of 26 languages``) first, then one row per language. Diagnostics: the
        answer-type breakdown (per language and pooled as ``all``) and the threshold the
        order-independent variant chose (null: abstain on everything)."""
        parts: dict[str, tuple[ExampleScores, LanguageResult]] = {}
        answered: dict[str, list[str]] = {}
        instances = []
        for lang in data.languages:
            if lang in predictions:
                texts, probs, lines = aligned(predictions[lang], data, lang)
                answered[lang] = texts
                scores = score_examples(data.annotations[lang], texts, probs, lines, lang)
                parts[lang] = (scores, evaluate_language(scores))
                instances += [
                    Instance(
                        example_id, lang, (lang,), list(annotation.golds), kept(text, predictions[lang][line]), values
                    )
                    for example_id, annotation, text, line, values in zip(
                        data.example_ids, data.annotations[lang], texts, lines, example_values(scores)
                    )
                ]
        if not parts:
            raise HarnessError("mkqa: no predictions for any language of the data")
        languages = tuple(parts)
        summary = macro_average([result.metrics for _, result in parts.values()])
        complete = len(languages) == len(MKQA_LANGUAGES)
        label = summary_label(len(languages))
        # A metric is None where a language has no example of its kind (the official script prints NaN).
        count = sum(len(scores) for scores, _ in parts.values())
        rows = [ScoreRow(label, summary, count, languages)]
        rows += [ScoreRow(lang, result.metrics, len(scores), (lang,)) for lang, (scores, result) in parts.items()]
        diagnostics = {
            "answer_types": {
                **{lang: answer_type_breakdown([part]) for lang, part in parts.items()},
                "all": answer_type_breakdown(list(parts.values())),
            },
            "tie_robust_threshold": {lang: result.tie_robust_threshold for lang, (_, result) in parts.items()},
            # whether answers come back in the script of the question's language (MKQA's golds are)
            "answer_script": {lang: script_share(texts, lang) for lang, texts in answered.items()},
        }
        notes = [] if complete else [_incomplete_note(languages)]
        notes += _variant_note({lang: result.metrics for lang, (_, result) in parts.items()})
        best_f1 = summary["best_f1"]
        assert best_f1 is not None  # a number wherever a language is scored (no kind of example needed)
        return Evaluation(main_score=best_f1, rows=rows, diagnostics=diagnostics, notes=notes, instances=instances)

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """The sweep re-run on each resample of a language's examples (see :class:`SweepMetric`)."""
        return language_statistics(table, summary_label(len(table.units)), self.metadata.clusters)

    # -- prediction files ---------------------------------------------------------------------

    def read_predictions(self, path: Path, data: MKQAData) -> dict[str, list[dict[str, Any]]]:
        return read_predictions(path, data)

    def write_predictions(self, data: MKQAData, predictions: Mapping[str, list[dict[str, Any]]], path: Path) -> None:
        write_predictions(predictions, path)


def summary_label(languages: int) -> str:
    """The summary row's name: ``macro`` with all 26 languages, else says how many there are."""
    return (
        "macro" if languages == len(MKQA_LANGUAGES) else f"incomplete: {languages} of {len(MKQA_LANGUAGES)} languages"
    )


def _incomplete_note(languages: tuple[str, ...]) -> str:
    missing = [lang for lang in MKQA_LANGUAGES if lang not in languages]
    which = f"only {' '.join(languages)}" if len(languages) < len(missing) else f"missing {' '.join(missing)}"
    return (
        f"{len(languages)} of {len(MKQA_LANGUAGES)} languages ({which}): the main score is the mean best_f1 "
        f"over them, not the official MKQA macro average, which needs all {len(MKQA_LANGUAGES)}"
    )


def _variant_note(metrics: Mapping[str, dict[str, float | None]]) -> list[str]:
    """Where the official numbers and the order-independent variant disagree, say so (once)."""
    differing = [
        f"{lang} (best_f1 {m['best_f1']} vs {m['best_f1_tie_robust']}, best_em {m['best_em']} vs {m['best_em_tie_robust']})"
        for lang, m in metrics.items()
        if (m["best_f1"], m["best_em"]) != (m["best_f1_tie_robust"], m["best_em_tie_robust"])
    ]
    if not differing:
        return []
    return [
        f"the official best_f1/best_em differ from the order-independent *_tie_robust variant in {len(differing)} "
        f"language(s): {'; '.join(differing)}. The official sweep depends on the line order of tied no_answer_prob "
        "values and, when abstaining everywhere is best, measures best_em at threshold 0.0"
    ]
