"""The fast line check of the prediction reader agrees with ``schemas/mkqa-predictions.schema.json``."""

from __future__ import annotations

import math
from typing import Any

import pytest

from harness.definitions.validation import validate
from harness.errors import InputError
from harness_mkqa.predictions import _problem

GOOD = {"example_id": -7449157003522518870, "prediction": "Ridley Scott", "binary_answer": None, "no_answer_prob": -6.9}


def schema_accepts(line: Any) -> bool:
    try:
        validate(line, "mkqa-predictions", file="test")
    except InputError:
        return False
    return True


@pytest.mark.parametrize(
    "line",
    [
        GOOD,
        {**GOOD, "example_id": "-7449157003522518870"},
        {**GOOD, "prediction": None},
        {**GOOD, "binary_answer": "YES"},
        {**GOOD, "binary_answer": "no"},
        {**GOOD, "binary_answer": ""},
        {**GOOD, "no_answer_prob": 3},
        {k: v for k, v in GOOD.items() if k != "no_answer_prob"},
        {**GOOD, "question": "extra fields are ignored, as by the official scorer"},
        # Refused by both:
        [GOOD],
        {k: v for k, v in GOOD.items() if k != "prediction"},
        {**GOOD, "example_id": True},
        {**GOOD, "example_id": None},
        {**GOOD, "prediction": 5},
        {**GOOD, "binary_answer": "maybe"},
        {**GOOD, "binary_answer": True},
        {**GOOD, "no_answer_prob": "0.5"},
        {**GOOD, "no_answer_prob": None},
        {**GOOD, "no_answer_prob": False},
    ],
)
def test_fast_check_matches_the_schema(line: Any) -> None:
    assert (_problem(line) is None) == schema_accepts(line)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        # JSON Schema counts 1.0 as an integer, but the official scorer would look for the id "1.0".
        ({**GOOD, "example_id": 1.0}, "example_id"),
        # Python's json reads NaN and Infinity; the official sort breaks on NaN.
        ({**GOOD, "no_answer_prob": math.nan}, "no_answer_prob"),
        ({**GOOD, "no_answer_prob": math.inf}, "no_answer_prob"),
    ],
)
def test_stricter_than_the_schema(line: Any, field: str) -> None:
    assert schema_accepts(line)
    problem = _problem(line)
    assert problem is not None and problem[0] == field
