"""BUCC 2018 bitext mining as XTREME runs it (``scripts/run_bucc2018.sh``,
``third_party/evaluate_retrieval.py`` and ``utils_retrieve.py``, after LASER's ``mine_bitexts``).

For each language (de, fr, ru, zh, each against English), on the dev split and then on the
split scored:

* each side's sentences, duplicates once (``text_load_unify``), are encoded by any Encoder (both
  sides in one role, ``bucc2018:role=query`` by default, as for Tatoeba) and scaled to length 1
  (``--dist cosine``);
* every sentence's k = 4 nearest neighbours on the other side (fewer when that side is smaller),
  both ways, and the mean of their cosines, m_x(x) and m_y(y);
* the *ratio margin* of a candidate pair: cos(x, y) / ((m_x(x) + m_y(y)) / 2), scored for each
  sentence's k neighbours; each sentence's best candidate, forward and backward, and the pairs
  kept greedily from the highest margin down, each sentence in one pair at most, margin above 0
  (``mine_bitext(mode='mine', retrieval='max', margin='ratio')``; equal margins in the order
  forward candidates first, then by position: the official ``np.argsort`` leaves it unspecified);
* pairs become id pairs through each side's sentence -> id map, where a sentence (stripped) that
  occurs twice has no id and its pairs are dropped; an id pair keeps its highest margin
  (``read_candidate2score``);
* the threshold: on the dev split, walking the pairs from the highest margin down, the midpoint
  between the margin of the pair at which F1 on the dev gold pairs is highest (first such) and
  the next one's (``bucc_optimize``; when the best is the last pair, its own margin, where the
  official function would raise IndexError);
* the prediction: the scored split's pairs with margin >= the threshold (``bucc_extract``), F1
  against the gold pairs as sets (``evaluate.py``).

The official script names both splits' candidate files alike and reuses the first (dev) one for
the test split; the harness mines each split on its own, which is what the paper describes.

Files, as ``download_data.sh`` leaves them in ``bucc2018/``: ``{lang}-en.{split}.{lang}`` and
``{lang}-en.{split}.en`` with ``id<TAB>sentence`` lines, and ``{lang}-en.dev.gold`` with
``source_id<TAB>target_id`` lines (the sample data, which XTREME calls dev; its test split is
BUCC's training data, whose gold XTREME withholds: give it as a label folder, ``labels=DIR``
with ``DIR/bucc2018/test-{lang}.tsv``). Predictions: ``bucc2018/test-{lang}.tsv``, as a submission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import DataRequest, Encoder, Evaluation, InputError, Role, RunContext
from harness.plugin.scoring import exact_search
from harness.plugin.services import EncodingRequest
from harness_xtreme.benchmark import Version
from harness_xtreme.formats import read_lines, read_pairs
from harness_xtreme.labelled import LabelledData, XtremeFilesTask
from harness_xtreme.metadata import BUCC_TASK
from harness_xtreme.vectors import unit_encodings

#: Nearest neighbours whose mean cosine is a sentence's neighbourhood (LASER's and XTREME's k).
NEIGHBOURHOOD = 4
#: The split XTREME chooses the threshold on.
DEV = "dev"

Pair = tuple[str, str]


@dataclass(frozen=True)
class Side:
    """One side of a split: sentence ids and sentences, file order."""

    ids: list[str]
    sentences: list[str]

    def unique(self) -> list[str]:
        """The sentences, each once, in order of first occurrence (what is encoded)."""
        return list(dict.fromkeys(self.sentences))

    def id_of(self) -> dict[str, str]:
        """Stripped sentence -> id, leaving out sentences that occur more than once."""
        counts: dict[str, int] = {}
        ids: dict[str, str] = {}
        for sentence_id, sentence in zip(self.ids, self.sentences):
            key = sentence.strip()
            counts[key] = counts.get(key, 0) + 1
            ids.setdefault(key, sentence_id)
        return {key: sentence_id for key, sentence_id in ids.items() if counts[key] == 1}


@dataclass(frozen=True)
class Split:
    """One split of one language: source (``lang``) and target (English) sides, gold id pairs."""

    source: Side
    target: Side
    gold: list[Pair]


@dataclass
class BuccData(LabelledData):
    #: Per language: the dev split (for the threshold) and the split scored (the same when dev).
    splits: dict[str, tuple[Split, Split]] = field(default_factory=dict)


def read_side(path: Path) -> Side:
    """An ``id<TAB>sentence`` file (XTREME cuts the two fields apart with ``cut``)."""
    ids, sentences = [], []
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0]:
            raise InputError(f"expected id<TAB>sentence, got {line!r}", file=path, record=f"line {number}")
        ids.append(fields[0])
        sentences.append(fields[1])
    if not ids:
        raise InputError("no sentences", file=path)
    return Side(ids, sentences)


@dataclass(frozen=True)
class Margins:
    """Each sentence's best candidate on the other side by ratio margin, and that margin."""

    forward_best: np.ndarray  # (len(x),) target position for each source sentence
    forward_margin: np.ndarray
    backward_best: np.ndarray  # (len(y),) source position for each target sentence
    backward_margin: np.ndarray


def margins(x: np.ndarray, y: np.ndarray, k: int = NEIGHBOURHOOD) -> Margins:
    """Ratio margins over each sentence's k nearest neighbours, both ways (unit vectors in)."""
    forward = exact_search(x, y, min(len(y), k))
    backward = exact_search(y, x, min(len(x), k))
    forward_mean, backward_mean = forward.scores.mean(axis=1), backward.scores.mean(axis=1)
    forward_margin = forward.scores / ((forward_mean[:, None] + backward_mean[forward.indices]) / 2)
    backward_margin = backward.scores / ((backward_mean[:, None] + forward_mean[backward.indices]) / 2)
    rows_x, rows_y = np.arange(len(x)), np.arange(len(y))
    best_forward, best_backward = forward_margin.argmax(axis=1), backward_margin.argmax(axis=1)
    return Margins(
        forward.indices[rows_x, best_forward],
        forward_margin[rows_x, best_forward],
        backward.indices[rows_y, best_backward],
        backward_margin[rows_y, best_backward],
    )


def mine(x: np.ndarray, y: np.ndarray, k: int = NEIGHBOURHOOD) -> list[tuple[int, int, float]]:
    """(source position, target position, margin) of the mined pairs, highest margin first:
    forward and backward best candidates, kept greedily one-to-one, margin above 0."""
    found = margins(x, y, k)
    sources = np.concatenate([np.arange(len(x)), found.backward_best])
    targets = np.concatenate([found.forward_best, np.arange(len(y))])
    scores = np.concatenate([found.forward_margin, found.backward_margin]).astype(np.float64)
    seen_source: set[int] = set()
    seen_target: set[int] = set()
    pairs = []
    for i in np.argsort(-scores, kind="stable"):
        source, target = int(sources[i]), int(targets[i])
        if source in seen_source or target in seen_target:
            continue
        seen_source.add(source)
        seen_target.add(target)
        if scores[i] > 0:
            pairs.append((source, target, float(scores[i])))
    return pairs


def candidate_scores(split: Split, x: np.ndarray, y: np.ndarray) -> dict[Pair, float]:
    """Mined pairs as id pairs with their margin (``x``, ``y``: vectors of each side's unique
    sentences), in mining order; a sentence occurring twice on its side has no id."""
    source_sentences, target_sentences = split.source.unique(), split.target.unique()
    source_ids, target_ids = split.source.id_of(), split.target.id_of()
    candidates: dict[Pair, float] = {}
    for source, target, score in mine(x, y):
        source_key, target_key = source_sentences[source].strip(), target_sentences[target].strip()
        if source_key in source_ids and target_key in target_ids:
            pair = (source_ids[source_key], target_ids[target_key])
            candidates[pair] = max(score, candidates.get(pair, score))
    return candidates


def best_threshold(candidates: Mapping[Pair, float], gold: Sequence[Pair]) -> float:
    """The margin threshold of highest F1 on ``gold`` (``bucc_optimize``); 0 if no pair is gold."""
    items = sorted(candidates.items(), key=lambda item: -item[1])
    gold_set = set(gold)
    correct, threshold, best_f1 = 0, 0.0, 0.0
    for extracted, (pair, score) in enumerate(items, start=1):
        correct += pair in gold_set
        if not correct:
            continue
        precision, recall = correct / extracted, correct / len(gold_set)
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best_f1:
            best_f1 = f1
            threshold = (score + items[extracted][1]) / 2 if extracted < len(items) else score
    return threshold


def extract(candidates: Mapping[Pair, float], threshold: float) -> list[Pair]:
    """The pairs whose margin reaches the threshold, in mining order (``bucc_extract``)."""
    return [pair for pair, score in candidates.items() if score >= threshold]


class Bucc2018(XtremeFilesTask[BuccData]):
    """BUCC 2018 mined with any Encoder, XTREME's margin and threshold, F1 on the gold pairs."""

    metadata = BUCC_TASK
    label_set = ()

    def __init__(self, labels: Path | None = None, role: Role = "query", xtreme_version: Version = "xtreme") -> None:
        """``labels``: the gold of splits that have no gold file (XTREME's test). ``role``: how
        both sides are put to the encoder."""
        super().__init__(labels=labels, xtreme_version=xtreme_version)
        self.role: Role = role

    def options(self) -> dict[str, str]:
        return {**super().options(), "role": self.role}

    def check_labels(self, path: Path | str, labels: list[Any], inputs: Sequence[Any]) -> None:
        """Pairs are not checked against the sentences: evaluate.py scores any id pairs."""

    def _split(self, folder: Path, lang: str, split: str) -> tuple[Split, list[Path]]:
        prefix = folder / f"{lang}-en.{split}"
        source, target = read_side(Path(f"{prefix}.{lang}")), read_side(Path(f"{prefix}.en"))
        files = [Path(f"{prefix}.{lang}"), Path(f"{prefix}.en")]
        gold_file = Path(f"{prefix}.gold")
        gold: list[Pair]
        if gold_file.is_file():
            gold = [(source_id, target_id) for source_id, target_id in read_pairs(gold_file)]  # two ids a line, checked
        else:
            gold_file, gold = self._folder_labels(lang, files[0])
        return Split(source, target, gold), [*files, gold_file]

    def load(self, request: DataRequest) -> BuccData:
        data = self.empty_data(request, BuccData)
        assert request.data_dir is not None
        for lang in data.languages:
            for path in (
                request.data_dir / f"{lang}-en.{DEV}.{lang}",
                request.data_dir / f"{lang}-en.{request.split}.{lang}",
            ):
                if not path.is_file():
                    raise InputError(f"missing: XTREME's download layout has bucc2018/{path.name}", file=path)
            dev, files = self._split(request.data_dir, lang, DEV)
            scored = dev
            if request.split != DEV:
                scored, more = self._split(request.data_dir, lang, request.split)
                files += more
            data.files.extend(files)
            data.splits[lang] = (dev, scored)
            data.inputs[lang] = scored.source.sentences
            data.labels[lang] = scored.gold
        data.statistics = {
            "sentences": {
                lang: {
                    "source": len(scored.source.ids),
                    "target": len(scored.target.ids),
                    "gold_pairs": len(scored.gold),
                }
                for lang, (_, scored) in data.splits.items()
            }
        }
        return data

    def _texts(self, data: BuccData) -> dict[str, list[tuple[str, list[str]]]]:
        """Per language, each split's unique sentences with their language, as they are encoded."""
        out = {}
        for lang, (dev, scored) in data.splits.items():
            splits = (dev,) if scored is dev else (dev, scored)
            out[lang] = [
                (side_lang, side.unique())
                for split in splits
                for side_lang, side in ((lang, split.source), ("en", split.target))
            ]
        return out

    def encoding_requests(self, data: BuccData) -> list[EncodingRequest]:
        return [
            EncodingRequest(self.role, texts, [lang] * len(texts))
            for sides in self._texts(data).values()
            for lang, texts in sides
        ]

    def _candidates(self, model: Encoder, split: Split, lang: str) -> dict[Pair, float]:
        return candidate_scores(
            split,
            unit_encodings(model, split.source.unique(), self.role, lang),
            unit_encodings(model, split.target.unique(), self.role, "en"),
        )

    def predict(self, model: Encoder, data: BuccData, unit: str, context: RunContext) -> list[Pair]:
        """The scored split's pairs at the threshold of best F1 on the dev split."""
        dev, scored = data.splits[unit]
        dev_candidates = self._candidates(model, dev, unit)
        threshold = best_threshold(dev_candidates, dev.gold)
        return extract(dev_candidates if scored is dev else self._candidates(model, scored, unit), threshold)

    def evaluate(self, data: BuccData, predictions: Mapping[str, Any]) -> Evaluation:
        """Pair-set F1 per language (saved units come back as JSON lists: made pairs again)."""
        return super().evaluate(data, {lang: [tuple(pair) for pair in pairs] for lang, pairs in predictions.items()})
