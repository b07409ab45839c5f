"""The ``hf-generator`` model: a local causal or seq2seq checkpoint as a Generator.

* **Which model.** A folder (or a name in the local Hugging Face cache, as for every HF model)
  whose config says encoder-decoder loads as ``AutoModelForSeq2SeqLM`` (T5, mT5, mT0, BART),
  anything else as ``AutoModelForCausalLM`` (GPT-2, Llama, Qwen, Gemma, ...).
* **Prompt.** When the tokenizer has a chat template (an instruction-tuned checkpoint) the prompt
  is sent as the user's message with the assistant's turn opened (``chat=auto``; ``chat=off``
  sends the raw prompt); a causal model reads its prompts left-padded, so every row's next token
  sits at the same position, and a prompt too long for the model is cut from the left (the
  question is at the end).
* **Decoding.** Greedy, the KV cache on, ``max_new_tokens`` and the stop strings of the request.
  A row stops at its end-of-sequence token or when a stop string appears in its *answer*: the
  text after the reasoning end marker (``reasoning_end``, ``</think>`` by default) when the
  completion opened a ``<think>`` trace, so a newline inside a trace never ends it.
* **Log-probabilities.** Asked for, each generated token's log-probability under the raw logits
  (log-softmax, no sampling processors), with the text each token adds, so the harness can sum
  the answer's tokens (:func:`harness.generation.finish`).
* ``--device cuda`` computes in bfloat16 (float16 where bf16 is missing); the CPU in float32.

Requests come in batches the generation service (:mod:`harness.generation`) sorted by length.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from harness.errors import HarnessError
from harness.generation import REASONING_END, Completion, answer_start, finish, stop_position
from harness.model import ModelIdentity, Runtime
from harness.protocols import Generation, GenerationOptions, GenerationRequest, Generator

from harness_hf.checkpoint import CheckpointModel, Precision


class HFGenerator(CheckpointModel):
    """A :class:`~harness.protocols.Generator` over a local transformers checkpoint."""

    provides = frozenset({Generator})
    name = "hf-generator"

    def __init__(self, *, runtime: Runtime, path: Path, chat: Literal["auto", "on", "off"] = "auto",
                 reasoning_end: str = REASONING_END, precision: Precision = "auto", label: str | None = None) -> None:
        """``chat``: use the tokenizer's chat template (``auto``: when it has one); ``reasoning_end``:
        the marker after which the answer of a reasoning model begins."""
        super().__init__(runtime=runtime, path=path, precision=precision, label=label)
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if chat == "on" and not has_template:
            raise HarnessError(f"{self.owner}: chat=on, but the tokenizer of {self.path} has no chat template")
        self.chat = has_template if chat == "auto" else chat == "on"
        self.reasoning_end = reasoning_end
        self.seq2seq = bool(self.model.config.is_encoder_decoder)
        if self.tokenizer.pad_token is None:
            if self.tokenizer.eos_token is None:
                raise HarnessError(f"{self.owner}: the tokenizer of {self.path} has neither a padding nor an "
                                   "end-of-sequence token to pad batches with")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "right" if self.seq2seq else "left"
        self.tokenizer.truncation_side = "left"

    def load_tokenizer(self) -> Any:
        """The checkpoint's tokenizer; a folder without one is a one-line error."""
        try:
            return super().load_tokenizer()
        except (OSError, ValueError, TypeError):
            raise HarnessError(f"{self.owner}: {self.path} has no usable tokenizer (tokenizer.json, or the files "
                               "of a slow tokenizer, with tokenizer_config.json)") from None

    def load_model(self) -> Any:
        config = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
        self.auto_class = "AutoModelForSeq2SeqLM" if config.get("is_encoder_decoder") else "AutoModelForCausalLM"
        return super().load_model()

    def identity(self) -> ModelIdentity:
        return self.checkpoint_identity("hf-generator", {"chat": self.chat, "reasoning_end": self.reasoning_end})

    # -- prompts ------------------------------------------------------------------------------

    def model_input(self, prompt: str) -> str:
        """The text the model reads: the prompt, inside the chat template when one is used."""
        if not self.chat:
            return prompt
        return self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                  add_generation_prompt=True)

    def _room(self, options: GenerationOptions) -> int | None:
        """The most prompt tokens that leave room for the answer (None: the model has no limit)."""
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None)
        if limit is None:
            return None
        return max(1, limit - (0 if self.seq2seq else options.max_new_tokens))

    def _encode(self, prompts: Sequence[str], options: GenerationOptions, **kwargs: Any) -> Any:
        room = self._room(options)
        return self.tokenizer([self.model_input(p) for p in prompts], add_special_tokens=not self.chat,
                              truncation=room is not None, max_length=room, **kwargs)

    def prompt_lengths(self, prompts: Sequence[str]) -> list[int]:
        """Tokens of each prompt as the model reads it (for the service's length-sorted batches)."""
        return [len(ids) for ids in self._encode(prompts, GenerationOptions())["input_ids"]]

    # -- generation ---------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Requests of the same options in batches of ``batch_size``, in order."""
        out: list[Generation | None] = [None] * len(requests)
        groups: dict[GenerationOptions, list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(request.options, []).append(i)
        with self._torch.inference_mode():
            for options, positions in groups.items():
                for start in range(0, len(positions), self.batch_size):
                    part = positions[start : start + self.batch_size]
                    for i, generation in zip(part, self._batch([requests[i].prompt for i in part], options)):
                        out[i] = generation
        return [g for g in out if g is not None]

    def _batch(self, prompts: Sequence[str], options: GenerationOptions) -> list[Generation]:
        import transformers

        torch = self._torch
        batch = self.to_device(dict(self._encode(prompts, options, return_tensors="pt", padding=True)))
        offset = 1 if self.seq2seq else batch["input_ids"].shape[1]  # where generated tokens begin
        stop = _StopInAnswer(self.tokenizer, options.stop, self.reasoning_end, offset, len(prompts))
        output = self.model.generate(
            **batch, max_new_tokens=options.max_new_tokens, do_sample=False, num_beams=1, use_cache=True,
            temperature=None, top_p=None, top_k=None, stopping_criteria=transformers.StoppingCriteriaList([stop]) if options.stop else None,
            return_dict_in_generate=True,
            output_logits=options.logprobs, pad_token_id=self.tokenizer.pad_token_id)
        new = output.sequences[:, offset:].tolist()
        logprobs = None
        if options.logprobs:
            steps = torch.stack(output.logits, dim=1).float().log_softmax(-1)  # (batch, steps, vocab)
            chosen = torch.tensor([row + [0] * (steps.shape[1] - len(row)) for row in new], device=steps.device)
            logprobs = steps.gather(-1, chosen[:, : steps.shape[1], None]).squeeze(-1).tolist()
        prompt_tokens = batch["attention_mask"].sum(dim=1).tolist()
        out = []
        for row, ids in enumerate(new):
            ids = ids[: min(self._length(ids), stop.lengths[row])]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            pieces = self._pieces(ids) if options.logprobs else None
            out.append(finish(Completion(text, int(prompt_tokens[row]), len(ids), pieces,
                                         None if logprobs is None else logprobs[row][: len(ids)]),
                              options, self.reasoning_end))
        return out

    def _length(self, ids: Sequence[int]) -> int:
        """Generated tokens of one row: up to its end-of-sequence token (kept: its probability
        is the model's decision to stop), or to the padding after the row stopped."""
        eos = self.model.generation_config.eos_token_id
        ends = set(eos if isinstance(eos, list) else [eos]) - {None}
        pad = self.tokenizer.pad_token_id
        for i, token in enumerate(ids):
            if token in ends:
                return i + 1
            if token == pad:
                return i
        return len(ids)

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        """The text each token adds to the decoded completion. A character split over several
        byte-level tokens belongs to the token that completes it (the others add ""): each token
        ends where the decoding of the tokens up to it stops agreeing with the whole text."""
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        ends, end = [], 0
        for i in range(len(ids)):
            end = max(end, len(os.path.commonprefix([self.tokenizer.decode(ids[: i + 1], skip_special_tokens=True),
                                                     text])))
            ends.append(end)
        return [text[start:stop] for start, stop in zip([0, *ends[:-1]], ends)]


class _StopInAnswer:
    """A stopping criterion per row: a stop string in the row's answer (see the module docstring).
    ``lengths`` records how many tokens each row had generated when it stopped (the padding that
    follows may be the end-of-sequence token itself, so it cannot tell)."""

    def __init__(self, tokenizer: Any, stops: Sequence[str], reasoning_end: str, offset: int, rows: int) -> None:
        self.tokenizer, self.stops, self.reasoning_end, self.offset = tokenizer, stops, reasoning_end, offset
        self.lengths = [1 << 30] * rows

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        texts = self.tokenizer.batch_decode(input_ids[:, self.offset :], skip_special_tokens=True)
        done = []
        for row, text in enumerate(texts):
            start = answer_start(text, self.reasoning_end)
            done.append(start is not None and stop_position(text, self.stops, start) is not None)
            if done[-1]:
                self.lengths[row] = min(self.lengths[row], input_ids.shape[1] - self.offset)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
