"""``harness validate``: harness and plugin schemas, JSON lines, and one-line errors."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.hookspecs import hookimpl
from harness.definitions.registry import Registry
from harness.definitions.specs import PluginInfo

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_unknown_schema_is_one_line_naming_the_known_ones(
    harness_cli: Any, tmp_path: Path, only_fakes: None
) -> None:
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    code, out, err = harness_cli("validate", "x.json", "--schema", "run-reslt")
    assert code == 2 and out == ""
    core = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))
    assert err == (
        f"error: unknown schema 'run-reslt'; did you mean 'run-result'? "
        f"(known: {', '.join(sorted([*core, 'fake-predictions']))})\n"
    )


def test_a_plugin_schema_is_found_by_name(harness_cli: Any, tmp_path: Path, only_fakes: None) -> None:
    (tmp_path / "p.json").write_text('{"en-1": ["c1", "c2"]}', encoding="utf-8")
    assert harness_cli("validate", "p.json", "--schema", "fake-predictions") == (
        0,
        "p.json: valid fake-predictions\n",
        "",
    )
    (tmp_path / "p.json").write_text('{"en-1": "c1"}', encoding="utf-8")
    code, out, err = harness_cli("validate", "p.json", "--schema", "fake-predictions")
    assert (code, err) == (
        2,
        "error: p.json: field 'en-1': does not match schema fake-predictions: 'c1' is not of type 'array'\n",
    )


def test_json_lines_are_checked_line_by_line(harness_cli: Any, tmp_path: Path) -> None:
    good = {"question_id": "q1_en", "ranking": ["en_1_0"]}
    write_lines(tmp_path / "p.jsonl", [good, good])
    assert harness_cli("validate", "p.jsonl", "--schema", "lareqa-predictions") == (
        0,
        "p.jsonl: valid lareqa-predictions (2 lines)\n",
        "",
    )
    write_lines(tmp_path / "bad.jsonl", [good, {"question_id": "q2_en", "ranking": "en_1_0"}])
    code, out, err = harness_cli("validate", "bad.jsonl", "--schema", "lareqa-predictions")
    assert code == 2
    assert err == (
        "error: bad.jsonl: record line 2: field 'ranking': does not match schema lareqa-predictions: "
        "'en_1_0' is not of type 'array'\n"
    )
    # without --schema, the schema its first line fits
    assert harness_cli("validate", "p.jsonl") == (0, "p.jsonl: valid lareqa-predictions (2 lines)\n", "")


def test_a_plugin_ships_schemas_through_the_hook(tmp_path: Path) -> None:
    schema = tmp_path / "toy-predictions.schema.json"
    schema.write_text(json.dumps({"$id": "https://toy.invalid/toy.schema.json", "type": "integer"}), encoding="utf-8")
    registry = Registry()
    registry.add_plugin(types.SimpleNamespace(harness_schemas=hookimpl(lambda: [schema])), PluginInfo("toy"))
    spec, plugin = registry.schemas.get("toy-predictions")
    assert (spec.path, plugin.name) == (schema, "toy")


def test_a_schema_file_not_named_by_the_convention_breaks_its_plugin(tmp_path: Path) -> None:
    odd = tmp_path / "toy.json"
    odd.write_text("{}", encoding="utf-8")
    registry = Registry()
    with pytest.warns(RuntimeWarning, match="plugin 'toy' failed to load"):
        registry.add_plugin(types.SimpleNamespace(harness_schemas=hookimpl(lambda: [odd])), PluginInfo("toy"))
    assert [b.plugin.name for b in registry.broken] == ["toy"] and "NAME.schema.json" in registry.broken[0].reason
    assert not registry.schemas.entries


def test_the_schema_is_inferred_from_the_file(harness_cli: Any, tmp_path: Path) -> None:
    # A predictions file was checked as a run result ("'schema_version' is a required property").
    (tmp_path / "xquad.de.json").write_text('{"q1": "Paris", "q2": "1889"}', encoding="utf-8")
    assert harness_cli("validate", "xquad.de.json") == (
        0,
        "xquad.de.json: valid span-qa-predictions (the same shape as xor-engspan-predictions, xor-full-predictions)\n",
        "",
    )
    line = {"example_id": 1, "prediction": "Paris", "binary_answer": None}
    write_lines(tmp_path / "en.jsonl", [line, {**line, "example_id": 2}])
    assert harness_cli("validate", "en.jsonl") == (0, "en.jsonl: valid mkqa-predictions (2 lines)\n", "")
    code, out, err = harness_cli("run", "xquad", "oracle", "--langs", "en", "--quiet", "--no-leaderboard")
    assert code == 0, err
    (result,) = list(tmp_path.glob("results/**/result.json"))
    assert harness_cli("validate", result) == (0, f"{result}: valid run-result\n", "")
    # A broken result is still told what breaks it as a result: the closest schema, by the keys it requires.
    broken = json.loads(result.read_text(encoding="utf-8"))
    del broken["rows"][0]["count"]
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    assert harness_cli("validate", "broken.json") == (
        2,
        "",
        "error: broken.json: field 'rows.0': does not match schema run-result: 'count' is a required property\n",
    )
    # A file that fits none, and is as close to several, is not told it breaks one of them.
    (tmp_path / "bad.json").write_text('{"q1": 5}', encoding="utf-8")
    assert harness_cli("validate", "bad.json") == (
        2,
        "",
        "error: bad.json: fits no schema; the closest, equally: mewslix-predictions, span-qa-predictions, "
        "xor-engspan-predictions, xor-full-predictions (name one with --schema to see what breaks it)\n",
    )
