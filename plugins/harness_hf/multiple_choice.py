"""The ``hf-multiple-choice`` model: a local multiple-choice checkpoint
(``AutoModelForMultipleChoice``) as a :class:`~harness.definitions.protocols.MultipleChoice`.

Each question's candidates are encoded as XTREME-R's ``run_xcopa.py`` encodes them: the question's
text paired with each candidate through the tokenizer's pair template, cut longest-first to
``max_length`` tokens; the model scores every pair and the candidate with the highest score is
chosen (the first on a tie, as ``np.argmax``). Questions go through the shared batching of every
HF model (:class:`harness_hf.checkpoint.CheckpointModel`), those with as many candidates together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.plugin import HarnessError, MultipleChoice
from harness_hf.checkpoint import FineTunedHead


class HFMultipleChoice(FineTunedHead):
    """Chooses among candidates with a fine-tuned multiple-choice head."""

    provides = frozenset({MultipleChoice})
    model_name = "hf-multiple-choice"
    auto_class = "AutoModelForMultipleChoice"

    def _argmax(self, batch_ids: np.ndarray, features: list[list[dict[str, Any]]]) -> list[int]:
        """The best candidate of each question in the batch: the flattened pairs padded together,
        shaped (questions, candidates, tokens) as the head expects."""
        flat = [pair for i in batch_ids for pair in features[i]]
        batch = self.tokenizer.pad(flat, return_tensors="pt")
        choices = len(features[batch_ids[0]])
        batch = self.to_device({k: v.view(len(batch_ids), choices, -1) for k, v in batch.items()})
        best: list[int] = self.model(**batch).logits.float().argmax(dim=-1).tolist()
        return best

    def choose(self, questions: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
        if any(not candidates for _, candidates in questions):
            raise HarnessError(f"{self.owner}: a question without candidates")
        firsts = [text for text, candidates in questions for _ in candidates]
        seconds = [candidate for _, candidates in questions for candidate in candidates]
        encoded = self.tokenizer(firsts, seconds, truncation=True, max_length=self.max_length)
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
        features: list[list[dict[str, Any]]] = []
        position = 0
        for _, candidates in questions:
            features.append([{k: encoded[k][position + j] for k in keys} for j in range(len(candidates))])
            position += len(candidates)
        chosen = [0] * len(questions)
        by_count: dict[int, list[int]] = {}
        for i, (_, candidates) in enumerate(questions):
            by_count.setdefault(len(candidates), []).append(i)
        with self._torch.inference_mode():
            for members in by_count.values():  # one tensor shape per batch: questions with as many candidates
                lengths = [max(len(pair["input_ids"]) for pair in features[i]) for i in members]
                for batch in self.batcher.plan(lengths):
                    ids = [members[int(j)] for j in batch]
                    for i, best in zip(ids, self.batcher.run(np.array(ids), lambda part: self._argmax(part, features))):
                        chosen[i] = best
        return chosen
