"""hf-encoder's OpenVINO engine encodes as the one-by-one torch forward does (float32), within
bf16's rounding in bfloat16, and says in its identity which engine made its vectors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.errors import HarnessError
from harness_hf.checkpoint import cpu_has_bf16
from harness_hf.encoder import HFEncoder
from tests.plugins.harness_hf.test_encoder import TEXTS, reference_vectors

pytest.importorskip("openvino")
PAIRS = [("a sentence", "its paragraph, somewhat longer than the sentence"), ("short", "x " * 30)]


def openvino_encoder(folder: Path, **options: Any) -> HFEncoder:
    return HFEncoder(
        runtime=Runtime(device_request="cpu", batch_size=2, threads=1), path=folder, engine="openvino", **options
    )


@pytest.fixture(scope="module")
def float32_encoder(tiny_encoder_dir: Path) -> HFEncoder:
    return openvino_encoder(tiny_encoder_dir, precision="float32")


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_float32_equals_the_one_by_one_torch_forward(
    float32_encoder: HFEncoder, tiny_encoder_dir: Path, pooling: Any
) -> None:
    """Length-sorted padded batches of 2 through OpenVINO, texts and (sentence, paragraph) pairs
    (token_type_ids travel too), against transformers one text at a time without padding."""
    encoder = float32_encoder
    encoder.pooling = pooling  # pooling follows the forward: one conversion serves both
    assert encoder.openvino is not None and encoder.model is None  # OpenVINO holds the weights
    for texts in (TEXTS, PAIRS):
        got = encoder.encode(texts, role="passage")
        assert np.abs(got - reference_vectors(tiny_encoder_dir, texts, pooling)).max() < 1e-4


@pytest.mark.skipif(not cpu_has_bf16(), reason="bfloat16 needs AVX512-BF16 or AMX")
def test_bfloat16_stays_within_its_rounding(tiny_encoder_dir: Path) -> None:
    got = openvino_encoder(tiny_encoder_dir, precision="bfloat16").encode(TEXTS, role="query")
    cosine = (got * reference_vectors(tiny_encoder_dir, TEXTS, "mean")).sum(axis=1)
    assert cosine.min() > 0.99


def test_the_identity_names_the_engine(float32_encoder: HFEncoder, tiny_encoder_dir: Path) -> None:
    identity = float32_encoder.identity()
    assert identity.options["engine"] == "openvino" and identity.details["forward"].startswith("openvino 20")
    torch_identity = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir).identity()
    assert "engine" not in torch_identity.options  # torch's vectors keep their cache key and board label


def test_without_openvino_installed_it_is_one_line(tiny_encoder_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino now raises ImportError
    with pytest.raises(HarnessError) as error:
        openvino_encoder(tiny_encoder_dir)
    assert str(error.value).endswith(': engine=openvino needs OpenVINO: pip install ".[openvino]"')


def test_a_profiled_forward_times_its_operators_and_encodes_the_same(
    float32_encoder: HFEncoder, tiny_encoder_dir: Path
) -> None:
    """profile=True (benchmarks/profile_encoder.py) sums OpenVINO's own operator times over the
    batches, the linear layers among them, and encodes as the unprofiled forward does."""
    import torch

    from harness_hf.openvino_engine import OpenVinoForward

    encoder = openvino_encoder(tiny_encoder_dir, precision="float32")
    encoder.openvino = OpenVinoForward(
        encoder.load_weights(torch.float32),
        encoder._example(),
        precision="float32",
        threads=1,
        owner="test",
        profile=True,
    )
    got = encoder.encode(TEXTS, role="passage")
    timed = encoder.openvino.operator_seconds
    assert timed is not None
    assert np.abs(got - reference_vectors(tiny_encoder_dir, TEXTS, encoder.pooling)).max() < 1e-4
    assert any(node == "FullyConnected" for node, _ in timed) and sum(timed.values()) > 0
    assert float32_encoder.openvino is not None and float32_encoder.openvino.operator_seconds is None
