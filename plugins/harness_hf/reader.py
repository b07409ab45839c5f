"""The ``hf-reader`` model: any local extractive QA checkpoint (``AutoModelForQuestionAnswering``).

How an answer is found (the standard SQuAD recipe of BERT and ``transformers``' ``run_qa.py``):

* the question (cut to ``max_question_length`` tokens) and the context are encoded as one pair;
  a context longer than ``max_length`` is cut into overlapping windows that share ``stride``
  tokens, so every answer lies whole in some window;
* in each window the ``n_best`` highest start and end logits over *context* tokens are paired;
  a pair is valid when the end is not before the start and the span has at most
  ``max_answer_length`` tokens; its score is start logit + end logit;
* the best valid span over all windows of a question wins; its text is cut from the original
  context through the tokenizer's character offsets, so it is exactly a substring of the
  context (original case, accents and spacing);
* ``no_answer_score`` is the smallest first-token ([CLS]) score start + end over the windows
  (as ``run_qa.py`` computes its null score), for tasks that let a reader abstain.

Windows are sorted by length and batched so padding stays small (``harness.models.batching``: the same
batching as the encoders, halving a batch that runs out of GPU memory); on a GPU the model runs in
bfloat16 (float16 where bf16 is unsupported) unless ``precision`` says otherwise. A fast tokenizer
is required (it provides the offsets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import HarnessError, ModelIdentity, Reader, ReadingExample, Runtime, SpanAnswer
from harness_hf.checkpoint import CheckpointModel, Precision


@dataclass
class _Window:
    """One encoded window of one question's context."""

    example: int
    features: dict[str, list[int]]
    offsets: list[tuple[int, int]]
    in_context: list[bool]
    cls_index: int


class HFReader(CheckpointModel):
    """A :class:`~harness.definitions.protocols.Reader` over ``AutoModelForQuestionAnswering`` from a folder."""

    provides = frozenset({Reader})

    auto_class = "AutoModelForQuestionAnswering"

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        max_length: int = 384,
        stride: int = 128,
        max_question_length: int = 64,
        n_best: int = 20,
        max_answer_length: int = 30,
        precision: Precision = "auto",
        label: str | None = None,
    ) -> None:
        owner = "model hf-reader"
        room = max_length - max_question_length - 3  # context tokens in a window with the longest question
        if not 0 <= stride < room:
            raise HarnessError(
                f"{owner}: stride must be at least 0 and less than the context room of a window, "
                f"max_length - max_question_length - 3 special tokens = {room}; got {stride}"
            )
        if n_best < 1 or max_answer_length < 1:
            raise HarnessError(f"{owner}: n_best and max_answer_length must be at least 1")
        super().__init__(runtime=runtime, path=path, precision=precision, label=label)
        self.max_length, self.stride, self.max_question_length = max_length, stride, max_question_length
        self.n_best, self.max_answer_length = n_best, max_answer_length
        if not self.tokenizer.is_fast:
            raise HarnessError(
                f"{owner}: {self.path} has no fast tokenizer (tokenizer.json); answers are mapped "
                "back to the context through a fast tokenizer's character offsets"
            )
        # Models padded on the left (XLNet) read the context first, as run_qa.py does.
        self.question_first = self.tokenizer.padding_side == "right"

    def identity(self) -> ModelIdentity:
        return self.checkpoint_identity(
            "hf-reader",
            {
                "max_length": self.max_length,
                "stride": self.stride,
                "max_question_length": self.max_question_length,
                "n_best": self.n_best,
                "max_answer_length": self.max_answer_length,
            },
        )

    # -- encoding -----------------------------------------------------------------------------

    def _questions(self, examples: Sequence[ReadingExample]) -> list[str]:
        """Questions without leading white space, cut after ``max_question_length`` tokens (at the
        end of the last kept token, so the text stays a clean prefix)."""
        questions = [example.question.lstrip() for example in examples]
        encoded = self.tokenizer(questions, add_special_tokens=False, return_offsets_mapping=True)
        return [
            q if len(offsets) <= self.max_question_length else q[: offsets[self.max_question_length - 1][1]]
            for q, offsets in zip(questions, encoded["offset_mapping"])
        ]

    def _windows(self, examples: Sequence[ReadingExample]) -> list[_Window]:
        questions = self._questions(examples)
        contexts = [example.context for example in examples]
        first, second = (questions, contexts) if self.question_first else (contexts, questions)
        encoded = self.tokenizer(
            first,
            second,
            truncation="only_second" if self.question_first else "only_first",
            max_length=self.max_length,
            stride=self.stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=False,
        )
        context_sequence = 1 if self.question_first else 0
        keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
        cls_id = self.tokenizer.cls_token_id
        windows = []
        for i, example in enumerate(encoded["overflow_to_sample_mapping"]):
            ids = encoded["input_ids"][i]
            in_context = [s == context_sequence for s in encoded.sequence_ids(i)]
            windows.append(
                _Window(
                    example=example,
                    features={k: encoded[k][i] for k in keys},
                    offsets=[tuple(o) for o in encoded["offset_mapping"][i]],
                    in_context=in_context,
                    cls_index=ids.index(cls_id) if cls_id in ids else 0,
                )
            )
        return windows

    # -- span search --------------------------------------------------------------------------

    def _best_spans(self, start: Any, end: Any, in_context: Any) -> tuple[Any, Any, Any]:
        """Per window (rows): the best valid (start, end) token pair among the ``n_best`` start and
        end candidates in the context, and its score (-inf when no pair is valid)."""
        torch = self._torch
        start = start.masked_fill(~in_context, float("-inf"))
        end = end.masked_fill(~in_context, float("-inf"))
        k = min(self.n_best, start.shape[1])
        start_score, start_index = start.topk(k, dim=1)
        end_score, end_index = end.topk(k, dim=1)
        score = start_score[:, :, None] + end_score[:, None, :]
        length = end_index[:, None, :] - start_index[:, :, None]
        valid = (length >= 0) & (length < self.max_answer_length) & torch.isfinite(score)
        best_score, flat = score.masked_fill(~valid, float("-inf")).flatten(1).max(dim=1)
        rows = torch.arange(start.shape[0], device=start.device)
        return best_score, start_index[rows, flat // k], end_index[rows, flat % k]

    def _score_windows(self, batch_ids: np.ndarray, windows: list[_Window]) -> list[tuple[int, float, int, int, float]]:
        """(window, best span score, first token, last token, null score) for one batch of windows."""
        torch = self._torch
        batch = self.to_device(self.tokenizer.pad([windows[i].features for i in batch_ids], return_tensors="pt"))
        output = self.model(**batch)
        start, end = output.start_logits.float(), output.end_logits.float()
        width = start.shape[1]
        in_context = torch.tensor(
            [windows[i].in_context + [False] * (width - len(windows[i].in_context)) for i in batch_ids],
            device=start.device,
        )
        rows = torch.arange(len(batch_ids), device=start.device)
        cls = torch.tensor([windows[i].cls_index for i in batch_ids], device=start.device)
        null_scores = (start[rows, cls] + end[rows, cls]).tolist()
        scores, firsts, lasts = (t.tolist() for t in self._best_spans(start, end, in_context))
        return list(zip(batch_ids, scores, firsts, lasts, null_scores))

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        windows = self._windows(examples)
        best: list[tuple[float, int, int, int] | None] = [None] * len(examples)  # score, window, start, end token
        null = [float("inf")] * len(examples)
        with self._torch.inference_mode():
            for batch_ids in self.batcher.plan([len(w.features["input_ids"]) for w in windows]):
                scored = self.batcher.run(batch_ids, lambda ids: self._score_windows(ids, windows))
                for i, score, first, last, null_score in scored:
                    example = windows[i].example
                    null[example] = min(null[example], null_score)
                    current = best[example]
                    if score > float("-inf") and (current is None or score > current[0]):
                        best[example] = (score, int(i), first, last)
        answers = []
        for reading, found, null_score in zip(examples, best, null):
            if found is None:  # no valid span in any window
                answers.append(SpanAnswer("", -1, float("-inf"), null_score))
                continue
            score, window, first, last = found
            char_start, char_end = windows[window].offsets[first][0], windows[window].offsets[last][1]
            answers.append(SpanAnswer(reading.context[char_start:char_end], char_start, score, null_score))
        return answers
