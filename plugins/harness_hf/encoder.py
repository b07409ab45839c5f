"""The ``hf-encoder`` model: any local transformers checkpoint as a dual encoder.

Each batch is tokenised, padded to its longest text, pooled (first token or attention-masked
mean) and optionally L2-normalised. The runner's encoding service hands it batches of similar
length (see :mod:`harness.encoding`), so padding stays small; ``token_lengths`` tells the service
how long each text is. Prefixes (e5's ``query: ``/``passage: ``) and maximum lengths are per role.
On a GPU the model runs in bfloat16 (float16 where bf16 is unsupported) unless ``dtype`` says
otherwise, and batches travel through pinned memory with non-blocking copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import Role
from harness.provenance import package_version

from harness_hf.checkpoint import check_folder, config_summary, torch_dtype, weights_hash

Pooling = Literal["cls", "mean"]
DType = Literal["auto", "float32", "float16", "bfloat16"]


class HFEncoder(Model):
    """An :class:`~harness.protocols.Encoder` over ``AutoModel`` + ``AutoTokenizer`` from a folder."""

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        pooling: Pooling = "mean",
        normalize: bool = True,
        query_prefix: str = "",
        passage_prefix: str = "",
        query_max_length: int = 512,
        passage_max_length: int = 512,
        dtype: DType = "auto",
        label: str | None = None,
    ) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.path = check_folder(path, "model hf-encoder")
        self.runtime = runtime
        self.pooling, self.normalize = pooling, normalize
        self.prefix = {"query": query_prefix, "passage": passage_prefix}
        self.max_length = {"query": query_max_length, "passage": passage_max_length}
        self.dtype_name = dtype
        self.label = label
        self.device = runtime.device
        self.dtype = torch_dtype(dtype, self.device)
        self.batch_size = runtime.batch_size or 32
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True, dtype=self.dtype)
        self.model.to(self.device).eval()
        self.precision = str(self.dtype).removeprefix("torch.")
        self._torch = torch

    def identity(self) -> ModelIdentity:
        options = {
            "pooling": self.pooling, "normalize": self.normalize,
            "query_prefix": self.prefix["query"], "passage_prefix": self.prefix["passage"],
            "query_max_length": self.max_length["query"], "passage_max_length": self.max_length["passage"],
            "dtype": self.precision,
        }
        return ModelIdentity(
            name=self.name or "hf-encoder",
            label=self.label or self.path.name,
            weights=weights_hash(self.path),
            options=options,
            details={"path": str(self.path), "config": config_summary(self.path), "device": self.device,
                     "transformers": package_version("transformers"), "batch_size": self.batch_size},
        )

    def _tokenize(self, texts: Sequence[str | tuple[str, str]], role: Role) -> list[dict[str, Any]]:
        prefix = self.prefix[role]
        first = [prefix + (t if isinstance(t, str) else t[0]) for t in texts]
        second = [None if isinstance(t, str) else t[1] for t in texts]
        kwargs = {"truncation": True, "max_length": self.max_length[role]}
        if any(s is not None for s in second):
            if not all(s is not None for s in second):
                raise ValueError("mixing single texts and text pairs in one call")
            encoded = self.tokenizer(first, second, **kwargs)
        else:
            encoded = self.tokenizer(first, **kwargs)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
        return [{k: encoded[k][i] for k in keys} for i in range(len(texts))]

    def token_lengths(self, texts: Sequence[str | tuple[str, str]], *, role: Role) -> list[int]:
        return [len(f["input_ids"]) for f in self._tokenize(texts, role)]

    def encode(self, texts: Sequence[str | tuple[str, str]], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        torch = self._torch
        features = self._tokenize(texts, role)
        hidden = int(self.model.config.hidden_size)
        out = np.zeros((len(features), hidden), dtype=np.float32)
        on_gpu = self.device.startswith("cuda")
        with torch.inference_mode():
            for start in range(0, len(features), self.batch_size):
                batch = self.tokenizer.pad(features[start : start + self.batch_size], return_tensors="pt")
                batch = {k: (v.pin_memory() if on_gpu else v).to(self.device, non_blocking=True) for k, v in batch.items()}
                states = self.model(**batch).last_hidden_state
                if self.pooling == "cls":
                    pooled = states[:, 0]
                else:
                    mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
                    pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                pooled = pooled.float()
                if self.normalize:
                    pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out[start : start + len(pooled)] = pooled.cpu().numpy()
        return out
