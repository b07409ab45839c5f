"""Issue 11: every JSON and JSON-lines reader turns nesting too deep, integers past Python's
digit limit and (where asked) repeated keys into one :class:`InputError` naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InputError
from harness.files.io import iter_jsonl, parse_json, read_json


def test_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json(path)
    assert str(caught.value) == f"{path}: malformed JSON: nested too deeply"


def test_deep_nesting_in_a_json_lines_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": 1}\n' + '{"a":' * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path))
    assert str(caught.value) == f"{path}: record line 2: malformed JSON: nested too deeply"


def test_integer_past_the_digit_limit_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text("1" * 5000, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json(path)
    assert str(caught.value).startswith(f"{path}: malformed JSON: Exceeds the limit")


def test_repeated_key_is_refused_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"q1": "a", "q2": "b", "q1": "c"}', encoding="utf-8")
    assert read_json(path) == {"q1": "c", "q2": "b"}  # plain JSON files keep json's meaning
    with pytest.raises(InputError) as caught:
        read_json(path, unique_keys=True)
    assert str(caught.value) == f"{path}: field 'q1': given twice in one JSON object (only one value may be meant)"


def test_nested_repeated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"x": {"k": 1, "k": 2}}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path, unique_keys=True))
    assert caught.value.record == "line 1" and caught.value.field == "k"


def test_nan_refused_only_when_asked() -> None:
    assert parse_json("[1.5, 2]") == [1.5, 2]
    value = parse_json("NaN")
    assert value != value  # json's own reading of NaN, kept for data files
    with pytest.raises(ValueError, match="NaN is not a number"):
        parse_json('{"k1": NaN}', allow_nan=False)
    with pytest.raises(ValueError, match="Infinity is not a number"):
        parse_json("[-Infinity]", allow_nan=False)


def test_an_error_quoting_a_line_break_stays_one_line(tmp_path: Path) -> None:
    from harness.errors import InputError as Error
    from harness.errors import one_line

    error = Error("not a question", file=tmp_path / "p.json", record="line\n2", field="a\x1eb\u2028c")
    assert str(error) == f"{tmp_path / 'p.json'}: record line\\n2: field 'a\\x1eb\\u2028c': not a question"
    assert one_line("plain é 日本 text") == "plain é 日本 text"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"q1": "Par', "Unterminated string starting at line 1 column 8 (the text ends there: cut short?)"),
        ('{"q1": "Paris",\n "q2": ', "Expecting value at line 2 column 8 (the text ends there: cut short?)"),
        ('{"q1": "a\tb"}', "Invalid control character at line 1 column 10"),
        ('{"q1": "a"} {', "Extra data at line 1 column 13"),
    ],
)
def test_a_json_error_keeps_its_whole_reason_and_place(tmp_path: Path, text: str, reason: str) -> None:
    # json words some reasons to end in the place ("... starting at"); the place was cut off.
    path = tmp_path / "preds.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json(path)
    assert str(caught.value) == f"{path}: malformed JSON: {reason}"


def test_a_cut_json_line_keeps_its_whole_reason(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"example_id": 1}\n{"example_id": 2, "prediction": "Rid', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path))
    assert str(caught.value) == (
        f"{path}: record line 2: malformed JSON: Unterminated string starting at column 33 "
        "(the text ends there: cut short?)"
    )
