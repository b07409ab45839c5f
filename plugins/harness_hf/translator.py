"""The ``hf-translator`` model: a local seq2seq checkpoint folder (Marian, ...) as a Translator.

Texts are sorted by token length and batched so padding stays small (``harness.models.batching``, as
for encoders and readers: a batch that runs out of GPU memory is halved), translated with
``generate`` (greedy unless ``num_beams`` says otherwise) and put back in input order. A Marian
checkpoint translates one language pair (or, like opus-mt-mul-en, many sources into one target)
and needs no language codes; ``source_lang``/``target_lang`` are not passed to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.plugin import ModelIdentity, Runtime, Translator
from harness_hf.checkpoint import CheckpointModel, Precision


class HFTranslator(CheckpointModel):
    """A :class:`~harness.definitions.protocols.Translator` over ``AutoModelForSeq2SeqLM`` + ``AutoTokenizer``."""

    provides = frozenset({Translator})

    auto_class = "AutoModelForSeq2SeqLM"

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        num_beams: int = 1,
        max_length: int = 512,
        max_new_tokens: int = 128,
        precision: Precision = "auto",
        label: str | None = None,
    ) -> None:
        super().__init__(runtime=runtime, path=path, precision=precision, label=label)
        # Neither side may pass the checkpoint's position table (a Marian model has 512 positions,
        # a small one fewer): beyond it generation fails deep inside the model, so the limits are
        # cut to it here, and the identity records the limits used.
        positions = getattr(self.model.config, "max_position_embeddings", None) or max(max_length, max_new_tokens)
        self.num_beams = num_beams
        self.max_length, self.max_new_tokens = min(max_length, positions), min(max_new_tokens, positions - 1)

    def identity(self) -> ModelIdentity:
        return self.checkpoint_identity(
            "hf-translator",
            {"num_beams": self.num_beams, "max_length": self.max_length, "max_new_tokens": self.max_new_tokens},
        )

    def _translate_batch(self, batch_ids: np.ndarray, texts: Sequence[str]) -> list[str]:
        batch = self.tokenizer(
            [texts[i] for i in batch_ids],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_length,
        )
        generated = self.model.generate(
            **self.to_device(dict(batch)), num_beams=self.num_beams, max_new_tokens=self.max_new_tokens, do_sample=False
        )
        return [text.strip() for text in self.tokenizer.batch_decode(generated, skip_special_tokens=True)]

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        out = [""] * len(texts)
        lengths = [
            len(ids) for ids in self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]
        ]
        with self._torch.inference_mode():
            for batch_ids in self.batcher.plan(lengths):
                for i, text in zip(
                    batch_ids, self.batcher.run(batch_ids, lambda ids: self._translate_batch(ids, texts))
                ):
                    out[i] = text
        return out
