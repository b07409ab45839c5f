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

from harness.model import ModelIdentity, Runtime
from harness.protocols import Encoder, Role

from harness_hf.checkpoint import CheckpointModel

Pooling = Literal["cls", "mean"]
DType = Literal["auto", "float32", "float16", "bfloat16"]


class HFEncoder(CheckpointModel):
    """An :class:`~harness.protocols.Encoder` over ``AutoModel`` + ``AutoTokenizer`` from a folder."""
    provides = frozenset({Encoder})

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
        super().__init__(runtime=runtime, path=path, dtype=dtype, label=label)
        self.pooling, self.normalize = pooling, normalize
        self.prefix = {"query": query_prefix, "passage": passage_prefix}
        self.max_length = {"query": query_max_length, "passage": passage_max_length}

    def identity(self) -> ModelIdentity:
        return self.checkpoint_identity("hf-encoder", {
            "pooling": self.pooling, "normalize": self.normalize,
            "query_prefix": self.prefix["query"], "passage_prefix": self.prefix["passage"],
            "query_max_length": self.max_length["query"], "passage_max_length": self.max_length["passage"],
        })

    def _tokenize(self, texts: Sequence[str | tuple[str, str]], role: Role) -> list[dict[str, Any]]:
        """Features of each text; (sentence, paragraph) pairs become two segments. A suite's shared
        queue may mix single texts and pairs, so each kind is tokenised on its own."""
        prefix, kwargs = self.prefix[role], {"truncation": True, "max_length": self.max_length[role]}
        features: list[dict[str, Any]] = [{} for _ in texts]
        singles = [i for i, t in enumerate(texts) if isinstance(t, str)]
        pairs = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        for positions, encoded in (
            (singles, self.tokenizer([prefix + texts[i] for i in singles], **kwargs) if singles else None),
            (pairs, self.tokenizer([prefix + texts[i][0] for i in pairs], [texts[i][1] for i in pairs], **kwargs)
             if pairs else None),
        ):
            if encoded is None:
                continue
            keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
            for row, position in enumerate(positions):
                features[position] = {k: encoded[k][row] for k in keys}
        return features

    def token_lengths(self, texts: Sequence[str | tuple[str, str]], *, role: Role) -> list[int]:
        return [len(f["input_ids"]) for f in self._tokenize(texts, role)]

    def encode(self, texts: Sequence[str | tuple[str, str]], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        torch = self._torch
        features = self._tokenize(texts, role)
        hidden = int(self.model.config.hidden_size)
        out = np.zeros((len(features), hidden), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(features), self.batch_size):
                batch = self.to_device(self.tokenizer.pad(features[start : start + self.batch_size], return_tensors="pt"))
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
