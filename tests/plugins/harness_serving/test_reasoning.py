"""A reasoning model behind an OpenAI-compatible server (a scripted one on 127.0.0.1): the stop
strings are cut here, after the trace (never sent to the server, which would cut inside it or
right after ``</think>``), the whole budget is asked for, and why a reply ended is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest
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


def test_answers_that_never_came_are_counted_under_the_table(harness_cli, tmp_path) -> None:
    """Issue 33's "never a silent 0": through a server, traces closed (a blank line after
    </think>), never closed (the budget ran out) and cut answers are each counted, in the result
    and under the table, and the closed ones score as the plain answers would."""
    import json

    from harness.demo import parallel_qa_dir
    from harness.scoring.span_file import read_span_file

    questions = read_span_file(parallel_qa_dir() / "en.json")
    replies = {}
    for i, q in enumerate(questions):
        replies[q.question] = (
            Reply("<think>hm, let me see", "length", tokens=544)
            if i % 4 == 0
            else Reply(f"<think>ok</think>\n\n{q.answers[0]}\nmore")
            if i % 4 == 1
            else Reply(f"{q.answers[0]} and a long", "length")
            if i % 4 == 2
            else Reply("")
        )
    running = TraceServer(replies)
    try:
        code, out, err = harness_cli(
            "run",
            "xquad",
            f"openai-compatible:model={SERVED},url={running.url}",
            "--langs",
            "en",
            "--gen-kwargs",
            "reasoning_tokens=512",
            "--no-leaderboard",
        )
    finally:
        running.stop()
    assert code == 0, err
    n = len(questions)
    unclosed, closed, cut, empty = (len(range(r, n, 4)) for r in range(4))
    (path,) = tmp_path.glob("results/**/result.json")
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["diagnostics"]["generation"]["answers"]["en"] == {
        "answers": n,
        "empty": unclosed + empty,
        "trace_open": unclosed,
        "empty_cut_by_budget": 0,
        "cut_by_budget": cut,
    }
    notes = [
        f"{unclosed} of {n} answers empty: trace not closed within 544 tokens",
        f"{empty} of {n} answers empty: the model answered nothing",
        f"{cut} of {n} answers cut by the token budget (32 new tokens) before a stop string or the end of sequence",
    ]
    assert all(note in result["notes"] and note in out for note in notes)
    assert all(body["max_tokens"] == 544 and "stop" not in body for body in running.bodies)
    rows = {row["subset"]: row["metrics"] for row in result["rows"]}
    assert rows["en"]["exact_match"] == 100 * closed / n  # the closed traces' answers, cut at the "\n" after them
