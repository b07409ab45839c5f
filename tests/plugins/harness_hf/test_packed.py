"""The packed CPU forward computes what transformers' BertModel computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.definitions.model import Runtime
from harness_hf.encoder import HFEncoder
from harness_hf.packed import PackedBert, padded_rows
from tests.plugins.harness_hf.test_encoder import reference_vectors

TEXTS = [
    "the Danube flows into the Black Sea",
    "short",
    ("a sentence", "and its paragraph, which is longer"),
    "中文句子也可以",
    "x " * 40,
]


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_packed_vectors_equal_transformers_at_float32(tiny_encoder_dir: Path, pooling: str) -> None:
    encoder = HFEncoder(runtime=Runtime(device_request="cpu", batch_size=4), path=tiny_encoder_dir, pooling=pooling)
    assert encoder.packed is not None and encoder.identity().details["forward"].startswith("packed")
    vectors = encoder.encode(TEXTS, role="passage")
    assert np.allclose(vectors, reference_vectors(tiny_encoder_dir, TEXTS, pooling), atol=1e-5)


def test_packed_forward_loads_without_transformers_model(tiny_encoder_dir: Path) -> None:
    """From a safetensors checkpoint on a CPU the packed forward is built from the file: no
    transformers model is loaded (a dry run's start-up), and the FLOP count sees the same matrices."""
    from transformers import AutoModel

    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    assert encoder.model is None and encoder.packed is not None
    model = AutoModel.from_pretrained(str(tiny_encoder_dir))
    config = model.config
    layer = config.num_hidden_layers * (4 * config.hidden_size**2 + 2 * config.hidden_size * config.intermediate_size)
    assert encoder.packed.matmul_parameters == layer


def test_packed_hidden_states_equal_bert_models_per_token(tiny_encoder_dir: Path) -> None:
    from transformers import AutoModel

    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    model = AutoModel.from_pretrained(str(tiny_encoder_dir)).eval()
    features = encoder._tokenize(TEXTS, "passage")
    states, offsets = PackedBert(model.config.to_dict(), model.state_dict())(features)
    assert offsets.tolist() == np.cumsum([0] + [len(f["input_ids"]) for f in features]).tolist()
    with torch.inference_mode():
        for feature, start, end in zip(features, offsets[:-1], offsets[1:]):
            inputs = {k: torch.from_numpy(v)[None] for k, v in feature.items()}
            expected = model(**inputs).last_hidden_state[0]
            assert torch.allclose(states[start:end], expected, atol=1e-5)


def test_row_counts_come_back_to_few_shapes() -> None:
    """Rounded to steps of 1/32 of the power of two (16 at least): 4,900 tokens (bit length 13)
    go up in steps of 128 to 4,992; fewer than 16 rows or 1/32 added; the 2,048 counts of an octave give 32 shapes."""
    assert [padded_rows(n) for n in (1, 16, 17, 4900, 4992, 4993)] == [16, 16, 32, 4992, 4992, 5120]
    counts = range(1, 20_000)
    assert all(0 <= padded_rows(n) - n < max(16, n / 32) for n in counts)
    assert len({padded_rows(n) for n in range(2049, 4097)}) == 32


def test_padding_rows_leave_the_real_rows_alone(tiny_encoder_dir: Path) -> None:
    """Three texts of about 50 tokens in all are packed into 64 rows; the states of the real ones
    are each text's states computed alone (no padding row reaches them)."""
    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=tiny_encoder_dir)
    features = encoder._tokenize(TEXTS[:3], "passage")
    states, offsets = encoder.packed(features)
    total = int(offsets[-1])
    assert len(states) == total < padded_rows(total) == 64  # rows were added
    for feature, start, end in zip(features, offsets[:-1], offsets[1:]):
        assert torch.allclose(states[start:end], encoder.packed([feature])[0], atol=1e-6)


def test_architectures_it_does_not_reproduce_keep_transformers_forward(tiny_encoder_dir: Path) -> None:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(tiny_encoder_dir)).to_dict()
    assert PackedBert.supports(config)
    assert not PackedBert.supports({**config, "hidden_act": "gelu_new"})  # tanh GELU: not what it computes
    assert not PackedBert.supports({**config, "position_embedding_type": "relative_key"})
    assert not PackedBert.supports({**config, "model_type": "distilbert"})


def test_transformers_padded_forward_gives_the_same_vectors(tiny_encoder_dir: Path) -> None:
    """The path GPUs and other architectures take: padded batches, mask, then the same pooling."""
    encoder = HFEncoder(runtime=Runtime(device_request="cpu", batch_size=3), path=tiny_encoder_dir)
    packed = encoder.encode(TEXTS, role="query")
    encoder.use_transformers_forward()
    assert encoder.identity().details["forward"] == "transformers"
    assert np.allclose(encoder.encode(TEXTS, role="query"), packed, atol=1e-5)


def test_tokenizer_file_gives_autotokenizers_features(tiny_encoder_dir: Path) -> None:
    """``tokenizer.json`` read directly equals ``AutoTokenizer`` on texts and pairs, truncated."""
    from transformers import AutoTokenizer

    from harness_hf.tokens import TokenizerFile

    assert TokenizerFile.applies(tiny_encoder_dir)
    direct, auto = TokenizerFile(tiny_encoder_dir), AutoTokenizer.from_pretrained(str(tiny_encoder_dir))
    texts = [t for t in TEXTS if isinstance(t, str)]
    for max_length in (512, 6):
        assert direct(texts, truncation=True, max_length=max_length) == dict(
            auto(texts, truncation=True, max_length=max_length)
        )
        firsts, seconds = ["a sentence", "x " * 30], ["and its paragraph, which is longer", "y " * 30]
        assert direct(firsts, seconds, truncation=True, max_length=max_length) == dict(
            auto(firsts, seconds, truncation=True, max_length=max_length)
        )
    assert direct.pad_token_id == auto.pad_token_id
