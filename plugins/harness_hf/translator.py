"""The ``hf-translator`` model: a local seq2seq checkpoint folder (Marian, ...) as a Translator.

Texts are tokenised, sorted by length and batched so padding stays small, translated with
``generate`` (greedy unless ``num_beams`` says otherwise) and put back in input order. A Marian
checkpoint translates one language pair (or, like opus-mt-mul-en, many sources into one target)
and needs no language codes; ``source_lang``/``target_lang`` are not passed to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.model import Model, ModelIdentity, Runtime
from harness.provenance import package_version

from harness_hf.checkpoint import check_folder, config_summary, torch_dtype, weights_hash
from harness_hf.encoder import DType


class HFTranslator(Model):
    """A :class:`~harness.protocols.Translator` over ``AutoModelForSeq2SeqLM`` + ``AutoTokenizer``."""

    def __init__(self, *, runtime: Runtime, path: Path, num_beams: int = 1, max_length: int = 512,
                 max_new_tokens: int = 128, dtype: DType = "auto", label: str | None = None) -> None:
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        self.path = check_folder(path, "model hf-translator")
        self.runtime = runtime
        self.num_beams, self.max_length, self.max_new_tokens = num_beams, max_length, max_new_tokens
        self.label = label
        self.device = runtime.device
        self.dtype = torch_dtype(dtype, self.device)
        self.batch_size = runtime.batch_size or 16
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(str(self.path), local_files_only=True, dtype=self.dtype)
        self.model.to(self.device).eval()
        self._torch = torch

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name=self.name or "hf-translator",
            label=self.label or self.path.name,
            weights=weights_hash(self.path),
            options={"num_beams": self.num_beams, "max_length": self.max_length, "max_new_tokens": self.max_new_tokens,
                     "dtype": str(self.dtype).removeprefix("torch.")},
            details={"path": str(self.path), "config": config_summary(self.path), "device": self.device,
                     "transformers": package_version("transformers"), "batch_size": self.batch_size},
        )

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = [""] * len(texts)
        with self._torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch_ids = order[start : start + self.batch_size]
                batch = self.tokenizer([texts[i] for i in batch_ids], return_tensors="pt", padding=True,
                                       truncation=True, max_length=self.max_length).to(self.device)
                generated = self.model.generate(**batch, num_beams=self.num_beams, max_new_tokens=self.max_new_tokens,
                                                do_sample=False)
                for i, text in zip(batch_ids, self.tokenizer.batch_decode(generated, skip_special_tokens=True)):
                    out[i] = text.strip()
        return out
