"""The ``hf-generator`` model: a local causal or seq2seq checkpoint as a Generator and a LoglikelihoodScorer.

* **Which model.** A folder (or a name in the local Hugging Face cache, as for every HF model)
  whose config says encoder-decoder loads as ``AutoModelForSeq2SeqLM`` (T5, mT5, mT0, BART),
  anything else as ``AutoModelForCausalLM`` (GPT-2, Llama, Qwen, Gemma, ...). A GGUF file
  (``path=FILE.gguf``, or a folder holding one) is dequantised once into the model cache
  (:mod:`harness_hf.gguf`); the packaged models (:mod:`harness_hf.packaged`) are GGUF files too.
* **Prompt.** When the tokenizer has a chat template (an instruction-tuned checkpoint) the prompt
  is sent as the user's message, after the request's system prompt if it has one, with the
  assistant's turn opened (``chat=auto``; ``chat=off`` sends the raw prompt, a system prompt then
  going before it and a blank line); a causal model reads its prompts left-padded, so every row's
  next token sits at the same position, and a prompt too long for the model is cut from the left
  (the question is at the end).
* **Decoding.** The KV cache on; the prefill computes the output layer at the last position only
  (``generate`` passes ``logits_to_keep=1``: Gemma 3's 262k-word output layer is most of its
  work). Greedy while ``temperature`` is 0; above it each row draws from its own random stream,
  seeded by the request's ``seed``, after temperature and top-p, so a sample does not depend on
  the batch the request landed in. A row ends at its end-of-sequence token (``ended="eos"``),
  at a stop string in its *answer* (``"stop"``: the text after the reasoning end marker,
  ``reasoning_end``, ``</think>`` by default, when the completion opened a ``<think>`` trace, so
  a newline inside a trace never ends it), or at its budget (``"length"``): ``max_new_tokens``
  for the answer; with ``reasoning_tokens`` the trace has that many tokens of its own before the
  answer's begin, and a trace still open when they are spent ends the row (no answer,
  ``trace_open``).
* **Log-probabilities.** Asked for, each generated token's log-probability under the raw logits
  (log-softmax, no sampling processors), with the text each token adds, so the harness can sum
  the answer's tokens (:func:`harness.models.generation.finish`).
* **Log-likelihood** (:meth:`HFGenerator.loglikelihood`): a continuation scored after its
  context, the context read exactly as a generation prompt is, tokenised as lm-evaluation-harness
  does (white space at the end of the context moves to the continuation; the continuation's
  tokens are those of context + continuation after the context's), in length-sorted batches.
* ``--device cuda`` computes in bfloat16 (float16 where bf16 is missing); the CPU in float32
  unless ``precision=bfloat16`` (the packaged models choose bf16 where the CPU has it natively).

Requests come in batches the generation service (:mod:`harness.models.generation`) sorted by length.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.plugin import (
    Generation,
    GenerationOptions,
    GenerationRequest,
    Generator,
    HarnessError,
    Loglikelihood,
    LoglikelihoodRequest,
    LoglikelihoodScorer,
    ModelIdentity,
    Runtime,
)
from harness.plugin.services import (
    REASONING_END,
    REASONING_START,
    Completion,
    answer_start,
    default_root,
    finish,
    stop_position,
)
from harness_hf.checkpoint import CheckpointModel, Precision
from harness_hf.gguf import DEQUANTISED, GGUFFacts, find_gguf, gguf_checkpoint


class HFGenerator(CheckpointModel):
    """A :class:`~harness.definitions.protocols.Generator` and :class:`~harness.definitions.protocols.LoglikelihoodScorer`
    over a local transformers checkpoint (or a GGUF file)."""

    provides = frozenset({Generator, LoglikelihoodScorer})
    name = "hf-generator"

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        chat: Literal["auto", "on", "off"] = "auto",
        reasoning_end: str = REASONING_END,
        precision: Precision = "auto",
        label: str | None = None,
        cpu_auto: str = "float32",
    ) -> None:
        """``chat``: use the tokenizer's chat template (``auto``: when it has one); ``reasoning_end``:
        the marker after which the answer of a reasoning model begins; ``cpu_auto``: what
        ``precision=auto`` means on a CPU (a packaged model checked in bf16 passes ``bfloat16``)."""
        owner = f"model {self.name or type(self).__name__}"
        source = find_gguf(path, owner)
        if source is not None:
            label = label or source.name
            path = gguf_checkpoint(source, runtime.cache_dir or default_root(), owner)
        super().__init__(runtime=runtime, path=path, precision=precision, label=label, cpu_auto=cpu_auto)
        #: The GGUF file the checkpoint was dequantised from, when it was (None: a plain checkpoint).
        self.gguf = GGUFFacts.read(self.path)
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if chat == "on" and not has_template:
            raise HarnessError(f"{self.owner}: chat=on, but the tokenizer of {self.path} has no chat template")
        self.chat = has_template if chat == "auto" else chat == "on"
        self.reasoning_end = reasoning_end
        self.seq2seq = bool(self.model.config.is_encoder_decoder)
        if self.tokenizer.pad_token is None:
            if self.tokenizer.eos_token is None:
                raise HarnessError(
                    f"{self.owner}: the tokenizer of {self.path} has neither a padding nor an "
                    "end-of-sequence token to pad batches with"
                )
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "right" if self.seq2seq else "left"
        self.tokenizer.truncation_side = "left"
        eos = self.model.generation_config.eos_token_id
        self.eos_ids = frozenset(eos if isinstance(eos, list) else [eos]) - {None}

    def load_tokenizer(self) -> Any:
        """The checkpoint's tokenizer; a folder without one is a one-line error."""
        try:
            return super().load_tokenizer()
        except (OSError, ValueError, TypeError):
            raise HarnessError(
                f"{self.owner}: {self.path} has no usable tokenizer (tokenizer.json, or the files "
                "of a slow tokenizer, with tokenizer_config.json)"
            ) from None

    def load_model(self) -> Any:
        config = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
        self.auto_class = "AutoModelForSeq2SeqLM" if config.get("is_encoder_decoder") else "AutoModelForCausalLM"
        return super().load_model()

    def identity(self) -> ModelIdentity:
        identity = self.checkpoint_identity("hf-generator", {"chat": self.chat, "reasoning_end": self.reasoning_end})
        if self.gguf is None:
            return identity
        # the GGUF file is the weights; the dequantised folder is a cache of it (hashing its 0.5-1 GB
        # of safetensors at every start would also cost seconds)
        return ModelIdentity(
            name=identity.name,
            label=identity.label,
            weights=self.gguf.digest,
            options={**identity.options, "dequantised": DEQUANTISED},
            details={
                **identity.details,
                "gguf": {
                    "file": self.gguf.file,
                    "quantisation": self.gguf.quantisation,
                    "architecture": self.gguf.architecture,
                },
            },
        )

    # -- prompts ------------------------------------------------------------------------------

    def model_input(self, prompt: str, system: str | None = None) -> str:
        """The text the model reads: the prompt inside the chat template, after the system prompt,
        when one is used; without a template the system prompt goes before the prompt, a blank
        line between."""
        if not self.chat:
            return prompt if system is None else f"{system}\n\n{prompt}"
        messages = ([{"role": "system", "content": system}] if system is not None else []) + [
            {"role": "user", "content": prompt}
        ]
        text: str = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return text

    def _room(self, new_tokens: int) -> int | None:
        """The most prompt tokens that leave room for ``new_tokens`` (None: the model has no limit)."""
        limit: int | None = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None
        )
        if limit is None:
            return None
        return max(1, limit - (0 if self.seq2seq else new_tokens))

    def _encode(self, prompts: Sequence[str], options: GenerationOptions, **kwargs: Any) -> Any:
        room = self._room(options.budget)
        return self.tokenizer(
            [self.model_input(p, options.system) for p in prompts],
            add_special_tokens=not self.chat,
            truncation=room is not None,
            max_length=room,
            **kwargs,
        )

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
        rows = _RowEnds(self.tokenizer, options, self.reasoning_end, offset, len(prompts))
        watched = bool(options.stop) or options.reasoning_tokens > 0
        sampling = options.temperature > 0
        output = self.model.generate(
            **batch,
            max_new_tokens=options.budget,
            do_sample=False,
            num_beams=1,
            use_cache=True,
            temperature=None,
            top_p=None,
            top_k=None,
            logits_processor=transformers.LogitsProcessorList([_RowSampler(options, len(prompts))])
            if sampling
            else None,
            stopping_criteria=transformers.StoppingCriteriaList([rows]) if watched else None,
            return_dict_in_generate=True,
            output_logits=options.logprobs,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        new = output.sequences[:, offset:].tolist()
        logprobs = None
        if options.logprobs:
            steps = torch.stack(output.logits, dim=1).float().log_softmax(-1)  # (batch, steps, vocab)
            chosen = torch.tensor([row + [0] * (steps.shape[1] - len(row)) for row in new], device=steps.device)
            logprobs = steps.gather(-1, chosen[:, : steps.shape[1], None]).squeeze(-1).tolist()
        prompt_tokens = batch["attention_mask"].sum(dim=1).tolist()
        out = []
        for row, ids in enumerate(new):
            length = self._length(ids)
            ended = "eos" if length and ids[length - 1] in self.eos_ids else "length"
            end = rows.ends[row]  # ended by a stop string or a budget, unless its last token was EOS
            if end is not None and (end.tokens < length or (end.tokens == length and ended != "eos")):
                length, ended = end.tokens, end.reason
            ids = ids[:length]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            pieces = self._pieces(ids) if options.logprobs else None
            out.append(
                finish(
                    Completion(
                        text,
                        int(prompt_tokens[row]),
                        len(ids),
                        pieces,
                        None if logprobs is None else logprobs[row][: len(ids)],
                        ended,
                    ),
                    options,
                    self.reasoning_end,
                )
            )
        return out

    def _length(self, ids: Sequence[int]) -> int:
        """Generated tokens of one row: up to its end-of-sequence token (kept: its probability
        is the model's decision to stop), or to the padding after the row stopped."""
        pad = self.tokenizer.pad_token_id
        for i, token in enumerate(ids):
            if token in self.eos_ids:
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
            decoded = self.tokenizer.decode(ids[: i + 1], skip_special_tokens=True)
            end = max(end, len(os.path.commonprefix([decoded, text])))  # noqa: RUF071 (a prefix of characters is meant)
            ends.append(end)
        return [text[start:stop] for start, stop in zip([0, *ends[:-1]], ends)]

    # -- log-likelihood -----------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Each continuation's summed log-probability after its context, in length-sorted batches
        of ``batch_size`` (left-padded, so every row's continuation ends at the last position and
        the output layer runs on the last positions only); in order."""
        if self.seq2seq:
            raise HarnessError(
                f"{self.owner}: log-likelihood scoring is implemented for causal language models; "
                f"{self.path} is an encoder-decoder"
            )
        pairs = [self._pair(request) for request in requests]
        order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))
        out: list[Loglikelihood | None] = [None] * len(pairs)
        with self._torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                part = order[start : start + self.batch_size]
                for i, score in zip(part, self._score([pairs[i] for i in part])):
                    out[i] = score
        return [score for score in out if score is not None]

    def _pair(self, request: LoglikelihoodRequest) -> tuple[list[int], list[int]]:
        """(context, continuation) token ids as lm-evaluation-harness makes them: white space at the
        end of the context belongs to the continuation, and the continuation's tokens are those of
        the whole text after the context's (so a word split differently when joined is scored as
        the model reads it); an empty context is the end-of-sequence (or beginning) token; the
        context is cut from the left to fit the model."""
        # an empty context stays empty (the start token below), also inside a chat template
        context = self.model_input(request.context, request.system) if request.context or request.system else ""
        continuation = request.continuation
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation

        def encode(text: str) -> list[int]:
            ids: list[int] = self.tokenizer(text, add_special_tokens=not self.chat)["input_ids"]
            return ids

        if not continuation:
            raise HarnessError(f"{self.owner}: a log-likelihood request has an empty continuation")
        if context:
            head = encode(context)
            tail = encode(context + continuation)[len(head) :]
        else:
            start = self.tokenizer.bos_token_id
            head = [self.tokenizer.eos_token_id if start is None else start]
            tail = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
        room = self._room(0)
        if room is not None and len(head) + len(tail) > room:
            head = head[len(head) + len(tail) - room :]
        return head, tail

    def _score(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[Loglikelihood]:
        torch = self._torch
        width = max(len(head) + len(tail) for head, tail in pairs)
        keep = max(len(tail) for _, tail in pairs) + 1
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(pairs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(pairs), width), dtype=torch.long)
        for row, (head, tail) in enumerate(pairs):
            tokens = head + tail
            ids[row, width - len(tokens) :] = torch.tensor(tokens)
            mask[row, width - len(tokens) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        batch = self.to_device({"input_ids": ids, "attention_mask": mask, "position_ids": positions})
        logits = self.model(**batch, logits_to_keep=keep, use_cache=False).logits  # (rows, keep, vocab)
        out = []
        for row, (_, tail) in enumerate(pairs):
            # the last len(tail) positions before the final one predict the continuation's tokens;
            # one row at a time in float32, so a 262k-word vocabulary never doubles the batch's logits
            scores = logits[row, keep - 1 - len(tail) : keep - 1].float().log_softmax(-1)
            target = torch.tensor(tail, device=scores.device)
            chosen = scores.gather(-1, target[:, None]).squeeze(-1)
            out.append(Loglikelihood(float(chosen.sum()), len(tail), bool((scores.argmax(-1) == target).all())))
        return out


@dataclass
class _End:
    """Why and after how many generated tokens a row was ended by :class:`_RowEnds`."""

    tokens: int
    reason: str


class _RowEnds:
    """A stopping criterion per row (see the module docstring): a stop string in the row's
    answer, the answer's budget counted from where its trace closed, the trace's own budget.
    ``ends`` records where and why each row ended (the padding that follows may be the
    end-of-sequence token itself, so the output cannot tell)."""

    def __init__(self, tokenizer: Any, options: GenerationOptions, reasoning_end: str, offset: int, rows: int) -> None:
        self.tokenizer, self.options, self.reasoning_end, self.offset = tokenizer, options, reasoning_end, offset
        self.ends: list[_End | None] = [None] * rows
        #: Generated tokens when each row's trace was first seen closed (None: not yet, or no trace).
        self.closed_at: list[int | None] = [None] * rows

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        options, generated = self.options, input_ids.shape[1] - self.offset
        # the rows' tokens cross to the host in one copy a step: a copy per row on a GPU waits on
        # the device once per row
        tails = input_ids[:, self.offset :].tolist() if None in self.ends else []
        for row, tail in enumerate(tails):
            if self.ends[row] is None:
                self.ends[row] = self._check(row, tail, generated, options)
        done = [end is not None for end in self.ends]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    def _check(self, row: int, ids: list[int], generated: int, options: GenerationOptions) -> _End | None:
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        start = answer_start(text, self.reasoning_end)
        opening = text.strip() != "" and REASONING_START.startswith(text.lstrip())  # "<th": may open a trace
        if start is None or opening:
            trace_budget = options.reasoning_tokens or options.max_new_tokens
            return _End(generated, "length") if generated >= trace_budget else None
        if start > 0 and self.closed_at[row] is None:
            self.closed_at[row] = generated
        if stop_position(text, options.stop, start) is not None:
            return _End(generated, "stop")
        # with a budget of its own the trace's tokens do not count against the answer's
        trace = (self.closed_at[row] or 0) if options.reasoning_tokens > 0 else 0
        answer_budget = options.max_new_tokens + trace
        return _End(generated, "length") if generated >= answer_budget else None


class _RowSampler:
    """Sampling with a random stream per row, seeded by the request's ``seed``: each row's logits
    are scaled by the temperature, cut to the top-p nucleus, and one token drawn; the processor
    then leaves only that token possible, so ``generate``'s greedy step takes it. A row's sample
    thus depends on its prompt and seed, never on the rows batched with it."""

    def __init__(self, options: GenerationOptions, rows: int) -> None:
        import torch

        self.temperature, self.top_p = options.temperature, options.top_p
        self.streams = [torch.Generator().manual_seed(options.seed) for _ in range(rows)]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probs = (scores.float() / self.temperature).softmax(-1)
        if self.top_p < 1:
            ordered, index = probs.sort(dim=-1, descending=True)
            outside = ordered.cumsum(-1) - ordered >= self.top_p  # the most probable token always stays
            probs = probs.scatter(-1, index, ordered.masked_fill(outside, 0.0))
        chosen = [
            int(torch.multinomial(probs[row].cpu(), 1, generator=self.streams[row])) for row in range(probs.shape[0])
        ]
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(len(chosen)), torch.tensor(chosen, device=scores.device)] = 0.0
        return out
