"""Tatoeba sentence retrieval as XTREME evaluates it (Hu et al., 2020, section 3; Artetxe and
Schwenk, 2019).

* Data: the LASER release (``facebookresearch/LASER:data/tatoeba/v1``), one pair of parallel
  files per language, ``tatoeba.{xxx}-eng.{xxx}`` and ``tatoeba.{xxx}-eng.eng`` (ISO 639-3 codes;
  line i of one is the translation of line i of the other), up to 1,000 pairs each.
* XTREME's copy (``utils_preprocess.tatoeba_preprocess``) keeps the non-English file as it is and
  writes the English side **sorted alphabetically** (Python's sort of the stripped lines, stable,
  so identical English sentences keep their file order). The gold answer for line j of the sorted
  English file is the line, in the non-English file, of its translation -- its original line.
* Retrieval (``third_party/evaluate_retrieval.py``, ``--dist cosine``): both sides are encoded
  the same way, L2-normalised, and each English sentence (the query, in sorted order) retrieves
  its nearest non-English sentence; the prediction is that sentence's 0-based line number.
  Ties go to the lower line number. An English sentence that occurs twice gets the same
  prediction both times, so at most one of the two is counted correct, as in XTREME.
* Metric: accuracy per language, ``str(prediction) == str(label)`` line by line (0-100), and the
  unweighted mean over languages (``mean``, the main score).
* Predictions: XTREME's submission format, a folder with ``test-{lang}.tsv`` per language, one
  line number per line, in sorted-English order.

Languages: XTREME's 36 by default (``tatoeba:xtreme_version=xtreme-r`` adds XTREME-R's az, lt,
pl, uk, ro), named by XTREME's two-letter codes; any other language of the LASER release can be
chosen with ``--langs`` by its LASER code (``--langs amh,yid``). ``--limit N`` keeps the first N
pairs of each language's files (then sorts their English side), a smaller test of the same kind.
Without ``--data-dir``, pairs are built from the built-in parallel demo set (its sentences are
translations of each other in the same positions).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.plugin import (
    DataRequest,
    Encoder,
    Evaluation,
    HarnessError,
    InputError,
    Role,
    RunContext,
    ScoreRow,
    Task,
    TaskData,
)
from harness.plugin.io import write_folder_atomic
from harness.plugin.scoring import Instance, InstanceTable, Macro, Mean, RowStatistics, exact_search
from harness.plugin.services import EncodingRequest
from harness.plugin.tasks import ParallelQADemo
from harness_xtreme.benchmark import TASKS, Version, task_defs
from harness_xtreme.formats import lines_file, read_line_numbers, read_lines
from harness_xtreme.metadata import TATOEBA_TASK
from harness_xtreme.metrics import accuracy, mean, percent_mean
from harness_xtreme.vectors import unit_encodings

#: XTREME's two-letter codes and the LASER release's three-letter codes
#: (``utils_preprocess.tatoeba_preprocess``; Persian is pes, Swahili swh, Chinese cmn).
LASER_CODES: dict[str, str] = {
    "af": "afr",
    "ar": "ara",
    "bg": "bul",
    "bn": "ben",
    "de": "deu",
    "el": "ell",
    "es": "spa",
    "et": "est",
    "eu": "eus",
    "fa": "pes",
    "fi": "fin",
    "fr": "fra",
    "he": "heb",
    "hi": "hin",
    "hu": "hun",
    "id": "ind",
    "it": "ita",
    "ja": "jpn",
    "jv": "jav",
    "ka": "kat",
    "kk": "kaz",
    "ko": "kor",
    "ml": "mal",
    "mr": "mar",
    "nl": "nld",
    "pt": "por",
    "ru": "rus",
    "sw": "swh",
    "ta": "tam",
    "te": "tel",
    "th": "tha",
    "tl": "tgl",
    "tr": "tur",
    "ur": "urd",
    "vi": "vie",
    "zh": "cmn",
    "az": "aze",
    "lt": "lit",
    "pl": "pol",
    "uk": "ukr",
    "ro": "ron",
}
DEFAULT_LANGUAGES: dict[Version, tuple[str, ...]] = {
    version: task_defs(version)["tatoeba"].languages for version in TASKS
}
_LASER_CODE = re.compile(r"[a-z]{3}")


@dataclass
class TatoebaPair:
    """One language's test: English queries in XTREME's sorted order, the non-English sentences
    in file order (the candidates), and for each query the line of its translation."""

    lang: str
    english: list[str]
    foreign: list[str]
    gold: list[int]


@dataclass
class TatoebaData(TaskData):
    pairs: dict[str, TatoebaPair] = field(default_factory=dict)


def xtreme_order(lang: str, english: Sequence[str], foreign: Sequence[str]) -> TatoebaPair:
    """Sort the English side as XTREME distributes it; the gold of each sorted line is its
    original line (``sorted`` is stable: identical sentences keep their file order)."""
    order = sorted(range(len(english)), key=english.__getitem__)
    return TatoebaPair(lang, [english[i] for i in order], list(foreign), order)


def read_laser_pair(folder: Path, lang: str, limit: int | None) -> tuple[TatoebaPair, list[Path]]:
    """A language's LASER files (both sides stripped, as XTREME reads them), first ``limit`` pairs."""
    code = LASER_CODES.get(lang, lang)
    foreign_path = folder / f"tatoeba.{code}-eng.{code}"
    english_path = folder / f"tatoeba.{code}-eng.eng"
    english, foreign = read_lines(english_path), read_lines(foreign_path)
    if len(english) != len(foreign):
        raise InputError(
            f"{len(foreign)} lines, but {english_path.name} has {len(english)}: the two sides of a "
            "Tatoeba pair are parallel, line by line",
            file=foreign_path,
        )
    for path, sentences in ((english_path, english), (foreign_path, foreign)):
        if not any(sentences):  # empty, or nothing but blank lines
            raise InputError("no sentences", file=path)
    return xtreme_order(lang, english[:limit], foreign[:limit]), [foreign_path, english_path]


def read_demo_pair(folder: Path, lang: str, limit: int | None) -> tuple[TatoebaPair, list[Path]]:
    """A pair from the built-in parallel demo set: its paragraphs' sentences, which are
    translations of the English ones in the same positions."""

    def sentences(path: Path) -> list[str]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return [
            s.strip() for article in doc["data"] for paragraph in article["paragraphs"] for s in paragraph["sentences"]
        ]

    english_path, foreign_path = folder / "en.json", folder / f"{lang}.json"
    english, foreign = sentences(english_path), sentences(foreign_path)
    return xtreme_order(lang, english[:limit], foreign[:limit]), [foreign_path, english_path]


class Tatoeba(ParallelQADemo, Task[TatoebaData]):
    """Tatoeba as XTREME scores it: English -> other-language nearest neighbour, accuracy."""

    metadata = TATOEBA_TASK

    def __init__(self, xtreme_version: Version = "xtreme", role: Role = "query") -> None:
        """``xtreme_version``: the default languages, XTREME's 36 or XTREME-R's 41. ``role``: how
        both sides are put to the encoder; XTREME encodes both alike, and e5-style models use
        their query prefix for such symmetric tasks."""
        self.xtreme_version = xtreme_version
        self.role = role

    def options(self) -> dict[str, str]:
        return {"role": self.role}

    def check_languages(self, languages: Sequence[str] | None) -> tuple[str, ...]:
        """XTREME's codes, or any LASER code (three letters) for the release's other languages."""
        if not languages:
            return DEFAULT_LANGUAGES[self.xtreme_version]
        for lang in languages:
            if lang not in LASER_CODES and not _LASER_CODE.fullmatch(lang):
                raise HarnessError(
                    f"unknown language '{lang}' for task tatoeba: use XTREME's codes "
                    f"({', '.join(self.metadata.languages)}) or a LASER code such as amh"
                )
        return tuple(languages)

    # -- data ---------------------------------------------------------------------------------

    def load(self, request: DataRequest) -> TatoebaData:
        assert request.data_dir is not None
        demo = request.data_dir == self.demo_data_dir()
        folder = request.data_dir / "v1" if (request.data_dir / "v1").is_dir() else request.data_dir
        languages = request.languages or DEFAULT_LANGUAGES[self.xtreme_version]
        explicit = tuple(languages) != DEFAULT_LANGUAGES[self.xtreme_version]

        def present(lang: str) -> bool:
            if demo:
                return (folder / f"{lang}.json").is_file()
            code = LASER_CODES.get(lang, lang)
            return (folder / f"tatoeba.{code}-eng.{code}").is_file()

        missing = [lang for lang in languages if not present(lang)]
        if explicit and missing:
            raise HarnessError(f"no Tatoeba files for language '{missing[0]}' in {folder}")
        chosen = [lang for lang in languages if lang not in missing]
        if not chosen:
            raise HarnessError(f"no Tatoeba files (tatoeba.{{xxx}}-eng.{{xxx}}, LASER's layout) in {folder}")
        read = read_demo_pair if demo else read_laser_pair
        data = TatoebaData(split=request.split, languages=tuple(chosen), files=[], statistics={}, source=str(folder))
        for lang in chosen:
            pair, files = read(folder, lang, request.limit)
            data.pairs[lang] = pair
            data.files.extend(files)
        per_language = {lang: len(pair.english) for lang, pair in data.pairs.items()}
        data.statistics = {"questions": sum(per_language.values()), "sentences_per_language": per_language}
        return data

    # -- prediction ---------------------------------------------------------------------------

    def encoding_requests(self, data: TatoebaData) -> list[EncodingRequest]:
        requests = []
        for pair in data.pairs.values():
            requests.append(EncodingRequest(self.role, pair.english, ["en"] * len(pair.english)))
            requests.append(EncodingRequest(self.role, pair.foreign, [pair.lang] * len(pair.foreign)))
        return requests

    def units(self, data: TatoebaData) -> list[str]:
        return list(data.pairs)

    def _unit_vectors(self, model: Encoder, texts: Sequence[str], lang: str) -> np.ndarray:
        """Encodings scaled to length 1, so inner products are cosines (XTREME's ``--dist cosine``)."""
        return unit_encodings(model, texts, self.role, lang)

    def predict(self, model: Encoder, data: TatoebaData, unit: str, context: RunContext) -> list[int]:
        """For each English sentence (sorted order), the line of the most similar non-English one."""
        pair = data.pairs[unit]
        queries = self._unit_vectors(model, pair.english, "en")
        candidates = self._unit_vectors(model, pair.foreign, pair.lang)
        return [int(i) for i in exact_search(queries, candidates, k=1).indices[:, 0]]

    def reference_predictions(self, data: TatoebaData, kind: str) -> dict[str, list[int]]:
        """``gold``: every query's own translation (accuracy 100)."""
        if kind == "gold":
            return {lang: list(pair.gold) for lang, pair in data.pairs.items()}
        return super().reference_predictions(data, kind)

    # -- scoring ------------------------------------------------------------------------------

    def evaluate(self, data: TatoebaData, predictions: Mapping[str, Sequence[int]]) -> Evaluation:
        rows, instances = [], []
        for lang, pair in data.pairs.items():
            predicted = predictions[lang]
            if len(predicted) != len(pair.gold):
                raise HarnessError(f"tatoeba {lang}: {len(predicted)} predictions for {len(pair.gold)} sentences")
            score = accuracy([str(g) for g in pair.gold], [str(p) for p in predicted])
            rows.append(ScoreRow(lang, {"accuracy": score}, len(pair.gold), (lang,)))
            instances += [
                Instance(
                    str(line),
                    lang,
                    (lang,),
                    gold,
                    predicted[line],
                    {"correct": float(str(predicted[line]) == str(gold))},
                )
                for line, gold in enumerate(pair.gold)
            ]
        overall = ScoreRow(
            "mean", {"accuracy": mean([row.score("accuracy") for row in rows])}, sum(row.count for row in rows)
        )
        return Evaluation(main_score=overall.score("accuracy"), rows=[overall, *rows], instances=instances)

    def statistics(self, table: InstanceTable) -> RowStatistics:
        """Per language, the share of correct lines (0-100); ``mean``, XTREME's mean over languages."""
        per_language = {
            lang: {"accuracy": Mean(lang, "correct", official=percent_mean, binary=True)} for lang in table.units
        }
        # dict(row): a row of Means as a row of Statistics (a dict's value type is invariant)
        return {
            "mean": {"accuracy": Macro(tuple(row["accuracy"] for row in per_language.values()), mean)},
            **{lang: dict(row) for lang, row in per_language.items()},
        }

    # -- prediction files ---------------------------------------------------------------------

    @staticmethod
    def file_name(lang: str) -> str:
        return f"test-{lang}.tsv"

    def read_predictions(self, path: Path, data: TatoebaData) -> dict[str, list[int | str]]:
        """XTREME's folder of ``test-{lang}.tsv`` files, or one such file when one language is
        selected; each has one line number per English sentence."""
        if path.is_dir():
            files = {lang: path / self.file_name(lang) for lang in data.pairs}
        elif len(data.pairs) == 1:
            files = {next(iter(data.pairs)): path}
        else:
            raise InputError(
                f"one predictions file answers one language, but {len(data.pairs)} are selected: "
                "choose one with --langs, or pass a folder of test-{lang}.tsv files",
                file=path,
            )
        out = {}
        for lang, file in files.items():
            if not file.is_file():
                raise InputError("missing: a predictions folder holds test-{lang}.tsv for every language", file=file)
            lines = read_line_numbers(file, official=data.input_rules == "official")
            expected = len(data.pairs[lang].english)
            if len(lines) != expected:
                raise InputError(
                    f"{len(lines)} lines for {expected} English sentences (one line number each, "
                    "in sorted-English order)",
                    file=file,
                )
            out[lang] = lines
        return out

    def write_predictions(self, data: TatoebaData, predictions: Mapping[str, Sequence[int]], path: Path) -> None:
        write_folder_atomic(path, {self.file_name(lang): lines_file(predictions[lang]) for lang in data.pairs})
