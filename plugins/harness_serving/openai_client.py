"""The ``openai-compatible`` model: a generator behind a local OpenAI-compatible HTTP server.

vLLM (``vllm serve``), SGLang and llama.cpp's ``llama-server`` serve the OpenAI API; this client
sends each request to ``{url}/chat/completions`` (the server applies the model's chat template;
the request's system prompt is the system message) or ``{url}/completions`` (the prompt as it is,
after the system prompt and a blank line), ``concurrency`` requests at a time (a server batches
what arrives together). Greedy (``temperature`` 0) unless the request samples (``temperature``,
``top_p``, ``seed`` sent as they are). A connection error or an HTTP 408/429/5xx answer is
retried ``retries`` times with doubling waits; a server that is not there is one line, said
before any work (``GET /models``).

Reasoning models: the server is asked for the whole budget (``max_tokens`` = the trace's budget
and the answer's: the server cannot tell them apart) and is sent **no stop strings**: a server
applies them to the whole text, so a template's ``"\n"`` would end a trace, or fire on the blank
line right after ``</think>``, and leave no answer. The harness cuts the answer at its stop
strings itself (:func:`harness.models.generation.finish`), after the trace, as for every generator.
``server_stop=true`` sends them to the server as well: fewer tokens for a model that never
writes a trace, wrong answers for one that does. A ``reasoning_content`` field (vLLM's reasoning
parsers) is the trace; otherwise a ``<think>`` trace in the text is split off. The server's
``finish_reason`` says why a reply ended (``length``: the budget ran out), kept with the answer.

Log-probabilities, when asked for, are the server's per-token ones; with the stop strings cut
here, the answer's probability includes that of the stop string's token, as ``hf-generator``'s
does (with ``server_stop`` the server cuts the stop string off, and with it that probability).

Log-likelihood (the choice tasks, and MKQA's No-Answer probability where the server's completions
carry no log-probabilities): ``endpoint=completions`` only, the prompt echoed with its tokens'
log-probabilities, as lm-evaluation-harness's ``local-completions`` asks (see
:meth:`OpenAICompatible.loglikelihood`); a chat endpoint, or a server that echoes none, is one line.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from harness.plugin import (
    Generation,
    GenerationRequest,
    Generator,
    HarnessError,
    Loglikelihood,
    LoglikelihoodRequest,
    LoglikelihoodScorer,
    Model,
    ModelIdentity,
    Runtime,
)
from harness.plugin.services import REASONING_END, REASONING_START, Completion, finish

OWNER = "model openai-compatible"
#: HTTP statuses worth trying again: the server is busy, restarting or overloaded.
TRANSIENT = frozenset({408, 429, 500, 502, 503, 504})


class OpenAICompatible(Model):
    """A :class:`~harness.definitions.protocols.Generator` over an OpenAI-compatible server, and a
    :class:`~harness.definitions.protocols.LoglikelihoodScorer` on its completions endpoint."""

    provides = frozenset({Generator, LoglikelihoodScorer})

    def __init__(
        self,
        *,
        runtime: Runtime,
        model: str,
        url: str = "http://127.0.0.1:8000/v1",
        endpoint: Literal["chat", "completions"] = "chat",
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 300.0,
        reasoning_end: str = REASONING_END,
        server_stop: bool = False,
        label: str | None = None,
    ) -> None:
        """``model``: the served model's name; ``url``: the API root; ``endpoint``: chat (the server's
        chat template) or completions (the raw prompt); ``concurrency``: requests in flight;
        ``retries``: tries after a transient failure; ``timeout``: seconds per request;
        ``server_stop``: send the stop strings to the server too (only for a model that never
        writes a reasoning trace: see the module docstring)."""
        if concurrency < 1 or retries < 0 or timeout <= 0:
            raise HarnessError(f"{OWNER}: concurrency must be at least 1, retries 0 or more, timeout positive")
        self.runtime = runtime
        self.model, self.url, self.endpoint = model, url.rstrip("/"), endpoint
        self.concurrency, self.retries, self.timeout = concurrency, retries, timeout
        self.reasoning_end, self.server_stop, self.label = reasoning_end, server_stop, label
        self.batch_size = concurrency * 4  # what the service hands over at once: enough to keep the server busy
        served = [item.get("id") for item in self._call("GET", "/models").get("data", [])]
        if served and model not in served:
            raise HarnessError(f"{OWNER}: the server at {self.url} serves {', '.join(map(str, served))}, not '{model}'")

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name=self.name or "openai-compatible",
            label=self.label or self.model,
            weights=None,
            options={
                "model": self.model,
                "endpoint": self.endpoint,
                "reasoning_end": self.reasoning_end,
                **({"server_stop": True} if self.server_stop else {}),
            },
            details={"url": self.url, "concurrency": self.concurrency},
        )

    # -- HTTP ---------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request, retried on transient failures; a one-line error otherwise."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(
                self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    reply: dict[str, Any] = json.loads(response.read().decode("utf-8"))  # the API answers objects
                    return reply
            except urllib.error.HTTPError as error:
                if error.code not in TRANSIENT or attempt == self.retries:
                    detail = error.read().decode("utf-8", errors="replace").strip().replace("\n", " ")[:200]
                    raise HarnessError(
                        f"{OWNER}: {method} {self.url}{path} answered HTTP {error.code}"
                        f"{': ' + detail if detail else ''}"
                    ) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
                if attempt == self.retries:
                    reason = getattr(error, "reason", error)
                    raise HarnessError(
                        f"{OWNER}: no server answers at {self.url} ({reason}); start it "
                        "(e.g. vllm serve MODEL) or pass url=..."
                    ) from None
            except ValueError:
                raise HarnessError(f"{OWNER}: {self.url}{path} did not answer JSON") from None
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")

    # -- Generator ----------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: GenerationRequest) -> Generation:
        options = request.options
        body: dict[str, Any] = {"model": self.model, "max_tokens": options.budget, "temperature": options.temperature}
        if options.temperature > 0:
            body.update(top_p=options.top_p, seed=options.seed)
        if options.stop and self.server_stop:
            body["stop"] = list(options.stop)
        if self.endpoint == "chat":
            system = [{"role": "system", "content": options.system}] if options.system is not None else []
            body.update(messages=[*system, {"role": "user", "content": request.prompt}], logprobs=options.logprobs)
        else:
            body["prompt"] = request.prompt if options.system is None else f"{options.system}\n\n{request.prompt}"
            if options.logprobs:
                body["logprobs"] = 1
        try:
            answer = self._call("POST", f"/{'chat/completions' if self.endpoint == 'chat' else 'completions'}", body)
            return finish(self._completion(answer, options.logprobs), options, self.reasoning_end)
        except (KeyError, IndexError, TypeError):
            raise HarnessError(f"{OWNER}: the server's answer is not an OpenAI {self.endpoint} completion") from None

    def _completion(self, answer: dict[str, Any], logprobs: bool) -> Completion:
        choice, usage = answer["choices"][0], answer.get("usage") or {}
        pieces = values = None
        if self.endpoint == "chat":
            message = choice["message"]
            text = message.get("content") or ""
            trace = message.get("reasoning_content")
            if trace:
                text = f"{REASONING_START}{trace}{self.reasoning_end}{text}"
            if logprobs and choice.get("logprobs"):
                tokens = choice["logprobs"]["content"]
                pieces, values = [t["token"] for t in tokens], [t["logprob"] for t in tokens]
        else:
            text = choice["text"]
            if logprobs and choice.get("logprobs"):
                pieces, values = choice["logprobs"]["tokens"], choice["logprobs"]["token_logprobs"]
        offset = 0 if pieces is None else trace_offset(text, pieces)
        if offset and pieces is not None and values is not None:  # the trace came apart from the tokens
            pieces, values = [text[:offset], *pieces], [0.0, *values]
        return Completion(
            text,
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            pieces,
            values,
            self._ended(choice.get("finish_reason")),
        )

    def _ended(self, reason: object) -> str | None:
        """The server's ``finish_reason`` as :data:`~harness.definitions.protocols.ENDINGS` name it: "stop" is
        the end-of-sequence token when no stop strings were sent (a stop string found here is
        reported by :func:`~harness.models.generation.finish`)."""
        if reason == "length":
            return "length"
        if reason == "stop":
            return "stop" if self.server_stop else "eos"
        return None

    # -- LoglikelihoodScorer ------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Each continuation scored as lm-evaluation-harness's ``local-completions`` scores it: the
        context (after the system prompt and a blank line, as a completions prompt is sent) and the
        continuation go to ``/completions`` as one prompt with ``echo`` and ``logprobs`` (and one
        token to generate, which is not counted), and the server returns the prompt's tokens with
        their log-probabilities and text offsets (:func:`echoed_loglikelihood`). The chat endpoint
        cannot: it scores no given text."""
        if self.endpoint != "completions":
            raise HarnessError(
                f"{OWNER}: scoring text by log-likelihood needs endpoint=completions (a chat endpoint "
                "gives no log-probabilities of given text), on a server that echoes the prompt's "
                "log-probabilities, as vLLM does"
            )
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._score, requests))

    def _score(self, request: LoglikelihoodRequest) -> Loglikelihood:
        context = request.context if request.system is None else f"{request.system}\n\n{request.context}"
        body = {
            "model": self.model,
            "prompt": context + request.continuation,
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": 1,
            "echo": True,
        }
        answer = self._call("POST", "/completions", body)
        try:
            logprobs = answer["choices"][0]["logprobs"]
            return echoed_loglikelihood(logprobs, len(context), len(context) + len(request.continuation))
        except (KeyError, IndexError, TypeError):
            raise HarnessError(
                f"{OWNER}: the server at {self.url} returned no log-probabilities of the prompt "
                "(completions with echo and logprobs), so it cannot score text: serve the model "
                "with one that does, as vLLM does"
            ) from None


def echoed_loglikelihood(logprobs: dict[str, Any], start: int, end: int) -> Loglikelihood:
    """The continuation ``[start, end)`` of an echoed prompt, from a completions answer's
    ``logprobs`` (``tokens``, ``token_logprobs``, ``text_offset``, ``top_logprobs``): the sum over
    the tokens whose text ends past ``start`` and begins before ``end`` (a token across the
    boundary counts as the continuation's, since the server cut the text itself; the generated
    token after the prompt does not count); greedy when each of them is its position's most likely
    token (lm-eval's test; unknown without ``top_logprobs``, then False)."""
    tokens, values, offsets = logprobs["tokens"], logprobs["token_logprobs"], logprobs["text_offset"]
    tops: list[Any] = logprobs.get("top_logprobs") or []  # null when the server sent none
    chosen = [
        i for i, (offset, token) in enumerate(zip(offsets, tokens)) if offset + len(token) > start and offset < end
    ]
    if any(values[i] is None for i in chosen):  # the prompt's first token has none: nothing came before it
        raise HarnessError(
            f"{OWNER}: a continuation with no context before it cannot be scored (its first token "
            "has no log-probability)"
        )
    greedy = bool(tops) and all(tops[i] and values[i] >= max(tops[i].values()) for i in chosen)
    return Loglikelihood(float(sum(values[i] for i in chosen)), len(chosen), greedy)


def trace_offset(text: str, pieces: Sequence[str]) -> int:
    """Characters of ``text`` before the tokens' text (a reasoning trace the server returned apart)."""
    return max(0, len(text) - sum(len(piece) for piece in pieces))
