"""hf-encoder loads a local checkpoint folder and encodes like a plain one-by-one forward pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from harness.definitions.model import Runtime
from harness.errors import HarnessError
from harness_hf.encoder import HFEncoder

TEXTS = ["short", "a somewhat longer sentence about the Danube river", "中文句子", "x " * 40, "mid length text"]


def reference_vectors(folder: Path, texts: list, pooling: str, prefix: str = "") -> np.ndarray:
    """One text (or (sentence, paragraph) pair, prefixed on its first part) at a time, no padding:
    what length-sorted batching and the packed forward must reproduce."""
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    out = []
    with torch.inference_mode():
        for text in texts:
            parts = (prefix + text,) if isinstance(text, str) else (prefix + text[0], text[1])
            batch = tokenizer(*parts, return_tensors="pt", truncation=True, max_length=512)
            states = model(**batch).last_hidden_state[0]
            vector = states[0] if pooling == "cls" else states.mean(dim=0)
            out.append(torch.nn.functional.normalize(vector, dim=-1).numpy())
    return np.asarray(out)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_batched_length_sorted_encoding_equals_one_by_one(tiny_encoder_dir: Path, pooling: Any) -> None:
    encoder = HFEncoder(
        runtime=Runtime(device_request="cpu", batch_size=2),
        path=tiny_encoder_dir,
        pooling=pooling,
        query_prefix="query: ",
    )
    got = encoder.encode(TEXTS, role="query")
    assert got.shape == (5, 32) and got.dtype == np.float32
    assert np.allclose(got, reference_vectors(tiny_encoder_dir, TEXTS, pooling, "query: "), atol=1e-5)
    # the passage side has no prefix here, so its vectors differ
    assert not np.allclose(encoder.encode(TEXTS[:1], role="passage"), got[:1])


def test_pairs_are_two_segments(tiny_encoder_dir: Path) -> None:
    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    pair = encoder.encode([("the sentence", "its paragraph")], role="passage")
    joined = encoder.encode(["the sentence its paragraph"], role="passage")
    assert pair.shape == joined.shape and not np.allclose(pair, joined)


def test_identity_hashes_the_weights(tiny_encoder_dir: Path) -> None:
    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir, label="tiny")
    identity = encoder.identity()
    assert identity.label == "tiny" and identity.weights.startswith("sha256:")
    assert identity.options["pooling"] == "mean" and identity.options["precision"] == "float32"
    assert identity.details["config"]["model_type"] == "bert"


def test_a_hub_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="is not a local checkpoint folder"):
        HFEncoder(runtime=Runtime(device_request="cpu"), path=Path("intfloat/multilingual-e5-small"))


def test_end_to_end_on_demo_data(harness_cli: Any, tiny_encoder_dir: Path) -> None:
    code, out, err = harness_cli(
        "run",
        "lareqa",
        f"hf-encoder:path={tiny_encoder_dir},pooling=cls",
        "--limit",
        "3",
        "--quiet",
        "--batch-size",
        "8",
    )
    assert code == 0, err
    assert "main score: map" in out


def test_single_texts_and_pairs_may_share_a_call(tiny_encoder_dir: Path) -> None:
    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    mixed = encoder.encode(["alone", ("the sentence", "its paragraph"), "again"], role="passage")
    separate = np.concatenate(
        [
            encoder.encode(["alone"], role="passage"),
            encoder.encode([("the sentence", "its paragraph")], role="passage"),
            encoder.encode(["again"], role="passage"),
        ]
    )
    assert np.allclose(mixed, separate, atol=1e-6)


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@needs_gpu
def test_gpu_runs_in_bfloat16_and_agrees_with_the_cpu(tiny_encoder_dir: Path) -> None:
    cpu = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    gpu = HFEncoder(runtime=Runtime(device_request="cuda"), path=tiny_encoder_dir)
    assert gpu.precision in ("bfloat16", "float16") and gpu.identity().options["precision"] == gpu.precision
    cosine = (cpu.encode(TEXTS, role="query") * gpu.encode(TEXTS, role="query")).sum(axis=1)
    assert cosine.min() > 0.99


@needs_gpu
def test_a_gpu_run_records_its_device_and_precision(harness_cli: Any, tiny_encoder_dir: Path) -> None:
    import json

    code, _, err = harness_cli(
        "run", "lareqa", f"hf-encoder:path={tiny_encoder_dir}", "--device", "cuda", "--limit", "3", "--quiet"
    )
    assert code == 0, err
    execution = json.loads(next(Path("results").rglob("result.json")).read_text())["provenance"]["execution"]
    assert execution["device"].startswith("cuda") and execution["precision"] in ("bfloat16", "float16")
    assert execution["batch_size"] == HFEncoder.gpu_batch_size  # the GPU's default, not the CPU's
