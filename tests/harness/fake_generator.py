"""A deterministic fake generator, declared as a plugin (``HARNESS_PLUGINS=tests.harness.fake_generator``).

``fake-generator:replies=FILE`` reads a JSON object ``{question text: {"text": raw completion,
"logprob": number}}`` and answers each prompt by the question on its last ``Question:`` line (or
the whole prompt when it has none): the raw completion (reasoning traces and text after a stop
string included, so the harness's finishing is what the tests see) as one token with that
log-probability; an unknown question gets the completion "" with log-probability 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Generation, GenerationRequest, Generator
from harness.definitions.specs import ModelSpec
from harness.models.generation import Completion, finish


def question_of(prompt: str) -> str:
    """The question a prompt asks: the text after the last ``Question: ``, up to its line's end."""
    if "Question: " not in prompt:
        return prompt
    return prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]


class FakeGenerator(Model):
    provides = frozenset({Generator})

    def __init__(self, *, runtime: Runtime, replies: Path) -> None:
        self.runtime = runtime
        self.replies_path = replies
        self.replies = json.loads(replies.read_text(encoding="utf-8"))
        self.prompts: list[str] = []

    def identity(self) -> ModelIdentity:
        return ModelIdentity("fake-generator", "fake-generator", weights=self.replies_path.read_text(encoding="utf-8"))

    def prompt_lengths(self, prompts: Sequence[str]) -> list[int]:
        """A prompt's "tokens": its words, as ``prompt_tokens`` counts them."""
        return [len(prompt.split()) for prompt in prompts]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        out = []
        for request in requests:
            self.prompts.append(request.prompt)
            reply = self.replies.get(question_of(request.prompt), {"text": "", "logprob": 0.0})
            completion = Completion(
                reply["text"],
                len(request.prompt.split()),
                max(1, len(reply["text"].split())),
                [reply["text"]],
                [reply["logprob"]],
            )
            out.append(finish(completion, request.options))
        return out


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("fake-generator", f"{__name__}:FakeGenerator", "replies read from a file (tests)")]
