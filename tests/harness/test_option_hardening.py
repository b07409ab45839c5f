"""Issue 11: options and places that cannot work are refused before any work, in one line."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.definitions.model import Runtime
from harness.errors import HarnessError
from harness.options import bind_options, parse_named

Cli = Callable[..., tuple[int, str, str]]


class Example:
    def __init__(self, *, k1: float = 1.5, top: int = 10) -> None:
        pass


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused(value: str) -> None:
    with pytest.raises(HarnessError) as caught:
        bind_options(Example, {"k1": value}, "model x")
    assert str(caught.value) == f"model x: option 'k1' must be a finite number, got '{value}'"


def test_huge_json_integer_for_a_float_option_is_refused() -> None:
    with pytest.raises(HarnessError, match="option 'k1' must be float"):
        bind_options(Example, {"k1": 10**400}, "model x")


def test_model_args_refuse_nan_repeats_and_deep_nesting() -> None:
    with pytest.raises(HarnessError, match=r"^--model-args is not valid JSON: NaN is not a number"):
        parse_named("bm25", '{"k1": NaN}')
    with pytest.raises(HarnessError, match=r"^--model-args: option 'k1' is given twice$"):
        parse_named("bm25", '{"k1": 1, "k1": 2}')
    with pytest.raises(HarnessError, match=r"^--model-args is not valid JSON: nested too deeply$"):
        parse_named("bm25", '{"a":' * 100_000)


def test_an_option_given_twice_is_refused() -> None:
    with pytest.raises(HarnessError) as caught:
        parse_named("mlqa:mode=gxlt,mode=xlt")
    assert str(caught.value) == "'mlqa:mode=gxlt,mode=xlt': option 'mode' is given twice"


@pytest.mark.parametrize("size", [0, -3])
def test_batch_size_must_be_positive(size: int) -> None:
    with pytest.raises(HarnessError) as caught:
        Runtime(batch_size=size)
    assert str(caught.value) == f"--batch-size must be a positive number, not {size}"


def test_cuda_without_a_gpu_is_refused_for_every_model(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    with pytest.raises(HarnessError, match="torch sees no GPU"):
        Runtime(device_request="cuda")
    assert Runtime(device_request="cpu").device_used == "cpu"


def test_cuda_index_past_the_gpus_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 1))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    with pytest.raises(HarnessError, match="--device cuda:1: torch sees 1 GPU"):
        Runtime(device_request="cuda:1")
    assert Runtime(device_request="cuda:0").device_used == "cpu"  # resolved for the model when it asks


def test_cli_refuses_bad_options_and_places(harness_cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    cases = {
        ("--output-dir", "a-file/sub"): "a-file/sub: --output-dir must be a folder, but a-file is a file",
        ("--cache-dir", "a-file"): "a-file: --cache-dir must be a folder, but a-file is a file",
        ("--batch-size", "0"): "--batch-size must be a positive number, not 0",
    }
    for extra, message in cases.items():
        code, out, err = harness_cli("run", "lareqa", "bm25", "--no-leaderboard", "--quiet", *extra)
        assert (code, err.splitlines()[-1]) == (2, f"error: {message}")
    code, _, err = harness_cli("run", "lareqa", "bm25:k1=-5", "--no-leaderboard", "--quiet")
    assert (code, err.splitlines()[-1]) == (
        2,
        "error: bm25: k1 must be >= 0, b within [0, 1] and epsilon >= 0 (got k1=-5.0, b=0.75, epsilon=0.25)",
    )
    code, _, err = harness_cli("run", "lareqa", "bm25:k1=nan", "--no-leaderboard", "--quiet")
    assert code == 2 and err.splitlines()[-1] == "error: model bm25: option 'k1' must be a finite number, got 'nan'"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing written by any refused run
    with pytest.raises(SystemExit) as caught:
        harness_cli("run", "lareqa", "bm25", "--langs", ",")
    assert caught.value.code == 2
