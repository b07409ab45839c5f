"""openai-compatible's log-likelihood against a fake completions server on 127.0.0.1, started
here: it cuts the echoed prompt into tokens (white space and the word after it) and gives each a
log-probability fixed by a hash of the text before it, with text offsets and top log-probabilities,
as vLLM's echo does. The test sums the continuation's tokens itself; a token across the boundary
counts; XCOPA runs through the server; the chat endpoint and a server that echoes no
log-probabilities are one line each."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import LoglikelihoodRequest
from harness.errors import HarnessError
from harness_serving.openai_client import OpenAICompatible
from tests.plugins.harness_xtreme.test_xcopa import write_xcopa

Cli = Callable[..., tuple[int, str, str]]
SERVED = "fake-lm"
TOKEN = re.compile(r"\s*\S+|\s+")


def token_logprob(before: str, token: str) -> float:
    digest = hashlib.sha256(f"{before}\x00{token}".encode()).digest()
    return -8.0 * int.from_bytes(digest[:4], "big") / 2**32


def is_top(before: str, token: str) -> bool:
    return hashlib.sha256(f"top{before}{token}".encode()).digest()[0] % 4 != 0


class EchoServer:
    """/v1/models and /v1/completions with ``echo``; ``echo_logprobs=False`` answers without them."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.echo_logprobs = True
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.reply({"data": [{"id": SERVED}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                prompt = body["prompt"]
                tokens = TOKEN.findall(prompt) + [" next"]  # the one generated token follows the echo
                offsets, values, tops, position = [], [], [], 0
                for n, token in enumerate(tokens):
                    before = prompt[:position]
                    value = None if n == 0 else token_logprob(before, token)
                    offsets.append(position)
                    values.append(value)
                    tops.append(
                        None
                        if value is None
                        else {token: value}
                        if is_top(before, token)
                        else {token: value, "other": value + 0.5}
                    )
                    position += len(token)
                logprobs = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets, "top_logprobs": tops}
                text = prompt + " next"
                self.reply(
                    {
                        "choices": [
                            {
                                "text": text,
                                "logprobs": logprobs if server.echo_logprobs else None,
                                "finish_reason": "length",
                            }
                        ],
                        "usage": {},
                    }
                )

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture()
def server() -> Iterator[EchoServer]:
    running = EchoServer()
    yield running
    running.http.shutdown()
    running.http.server_close()


def reference(context: str, continuation: str) -> tuple[float, int, bool]:
    """The continuation's tokens as this test cuts the text: those ending past the context."""
    text, total, count, greedy, position = context + continuation, 0.0, 0, True, 0
    for token in TOKEN.findall(text):
        if position + len(token) > len(context):
            total += token_logprob(text[:position], token)
            count += 1
            greedy = greedy and is_top(text[:position], token)
        position += len(token)
    return total, count, greedy


def client(server: EchoServer, endpoint: str = "completions") -> OpenAICompatible:
    return OpenAICompatible(
        runtime=Runtime(device_request="cpu"), model=SERVED, url=server.url, endpoint=endpoint, retries=0
    )


def test_continuations_are_the_sum_of_their_echoed_tokens(server: EchoServer) -> None:
    requests = [
        LoglikelihoodRequest("The man turned on the faucet therefore", " the toilet filled with water."),
        LoglikelihoodRequest("Premise, right?", " Yes, hypothesis here", system="Be brief."),
        LoglikelihoodRequest("x abc", "def ghi"),
    ]  # " abcdef": one token across the boundary, counted
    scores = client(server).loglikelihood(requests)
    for request, score in zip(requests, scores):
        context = request.context if request.system is None else f"{request.system}\n\n{request.context}"
        total, count, greedy = reference(context, request.continuation)
        assert (score.logprob, score.tokens, score.greedy) == (pytest.approx(total, abs=1e-12), count, greedy)
    assert scores[2].tokens == 2
    assert all(
        body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1 and body["temperature"] == 0
        for body in server.bodies
    )
    # the client may send its requests in any order (the server saw them in CI once out of order)
    assert "Be brief.\n\nPremise, right? Yes, hypothesis here" in [body["prompt"] for body in server.bodies]


def test_xcopa_runs_through_the_server(server: EchoServer, tmp_path: Path, harness_cli: Cli) -> None:
    gold = [0, 1, 1, 0, 1, 0]
    write_xcopa(tmp_path / "xcopa", "val", "it", gold)
    code, out, err = harness_cli(
        "run",
        "xcopa",
        f"openai-compatible:model={SERVED},url={server.url},endpoint=completions",
        "--data-dir",
        tmp_path / "xcopa",
        "--split",
        "dev",
        "--langs",
        "it",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--no-cache",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "out",
    )
    assert code == 0, err
    rows = {row["subset"]: row["metrics"] for row in json.loads(out)["results"][0]["result"]["rows"]}
    records = [json.loads(line) for line in (tmp_path / "xcopa" / "val-it.jsonl").read_text().splitlines()]
    right = 0
    for record, label in zip(records, gold):
        context = f"{record['premise'].removesuffix('.')} {'perché' if record['question'] == 'cause' else 'quindi'}"
        options = [" " + record[name][0].lower() + record[name][1:] for name in ("choice1", "choice2")]
        sums = [reference(context, option)[0] for option in options]
        right += sums.index(max(sums)) == label
    assert rows["it"]["accuracy"] == pytest.approx(100 * right / len(gold), abs=1e-9)


def test_a_server_that_cannot_score_says_so_in_one_line(server: EchoServer) -> None:
    with pytest.raises(HarnessError, match="needs endpoint=completions"):
        client(server, "chat").loglikelihood([LoglikelihoodRequest("a", " b")])
    server.echo_logprobs = False
    with pytest.raises(HarnessError, match="returned no log-probabilities of the prompt"):
        client(server).loglikelihood([LoglikelihoodRequest("a", " b")])
