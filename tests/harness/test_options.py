"""Options written ``name:key=value`` reach a plugin's constructor typed and checked."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from harness.errors import HarnessError
from harness.options import bind_options, parse_named


class Example:
    def __init__(
        self,
        *,
        runtime: object = None,
        path: Path,
        k1: float = 1.5,
        top: int = 10,
        normalize: bool = True,
        pooling: Literal["cls", "mean"] = "mean",
        label: str | None = None,
    ) -> None:
        pass


def test_parse_named_splits_name_and_options() -> None:
    spec = parse_named("bm25:k1=1.2, b=0.5")
    assert spec.name == "bm25"
    assert spec.options == {"k1": "1.2", "b": "0.5"}


def test_model_args_json_overrides_inline_options() -> None:
    spec = parse_named("hf-encoder:pooling=cls", '{"pooling": "mean", "query_prefix": "query: "}')
    assert spec.options == {"pooling": "mean", "query_prefix": "query: "}


@pytest.mark.parametrize("text", ["bm25:k1", ":k1=2", "bm25:=3"])
def test_malformed_specs_are_rejected(text: str) -> None:
    with pytest.raises(HarnessError):
        parse_named(text)


def test_values_are_converted_to_the_declared_types() -> None:
    bound = bind_options(
        Example,
        {"path": "~/m", "k1": "1.2", "top": "3", "normalize": "false", "pooling": "cls", "label": "none"},
        "model x",
    )
    assert bound == {
        "path": Path("~/m").expanduser(),
        "k1": 1.2,
        "top": 3,
        "normalize": False,
        "pooling": "cls",
        "label": None,
    }


def test_unknown_option_suggests_the_closest_name() -> None:
    with pytest.raises(HarnessError, match="unknown option 'poolng'; did you mean 'pooling'"):
        bind_options(Example, {"path": "m", "poolng": "cls"}, "model x")


def test_wrong_type_and_missing_required_option_are_reported() -> None:
    with pytest.raises(HarnessError, match="option 'top' must be int, got 'many'"):
        bind_options(Example, {"path": "m", "top": "many"}, "model x")
    with pytest.raises(HarnessError, match="option 'pooling' must be one of cls, mean"):
        bind_options(Example, {"path": "m", "pooling": "max"}, "model x")
    with pytest.raises(HarnessError, match="required option\\(s\\) missing: path"):
        bind_options(Example, {}, "model x")


def test_runtime_is_not_a_user_option() -> None:
    with pytest.raises(HarnessError, match="unknown option 'runtime'"):
        bind_options(Example, {"path": "m", "runtime": "x"}, "model x")
