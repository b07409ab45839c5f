"""A fake task, fake models and a fake plugin that declares them, so the core tests test the
harness and nothing a first-party plugin does.

``fake-lookup`` asks a Retriever to find, for each question, the one candidate sentence that
answers it (tests/fixtures/fake-task/lookup.json: 3 candidates, 2 questions in each of de, en,
fr) and scores precision at 1. ``word-overlap`` ranks candidates by the number of words shared
with the question (ties: corpus order), which answers en-1, en-2, de-1 and fr-1 and misses de-2
and fr-2 (no shared word, so c1 comes first): p@1 is 1 for en, 1/2 for de and fr, 4/6 overall.

Load this module as a plugin with ``HARNESS_PLUGINS=tests.harness.fakes`` (CLI tests) or add it
to a registry with :func:`fake_registry`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Corpus, Encoder, EncodingRequest, PredictionSource, Ranking, Retriever
from harness.definitions.registry import Registry
from harness.definitions.specs import ModelSpec, PluginInfo, SuiteSpec, TaskSpec
from harness.definitions.task import DataRequest, Evaluation, RunContext, ScoreRow, Task, TaskData, TaskMetadata
from harness.errors import InputError
from harness.files.io import dump_json, read_json
from harness.results.result import RunResult

FAKE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "fake-task"
MODULE = __name__
#: How many times any WordOverlap index searched, and the call that raises KeyboardInterrupt.
SEARCHES = {"count": 0, "interrupt_at": 0}


@dataclass
class LookupData(TaskData):
    questions: list[dict[str, str]] = field(default_factory=list)
    corpus: Corpus = field(default_factory=lambda: Corpus([], [], []))


class FakeLookup(Task[LookupData]):
    """Find the candidate that answers each question; precision at 1 per language and overall."""

    metadata = TaskMetadata(
        name="fake-lookup",
        description="fake answer lookup",
        reference="tests/harness/fakes.py",
        languages=("de", "en", "fr"),
        splits=("test",),
        main_metric="p@1",
        needs=Retriever,
        prediction_format="fake-predictions",
        data_subdir="fake/lookup",
        scale="fraction",
    )

    def __init__(self, *, short: bool = False) -> None:
        """``short``: candidates cut to their first two words (another pool, the same questions)."""
        self.short = short

    def options(self) -> dict[str, Any]:
        return {"short": self.short}

    def demo_data_dir(self) -> Path:
        return FAKE_DATA

    def load(self, request: DataRequest) -> LookupData:
        path = request.data_dir / "lookup.json"
        raw = read_json(path)
        langs = request.languages or self.metadata.languages
        questions = [q for lang in langs for q in [q for q in raw["questions"] if q["lang"] == lang][: request.limit]]
        texts = [" ".join(c["text"].split()[:2]) if self.short else c["text"] for c in raw["candidates"]]
        corpus = Corpus([c["id"] for c in raw["candidates"]], texts, ["en"] * len(texts))
        return LookupData(
            split=request.split,
            languages=tuple(langs),
            files=[path],
            statistics={"questions": len(questions), "candidates": len(corpus)},
            source=str(request.data_dir),
            questions=questions,
            corpus=corpus,
        )

    def encoding_requests(self, data: LookupData) -> list[EncodingRequest]:
        return [
            EncodingRequest("passage", data.corpus.texts, data.corpus.langs),
            EncodingRequest("query", [q["text"] for q in data.questions], [q["lang"] for q in data.questions]),
        ]

    def units(self, data: LookupData) -> list[str]:
        return list(data.languages)

    def predict(self, model: Retriever, data: LookupData, unit: str, context: RunContext) -> dict[str, list[str]]:
        index = context.shared("index", lambda: model.index(data.corpus))
        questions = [q for q in data.questions if q["lang"] == unit]
        ranking = index.search([q["text"] for q in questions], langs=[unit] * len(questions), k=2)
        return {q["id"]: [data.corpus.ids[i] for i in row] for q, row in zip(questions, ranking.indices.tolist())}

    def evaluate(self, data: LookupData, predictions: Mapping[str, dict[str, list[str]]]) -> Evaluation:
        flat = {qid: ranked for unit in predictions.values() for qid, ranked in unit.items()}
        rows = []
        for lang in ["all", *data.languages]:
            questions = [q for q in data.questions if lang in ("all", q["lang"])]
            hits = [flat.get(q["id"], [])[:1] == [q["answer"]] for q in questions]
            rows.append(ScoreRow(lang, {"p@1": sum(hits) / len(hits)}, len(hits), () if lang == "all" else (lang,)))
        return Evaluation(main_score=rows[0].metrics["p@1"], rows=rows)

    def read_predictions(self, path: Path, data: LookupData) -> dict[str, dict[str, list[str]]]:
        known = {q["id"]: q["lang"] for q in data.questions}
        by_lang: dict[str, dict[str, list[str]]] = {lang: {} for lang in data.languages}
        for qid, ranked in read_json(path).items():
            if qid not in known:
                raise InputError(f"unknown question id '{qid}'", file=path, record=qid)
            by_lang[known[qid]][qid] = ranked
        return by_lang

    def write_predictions(self, data: LookupData, predictions: Mapping[str, Any], path: Path) -> None:
        dump_json({qid: ranked for unit in predictions.values() for qid, ranked in unit.items()}, path)

    def reference_predictions(self, data: LookupData, kind: str) -> dict[str, Any]:
        answer = {"gold": lambda q: [q["answer"]], "empty": lambda q: []}[kind]
        return {lang: {q["id"]: answer(q) for q in data.questions if q["lang"] == lang} for lang in data.languages}


class WordOverlapIndex:
    def __init__(self, corpus: Corpus) -> None:
        self.documents = [set(text.split()) for text in corpus.texts]

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        SEARCHES["count"] += 1
        if SEARCHES["count"] == SEARCHES["interrupt_at"]:
            raise KeyboardInterrupt  # the user pressed Ctrl-C in the middle of a run
        scores = np.array([[len(set(q.split()) & d) for d in self.documents] for q in queries], dtype=np.float32)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return Ranking(order, np.take_along_axis(scores, order, axis=1))


class WordOverlap(Model):
    """Ranks candidates by the number of words they share with the question."""

    provides = frozenset({Retriever})

    def __init__(self, *, runtime: Runtime, weight: float = 1.0) -> None:
        self.weight = weight  # an option, so two labels can differ; it does not change the ranking

    def identity(self) -> ModelIdentity:
        label = "word-overlap" if self.weight == 1.0 else f"word-overlap (weight={self.weight})"
        return ModelIdentity(name="word-overlap", label=label, options={"weight": self.weight})

    def index(self, corpus: Corpus) -> WordOverlapIndex:
        return WordOverlapIndex(corpus)


class LetterCounts(Model):
    """An encoder: the counts of the letters a-z, L2-normalised (for the shared encoding queue)."""

    provides = frozenset({Encoder})
    #: Every text each instance encoded, in order.
    encoded: list[str]

    def __init__(self, *, runtime: Runtime) -> None:
        self.encoded = []

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="letter-counts", label="letter-counts", weights="none")

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        self.encoded.extend(texts)
        out = np.array(
            [[text.count(chr(c)) for c in range(ord("a"), ord("z") + 1)] for text in texts], dtype=np.float32
        )
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class Reference(Model):
    """The task's gold answers (``kind=gold``) or none at all (``kind=empty``)."""

    provides = frozenset({PredictionSource})

    def __init__(self, *, runtime: Runtime, kind: str = "gold") -> None:
        self.kind = kind

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="reference", label=f"reference-{self.kind}", options={"kind": self.kind})

    def predictions_for(self, task: Any, data: Any) -> dict[str, Any]:
        return task.reference_predictions(data, self.kind)


class TextOnly(Model):
    """A model with no capability any task can use."""

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="text-only", label="text-only")


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [TaskSpec("fake-lookup", f"{MODULE}:FakeLookup", "fake answer lookup", FakeLookup.metadata.languages)]


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(name, f"{MODULE}:{cls}")
        for name, cls in [
            ("word-overlap", "WordOverlap"),
            ("letter-counts", "LetterCounts"),
            ("reference", "Reference"),
            ("text-only", "TextOnly"),
        ]
    ]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [SuiteSpec("fake-both", ("fake-lookup", "fake-lookup:short=true"), "both pools")]


@hookimpl
def harness_schemas() -> list[Path]:
    return [FAKE_DATA / "fake-predictions.schema.json"]


def fake_registry() -> Registry:
    """A registry holding only this fake plugin: no first-party plugin is involved."""
    registry = Registry()
    registry.add_plugin(sys.modules[MODULE], PluginInfo("fakes"))
    return registry


def fake_result(
    *,
    task: str,
    label: str,
    split: str,
    languages: Sequence[str],
    metric: str,
    score: float,
    rows: list[dict[str, Any]],
    finished_at: str,
) -> RunResult:
    """A complete, schema-valid result of model ``label`` on ``task``, for leaderboard tests."""
    return RunResult.from_dict(
        {
            "schema_version": "1.0",
            "run_id": "0" * 16,
            "kind": "run",
            "task": {
                "name": task,
                "plugin": {"name": "fake", "distribution": None, "version": None},
                "options": {},
                "main_metric": metric,
                "higher_is_better": True,
                "prediction_format": "fake-predictions",
                "reference": "none",
            },
            "model": {"name": "m", "label": label, "weights": None, "options": {}, "details": {}, "plugin": None},
            "data": {
                "source": "nowhere",
                "demo": False,
                "split": split,
                "languages": list(languages),
                "limit": None,
                "files": [{"path": "data.json", "sha256": "a" * 64, "bytes": 1}],
                "statistics": {},
            },
            "main_score": {"metric": metric, "value": score},
            "rows": rows,
            "diagnostics": {},
            "notes": [],
            "predictions": {"path": "predictions.json", "format": "fake-predictions", "sha256": "b" * 64},
            "provenance": {
                "harness_version": "0.1.0",
                "git_commit": None,
                "python": "3.11",
                "packages": {},
                "platform": "test",
                "plugins": {"fake": None},
                "device": "cpu",
                "seed": 0,
                "started_at": finished_at,
                "finished_at": finished_at,
                "wall_time_s": 0.0,
                "command": ["test"],
            },
        }
    )
