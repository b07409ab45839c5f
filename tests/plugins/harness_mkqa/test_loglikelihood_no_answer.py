"""MKQA's No-Answer probability when the generator returns no token log-probabilities: a model
that scores continuations gives the answer's probability by log-likelihood (the answer and its
stop string, as it is and after a space, their probabilities added), computed here by hand from
the fake's known log-likelihoods; a model that can do neither is one line saying what MKQA needs."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import pytest

import harness
from harness.definitions.protocols import Generation, GenerationRequest, Loglikelihood, LoglikelihoodRequest
from harness.errors import HarnessError
from tests.harness.fake_scorer import known_logprob

STOP = "\n"  # the closed-book template's stop string


def answer_for(prompt: str) -> str:
    """The fake's answer: the abstention reply to some questions (by their length), a word to the others."""
    question = prompt.rsplit("Question: ", 1)[1]
    return "unanswerable" if len(question) % 3 == 0 else f"Answer {len(question) % 7}"


class Generates:
    """A generator object whose completions carry no log-probability."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.prompts += [r.prompt for r in requests]
        return [Generation(answer_for(r.prompt)) for r in requests]


class GeneratesAndScores(Generates):
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return [Loglikelihood(known_logprob(r.context, r.continuation), 1, False) for r in requests]


def test_the_answer_probability_comes_from_the_log_likelihood() -> None:
    model = GeneratesAndScores()
    [outcome] = harness.evaluate("mkqa:prompt=closed-book", model, langs=["en", "de"], progress=False, bootstrap=0)
    by_digest = {hashlib.sha256(p.encode("utf-8")).hexdigest(): p for p in model.prompts}
    lines = outcome.predictions["en"]
    assert len(lines) > 3
    for line in lines:
        prompt = by_digest[line["prompt_sha256"]]  # the prompt each answer was generated for
        answer = answer_for(prompt)
        probability = math.exp(known_logprob(prompt, answer + STOP)) + math.exp(
            known_logprob(prompt, f" {answer}{STOP}")
        )
        assert line["no_answer_prob"] == pytest.approx(
            probability if answer == "unanswerable" else 1 - probability, rel=1e-9
        )
    assert {line["prediction"] == "" for line in lines} == {True, False}  # some abstained, some answered


def test_a_generator_that_can_give_neither_says_what_mkqa_needs() -> None:
    with pytest.raises(
        HarnessError,
        match=r"No-Answer probability is made from the model's probability of its own "
        r"answer.*cannot score text either",
    ):
        harness.evaluate("mkqa:prompt=closed-book", Generates(), langs=["en"], progress=False, bootstrap=0)
