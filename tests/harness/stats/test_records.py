"""Per-instance records: the file round-trips, bad lines are one error naming file, line and
field, and runs write them (with or without intervals)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.results.instances import read_instances, write_instances
from harness.stats.records import Instance, InstanceTable

Cli = Callable[..., tuple[int, str, str]]


def test_round_trip_keeps_every_field_and_value(tmp_path: Path) -> None:
    items = [
        Instance("q1", "es-en", ("es", "en"), ["uno", "one"], "uno", {"f1": 1 / 3, "exact_match": 0.0}),
        Instance("q2", "es-en", ("es", "en"), [], None, {"f1": 0.1 + 0.2, "exact_match": 1.0}),
    ]
    path = tmp_path / "instances.jsonl"
    write_instances(items, path)
    assert read_instances(path) == items
    assert path.read_text(encoding="utf-8").count("\n") == 2
    table = InstanceTable.from_instances(items)
    assert table.unit("es-en").ids == ["q1", "q2"] and table.unit("es-en").values["f1"].tolist() == [1 / 3, 0.1 + 0.2]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "q", "unit": "en", "languages": [], "gold": 1, "prediction": 1}', "line 2"),
        ('{"id": "q", "unit": "en", "languages": [], "gold": 1, "prediction": 1, "values": {"f1": "x"}}', "line 2"),
        (
            '{"id": "q", "unit": "en", "languages": [], "gold": 1, "prediction": 1, "values": {"f1": NaN}}',
            "line 2: field 'values.f1': not a finite number",
        ),
        ('{"id": "q", "unit": "en"', "line 2: malformed JSON"),
    ],
)
def test_a_bad_line_is_one_error_naming_it(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "instances.jsonl"
    good = json.dumps(Instance("p", "en", ("en",), 1, 1, {"f1": 1.0}).to_dict())
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_instances(path)
    assert str(caught.value).startswith(f"{path}: record {expected}")


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no instances"):
        read_instances(path)


def test_bootstrap_zero_writes_records_but_no_intervals(harness_cli: Cli, tmp_path: Path) -> None:
    code, out, err = harness_cli(
        "run", "xquad", "oracle", "--langs", "en,de", "--bootstrap", "0", "--quiet", "--no-leaderboard"
    )
    assert code == 0, err
    (result_path,) = list(Path("results").glob("xquad/oracle/*/result.json"))
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "bootstrap" not in result and "interval" not in result["main_score"]
    assert all("intervals" not in row for row in result["rows"])
    instances = result_path.parent / "instances.jsonl"
    assert result["instances"]["count"] == instances.read_text(encoding="utf-8").count("\n") == 48
    code, out, err = harness_cli("validate", instances, "--schema", "instance")
    assert code == 0 and out == f"{instances}: valid instance (48 lines)\n"
    assert result["task"]["scorer_signature"] == "squad-v1.1|norm:ascii-english|em+f1|avg:mean"


def test_negative_bootstrap_is_refused(harness_cli: Cli) -> None:
    with pytest.raises(SystemExit) as caught:
        harness_cli("run", "xquad", "oracle", "--bootstrap", "-5")
    assert caught.value.code == 2


def test_scorer_signatures_name_scorer_changing_options() -> None:
    from harness_lareqa.task import LAReQA

    assert LAReQA().scorer_signature() == "lareqa|map,map@20|ties:pool-order|avg:global"
    assert LAReQA(pool="mono").scorer_signature() == "lareqa|map,map@20|ties:pool-order|avg:global|pool:mono"
