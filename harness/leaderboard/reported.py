"""Results the benchmarks' papers report, kept as data beside a leaderboard and shown apart from it.

A reported number has no predictions, so nothing can re-score it, and it was measured on a scope
of its own (the paper's split, model and setting): it is shown beside the board, marked as
reported, and never ranked with the board's entries. Each paper is one file
``reported/<paper>.json`` beside the board file (schema ``reported``): for each result, the
table it comes from, the system as the paper names it, and the exact scope -- task and the
harness's task options that match the paper's setting, split, languages, metric and unit.
Where the project's papers folder holds no text of a paper's tables (XTREME's), each result
also names the stored public copies its numbers were read from (``read_from``), so a reader
can check them where no test can read them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import GetJsonSchemaHandler, SerializerFunctionWrapHandler, model_serializer
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from harness.definitions.validation import validate
from harness.errors import HarnessError, InputError
from harness.files.io import read_json
from harness.files.records import (
    OMITTED_IF_EMPTY,
    OMITTED_IF_NONE,
    JsonRecord,
    flatten_schema,
    from_json_value,
    in_order,
    to_json_value,
)

#: The schema of a paper's file (``schemas/reported.schema.json``).
SCHEMA = "reported"
#: The folder of the papers' files, beside a leaderboard file.
FOLDER = "reported"

Unit = Literal["fraction", "percent"]


@dataclass(frozen=True)
class Paper(JsonRecord):
    """Where reported numbers come from."""

    key: str
    title: str
    authors: str
    year: int
    venue: str
    url: Annotated[str | None, OMITTED_IF_NONE] = None
    text: Annotated[str | None, OMITTED_IF_NONE] = None

    @property
    def citation(self) -> str:
        """``Roy et al. 2020`` style: the first author's name and the year."""
        first = self.authors.split(",")[0].strip()
        return f"{first}{' et al.' if ',' in self.authors else ''} {self.year}"


@dataclass(frozen=True)
class Reported:
    """A metric as a paper prints it: the headline number (None where the paper prints none) and
    its per-language (or per-pair) cells, in the table's order."""

    score: float | None
    subsets: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportedResult:
    """One system's result in one of a paper's tables, with the scope it was measured on.

    In a paper's file the main metric's ``score`` and ``subsets`` stand in the result itself, and
    the paper once for all its results; :meth:`to_dict` (as ``leaderboard show --reported --json``
    prints it and the page reads it) adds the paper and where the number is printed (``source``)."""

    paper: Paper
    table: str
    model: str
    description: str
    task: str
    task_options: dict[str, Any]
    split: str
    languages: tuple[str, ...]
    metric: str
    unit: Unit
    main: Reported
    other_metrics: dict[str, Reported] = field(default_factory=dict)
    spread: Annotated[float | None, OMITTED_IF_NONE] = None
    zero_shot: Annotated[bool | None, OMITTED_IF_NONE] = None
    translated_training_data: Annotated[bool | None, OMITTED_IF_NONE] = None
    note: Annotated[str | None, OMITTED_IF_NONE] = None
    #: The stored public copies the numbers were read from, where the papers folder has no text
    #: of the paper's tables (empty where it has: the text is the source).
    read_from: Annotated[tuple[str, ...], OMITTED_IF_EMPTY] = ()

    @property
    def score(self) -> float | None:
        return self.main.score

    @property
    def source(self) -> str:
        """``Roy et al. 2020, Table 2``: where the number is printed."""
        return f"{self.paper.citation}, {self.table}"

    def metrics(self) -> dict[str, Reported]:
        """Every metric reported, the main one first."""
        return {self.metric: self.main, **self.other_metrics}

    @model_serializer(mode="wrap")
    def _shown(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = write(self)
        return in_order({**out, "source": self.source, **out.pop("main")}, _SHOWN_ORDER)

    def to_dict(self) -> dict[str, Any]:
        """As ``leaderboard show --reported --json`` prints it and the page reads it."""
        return to_json_value(self)

    @classmethod
    def from_dict(cls, paper: Paper, raw: Mapping[str, Any]) -> ReportedResult:
        """A result of a validated paper file."""
        main = {"score": raw["score"], "subsets": raw.get("subsets", {})}
        return from_json_value(cls, {**raw, "paper": paper, "main": main})

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """A result as a paper's file holds it (what :meth:`from_dict` reads): the main metric's
        score and subsets in it, the paper once for the file, not in each result."""
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        flatten_schema(schema, "main", handler)
        del schema["properties"]["paper"]
        schema["required"].remove("paper")
        return ref


#: The order of a reported result's keys as shown: the paper and where the number is printed,
#: the scope, the main metric's score and subsets, the other metrics, what only some results say.
_SHOWN_ORDER = (
    "paper",
    "source",
    "table",
    "model",
    "description",
    "task",
    "task_options",
    "split",
    "languages",
    "metric",
    "unit",
    "score",
    "subsets",
    "other_metrics",
    "spread",
    "zero_shot",
    "translated_training_data",
    "note",
    "read_from",
)


def folder_of(board: Path) -> Path:
    """Where the papers' files of the board at ``board`` are: ``reported/`` beside it."""
    return board.parent / FOLDER


def load_paper(path: Path) -> tuple[ReportedResult, ...]:
    """One paper's file, validated (one line naming the file and field where it is not one): a
    paper with no text in the papers folder has each of its results name where it was read."""
    raw = read_json(path, unique_keys=True)
    validate(raw, SCHEMA, file=path)
    paper = Paper.from_dict(raw["paper"])
    if paper.key != path.stem:
        raise HarnessError(f"{path}: paper.key: '{paper.key}' is not the file's name ('{path.stem}')")
    results = tuple(ReportedResult.from_dict(paper, item) for item in raw["results"])
    for index, result in enumerate(results):
        if paper.text is None and not result.read_from:
            raise InputError(
                "the paper names no text (paper.text), so the result names where its numbers were read",
                file=path,
                record=f"results.{index} ({result.model})",
                field="read_from",
            )
    return results


def load_reported(folder: Path) -> tuple[ReportedResult, ...]:
    """Every paper's results in ``folder`` (none where it does not exist), papers by name."""
    if not folder.is_dir():
        return ()
    return tuple(result for path in sorted(folder.glob("*.json")) for result in load_paper(path))


def select(
    results: tuple[ReportedResult, ...], task: str | None = None, model: str | None = None
) -> tuple[ReportedResult, ...]:
    """The results of ``task`` and of the systems whose name contains ``model`` (any case)."""
    return tuple(
        r
        for r in results
        if (task is None or r.task == task) and (model is None or model.casefold() in r.model.casefold())
    )
