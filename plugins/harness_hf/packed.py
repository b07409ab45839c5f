"""BERT-family encoders on a CPU without padding: the tokens of a batch packed end to end.

Why: transformers pads every text of a batch to the longest and runs attention through torch's
scaled-dot-product kernel, which for e5-small's 12 heads of 32 dimensions reached ~108 GFLOP/s
here in bfloat16, while the same two products done text by text (``[heads, length, 32]`` blocks
that stay in cache) reached ~177 GFLOP/s; attention was 43% of the bf16 forward's time. Here the
linear layers see one ``[tokens, hidden]`` matrix (no padded token is ever computed) and attention
runs on each text at its own length, so no mask is built or applied either. On the real XQuAD-R
pool this is 1.2-1.4x faster than transformers' bf16 forward (``benchmarks/bench_encoder_backends.py``).
The softmax runs in float32 whatever the model's dtype: torch's bfloat16 softmax took 13% of the
bf16 forward's time here (torch.profiler, 0.55 ns an element), and one float32 pass plus the cast
back took e5-small from 53.4% / 52.0% to 54.8% / 57.3% of the bf16 matmul peak on 100-word passages
(``benchmarks/bench_encoder_peak.py --corpus``, two alternated rounds), and is no less exact.

It computes what ``BertModel`` computes (absolute positions, post-LayerNorm, exact GELU, the
encoder's last hidden states), with the model's own weight tensors; equal to transformers at
float32 within 1e-5 (tested). Other architectures, and GPUs (where padded batches and fused
attention kernels win), keep transformers' forward.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

#: The weights file read without transformers (one file; sharded checkpoints take transformers' loader).
WEIGHTS_FILE = "model.safetensors"


def matmul_parameters(named: Mapping[str, Any] | Any) -> int:
    """Parameters of the encoder's matrix products (the FLOP count's ``2 x parameters x tokens``):
    every 2-D weight outside the embeddings and the pooler. ``named`` is a state dict or
    ``model.named_parameters()``."""
    items = named.items() if isinstance(named, Mapping) else named
    return sum(
        t.numel()
        for name, t in items
        if t.dim() == 2 and not name.startswith(("embeddings.", "pooler.")) and ".embeddings." not in name
    )


class PackedBert:
    """The last hidden states of a ``BertModel`` for texts given as token features, packed.

    Built from the checkpoint's config and weight tensors, so a CPU run needs neither
    transformers' model classes nor their import (about 2 s of a dry run's start-up here)."""

    @staticmethod
    def supports(config: Mapping[str, Any]) -> bool:
        """Whether this class computes exactly what the model of ``config`` (config.json) computes."""
        return (
            config.get("model_type") == "bert"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and config.get("hidden_act") == "gelu"
            and not config.get("is_decoder", False)
        )

    @classmethod
    def from_folder(cls, folder: Path, dtype: torch.dtype) -> PackedBert | None:
        """The packed forward for a checkpoint folder, or None where it does not apply (another
        architecture, or weights not in a single safetensors file)."""
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if not cls.supports(config) or not (folder / WEIGHTS_FILE).is_file():
            return None
        from safetensors.torch import load_file

        weights = load_file(str(folder / WEIGHTS_FILE))
        return cls(config, {name: tensor.to(dtype) for name, tensor in weights.items()})

    def __init__(self, config: Mapping[str, Any], weights: Mapping[str, torch.Tensor]) -> None:
        """``weights``: a ``BertModel`` state dict (names as ``BertModel`` saves them; a task
        model's ``bert.`` prefix is removed)."""
        w = {name.removeprefix("bert."): tensor.detach() for name, tensor in weights.items()}
        self.heads = int(config["num_attention_heads"])
        self.head_size = int(config["hidden_size"]) // self.heads
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"]
        self.embedding_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [_Layer(w, f"encoder.layer.{i}.", self.eps) for i in range(int(config["num_hidden_layers"]))]
        self.matmul_parameters = matmul_parameters(w)

    def __call__(self, features: Sequence[dict[str, np.ndarray]]) -> tuple[torch.Tensor, np.ndarray]:
        """Hidden states of every token of every text, end to end (``[tokens, hidden]``, float32),
        and the offsets where each text starts (one more at the end)."""
        lengths = np.array([len(f["input_ids"]) for f in features])
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        ids = torch.from_numpy(np.concatenate([f["input_ids"] for f in features]))
        positions = torch.from_numpy(np.concatenate([np.arange(n) for n in lengths]))
        x = self.word[ids] + self.position[positions]
        if "token_type_ids" in features[0]:
            x = x + self.token_type[torch.from_numpy(np.concatenate([f["token_type_ids"] for f in features]))]
        else:
            x = x + self.token_type[0]
        x = F.layer_norm(x, (self.hidden,), *self.embedding_norm, self.eps)
        tokens = len(x)
        x = F.pad(x, (0, 0, 0, padded_rows(tokens) - tokens))
        spans = list(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
        for layer in self.layers:
            x = layer(x, spans, self.heads, self.head_size)
        return x[:tokens].float(), offsets


def padded_rows(tokens: int) -> int:
    """``tokens`` rounded up to one of a few sizes (steps of 1/32 of its power of two, at least 16).

    Why: oneDNN, which runs torch's bfloat16 matrix products on a CPU, builds and caches a kernel
    (and a copy of the weights in its layout) for every shape it meets, up to 1,024 of them. Packed
    batches have a new row count nearly every time, so an encoding grew by 13 MB a batch (with the C
    heap's holes, see ``EncodingService.release``: 1.1 to 2.9 GB a process in the first 45 minutes of
    a million-passage build) and paid the build each time; rounded, the same few shapes come back. The extra rows (fewer than 16, or 1/32 of a larger batch: 1.5% on
    average) are zeros that no attention span covers and the result drops."""
    step = max(16, 1 << max(0, tokens.bit_length() - 6))
    return -(-tokens // step) * step


class _Layer:
    """One BERT layer: self-attention (query, key and value as one product), then the FFN."""

    def __init__(self, w: Mapping[str, torch.Tensor], prefix: str, eps: float) -> None:
        def pair(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            return w[f"{prefix}{name}.weight"], w[f"{prefix}{name}.bias"]

        q, k, v = (pair(f"attention.self.{n}") for n in ("query", "key", "value"))
        self.qkv_weight = torch.cat([q[0], k[0], v[0]])
        self.qkv_bias = torch.cat([q[1], k[1], v[1]])
        self.attention_out, self.attention_norm = pair("attention.output.dense"), pair("attention.output.LayerNorm")
        self.intermediate, self.out = pair("intermediate.dense"), pair("output.dense")
        self.out_norm, self.eps = pair("output.LayerNorm"), eps

    def __call__(self, x: torch.Tensor, spans: list[tuple[int, int]], heads: int, head_size: int) -> torch.Tensor:
        qkv = F.linear(x, self.qkv_weight, self.qkv_bias).view(-1, 3, heads, head_size)
        context = torch.empty_like(x)
        context[spans[-1][1] :] = 0  # the padding rows (see padded_rows)
        scale = head_size**-0.5
        for start, end in spans:
            query, key, value = qkv[start:end].permute(1, 2, 0, 3)  # each [heads, length, head_size]
            weights = torch.softmax(torch.matmul(query * scale, key.transpose(-1, -2)), dim=-1, dtype=torch.float32).to(
                x.dtype
            )
            context[start:end] = torch.matmul(weights, value).transpose(0, 1).reshape(end - start, -1)
        hidden = (x.shape[-1],)
        x = F.layer_norm(F.linear(context, *self.attention_out) + x, hidden, *self.attention_norm, self.eps)
        return F.layer_norm(
            F.linear(F.gelu(F.linear(x, *self.intermediate)), *self.out) + x, hidden, *self.out_norm, self.eps
        )
