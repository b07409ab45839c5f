"""The span-QA task base: every benchmark scored file by file with a SQuAD-style scorer.

A span-QA benchmark is a set of SQuAD v1.1-format files, each scored on its own by the official
scorer with one normaliser: XQuAD has one file per language, MLQA one per (context language,
question language) pair. So here a *unit* -- the resumable part of a run and the row of a
result -- is one file. A subclass says which files there are (:meth:`SpanQATask.load`, usually
through :func:`find_language_files` and :func:`span_data`), which normaliser scores a unit
(:meth:`SpanQATask.normalizer`), and how unit scores add up to the benchmark's figures
(:meth:`SpanQATask.aggregate`); this base does the rest the same way for all of them:

* a generative model (a :class:`~harness.definitions.protocols.Generator`) answers from a prompt: the task
  options ``prompt`` (a template of :mod:`harness.models.prompting`), ``shots`` and ``shot_seed`` say which;
  k shots come from the same file of the dev split where the benchmark has one (else from the
  scored file), never the question itself. Its answers are scored exactly as extracted ones, and
  the per-instance records keep each answer with its reasoning trace;
* predictions are the official format, ``{question_id: answer_text}`` per file (schema
  ``span-qa-predictions``); a run writes a folder with one such file per unit, named like the
  data file it answers, and ``harness score`` reads such a folder, or one file when one unit is
  selected (``--langs``); answers made for another language are refused (the ids are shared
  across XQuAD's and MLQA's languages, so only the answers tell: see
  :mod:`harness.scoring.answer_language`);
* EM and F1 per unit are the official scorer's floats (0-100, see :mod:`harness.scoring.spans`);
* the reference predictions are the first gold answer (``gold``) and ``""`` (``empty``);
* every question is one instance (:mod:`harness.stats.records`) with its EM (0/1) and F1, so each
  row has a bootstrap interval: a unit's row is ``100 * mean``, a summary row the unweighted mean
  of its units' rows (:meth:`SpanQATask.summary_groups` names them once for both).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from harness.definitions.protocols import Reader, ReadingExample
from harness.definitions.task import DataRequest, Evaluation, InputRules, RunContext, ScoreRow, Task, TaskData
from harness.definitions.validation import validate
from harness.demo import FILE_NAME as DEMO_FILE_NAME
from harness.display.tables import format_score
from harness.errors import HarnessError, InputError
from harness.files.io import check_known_ids, json_bytes, read_json, write_folder_atomic
from harness.models.generation import PromptTarget, answer_text, prompt_target
from harness.models.prompting import PromptedTask, Shot, ask_reading
from harness.scoring.answer_language import foreign_span_answers, refuse_or_warn
from harness.scoring.normalize import Normalizer
from harness.scoring.span_file import SpanQuestion, read_span_file
from harness.scoring.spans import SpanScores, gold_emptied, memoize, score_questions
from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import Macro, Mean, RowStatistics, Statistic, plain_mean

PREDICTIONS_SCHEMA = "span-qa-predictions"

#: Examples handed to a reader per call, so the progress bar moves on large files.
READ_CHUNK = 64


@dataclass
class SpanUnit:
    """One scored file: its questions (after ``--limit``), languages and official file name.

    ``known_ids`` holds every question id of the file, also those cut by ``--limit``, so that a
    full predictions file can be scored on a limited run while ids of *another* file are refused.
    ``languages`` is what the result row records: ``(lang,)`` or ``(context, question)``.
    """

    name: str
    file_name: str
    context_lang: str
    question_lang: str
    languages: tuple[str, ...]
    questions: list[SpanQuestion]
    known_ids: frozenset[str]


@dataclass
class SpanQAData(TaskData):
    units: dict[str, SpanUnit] = field(default_factory=dict)
    #: What was loaded (the folder read, the demo's too, where ``source`` names the demo in words),
    #: so that other languages' files and a generative run's shots (the dev split) can be found.
    request: DataRequest | None = None


def find_language_files(
    data_dir: Path,
    languages: Sequence[str],
    patterns: Sequence[str],
    *,
    split: str,
    explicit: bool,
    what: str,
    names: Mapping[str, str] | None = None,
) -> dict[str, Path]:
    """The file of each language under the first pattern (``{lang}``, ``{split}`` and ``{name}``
    filled in) that matches any of them, e.g. XQuAD's ``xquad.{lang}.json``, XTREME's
    ``{split}-{lang}.json`` or TyDi QA's ``tydiqa-goldp-dev-{name}.json``, where ``names`` gives
    a language's name in file names (``ar`` -> ``arabic``; default: the code itself).

    Without an explicit ``--langs`` the languages whose file is missing are left out (a folder
    may hold a subset); an explicitly requested language without a file is an error.
    """
    names = names or {}
    for pattern in patterns:
        found = {
            lang: data_dir / pattern.format(lang=lang, split=split, name=names.get(lang, lang)) for lang in languages
        }
        present = {lang: path for lang, path in found.items() if path.is_file()}
        if not present:
            continue
        if explicit and len(present) < len(found):
            lang = next(lang for lang in found if lang not in present)
            raise HarnessError(f"no {what} file for language '{lang}': {found[lang]} does not exist")
        return present
    looked_for = " or ".join(pattern.format(lang="{lang}", split=split, name="{name}") for pattern in patterns)
    raise HarnessError(f"no {what} files ({looked_for}) in {data_dir}")


def span_unit(
    name: str,
    file_name: str,
    context_lang: str,
    question_lang: str,
    languages: tuple[str, ...],
    questions: list[SpanQuestion],
    limit: int | None,
    *,
    source: Path | str,
) -> SpanUnit:
    """A unit from the questions of one file, keeping the first ``limit`` questions."""
    if not questions:
        raise InputError("no questions: the official scorer divides by the number of questions", file=source)
    return SpanUnit(
        name,
        file_name,
        context_lang,
        question_lang,
        languages,
        questions[:limit] if limit else questions,
        frozenset(q.id for q in questions),
    )


def read_unit(
    path: Path, name: str, context_lang: str, question_lang: str, languages: tuple[str, ...], limit: int | None
) -> SpanUnit:
    """A unit read from one SQuAD v1.1-format file; predictions for it are named like the file."""
    return span_unit(name, path.name, context_lang, question_lang, languages, read_span_file(path), limit, source=path)


def span_data(
    request: DataRequest, units: Sequence[SpanUnit], files: Sequence[Path], languages: Sequence[str]
) -> SpanQAData:
    """The loaded data with its statistics (questions per unit, as scored after ``--limit``)."""
    per_unit = {unit.name: len(unit.questions) for unit in units}
    return SpanQAData(
        split=request.split,
        languages=tuple(languages),
        files=list(files),
        source=str(request.data_dir),
        statistics={"questions": sum(per_unit.values()), "questions_per_unit": per_unit},
        units={unit.name: unit for unit in units},
        request=request,
    )


#: The metrics of a span-QA row, and whether their per-question values are 0/1.
SPAN_METRICS = {"f1": False, "exact_match": True}


def mean_row(subset: str, scores: Sequence[SpanScores]) -> ScoreRow:
    """The unweighted mean over files (the papers' and XTREME's "average" over languages)."""
    return ScoreRow(
        subset,
        {"f1": plain_mean([s.f1 for s in scores]), "exact_match": plain_mean([s.exact_match for s in scores])},
        sum(s.count for s in scores),
    )


#: A prediction of one question: the answer text, or a generated answer with what the records keep.
Prediction = str | dict[str, Any]
#: The template fields a reading-comprehension prompt fills in.
READING_FIELDS = frozenset({"context", "question"})


class SpanQATask(PromptedTask, Task[SpanQAData]):
    """Base of extractive QA tasks over SQuAD v1.1-format files, one unit per file."""

    prompt_fields = READING_FIELDS
    prompt_allowed = READING_FIELDS | {"language"}
    default_prompt = "qa"

    @abstractmethod
    def normalizer(self, unit: SpanUnit) -> Normalizer:
        """The official normaliser that scores ``unit`` (e.g. by its answer language)."""

    def summary_groups(self, units: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
        """The summary rows (shown before the per-unit rows, the first one's F1 the main score),
        each the unweighted mean of the rows of some units, from the units' languages. By default
        one row, ``mean``, over every unit."""
        return {"mean": list(units)}

    def aggregate(self, data: SpanQAData, scores: Mapping[str, SpanScores]) -> tuple[float, list[ScoreRow]]:
        """The main score and the summary rows of :meth:`summary_groups`."""
        groups = self.summary_groups({name: data.units[name].languages for name in scores})
        rows = [mean_row(subset, [scores[name] for name in names]) for subset, names in groups.items()]
        return rows[0].score("f1"), rows

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """Each unit's row is 100 times the mean of its questions' values (summed in file order,
        as the official scorer), each summary row the plain mean of its units' rows (resampling
        the task's clusters where its data is parallel)."""
        per_unit: dict[str, dict[str, Statistic]] = {
            name: {metric: Mean(name, metric, binary=binary) for metric, binary in SPAN_METRICS.items()}
            for name in table.units
        }
        groups = self.summary_groups({name: unit.languages for name, unit in table.units.items()})
        summaries: dict[str, dict[str, Statistic]] = {
            subset: {
                metric: Macro(tuple(per_unit[n][metric] for n in names), plain_mean, clusters=self.metadata.clusters)
                for metric in SPAN_METRICS
            }
            for subset, names in groups.items()
        }
        return {**summaries, **per_unit}

    # -- prediction ---------------------------------------------------------------------------

    def units(self, data: SpanQAData) -> list[str]:
        return list(data.units)

    def predict(self, model: Reader, data: SpanQAData, unit: str, context: RunContext) -> dict[str, Prediction]:
        """Read every question of ``unit`` with its context; keep the answer text (the official
        prediction format has nothing else), or, from a generative model, the generated answer."""
        part = data.units[unit]
        examples = [
            ReadingExample(q.id, q.question, q.context, part.question_lang, part.context_lang) for q in part.questions
        ]
        target = prompt_target(model)
        if target is not None and self.prompt_for(model, target) is not None:
            return self.generate(target, data, unit, examples, context)
        answers: dict[str, Prediction] = {}
        with context.progress(len(examples), f"{self.metadata.name} {unit}") as bar:
            for start in range(0, len(examples), READ_CHUNK):
                chunk = examples[start : start + READ_CHUNK]
                read = model.read(chunk)
                if len(read) != len(chunk):
                    raise HarnessError(f"the reader returned {len(read)} answers for {len(chunk)} questions")
                answers.update((example.id, answer.text) for example, answer in zip(chunk, read))
                bar.update(len(chunk))
        return answers

    def generate(
        self, target: PromptTarget, data: SpanQAData, unit: str, examples: list[ReadingExample], context: RunContext
    ) -> dict[str, Prediction]:
        """Prompt the generator with each example (and its shots, never from the example's own
        article); the answers as generated, with what the records keep."""
        pool = (
            [
                Shot(q.id, {"context": q.context, "question": q.question}, q.answers[0], group=q.article)
                for q in self.shot_pool(data, unit, context).questions
            ]
            if self.prompting.shots
            else []
        )
        articles = {q.id: q.article for q in data.units[unit].questions}
        with context.progress(len(examples), f"{self.metadata.name} {unit}") as bar:
            answers = ask_reading(
                target, self.prompting, examples, lambda e: self.prompting.draw(pool, e.id, articles[e.id]), bar
            )
        return {e.id: answer.to_json() for e, answer in zip(examples, answers)}

    def shot_split(self, data: SpanQAData) -> str:
        """The split shots come from: dev where the benchmark has one, else the split scored."""
        return "dev" if "dev" in self.metadata.splits else data.split

    def shot_source(self, data: SpanQAData) -> str:
        split = self.shot_split(data)
        if split != data.split:
            return f"the {split} split's file of the same language(s)"
        return f"the scored file itself ({self.metadata.name} has no dev split), never the question's own article"

    def shot_pool(self, data: SpanQAData, unit: str, context: RunContext) -> SpanUnit:
        """The file the shots of ``unit`` come from: the same file of the dev split where the
        benchmark has one, else the scored file itself, read whole (``--limit`` aside)."""
        split = self.shot_split(data)
        if split == data.split and len(data.units[unit].questions) == len(data.units[unit].known_ids):
            return data.units[unit]
        assert data.request is not None
        request = replace(data.request, split=split, limit=None)
        pool = context.shared(f"shots:{split}", lambda: self.load(request))
        if unit not in pool.units:
            raise HarnessError(f"task {self.metadata.name}: no {split} file for {unit} to draw shots from")
        shots: SpanUnit = pool.units[unit]
        return shots

    def reference_predictions(self, data: SpanQAData, kind: str) -> dict[str, dict[str, str]]:
        """``gold``: each question's first gold answer (scores 100 unless normalisation empties
        it); ``empty``: the empty string for every question (scores 0)."""
        if kind == "gold":
            return {name: {q.id: q.answers[0] for q in unit.questions} for name, unit in data.units.items()}
        if kind == "empty":
            return {name: {q.id: "" for q in unit.questions} for name, unit in data.units.items()}
        return super().reference_predictions(data, kind)

    # -- scoring ------------------------------------------------------------------------------

    def normalizers(self, data: SpanQAData) -> dict[str, Normalizer]:
        """Each unit's normaliser with a memo, one memo per normaliser, shared by the units it scores."""
        memos: dict[Normalizer, Normalizer] = {}
        out = {}
        for name, unit in data.units.items():
            normalize = self.normalizer(unit)
            if normalize not in memos:
                memos[normalize] = memoize(normalize)
            out[name] = memos[normalize]
        return out

    def score_units(
        self,
        data: SpanQAData,
        predictions: Mapping[str, Mapping[str, Prediction]],
        normalizers: Mapping[str, Normalizer],
    ) -> dict[str, SpanScores]:
        """Official EM/F1 of every unit (``normalizers``: those of :meth:`normalizers`); a generated
        answer is scored by its answer text, as an extracted one."""
        return {
            name: score_questions(
                unit.questions,
                {qid: answer_text(value) for qid, value in predictions.get(name, {}).items()},
                normalizers[name],
            )
            for name, unit in data.units.items()
        }

    def evaluate(self, data: SpanQAData, predictions: Mapping[str, Mapping[str, Prediction]]) -> Evaluation:
        normalizers = self.normalizers(data)
        scores = self.score_units(data, predictions, normalizers)
        main, summary = self.aggregate(data, scores)
        rows = summary + [
            ScoreRow(name, {"f1": s.f1, "exact_match": s.exact_match}, s.count, data.units[name].languages)
            for name, s in scores.items()
        ]
        unanswered = {name: s.unanswered for name, s in scores.items() if s.unanswered}
        evaluation = Evaluation(
            main_score=main,
            rows=rows,
            instances=[
                Instance(
                    q.id,
                    name,
                    data.units[name].languages,
                    list(q.answers),
                    predictions.get(name, {}).get(q.id),
                    {"f1": f1, "exact_match": em},
                )
                for name, s in scores.items()
                for q, em, f1 in zip(data.units[name].questions, s.question_exact, s.question_f1)
            ],
        )
        if unanswered:
            evaluation.diagnostics["unanswered"] = unanswered
            evaluation.notes.append(
                f"{sum(unanswered.values())} question(s) had no prediction and scored 0, "
                "as the official scorer counts them"
            )
        ceiling = ceiling_note(data.units, normalizers)
        if ceiling:
            evaluation.notes.append(ceiling)
        return evaluation

    # -- prediction files ---------------------------------------------------------------------

    def read_unit_predictions(self, path: Path, unit: SpanUnit, *, official: bool = False) -> dict[str, str]:
        """One ``{question_id: answer}`` file for ``unit`` (see :func:`read_answer_file`)."""
        return read_answer_file(path, unit, official=official)

    def read_predictions(self, path: Path, data: SpanQAData) -> dict[str, dict[str, str]]:
        """A folder with one predictions file per unit, named like the unit's data file (other
        files in it are ignored), or a single file when exactly one unit is selected. Answers
        made for another language are refused (see :meth:`check_answer_language`)."""
        units = list(data.units.values())
        if path.is_dir():
            files = {unit.name: path / unit.file_name for unit in units}
            for file in files.values():
                if not file.is_file():
                    raise InputError(
                        "missing: a predictions folder holds one file per data file, named like it", file=file
                    )
        elif len(units) != 1:
            names = ", ".join(data.units)
            raise InputError(
                f"one predictions file answers one data file, but {len(units)} are selected ({names}): "
                f"choose one with --langs, or pass a folder with one file per data file "
                f"(e.g. {units[0].file_name})",
                file=path,
            )
        else:
            files = {units[0].name: path}
        out = {
            unit.name: self.read_unit_predictions(files[unit.name], unit, official=data.input_rules == "official")
            for unit in units
        }
        self.check_answer_language(data, out, files)
        return out

    def other_language_files(self, data: SpanQAData) -> dict[str, Path]:
        """The benchmark's files in the data folder whose contexts are in each language (language
        -> a SQuAD-format file), read only to tell which language a suspect predictions file was
        made for (see :meth:`check_answer_language`). None by default."""
        return {}

    def check_answer_language(
        self, data: SpanQAData, predictions: Mapping[str, Mapping[str, str]], files: Mapping[str, Path]
    ) -> None:
        """See :func:`refuse_foreign_answers`; the other languages' files are this task's."""
        refuse_foreign_answers(
            data.units,
            predictions,
            files,
            input_rules=data.input_rules,
            languages=self.metadata.languages,
            more=lambda: self.other_language_files(data),
        )

    def prediction_files(self, data: SpanQAData) -> dict[str, str]:
        return {name: unit.file_name for name, unit in data.units.items()}

    def write_predictions(
        self, data: SpanQAData, predictions: Mapping[str, Mapping[str, Prediction]], path: Path
    ) -> None:
        """A folder with one official ``{question_id: answer}`` file per unit, named like its data
        file, written whole or not at all (a kill never leaves some of the files)."""
        write_folder_atomic(
            path,
            {
                unit.file_name: json_bytes(
                    {qid: answer_text(value) for qid, value in predictions.get(name, {}).items()}
                )
                for name, unit in data.units.items()
            },
        )


def read_answer_file(path: Path, unit: SpanUnit, *, official: bool = False) -> dict[str, str]:
    """One official ``{question_id: answer}`` file answering ``unit``. Ids of questions that are
    not in the unit's file are refused (the official scorer would silently ignore them, which
    hides predictions made for another file); missing ids are allowed and score 0 as officially.

    ``official`` reads as the official SQuAD v1.1 / MLQA scripts do: a JSON list answers nothing
    (every question scores 0), ids of no question are ignored, a repeated key keeps its last value."""
    predictions = read_json(path, unique_keys=not official)
    if official and isinstance(predictions, list):
        return {}
    if not isinstance(predictions, dict):  # said plainly: the schema error would quote the whole value
        raise InputError(f"expected a JSON object {{question_id: answer}}, got {type(predictions).__name__}", file=path)
    validate(predictions, PREDICTIONS_SCHEMA, file=path)
    if official:
        return {qid: answer for qid, answer in predictions.items() if qid in unit.known_ids}
    check_known_ids(predictions, unit.known_ids, file=path, what=unit.file_name)
    return predictions


def ceiling_note(units: Mapping[str, SpanUnit], normalizers: Mapping[str, Normalizer]) -> str | None:
    """A note naming the units where the official normaliser empties every gold answer of some
    questions (see :func:`~harness.scoring.spans.gold_emptied`), with the highest F1 possible there,
    so that a gold-answer run scoring 99.8 (MLQA Spanish: "una") is explained, not doubted."""
    emptied = {name: gold_emptied(unit.questions, normalizers[name]) for name, unit in units.items()}
    emptied = {name: questions for name, questions in emptied.items() if questions}
    if not emptied:
        return None
    example = next(iter(emptied.values()))[0].answers[0]
    ceilings = ", ".join(
        f"{name} {format_score(100 * (1 - len(questions) / len(units[name].questions)))}"
        for name, questions in emptied.items()
    )
    return (
        f"{sum(map(len, emptied.values()))} question(s) have only gold answers that the official normaliser "
        f"empties (e.g. {example!r}), so no answer scores F1 on them; the highest F1 possible: {ceilings}"
    )


def refuse_foreign_answers(
    units: Mapping[str, SpanUnit],
    predictions: Mapping[str, Mapping[str, str]],
    files: Mapping[str, Path],
    *,
    input_rules: InputRules,
    languages: Sequence[str],
    more: Callable[[], Mapping[str, Path]] = dict,
) -> None:
    """Refuse the answers of a unit (``files``: its predictions file) that were made for another
    language, naming it (see :mod:`harness.scoring.answer_language`); under ``--input-rules official``
    score them with a warning. Question ids shared by every language (XQuAD, MLQA) let such a file
    through every other check. The evidence is the contexts of ``units`` and, for a suspect file
    only, of the files ``more()`` names (language -> a SQuAD-format file)."""
    at_hand: dict[str, dict[str, str]] = {}

    def others() -> dict[str, dict[str, str]]:
        """The contexts of every language, read once, and only for a suspect file."""
        if not at_hand:
            for unit in units.values():
                at_hand.setdefault(unit.context_lang, unit_contexts(unit))
            for lang, file in more().items():
                if lang not in at_hand:
                    try:
                        at_hand[lang] = {q.id: q.context for q in read_span_file(file)}
                    except InputError:  # evidence only: a broken file of a language not scored is no error here
                        continue
        return at_hand

    for name, answers in predictions.items():
        unit = units[name]
        foreign = foreign_span_answers(
            unit.context_lang, answers, unit_contexts(unit), others, languages, asked=unit.question_lang
        )
        if foreign is not None:
            refuse_or_warn(foreign, unit.context_lang, file=files[name], input_rules=input_rules)


def unit_contexts(unit: SpanUnit) -> dict[str, str]:
    """Question id -> the context it is asked on, for the unit's questions."""
    return {q.id: q.context for q in unit.questions}


def read_language_units(request: DataRequest, files: Mapping[str, Path]) -> list[SpanUnit]:
    """One unit per language file (context and question in the same language)."""
    return [read_unit(path, lang, lang, lang, (lang,), request.limit) for lang, path in files.items()]


def task_data_from_files(request: DataRequest, files: Mapping[str, Path]) -> SpanQAData:
    """Data of a one-file-per-language benchmark (XQuAD, XTREME's layouts)."""
    return span_data(request, read_language_units(request, files), list(files.values()), list(files))


class LanguageFilesTask(SpanQATask):
    """A span-QA benchmark with one file per language, context and questions in that language.

    A subclass names its file layouts (tried in order, see :func:`find_language_files`), the
    language names its files use, and the benchmark's name in messages. The built-in parallel
    demo set names its files :data:`harness.demo.FILE_NAME`.
    """

    layouts: ClassVar[tuple[str, ...]]
    language_names: ClassVar[Mapping[str, str]] = {}
    benchmark: ClassVar[str]

    def _layouts(self, data_dir: Path) -> tuple[str, ...]:
        return (DEMO_FILE_NAME,) if data_dir == self.demo_data_dir() else self.layouts

    def load(self, request: DataRequest) -> SpanQAData:
        assert request.data_dir is not None
        languages = request.languages or self.metadata.languages
        files = find_language_files(
            request.data_dir,
            languages,
            self._layouts(request.data_dir),
            split=request.split,
            explicit=languages != self.metadata.languages,
            what=self.benchmark,
            names=self.language_names,
        )
        return task_data_from_files(request, files)

    def other_language_files(self, data: SpanQAData) -> dict[str, Path]:
        """Every language's file in the folder the data came from."""
        folder = None if data.request is None else data.request.data_dir
        if folder is None:
            return {}
        try:
            return find_language_files(
                folder,
                self.metadata.languages,
                self._layouts(folder),
                split=data.split,
                explicit=False,
                what=self.benchmark,
                names=self.language_names,
            )
        except HarnessError:
            return {}
