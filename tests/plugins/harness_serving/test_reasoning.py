"""A reasoning model behind an OpenAI-compatible server (a scripted one on 127.0.0.1): the stop
strings are cut here, after the trace (never sent to the server, which would cut inside it or
right after ``</think>``), the whole budget is asked for, and why a reply ended is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.model import Runtime
from harness.protocols import GenerationOptions, GenerationRequest

from tests.plugins.harness_serving.trace_server import SERVED, Reply, TraceServer

REPLIES = {
    "closed": Reply("<think>ok</think>\n\nVolga"),  # the reply of issue 33, stored as "" before
    "unclosed": Reply("<think>The river... let me think\nabout it", "length", tokens=40),
    "apart": Reply("\n\nVolga\nMore", reasoning="ok\nsure"),  # vLLM's reasoning parser
    "plain": Reply("Volga\nMore"),
}


@pytest.fixture
def server() -> Iterator[TraceServer]:
    running = TraceServer(REPLIES)
    yield running
    running.stop()


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_reasoning_replies_give_their_answer_and_say_how_they_ended(server: TraceServer, endpoint: str) -> None:
    from harness_serving.openai_client import OpenAICompatible

    model = OpenAICompatible(runtime=Runtime(device_request="cpu"), model=SERVED, url=server.url, endpoint=endpoint)
    options = GenerationOptions(max_new_tokens=16, stop=("\n",), reasoning_tokens=24)
    questions = ["closed", "unclosed", "plain"] + (["apart"] if endpoint == "chat" else [])
    out = model.generate([GenerationRequest(f"Question: {q}\nAnswer:", options) for q in questions])
    got = {q: (g.text, g.reasoning, g.ended, g.trace_open) for q, g in zip(questions, out)}
    assert got["closed"] == ("Volga", "ok", "eos", False)
    assert got["unclosed"] == ("", "The river... let me think\nabout it", "length", True)
    assert got["plain"] == ("Volga", None, "stop", False)
    if endpoint == "chat":
        assert got["apart"] == ("Volga", "ok\nsure", "stop", False)
    assert all("stop" not in body and body["max_tokens"] == 40 for body in server.bodies)


def test_sampling_options_and_the_system_prompt_reach_the_server(server: TraceServer) -> None:
    from harness_serving.openai_client import OpenAICompatible

    model = OpenAICompatible(runtime=Runtime(device_request="cpu"), model=SERVED, url=server.url)
    options = GenerationOptions(max_new_tokens=8, temperature=0.7, top_p=0.9, seed=3, system="Be brief.")
    (answer,) = model.generate([GenerationRequest("Question: plain\nAnswer:", options)])
    assert answer.text == "Volga\nMore"  # no stop string asked for
    (body,) = server.bodies
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 3)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
