"""XNLI, PAWS-X, PAN-X and UD-POS run with a model, on the files XTREME's download script writes.

* Inputs: ``{task}/{split}-{lang}.tsv`` as ``scripts/download_data.sh`` (``utils_preprocess.py``)
  leaves them. Sentence pairs (XNLI, PAWS-X): ``sentence1<TAB>sentence2[<TAB>label]``, written by
  ``csv.writer`` and read back as XTREME's processors read them (``csv.reader`` with no quote
  character, so a sentence that ``csv.writer`` quoted keeps its quotes, doubled ones included).
  Tagging (PAN-X, UD-POS): one word per line (``word[<TAB>tag]``), a blank line after each sentence.
* Labels: the ``dev`` files carry them; XTREME's ``test`` files do not (the test labels are not
  public), so a test run takes them from a label folder in the submission layout, ``labels=DIR``
  with ``DIR/{task}/test-{lang}.tsv`` (or ``DIR/test-{lang}.tsv``), read by the very readers
  ``harness score xtreme`` uses. A test file that carries a label column uses it.
* Predictions: the submission folder ``{task}/test-{lang}.tsv`` (one label per line; one tag per
  line with a blank line after each sentence), whatever the split, so ``harness score xtreme``
  reads a run's ``predictions`` folder as it is, and the scores are the submission scorer's
  (:func:`harness_xtreme.submission.score_task`): accuracy, or seqeval-1.2.2 span F1.
* A language model (a generator that scores continuations) runs XNLI, PAWS-X and XCOPA by
  log-likelihood (:mod:`harness_xtreme.likelihood`): the submission file holds the choice of
  highest summed log-likelihood, and ``{task}/{lang}.loglikelihoods.json`` beside it every
  option's log-likelihood and the length-normalised choices, which the rows report beside
  ``accuracy`` as ``accuracy_norm`` (per character) and ``accuracy_bytes`` (per UTF-8 byte).

Refused with one line: a label or tag outside the task's set (in the data, a label folder or a
prediction file), a tag sentence whose length differs from its sentence, a row that is not a
pair, a missing file, an unknown language.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from harness.plugin import (
    DataRequest,
    Evaluation,
    HarnessError,
    InputError,
    PairClassifier,
    RunContext,
    ScoreRow,
    Task,
    TaskData,
    TaskMetadata,
    TokenTagger,
)
from harness.plugin.io import json_bytes, read_json, write_folder_atomic
from harness.plugin.scoring import Instance, InstanceTable, Macro, Mean, RowStatistics
from harness.plugin.services import NORMALISATIONS, ChoiceQuestion, LoglikelihoodService, choice_target, decide
from harness_xtreme.benchmark import PANX_TAGS, UDPOS_TAGS, TaskDef, Version, task_defs
from harness_xtreme.kinds import KINDS, check_classes, check_sentence_lengths, check_tags, example_count
from harness_xtreme.likelihood import (
    ITEM_VALUES,
    METRICS,
    PROMPT_VERSION,
    LikelihoodPredictions,
    is_likelihood,
    pawsx_question,
    xnli_question,
)
from harness_xtreme.metadata import PANX_TASK, PAWSX_TASK, UDPOS_TASK, XNLI_TASK
from harness_xtreme.metrics import mean, percent_mean
from harness_xtreme.submission import LabelledTask, score_task

#: A sentence pair (classification) or a sentence's words (tagging).
Example = Any


@dataclass
class LabelledData(TaskData):
    """Per language: the model's inputs and the gold labels, in the submission's form."""

    inputs: dict[str, list[Example]] = field(default_factory=dict)
    #: A list per language (a label per input); Mewsli-X's, ``{mention_id: [entity_id]}``.
    labels: dict[str, Any] = field(default_factory=dict)
    #: The task as evaluate.py defines it, narrowed to the languages loaded.
    definition: TaskDef | None = None


DataT = TypeVar("DataT", bound=LabelledData)


class XtremeFilesTask(Task[DataT]):
    """A task of XTREME's download layout scored like its submission files; subclasses load their
    data (``DataT``), say what the model is asked, and how the labels are checked."""

    metadata: ClassVar[TaskMetadata]
    #: The task's labels (or tags), in the order XTREME's training scripts number them (XCOPA's:
    #: the choices' numbers).
    label_set: ClassVar[tuple[str | int, ...]]

    def __init__(self, labels: Path | None = None, xtreme_version: Version = "xtreme") -> None:
        """``labels``: a folder of gold labels in the submission layout, for splits whose files
        have none (XTREME's test). ``xtreme_version``: whose language list is the default."""
        name = self.metadata.name
        if name not in task_defs(xtreme_version):
            raise HarnessError(f"task {name} is not part of {xtreme_version}")
        self.labels_dir = None if labels is None else Path(labels).expanduser()
        self.xtreme_version: Version = xtreme_version
        self.definition = task_defs(xtreme_version)[name]

    def options(self) -> dict[str, str]:
        return {"xtreme_version": self.xtreme_version}

    def check_languages(self, languages: Sequence[str] | None) -> tuple[str, ...]:
        """The languages of the task in the chosen version (all of them by default)."""
        unknown = [lang for lang in languages or () if lang not in self.definition.languages]
        if unknown:
            raise HarnessError(
                f"unknown language '{unknown[0]}' for task {self.metadata.name} in {self.xtreme_version} "
                f"(languages: {', '.join(self.definition.languages)})"
            )
        return tuple(languages or self.definition.languages)

    # -- reading ------------------------------------------------------------------------------

    def check_labels(self, path: Path | str, labels: list[Any], inputs: Sequence[Example]) -> None:
        """Refuse labels that are not the task's, or that do not line up with the inputs."""
        raise NotImplementedError

    def _folder_labels(self, lang: str, split_file: Path) -> tuple[Path, Any]:
        if self.labels_dir is None:
            raise InputError(
                f"no labels in this file (XTREME's test labels are not public): give the task a label "
                f"folder, {self.metadata.name}:labels=DIR with DIR/{self.metadata.name}/"
                f"{self.definition.file_name(lang)}, or run --split dev",
                file=split_file,
            )
        nested = self.labels_dir / self.metadata.name / self.definition.file_name(lang)
        path = nested if nested.is_file() else self.labels_dir / self.definition.file_name(lang)
        if not path.is_file():
            raise InputError("missing: the label folder needs a file per language", file=nested)
        return path, KINDS[self.definition.kind].read_labels(path, lang)

    def empty_data(self, request: DataRequest, cls: type[DataT]) -> DataT:
        """``cls`` with nothing read yet, for the requested languages (all the task's by default)."""
        assert request.data_dir is not None
        languages = tuple(request.languages or self.definition.languages)
        return cls(
            split=request.split,
            languages=languages,
            files=[],
            statistics={},
            source=str(request.data_dir),
            definition=replace(self.definition, languages=languages),
        )

    # -- prediction ---------------------------------------------------------------------------

    def units(self, data: DataT) -> list[str]:
        return list(data.inputs)

    def ask(self, model: Any, inputs: Sequence[Example]) -> list[Any]:
        """The model's answer for one language's inputs."""
        raise NotImplementedError

    def choice_question(self, example: Example, lang: str) -> ChoiceQuestion:
        """``example`` as a language model is asked it: a context and one continuation per label of
        :attr:`label_set`, in its order (the choice tasks, :mod:`harness_xtreme.likelihood`)."""
        raise HarnessError(f"task {self.metadata.name} does not run by log-likelihood")

    def predict(self, model: Any, data: DataT, unit: str, context: RunContext) -> Any:
        inputs = data.inputs[unit]
        scorer = choice_target(model)
        if scorer is not None:
            return self.predict_by_likelihood(scorer, inputs, unit, context)
        answers = self.ask(model, inputs)
        where = f"model output for {self.metadata.name} {unit}"
        if len(answers) != len(inputs):
            raise HarnessError(f"{where}: {len(answers)} answers for {len(inputs)} inputs")
        self.check_labels(where, answers, inputs)
        return answers

    def predict_by_likelihood(
        self, scorer: LoglikelihoodService, inputs: Sequence[Example], unit: str, context: RunContext
    ) -> dict[str, Any]:
        """Every label of every example scored as a continuation; the choices by each normalisation."""
        questions = [self.choice_question(example, unit) for example in inputs]
        with context.progress(sum(len(q.options) for q in questions), f"{self.metadata.name} {unit}") as bar:
            decisions = decide(scorer, questions, bar)
        return LikelihoodPredictions.of(decisions, self.label_set).to_json()

    # -- scoring ------------------------------------------------------------------------------

    def evaluate(self, data: DataT, predictions: Mapping[str, Any]) -> Evaluation:
        """evaluate.py's scores of each language and their means (the task's ``avg_metric``),
        with each language's per-item records (:mod:`harness_xtreme.records`)."""
        assert data.definition is not None
        by_likelihood = {
            lang: LikelihoodPredictions.from_json(p) for lang, p in predictions.items() if is_likelihood(p)
        }
        if by_likelihood:
            return self._evaluate_likelihood(data, by_likelihood)
        score = score_task(LabelledTask(data.definition, data.labels), predictions)
        overall = ScoreRow("mean", dict(score.averages), score.count)
        rows = [
            ScoreRow(lang, metrics, example_count(data.labels[lang]), (lang,))
            for lang, metrics in score.per_language.items()
        ]
        items = KINDS[self.definition.kind].items
        instances = [
            Instance(item.id, lang, (lang,), item.gold, item.prediction, item.values)
            for lang in score.per_language
            for item in items(self.metadata.name, lang, data.labels[lang], predictions[lang])
        ]
        return Evaluation(main_score=score.figure, rows=[overall, *rows], instances=instances)

    def _evaluate_likelihood(self, data: DataT, predictions: Mapping[str, LikelihoodPredictions]) -> Evaluation:
        """A language model's run: each normalisation's choices scored as a submission, the summed
        one as ``accuracy`` (the main score), the others beside it; per item, whether each was right."""
        assert data.definition is not None
        if set(predictions) != set(data.labels):
            raise HarnessError(f"{self.metadata.name}: some languages were chosen by log-likelihood and some not")
        scores = {
            name: score_task(
                LabelledTask(data.definition, data.labels), {lang: p.chosen[name] for lang, p in predictions.items()}
            )
            for name in NORMALISATIONS
        }

        def metrics(per: Any) -> dict[str, float]:
            return {METRICS[name]: per(scores[name])["accuracy"] for name in NORMALISATIONS}

        rows = [ScoreRow("mean", metrics(lambda s: s.averages), scores["sum"].count)]
        rows += [
            ScoreRow(
                lang, metrics(lambda s, lang=lang: s.per_language[lang]), example_count(data.labels[lang]), (lang,)
            )
            for lang in scores["sum"].per_language
        ]
        items = KINDS[self.definition.kind].items
        instances = []
        for lang in scores["sum"].per_language:
            labels, chosen = data.labels[lang], predictions[lang].chosen
            extra = {name: items(self.metadata.name, lang, labels, chosen[name]) for name in NORMALISATIONS[1:]}
            for number, item in enumerate(items(self.metadata.name, lang, labels, chosen["sum"])):
                values = {**item.values, **{ITEM_VALUES[name]: extra[name][number].values["correct"] for name in extra}}
                instances.append(Instance(item.id, lang, (lang,), item.gold, item.prediction, values))
        diagnostics = {
            "chosen_by": {
                "prompt": PROMPT_VERSION,
                "accuracy": "highest summed log-likelihood (lm-eval acc)",
                "accuracy_norm": "log-likelihood per character of the option (lm-eval acc_norm)",
                "accuracy_bytes": "log-likelihood per UTF-8 byte of the option (lm-eval acc_bytes)",
            }
        }
        return Evaluation(main_score=scores["sum"].figure, rows=rows, diagnostics=diagnostics, instances=instances)

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """Per language, the kind's row metrics from its items; ``mean``, evaluate.py's mean of each
        over the languages."""
        per_language = KINDS[self.definition.kind].statistics
        rows: RowStatistics = {lang: dict(per_language(lang)) for lang in table.units}
        for lang, values in table.units.items():  # a language model's normalised choices
            rows[lang].update(
                {
                    METRICS[name]: Mean(lang, value, official=percent_mean, binary=True)
                    for name, value in ITEM_VALUES.items()
                    if value in values.values
                }
            )
        metrics = next(iter(rows.values()))
        return {
            "mean": {
                metric: Macro(tuple(row[metric] for row in rows.values()), mean, clusters=self.metadata.clusters)
                for metric in metrics
            },
            **rows,
        }

    # -- prediction files ---------------------------------------------------------------------

    def read_predictions(self, path: Path, data: DataT) -> dict[str, Any]:
        """A submission folder (``{task}/test-{lang}.tsv``) or the task's folder in it."""
        if not path.is_dir():
            raise InputError(f"predictions are a submission folder ({self.metadata.name}/test-{{lang}}.tsv)", file=path)
        folder = path / self.metadata.name if (path / self.metadata.name).is_dir() else path
        kind = KINDS[self.definition.kind]
        out = {}
        for lang, labels in data.labels.items():
            file = folder / self.definition.file_name(lang)
            if not file.is_file():
                raise InputError("missing: a predictions folder holds a file for every language", file=file)
            out[lang] = kind.read_predictions(file, labels)
            self.check_labels(file, out[lang], data.inputs[lang])
            scores = folder / likelihood_file(lang)
            if scores.is_file():
                out[lang] = self._read_likelihood(scores, out[lang], data.inputs[lang])
        return out

    def _read_likelihood(self, path: Path, submitted: list[Any], inputs: Sequence[Example]) -> dict[str, Any]:
        """A language model's choices beside its submission file; the summed choice must be the file's."""
        raw = read_json(path)
        try:
            predictions = LikelihoodPredictions.from_json(raw)
            for name in NORMALISATIONS:
                self.check_labels(path, list(predictions.chosen[name]), inputs)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(
                'expected {"chosen": {"sum"|"chars"|"bytes": [label, ...]}, "loglikelihoods": [[number, ...], ...]}',
                file=path,
            ) from None
        if predictions.chosen["sum"] != submitted:
            raise InputError(
                "its summed choices are not the labels of the submission file beside it", file=path, field="chosen.sum"
            )
        return predictions.to_json()

    def write_predictions(self, data: DataT, predictions: Mapping[str, Any], path: Path) -> None:
        write = KINDS[self.definition.kind].write
        files = {}
        for lang in data.inputs:
            chosen = predictions[lang]
            if is_likelihood(chosen):
                files[f"{self.metadata.name}/{likelihood_file(lang)}"] = json_bytes(chosen, indent=None)
                chosen = chosen["chosen"]["sum"]
            files[f"{self.metadata.name}/{self.definition.file_name(lang)}"] = write(chosen)
        write_folder_atomic(path, files)

    def reference_predictions(self, data: DataT, kind: str) -> dict[str, Any]:
        """``gold``: the labels themselves, as predictions of the task's kind."""
        if kind == "gold":
            return {lang: KINDS[self.definition.kind].gold(labels) for lang, labels in data.labels.items()}
        return super().reference_predictions(data, kind)


def likelihood_file(lang: str) -> str:
    """Where a language model's choices and log-likelihoods lie beside its submission files."""
    return f"{lang}.loglikelihoods.json"


def read_pair_file(path: Path) -> tuple[list[tuple[str, str]], list[str] | None]:
    """Sentence pairs and, when every row has a third column, its labels (stripped), read as
    XTREME's ``DataProcessor._read_tsv``: ``csv.reader`` on tabs, no quote character, UTF-8 with
    an optional byte-order mark."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t", quotechar=None))
    except (UnicodeDecodeError, OSError, csv.Error) as error:
        raise InputError(f"cannot read: {error}", file=path) from None
    if not rows:
        raise InputError("no sentence pairs", file=path)
    widths = {len(row) for row in rows}
    for number, row in enumerate(rows, start=1):
        if len(row) not in (2, 3) or len(row) != len(rows[0]):
            raise InputError(
                f"expected sentence1<TAB>sentence2[<TAB>label] on every line alike, got {len(row)} "
                f"field(s) (lines have {', '.join(map(str, sorted(widths)))})",
                file=path,
                record=f"line {number}",
            )
    pairs = [(row[0], row[1]) for row in rows]
    return pairs, [row[2].strip() for row in rows] if len(rows[0]) == 3 else None


def read_word_file(path: Path) -> tuple[list[list[str]], list[list[str]] | None]:
    """Sentences of words and, when every word line has a tag after a tab, their tags: XTREME's
    ``{split}-{lang}.tsv`` of PAN-X and UD-POS (white space around fields stripped; blank lines,
    one or several, end a sentence)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (UnicodeDecodeError, OSError) as error:
        raise InputError(f"cannot read: {error}", file=path) from None
    sentences: list[list[str]] = []
    tags: list[list[str]] = []
    widths: set[int] = set()
    words: list[str] = []
    sentence_tags: list[str] = []
    for number, line in enumerate([*lines, ""], start=1):
        if not line.strip():
            if words:
                sentences.append(words)
                tags.append(sentence_tags)
            words, sentence_tags = [], []
            continue
        fields = [item.strip() for item in line.split("\t")]
        if len(fields) > 2 or not fields[0]:
            raise InputError(f"expected word[<TAB>tag], got {line!r}", file=path, record=f"line {number}")
        widths.add(len(fields))
        if len(widths) > 1:
            raise InputError("some word lines have a tag and some not", file=path, record=f"line {number}")
        words.append(fields[0])
        sentence_tags.extend(fields[1:])
    if not sentences:
        raise InputError("no sentences", file=path)
    return sentences, tags if widths == {2} else None


class SplitFileTask(XtremeFilesTask[LabelledData]):
    """XNLI, PAWS-X, PAN-X and UD-POS: a ``{split}-{lang}.tsv`` per language, labels in it or in
    the label folder."""

    def read_split(self, path: Path) -> tuple[list[Example], list[Any] | None]:
        """A split file's inputs and, when it carries them, its labels."""
        raise NotImplementedError

    def load(self, request: DataRequest) -> LabelledData:
        data = self.empty_data(request, LabelledData)
        assert request.data_dir is not None
        for lang in data.languages:
            split_file = request.data_dir / f"{request.split}-{lang}.tsv"
            if not split_file.is_file():
                raise InputError(
                    f"missing: XTREME's download layout has {self.metadata.name}/{split_file.name}", file=split_file
                )
            inputs, labels = self.read_split(split_file)
            label_file = split_file
            data.files.append(split_file)
            if labels is None:
                label_file, labels = self._folder_labels(lang, split_file)
                data.files.append(label_file)
                if len(labels) != len(inputs):  # either file may be the broken one: both are named
                    raise InputError(
                        f"{len(inputs)} examples here but {len(labels)} in the label file {label_file}: "
                        "the two files do not line up",
                        file=split_file,
                    )
            self.check_labels(label_file, labels, inputs)
            data.inputs[lang] = inputs[: request.limit]
            data.labels[lang] = labels[: request.limit]
        data.statistics = {"examples": {lang: len(inputs) for lang, inputs in data.inputs.items()}}
        return data


class PairClassification(SplitFileTask):
    """XNLI and PAWS-X: a label per sentence pair, accuracy."""

    label_set: ClassVar[tuple[str, ...]]

    def read_split(self, path: Path) -> tuple[list[Example], list[Any] | None]:
        return read_pair_file(path)

    def check_labels(self, path: Path | str, labels: list[Any], inputs: Sequence[Example]) -> None:
        if len(labels) != len(inputs):
            raise InputError(f"{len(labels)} labels for {len(inputs)} sentence pairs (one per line)", file=path)
        check_classes(path, labels, self.label_set)

    def ask(self, model: PairClassifier, inputs: Sequence[Example]) -> list[Any]:
        return model.classify_pairs([tuple(pair) for pair in inputs], labels=self.label_set)


class SequenceTagging(SplitFileTask):
    """PAN-X and UD-POS: a tag per word, seqeval span F1."""

    label_set: ClassVar[tuple[str, ...]]

    def read_split(self, path: Path) -> tuple[list[Example], list[Any] | None]:
        return read_word_file(path)

    def check_labels(self, path: Path | str, labels: list[Any], inputs: Sequence[Example]) -> None:
        check_sentence_lengths(path, labels, inputs, against="the words")
        check_tags(path, labels, self.label_set)

    def ask(self, model: TokenTagger, inputs: Sequence[Example]) -> list[Any]:
        return model.tag([list(words) for words in inputs], labels=self.label_set)


class XNLI(PairClassification):
    metadata = XNLI_TASK
    label_set = task_defs("xtreme")["xnli"].classes

    def choice_question(self, example: Example, lang: str) -> ChoiceQuestion:
        premise, hypothesis = example
        return xnli_question(premise, hypothesis, lang, self.label_set)


class PAWSX(PairClassification):
    metadata = PAWSX_TASK
    label_set = task_defs("xtreme")["pawsx"].classes

    def choice_question(self, example: Example, lang: str) -> ChoiceQuestion:
        first, second = example
        return pawsx_question(first, second, lang, self.label_set)


class PANX(SequenceTagging):
    metadata = PANX_TASK
    label_set = PANX_TAGS


class UDPOS(SequenceTagging):
    metadata = UDPOS_TASK
    label_set = UDPOS_TAGS
