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


@pytest.mark.parametrize("capabilities", [["FP32", "INT8", "BIN", "EXPORT_IMPORT"], None])
def test_a_precision_the_cpu_lacks_is_refused_not_run_in_float32(
    tiny_encoder_dir: Path, monkeypatch: pytest.MonkeyPatch, capabilities: list[str] | None
) -> None:
    """OpenVINO's CPU plugin takes a bf16 hint on a CPU without native bf16 and computes in f32
    (its compiled model then reports float32): refused, not labelled bfloat16. ``None``: this
    CPU's own capabilities (the AVX2-only list above was read off an AMD EPYC), checked with
    OpenVINO's compiled precision."""
    import openvino

    if capabilities is not None:

        class Lacking(openvino.Core):  # type: ignore[misc]
            def get_property(self, device: str, name: str) -> Any:
                return capabilities if name == "OPTIMIZATION_CAPABILITIES" else super().get_property(device, name)

        monkeypatch.setattr(openvino, "Core", Lacking)
    elif "BF16" in openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        pytest.skip("this CPU runs bf16 natively (test_bfloat16_stays_within_its_rounding covers it)")
    else:  # what the refusal saves from: OpenVINO itself says it would compute in float32
        graph = openvino.Model([openvino.opset13.relu(x := openvino.opset13.parameter([1], np.float32))], [x])
        compiled = openvino.Core().compile_model(graph, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        assert str(compiled.get_property("INFERENCE_PRECISION_HINT")) == "<Type: 'float32'>"
    with pytest.raises(HarnessError, match=r"engine=openvino computes in f32 on this CPU, not bfloat16 .*FP32"):
        openvino_encoder(tiny_encoder_dir, precision="bfloat16")


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


def test_static_lengths_encode_the_same_from_a_graph_per_padded_length(
    tiny_encoder_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """static_step=8: every batch reaches OpenVINO padded to a multiple of 8 tokens, each length
    its own static graph (two kept at once), and the vectors are the one-by-one forward's."""
    from harness_hf.openvino_engine import STATIC_KEPT, OpenVinoForward

    encoder = openvino_encoder(tiny_encoder_dir, precision="float32", static_step=8)
    assert encoder.openvino is not None and encoder.openvino.graph is not None
    lengths: list[int] = []
    request = OpenVinoForward.request

    def recorded(forward: OpenVinoForward, length: int) -> Any:
        lengths.append(length)
        return request(forward, length)

    monkeypatch.setattr(OpenVinoForward, "request", recorded)
    for texts in (TEXTS, PAIRS):
        got = encoder.encode(texts, role="passage")
        assert np.abs(got - reference_vectors(tiny_encoder_dir, texts, encoder.pooling)).max() < 1e-4
    assert lengths and all(length % 8 == 0 for length in lengths) and max(lengths) == 48  # "x " * 40: 42 tokens
    assert None not in encoder.openvino.requests and len(encoder.openvino.requests) <= STATIC_KEPT
    assert encoder.identity().options["static_step"] == 8


@pytest.mark.parametrize("options", [{"engine": "torch", "static_step": 64}, {"engine": "openvino", "static_step": 0}])
def test_static_step_needs_openvino_and_a_positive_step(tiny_encoder_dir: Path, options: dict[str, Any]) -> None:
    with pytest.raises(HarnessError, match="static_step needs engine=openvino"):
        HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir, **options)
