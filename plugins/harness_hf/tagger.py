"""The ``hf-tagger`` model: a local token classification checkpoint
(``AutoModelForTokenClassification``) as a :class:`~harness.definitions.protocols.TokenTagger`, run as XTREME's
``run_tag.py`` runs it.

* Each word is cut into subwords alone (``tokenizer.tokenize(word)``); a word with no subword, or
  with more than fit in one input, becomes the unknown token (``utils_preprocess.py``).
* A sentence whose subwords do not fit in ``max_length`` (128, XTREME's) less the special tokens
  is cut, between words, into several inputs, each as full as fits (``panx_tokenize`` /
  ``udpos_tokenize``); each input is ``[CLS] subwords [SEP]``, with a second ``[SEP]`` for
  RoBERTa-type models (``sep_token_extra``), and all token type ids 0.
* A word's tag is the highest-scoring output at its *first* subword; output i means the task's
  tag :func:`harness_hf.heads.output_labels` gives it.
* The pieces of a sentence are joined back in order (``save_predictions`` with the ``.idx``
  file), so the answer has one tag per word of each sentence, as ``evaluate.py`` reads it.

Inputs go through the shared batching of every HF model (:class:`harness_hf.checkpoint.CheckpointModel`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.plugin import HarnessError, Runtime, TokenTagger
from harness_hf.checkpoint import FineTunedHead, Precision
from harness_hf.heads import output_labels

#: Model types XTREME gives a second separator (``sep_token_extra`` in ``run_tag.py``).
EXTRA_SEPARATOR = ("roberta", "xlm-roberta")


@dataclass(frozen=True)
class _Piece:
    """One model input: a run of words of one sentence, and where each word's first subword sits."""

    sentence: int
    input_ids: list[int]
    first_subwords: list[int]


class HFTagger(FineTunedHead):
    """Tags words with a fine-tuned token classification head, first subword per word."""

    provides = frozenset({TokenTagger})
    model_name = "hf-tagger"
    auto_class = "AutoModelForTokenClassification"

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        max_length: int = 128,
        precision: Precision = "auto",
        label: str | None = None,
    ) -> None:
        super().__init__(runtime=runtime, path=path, max_length=max_length, precision=precision, label=label)
        tokenizer = self.tokenizer
        if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None or tokenizer.unk_token_id is None:
            raise HarnessError(f"{self.owner}: {self.path}'s tokenizer has no CLS, SEP or UNK token")
        self.extra_separator = self.model.config.model_type in EXTRA_SEPARATOR
        #: Subwords that fit in one input beside [CLS] and [SEP] (and the extra [SEP]).
        self.room = max_length - (3 if self.extra_separator else 2)
        if self.room < 1:
            raise HarnessError(f"{self.owner}: max_length {max_length} leaves no room for words")

    def _subwords(self, words: list[str]) -> list[list[int]]:
        """Each word's subword ids, tokenised alone; the unknown token where there are none or too many."""
        encoded = self.tokenizer(words, add_special_tokens=False)["input_ids"] if words else []
        unknown = [self.tokenizer.unk_token_id]
        return [ids if 0 < len(ids) <= self.room else unknown for ids in encoded]

    def _pieces(self, sentences: Sequence[Sequence[str]]) -> list[_Piece]:
        words = [word for sentence in sentences for word in sentence]
        subwords = iter(self._subwords(words))
        head = [self.tokenizer.cls_token_id]
        tail = [self.tokenizer.sep_token_id] * (2 if self.extra_separator else 1)
        pieces = []
        for number, sentence in enumerate(sentences):
            ids: list[int] = []
            firsts: list[int] = []
            for _ in sentence:
                word = next(subwords)
                if firsts and len(ids) + len(word) > self.room:
                    pieces.append(_Piece(number, head + ids + tail, firsts))
                    ids, firsts = [], []
                firsts.append(len(head) + len(ids))
                ids.extend(word)
            pieces.append(_Piece(number, head + ids + tail, firsts))
        return pieces

    def _tag_pieces(self, batch_ids: np.ndarray, pieces: list[_Piece]) -> list[list[int]]:
        batch = self.to_device(
            self.tokenizer.pad([{"input_ids": pieces[i].input_ids} for i in batch_ids], return_tensors="pt")
        )
        best = self.model(**batch).logits.float().argmax(dim=-1).tolist()
        return [[row[position] for position in pieces[i].first_subwords] for i, row in zip(batch_ids, best)]

    def tag(self, sentences: Sequence[Sequence[str]], *, labels: Sequence[str]) -> list[list[str]]:
        names = output_labels(self.model.config.id2label, labels, self.owner)
        pieces = self._pieces(sentences)
        tags: list[list[int]] = [[] for _ in pieces]
        with self._torch.inference_mode():
            for batch_ids in self.batcher.plan([len(piece.input_ids) for piece in pieces]):
                for i, indices in zip(
                    batch_ids, self.batcher.run(batch_ids, lambda ids: self._tag_pieces(ids, pieces))
                ):
                    tags[int(i)] = indices
        out: list[list[str]] = [[] for _ in sentences]
        for piece, indices in zip(pieces, tags):  # pieces are in sentence order: join them back
            out[piece.sentence].extend(names[index] for index in indices)
        return out
