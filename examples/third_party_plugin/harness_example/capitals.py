"""``example-capitals``, a whole task plugin in one module: each question about a capital has one
correct sentence, in its own language, in a 3-language pool; precision at 1.

Metadata, task class and hook sit together because this module imports only the harness's light
modules: the harness imports it to list its plugins (``harness list``), so a task that needed a
heavy library (numpy, torch) would import it inside the method that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.plugin import (
    Corpus,
    DataRequest,
    Evaluation,
    InputError,
    Retriever,
    RunContext,
    ScoreRow,
    Task,
    TaskData,
    TaskMetadata,
    hookimpl,
)
from harness.plugin.io import dump_json, read_json

Rankings = dict[str, list[str]]  # question id -> candidate ids, best first


@dataclass
class CapitalsData(TaskData):
    questions: list[dict[str, str]] = field(default_factory=list)
    corpus: Corpus = field(default_factory=lambda: Corpus([], [], []))


class Capitals(Task[CapitalsData]):
    metadata = TaskMetadata(
        name="example-capitals",
        description="toy cross-lingual answer retrieval about capitals (P@1)",
        reference="harness-example-plugin",
        languages=("de", "en", "es"),
        splits=("test",),
        main_metric="p@1",
        needs=Retriever,
        prediction_format="example-capitals",
        scale="fraction",
    )

    def demo_data_dir(self) -> Path:  # capitals.json, beside this file
        return Path(__file__).parent

    def load(self, request: DataRequest) -> CapitalsData:
        path = request.data_dir / "capitals.json"  # the demo folder when no --data-dir is given
        raw, langs = read_json(path), request.languages or self.metadata.languages
        questions = [q for q in raw["questions"] if q["lang"] in langs][: request.limit]
        pool = raw["candidates"]
        return CapitalsData(
            split=request.split,
            languages=tuple(langs),
            files=[path],
            source=str(path.parent),
            statistics={"questions": len(questions), "candidates": len(pool)},
            questions=questions,
            corpus=Corpus([c["id"] for c in pool], [c["text"] for c in pool], [c["lang"] for c in pool]),
        )

    def units(self, data: CapitalsData) -> list[str]:  # one resumable part per question language
        return list(data.languages)

    def predict(self, model: Retriever, data: CapitalsData, unit: str, context: RunContext) -> Rankings:
        index = context.shared("index", lambda: model.index(data.corpus))  # one index for every unit
        questions = [q for q in data.questions if q["lang"] == unit]
        if not questions:  # --limit may leave a language none
            return {}
        ranking = index.search([q["text"] for q in questions], langs=[unit] * len(questions), k=3)
        return {q["id"]: [data.corpus.ids[i] for i in row] for q, row in zip(questions, ranking.indices)}

    def evaluate(self, data: CapitalsData, predictions: Mapping[str, Rankings]) -> Evaluation:
        ranked = {qid: ids for unit in predictions.values() for qid, ids in unit.items()}
        rows = []
        for subset in ["all", *data.languages]:
            hits = [
                ranked.get(q["id"], [None])[0] == q["answer"] for q in data.questions if subset in ("all", q["lang"])
            ]
            rows.append(ScoreRow(subset, {"p@1": sum(hits) / max(len(hits), 1)}, len(hits)))
        return Evaluation(main_score=rows[0].metrics["p@1"], rows=rows)

    def read_predictions(self, path: Path, data: CapitalsData) -> dict[str, Rankings]:
        by_lang: dict[str, Rankings] = {lang: {} for lang in data.languages}
        lang_of = {q["id"]: q["lang"] for q in data.questions}
        for qid, ids in read_json(path).items():
            if qid not in lang_of:
                raise InputError("not a question of the data", file=path, record=qid, field="id")
            by_lang[lang_of[qid]][qid] = ids
        return by_lang

    def write_predictions(self, data: CapitalsData, predictions: Mapping[str, Rankings], path: Path) -> None:
        dump_json({qid: ids for unit in predictions.values() for qid, ids in unit.items()}, path)


@hookimpl
def harness_tasks() -> list[type[Task]]:
    return [Capitals]  # the registry lists it from its metadata


@hookimpl
def harness_schemas() -> list[Path]:  # the prediction format, for `harness validate --schema example-capitals`
    return [Path(__file__).with_name("example-capitals.schema.json")]
