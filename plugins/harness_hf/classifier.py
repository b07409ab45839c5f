"""The ``hf-classifier`` model: a local sequence-pair classification checkpoint
(``AutoModelForSequenceClassification``) as a :class:`~harness.definitions.protocols.PairClassifier`.

Each pair is encoded as XTREME's ``run_classify.py`` encodes it (the tokenizer's pair template,
both sentences cut longest-first to ``max_length`` tokens, 128 as XTREME trains and tests) and
labelled with its highest logit (the first on a tie, as ``np.argmax``); output i means the task
label :func:`harness_hf.heads.output_labels` gives it. Pairs go through the shared batching of
every HF model (:class:`harness_hf.checkpoint.CheckpointModel`: length-sorted batches, a batch that
runs out of GPU memory halved; GPU when there is one, bf16/fp16 there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.plugin import PairClassifier
from harness_hf.checkpoint import FineTunedHead
from harness_hf.heads import output_labels


class HFClassifier(FineTunedHead):
    """Labels sentence pairs with a fine-tuned classification head."""

    provides = frozenset({PairClassifier})
    model_name = "hf-classifier"
    auto_class = "AutoModelForSequenceClassification"

    def _argmax(self, batch_ids: np.ndarray, features: list[dict[str, Any]]) -> list[int]:
        batch = self.to_device(self.tokenizer.pad([features[i] for i in batch_ids], return_tensors="pt"))
        best: list[int] = self.model(**batch).logits.float().argmax(dim=-1).tolist()
        return best

    def classify_pairs(self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str]) -> list[str]:
        names = output_labels(self.model.config.id2label, labels, self.owner)
        if not pairs:
            return []
        encoded = self.tokenizer(
            [a for a, _ in pairs], [b for _, b in pairs], truncation=True, max_length=self.max_length
        )
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
        features = [{k: encoded[k][i] for k in keys} for i in range(len(pairs))]
        outputs: list[str] = [""] * len(pairs)
        with self._torch.inference_mode():
            for batch_ids in self.batcher.plan([len(f["input_ids"]) for f in features]):
                best = self.batcher.run(batch_ids, lambda ids: self._argmax(ids, features))
                for i, index in zip(batch_ids, best):
                    outputs[int(i)] = names[index]
        return outputs
