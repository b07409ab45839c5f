"""Mewsli-X (XTREME-R) run with any Encoder, as ``third_party/utils_mewslix.py`` and
``evaluate_retrieval.py`` do it.

Entity linking as retrieval: each mention of an entity in a WikiNews article (11 languages) is
encoded in context and retrieves, among the candidate set's entities (about a million, each by a
Wikipedia description in one of 50 languages), the 20 nearest by cosine; the score per language is
``map@20``, the mean reciprocal rank of the gold entity in those 20 (0 when absent), and
``avg_metric`` the mean over the languages (``evaluate.py``).

* The mention's text (``preprocess_mention``): only the sentence that contains the mention (a
  mention across a sentence boundary is refused, as the official ``truncate(window_size=0)``
  asserts), the mention put between ``{`` and ``}`` (braces already in the sentence become
  parentheses), the mention repeated in front:
  ``f"{mention}: {left} {{ {mention} }} {right}"``, lines joined by spaces and each double space
  made single (Python's ``str.replace``, one pass), stripped.
* The entity's text (``preprocess_entity_description``): its description's sentences (by
  ``sentence_spans``) joined by a space, lines joined, double spaces made single, stripped.
* Mentions are encoded in role ``query`` and entities in role ``passage`` (``mention_role=``,
  ``entity_role=``; XTREME's mBERT baseline has one tower and no roles, an e5-style encoder has
  both), both scaled to length 1; exact top-20 inner-product search (``faiss.IndexFlatIP``).
  XTREME's baseline also cuts each side to 64 subword tokens (``run_eval_mewslix.sh``); here a
  model reads up to its own maximum length.

Both strings equal ``utils_mewslix.preprocess_mention`` / ``preprocess_entity_description`` on
20,000 random contexts (braces, newlines, double spaces; 6,234 mentions across sentences refused
by both), run beside the official module outside this repository.

Files, as ``scripts/download_data.sh`` leaves them in ``mewslix/``: ``candidate_set_entities.jsonl``
(``entity_id``, ``description``, ``description_language``, ``sentence_spans``, ...),
``wikinews_mentions/{split}-{lang}.jsonl`` (one article a line: ``context`` with ``language``,
``text``, ``sentence_spans``; ``mentions`` with ``example_id``, ``mention_span`` and
``entity_id``) and ``wikinews_labels/{split}-{lang}.json`` (``{example_id: [entity_id]}``; the
download script blanks the test ids, so a test run takes them from a label folder,
``labels=DIR`` with ``DIR/mewslix/test-{lang}.json``, the submission layout). Predictions:
``mewslix/test-{lang}.json``, ``{example_id: [20 entity ids]}``, as a submission.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import DataRequest, Encoder, InputError, Role, RunContext
from harness.plugin.io import iter_jsonl
from harness.plugin.scoring import exact_search
from harness.plugin.services import EncodingRequest
from harness_xtreme.benchmark import Version
from harness_xtreme.kinds import KINDS
from harness_xtreme.labelled import LabelledData, XtremeFilesTask
from harness_xtreme.metadata import MEWSLIX_TASK
from harness_xtreme.vectors import unit_encodings

#: Entities retrieved per mention (``utils_mewslix.TOP_K``), the depth of map@20.
TOP_K = 20
ENTITIES_FILE = "candidate_set_entities.jsonl"
#: A span already between the markers, made parenthesised so the markers stay the mention's own.
_BRACED = re.compile(r"\{(.*?)\}")


@dataclass
class MewsliData(LabelledData):
    """Per language, each mention's id and text (``inputs``) and the gold (``labels``: the
    submission's ``{example_id: [entity_id]}``); the candidate entities, shared by all."""

    entity_ids: list[str] = field(default_factory=list)
    entity_texts: list[str] = field(default_factory=list)
    entity_langs: list[str] = field(default_factory=list)


def _normalise(text: str) -> str:
    """The official light normalisation: lines joined by a space, double spaces made single
    (one ``str.replace`` pass, so three spaces become two), stripped."""
    return " ".join(text.splitlines()).replace("  ", " ").strip()


def _spans(record: dict[str, Any], text: str, path: Path, where: str, name: str) -> list[tuple[int, int]]:
    """``record["sentence_spans"]`` as (start, end) pairs within ``text``."""
    spans = record.get("sentence_spans")
    if not isinstance(spans, list) or not all(
        isinstance(s, dict)
        and isinstance(s.get("start"), int)
        and isinstance(s.get("end"), int)
        and 0 <= s["start"] < s["end"] <= len(text)
        for s in spans
    ):
        raise InputError(
            f"expected a list of {{start, end}} spans within the {name}",
            file=path,
            record=where,
            field="sentence_spans",
        )
    return [(s["start"], s["end"]) for s in spans]


def mention_text(context: str, sentences: Sequence[tuple[int, int]], start: int, end: int) -> str | None:
    """``preprocess_mention``: the mention in its sentence, between braces, repeated in front;
    None when no sentence holds the whole mention."""
    sentence = next(((s, e) for s, e in sentences if s <= start < e and s < end <= e), None)
    if sentence is None:
        return None
    left = _BRACED.sub(r"(\1)", context[sentence[0] : start])
    right = _BRACED.sub(r"(\1)", context[end : sentence[1]])
    mention = context[start:end]
    return _normalise(f"{mention}: {left} {{ {mention} }} {right}")


def entity_text(description: str, sentences: Sequence[tuple[int, int]]) -> str:
    """``preprocess_entity_description``: the description's sentences joined by a space."""
    return _normalise(" ".join(description[start:end] for start, end in sentences))


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of a JSON-lines file whose every line is an object."""
    if not path.is_file():
        where = path.name if path.name == ENTITIES_FILE else f"{path.parent.name}/{path.name}"
        raise InputError(f"missing: XTREME-R's download layout has mewslix/{where}", file=path)
    out = []
    for number, record in iter_jsonl(path):
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", file=path, record=f"line {number}")
        out.append((number, record))
    return out


def read_entities(path: Path) -> tuple[list[str], list[str], list[str]]:
    """The candidate set: ids, description texts and description languages, file order."""
    ids, texts, langs, seen = [], [], [], set()
    for number, record in _jsonl(path):
        where = f"line {number}"
        entity, description = record.get("entity_id"), record.get("description")
        if not isinstance(entity, str) or not entity:
            raise InputError("expected an entity id", file=path, record=where, field="entity_id")
        if entity in seen:
            raise InputError(f"entity {entity} is listed twice", file=path, record=where, field="entity_id")
        if not isinstance(description, str):
            raise InputError("expected the description text", file=path, record=where, field="description")
        seen.add(entity)
        ids.append(entity)
        texts.append(entity_text(description, _spans(record, description, path, where, "description")))
        langs.append(str(record.get("description_language", "")))
    if not ids:
        raise InputError("no candidate entities", file=path)
    return ids, texts, langs


def read_mentions(path: Path, lang: str) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    """A language's mentions, (example id, text) in file order, and the gold the file carries."""
    mentions: list[tuple[str, str]] = []
    gold: dict[str, list[str]] = {}
    for number, record in _jsonl(path):
        where = f"line {number}"
        context = record.get("context")
        if not isinstance(context, dict) or not isinstance(context.get("text"), str):
            raise InputError("expected a context with its text", file=path, record=where, field="context")
        if context.get("language") != lang:  # evaluate_retrieval.py asserts one language a file
            raise InputError(
                f"an article in {context.get('language')!r} in the {lang} file",
                file=path,
                record=where,
                field="context.language",
            )
        text = context["text"]
        sentences = _spans(context, text, path, where, "context")
        items = record.get("mentions")
        if not isinstance(items, list):
            raise InputError("expected a list of mentions", file=path, record=where, field="mentions")
        for mention in items:
            example = mention.get("example_id") if isinstance(mention, dict) else None
            span = mention.get("mention_span") if isinstance(mention, dict) else None
            if not isinstance(example, str) or not example or example in gold:
                raise InputError(
                    "expected a mention with an example id of its own",
                    file=path,
                    record=where,
                    field="mentions.example_id",
                )
            if (
                not isinstance(span, dict)
                or not all(isinstance(span.get(key), int) for key in ("start", "end"))
                or not 0 <= span["start"] < span["end"] <= len(text)
                or span.get("text") != text[span["start"] : span["end"]]
            ):
                raise InputError(
                    "the mention span is not the text at its offsets in the context",
                    file=path,
                    record=f"{where}, mention {example}",
                    field="mention_span",
                )
            query = mention_text(text, sentences, span["start"], span["end"])
            if query is None:
                raise InputError(
                    "the mention is in no sentence of the context (or crosses two), which the official "
                    "preprocessing asserts against",
                    file=path,
                    record=f"{where}, mention {example}",
                    field="mention_span",
                )
            mentions.append((example, query))
            gold[example] = [str(mention.get("entity_id", ""))]
    if not mentions:
        raise InputError("no mentions", file=path)
    return mentions, gold


class MewsliX(XtremeFilesTask[MewsliData]):
    """Mewsli-X with any Encoder: mentions retrieve entity descriptions, map@20 per language."""

    metadata = MEWSLIX_TASK
    label_set = ()

    def __init__(
        self,
        labels: Path | None = None,
        mention_role: Role = "query",
        entity_role: Role = "passage",
        xtreme_version: Version = "xtreme-r",
    ) -> None:
        """``labels``: the gold of splits whose files have it blanked (XTREME-R's test).
        ``mention_role``, ``entity_role``: how each side is put to the encoder."""
        super().__init__(labels=labels, xtreme_version=xtreme_version)
        self.mention_role: Role = mention_role
        self.entity_role: Role = entity_role
        self._entity_vectors: tuple[Encoder, np.ndarray] | None = None

    def options(self) -> dict[str, str]:
        return {**super().options(), "mention_role": self.mention_role, "entity_role": self.entity_role}

    def check_labels(self, path: Path | str, labels: Any, inputs: Sequence[Any]) -> None:
        """Any entity ids are scored (a mention without a prediction scores 0), as evaluate.py."""

    def load(self, request: DataRequest) -> MewsliData:
        data = self.empty_data(request, MewsliData)
        assert request.data_dir is not None
        folder = request.data_dir
        entities = folder / ENTITIES_FILE
        data.entity_ids, data.entity_texts, data.entity_langs = read_entities(entities)
        data.files.append(entities)
        for lang in data.languages:
            path = folder / "wikinews_mentions" / f"{request.split}-{lang}.jsonl"
            mentions, gold = read_mentions(path, lang)
            data.files.append(path)
            label_file = folder / "wikinews_labels" / f"{request.split}-{lang}.json"
            if all(ids == [""] for ids in gold.values()):  # blanked by the download script (test)
                label_file, gold = self._folder_labels(lang, path)
                data.files.append(label_file)
            elif label_file.is_file():
                data.files.append(label_file)
                gold = KINDS["mewslix"].read_labels(label_file, lang)
            if set(gold) != {example for example, _ in mentions}:
                raise InputError(
                    f"the gold is for other mentions than {path}'s: the two files do not line up", file=label_file
                )
            kept = mentions[: request.limit]
            data.inputs[lang] = kept
            data.labels[lang] = {example: gold[example] for example, _ in kept}
        data.statistics = {
            "mentions": {lang: len(items) for lang, items in data.inputs.items()},
            "entities": len(data.entity_ids),
        }
        return data

    def encoding_requests(self, data: MewsliData) -> list[EncodingRequest]:
        mentions = [
            EncodingRequest(self.mention_role, [text for _, text in items], [lang] * len(items))
            for lang, items in data.inputs.items()
        ]
        return [*mentions, EncodingRequest(self.entity_role, data.entity_texts, data.entity_langs)]

    def _entities(self, model: Encoder, data: MewsliData) -> np.ndarray:
        """The candidate set's unit vectors, encoded once per model for every language."""
        if self._entity_vectors is None or self._entity_vectors[0] is not model:
            self._entity_vectors = (
                model,
                unit_encodings(model, data.entity_texts, self.entity_role, data.entity_langs),
            )
        return self._entity_vectors[1]

    def predict(self, model: Encoder, data: MewsliData, unit: str, context: RunContext) -> dict[str, list[str]]:
        """Each mention's 20 nearest entities by cosine, nearest first."""
        items = data.inputs[unit]
        queries = unit_encodings(model, [text for _, text in items], self.mention_role, unit)
        ranking = exact_search(queries, self._entities(model, data), TOP_K)
        return {example: [data.entity_ids[i] for i in row] for (example, _), row in zip(items, ranking.indices)}
