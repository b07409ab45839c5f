"""The JSON Schemas pydantic derives from the records (:func:`harness.files.records.json_schema`)
checked field for field against the committed files in ``schemas/``.

Why not equality of the whole files: the committed schemas are the contract a reader (and a
third party's writer) reads, and say more than the records' types can -- prose for every field,
patterns and bounds (``^[0-9a-f]{64}$``, ``minimum``, ``format: date-time``), and, under a
result's ``diagnostics``, the shapes of analyses that plugins fill in, which the record holds as
an open ``dict[str, Any]``. What the records do decide is checked, recursively through every
nested record, so neither side can gain, lose or retype a field alone:

- the same properties, by name, in every object the record describes (its own, a nested record's,
  a list's items, a mapping's values);
- every field without a default is required by the committed schema (a file always holds it);
- the same JSON types (``string``, ``integer``, ``number``, ``boolean``, ``array``, ``object``,
  ``null``; a ``const`` or ``enum`` by its values' type). A field written only where set (absent,
  never ``null``, where it is None) is checked without the ``null`` its Python type adds.

Where the record leaves a value open (``Any``, ``dict[str, Any]``) the committed schema's detail
is not compared; a field with a default that the file must hold anyway (``schema_version``, the
bootstrap's ``method``) is written always, and every result and board written is validated against
the committed schema (``write_result``, ``add_result``), which holds that part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.files.records import json_schema
from harness.leaderboard.entry import Leaderboard
from harness.leaderboard.reported import Paper, ReportedResult
from harness.results.result import RunResult
from harness.scoring.bias import Analyses
from harness.stats.records import Instance

SCHEMAS = Path(__file__).parents[3] / "schemas"
ANY = frozenset({"any"})

#: Each record and where the committed schemas describe it: file and JSON pointer.
RECORDS = [
    (RunResult, "run-result.schema.json", ""),
    (Leaderboard, "leaderboard.schema.json", ""),
    (Instance, "instance.schema.json", ""),
    (Paper, "reported.schema.json", "/properties/paper"),
    (ReportedResult, "reported.schema.json", "/properties/results/items"),
]


class Document:
    """A schema file (or a generated schema) whose ``$ref`` s can be followed, across files too."""

    def __init__(self, schema: dict[str, Any], name: str | None = None) -> None:
        self.schema, self.name = schema, name

    def resolve(self, node: dict[str, Any]) -> tuple[Document, dict[str, Any]]:
        while "$ref" in node:
            file, _, pointer = node["$ref"].partition("#")
            document = self if not file else Document(json.loads((SCHEMAS / file).read_text()), file)
            node, self = document.at(pointer), document
        return self, node

    def at(self, pointer: str) -> dict[str, Any]:
        node = self.schema
        for part in filter(None, pointer.split("/")):
            node = node[part]
        return node


def _types(node: dict[str, Any]) -> frozenset[str]:
    """The JSON types a schema node allows (``any`` where it says none)."""
    names = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}
    if "type" in node:
        return frozenset([node["type"]] if isinstance(node["type"], str) else node["type"])
    if "const" in node:
        return frozenset({names[type(node["const"])]})
    if "enum" in node:
        return frozenset(names[type(value)] for value in node["enum"])
    return ANY


def _branches(document: Document, node: dict[str, Any]) -> list[tuple[Document, dict[str, Any]]]:
    """The alternatives of a node (``anyOf``/``oneOf``), each resolved; the node itself if none."""
    document, node = document.resolve(node)
    alternatives = node.get("anyOf") or node.get("oneOf")
    if alternatives is None:
        return [(document, node)]
    return [branch for item in alternatives for branch in _branches(document, item)]


def _shape(document: Document, node: dict[str, Any]) -> dict[str, Any]:
    """What a node decides, the alternatives merged: types, and where there are, properties (with
    the required ones), a list's items, a mapping's values -- each as a (document, node) pair."""
    shape: dict[str, Any] = {"types": frozenset(), "properties": None, "required": set(), "items": [], "values": []}
    for branch_document, branch in _branches(document, node):
        types = _types(branch)
        shape["types"] |= types
        if "properties" in branch:
            shape["properties"] = {name: (branch_document, value) for name, value in branch["properties"].items()}
            shape["required"] |= set(branch.get("required", ()))
        if isinstance(branch.get("additionalProperties"), dict):
            shape["values"].append((branch_document, branch["additionalProperties"]))
        for item in [branch["items"]] if isinstance(branch.get("items"), dict) else branch.get("prefixItems", []):
            shape["items"].append((branch_document, item))
    if shape["types"] > ANY or not shape["types"]:
        shape["types"] = ANY
    return shape


def differences(
    generated: tuple[Document, dict[str, Any]], committed: tuple[Document, dict[str, Any]], path: str
) -> list[str]:
    """Where the generated schema and the committed one decide differently (see the module's docstring)."""
    ours, theirs = _shape(*generated), _shape(*committed)
    if ours["types"] == ANY:
        return []  # open in the record: the committed schema's detail is its own
    out = []
    if ours["types"] != theirs["types"]:
        out.append(f"{path}: types {sorted(ours['types'])} (records) vs {sorted(theirs['types'])} (schemas/)")
    if ours["properties"] is not None:
        if theirs["properties"] is None:
            return [*out, f"{path}: the records name properties, the committed schema none"]
        if set(ours["properties"]) != set(theirs["properties"]):
            only_ours = sorted(set(ours["properties"]) - set(theirs["properties"]))
            only_theirs = sorted(set(theirs["properties"]) - set(ours["properties"]))
            out.append(f"{path}: properties only in the records {only_ours}, only in schemas/ {only_theirs}")
        if not ours["required"] <= theirs["required"]:
            out.append(
                f"{path}: required by the records, not by schemas/: {sorted(ours['required'] - theirs['required'])}"
            )
        for name in sorted(set(ours["properties"]) & set(theirs["properties"])):
            mine = ours["properties"][name]
            if name not in theirs["required"] and mine[1].get("default", 0) is None:
                mine = (mine[0], _without_null(mine[1]))  # written only where set: absent, never null
            out += differences(mine, theirs["properties"][name], f"{path}.{name}")
    for kind in ("items", "values"):
        for mine in ours[kind]:
            out += [
                difference
                for other in theirs[kind] or [(committed[0], {})]
                for difference in differences(mine, other, f"{path}[]" if kind == "items" else f"{path}{{}}")
            ]
    return out


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    alternatives = node.get("anyOf")
    if alternatives is None:
        return node
    left = [item for item in alternatives if item != {"type": "null"}]
    return left[0] if len(left) == 1 else {**node, "anyOf": left}


@pytest.mark.parametrize(("record", "file", "pointer"), RECORDS, ids=[f"{r.__name__}" for r, _, _ in RECORDS])
def test_the_records_schema_agrees_with_the_committed_one(record: type, file: str, pointer: str) -> None:
    generated = Document(json_schema(record))
    committed = Document(json.loads((SCHEMAS / file).read_text()), file)
    assert differences((generated, generated.schema), (committed, committed.at(pointer)), record.__name__) == []


def test_a_field_the_schema_lacks_is_found() -> None:
    """The check fails where it should: a property the committed schema does not have, a type it
    does not allow, a required field it leaves optional."""
    generated = Document(json_schema(Paper))
    committed = json.loads((SCHEMAS / "reported.schema.json").read_text())["properties"]["paper"]
    renamed = {**committed, "properties": {**committed["properties"], "published": committed["properties"]["year"]}}
    del renamed["properties"]["year"]
    retyped = {**committed, "properties": {**committed["properties"], "year": {"type": "string"}}}
    loosened = {**committed, "required": [name for name in committed["required"] if name != "venue"]}
    found = [
        differences((generated, generated.schema), (Document(schema), schema), "Paper")
        for schema in (renamed, retyped, loosened)
    ]
    assert found == [
        ["Paper: properties only in the records ['year'], only in schemas/ ['published']"],
        ["Paper.year: types ['integer'] (records) vs ['string'] (schemas/)"],
        ["Paper: required by the records, not by schemas/: ['venue']"],
    ]


def test_the_bias_analyses_agree_with_the_diagnostics_schema() -> None:
    """LAReQA's analyses (:class:`harness.scoring.bias.Analyses`) are some of the properties the
    committed schema describes under a result's ``diagnostics`` (the others are other tasks'):
    those it has, checked as above."""
    generated = Document(json_schema(Analyses))
    committed = Document(json.loads((SCHEMAS / "run-result.schema.json").read_text()), "run-result.schema.json")
    diagnostics = committed.at("/properties/diagnostics")
    assert set(generated.schema["properties"]) <= set(diagnostics["properties"])
    mine = {
        **diagnostics,
        "properties": {name: diagnostics["properties"][name] for name in generated.schema["properties"]},
    }
    assert (
        differences(
            (generated, generated.schema), (committed, {**mine, "required": generated.schema["required"]}), "Analyses"
        )
        == []
    )
