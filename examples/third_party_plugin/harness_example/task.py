"""``example-capitals``: each question has one correct sentence in its own language; P@1."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.io import dump_json, read_json
from harness.protocols import Corpus, Retriever
from harness.task import DataRequest, Evaluation, RunContext, ScoreRow, Task, TaskData, TaskMetadata


@dataclass
class CapitalsData(TaskData):
    questions: list[dict[str, str]] = field(default_factory=list)
    corpus: Corpus | None = None


class Capitals(Task[CapitalsData]):
    metadata = TaskMetadata(
        name="example-capitals", description="Toy answer retrieval about capitals.",
        reference="harness-example-plugin", languages=("de", "en", "es"), splits=("test",),
        main_metric="p@1", needs=Retriever, prediction_format="example-capitals", prediction_file="predictions.json",
    )

    def demo_data_dir(self) -> Path:
        return Path(__file__).parent

    def load(self, request: DataRequest) -> CapitalsData:
        path = request.data_dir / "capitals.json"
        raw = read_json(path)
        langs = request.languages or self.metadata.languages
        questions = [q for q in raw["questions"] if q["lang"] in langs][: request.limit]
        candidates = raw["candidates"]
        corpus = Corpus([c["id"] for c in candidates], [c["text"] for c in candidates], [c["lang"] for c in candidates])
        return CapitalsData(split=request.split, languages=tuple(langs), files=[path],
                            statistics={"questions": len(questions), "candidates": len(candidates)},
                            source=str(request.data_dir), questions=questions, corpus=corpus)

    def units(self, data: CapitalsData) -> list[str]:
        return list(data.languages)

    def predict(self, model: Retriever, data: CapitalsData, unit: str, context: RunContext) -> dict[str, list[str]]:
        index = context.shared("index", lambda: model.index(data.corpus))
        questions = [q for q in data.questions if q["lang"] == unit]
        if not questions:
            return {}
        ranking = index.search([q["text"] for q in questions], langs=[unit] * len(questions), k=3)
        return {q["id"]: [data.corpus.ids[i] for i in row] for q, row in zip(questions, ranking.indices)}

    def evaluate(self, data: CapitalsData, predictions: Mapping[str, dict[str, list[str]]]) -> Evaluation:
        flat = {qid: ranked for unit in predictions.values() for qid, ranked in unit.items()}
        rows = []
        for lang in ["all", *data.languages]:
            questions = [q for q in data.questions if lang in ("all", q["lang"])]
            hits = [bool(flat.get(q["id"])) and flat[q["id"]][0] == q["answer"] for q in questions]
            rows.append(ScoreRow(lang, {"p@1": sum(hits) / max(len(hits), 1)}, len(hits)))
        return Evaluation(main_score=rows[0].metrics["p@1"], rows=rows)

    def read_predictions(self, path: Path, data: CapitalsData) -> dict[str, dict[str, list[str]]]:
        raw = read_json(path)
        by_lang: dict[str, dict[str, list[str]]] = {}
        known = {q["id"]: q["lang"] for q in data.questions}
        for qid, ranked in raw.items():
            if qid not in known:
                raise InputError(f"unknown question id '{qid}'", file=path, record=qid, field="id")
            by_lang.setdefault(known[qid], {})[qid] = ranked
        return by_lang

    def write_predictions(self, data: CapitalsData, predictions: Mapping[str, Any], path: Path) -> None:
        dump_json({qid: ranked for unit in predictions.values() for qid, ranked in unit.items()}, path)

    def reference_predictions(self, data: CapitalsData, kind: str) -> dict[str, Any]:
        if kind != "gold":
            return super().reference_predictions(data, kind)
        return {lang: {q["id"]: [q["answer"]] for q in data.questions if q["lang"] == lang} for lang in data.languages}
