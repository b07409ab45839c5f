"""openai-compatible against a real HTTP server on 127.0.0.1, started here, that serves a tiny
checkpoint through the harness's own hf-generator: the answers equal hf-generator's, transient
errors are retried, a server that is down is one line. No request leaves the machine."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest
from harness.errors import HarnessError
from tests.plugins.harness_hf.test_generator import PROMPTS

Cli = Callable[..., tuple[int, str, str]]
SERVED = "tiny-llama"


class Server:
    """An OpenAI-compatible server (/v1/models, /v1/chat/completions, /v1/completions) in a thread;
    ``fail_next`` answers that many requests with HTTP 503 first."""

    def __init__(self, model_dir: Path) -> None:
        from harness_hf.generator import HFGenerator

        self.generator = HFGenerator(runtime=Runtime(device_request="cpu"), path=model_dir)
        self.lock = threading.Lock()
        self.fail_next = 0
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.reply(200, {"data": [{"id": SERVED}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append(body)
                    if server.fail_next:
                        server.fail_next -= 1
                        return self.reply(503, {"error": "busy"})
                    chat = self.path.endswith("/chat/completions")
                    prompt = body["messages"][-1]["content"] if chat else body["prompt"]
                    wants = bool(body.get("logprobs"))
                    (g,) = server.generator.generate(
                        [
                            GenerationRequest(
                                prompt, GenerationOptions(body["max_tokens"], tuple(body.get("stop") or ()), wants)
                            )
                        ]
                    )
                usage = {"prompt_tokens": g.prompt_tokens, "completion_tokens": g.new_tokens}
                reason = "length" if g.ended == "length" else "stop"  # as OpenAI says it: stop string or EOS
                if chat:
                    logprobs = {"content": [{"token": g.text, "logprob": g.logprob}]} if wants else None
                    choice = {
                        "message": {"role": "assistant", "content": g.text},
                        "logprobs": logprobs,
                        "finish_reason": reason,
                    }
                else:
                    logprobs = {"tokens": [g.text], "token_logprobs": [g.logprob]} if wants else None
                    choice = {"text": g.text, "logprobs": logprobs, "finish_reason": reason}
                self.reply(200, {"choices": [choice], "usage": usage})

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def server(tiny_causal_lm_dir: Path) -> Iterator[Server]:
    running = Server(tiny_causal_lm_dir)
    yield running
    running.stop()


def client(url: str, **options: Any):
    from harness_serving.openai_client import OpenAICompatible

    return OpenAICompatible(runtime=Runtime(device_request="cpu"), model=SERVED, url=url, **options)


@pytest.mark.parametrize(("endpoint", "server_stop"), [("chat", False), ("completions", False), ("chat", True)])
def test_answers_equal_the_served_generator(server: Server, endpoint: str, server_stop: bool) -> None:
    requests = [GenerationRequest(p, GenerationOptions(6, ("\n",), True)) for p in PROMPTS[:5]]
    remote = client(server.url, endpoint=endpoint, concurrency=3, server_stop=server_stop).generate(requests)
    local = server.generator.generate(requests)
    assert [g.text for g in remote] == [g.text for g in local]
    assert [g.logprob for g in remote] == pytest.approx([g.logprob for g in local])
    assert [g.new_tokens for g in remote] == [g.new_tokens for g in local]
    # stop strings are cut here unless asked (a server would cut inside a reasoning trace)
    assert all(
        body["temperature"] == 0 and body.get("stop") == (["\n"] if server_stop else None) for body in server.bodies
    )


def test_transient_errors_are_retried(server: Server) -> None:
    server.fail_next = 2
    (answer,) = client(server.url, retries=2).generate([GenerationRequest(PROMPTS[0], GenerationOptions(4))])
    assert (
        len(server.bodies) == 3
        and answer == server.generator.generate([GenerationRequest(PROMPTS[0], GenerationOptions(4))])[0]
    )
    server.fail_next = 2
    with pytest.raises(HarnessError, match="answered HTTP 503"):
        client(server.url, retries=1).generate([GenerationRequest(PROMPTS[0], GenerationOptions(4))])


def test_a_server_that_is_down_or_serves_another_model_is_one_line(server: Server, harness_cli: Cli) -> None:
    with pytest.raises(HarnessError, match="serves tiny-llama, not 'other'"):
        from harness_serving.openai_client import OpenAICompatible

        OpenAICompatible(runtime=Runtime(device_request="cpu"), model="other", url=server.url)
    url = server.url
    server.stop()
    code, _, err = harness_cli(
        "run", "xquad:prompt=qa", f"openai-compatible:model={SERVED},url={url},retries=0", "--quiet"
    )
    assert code == 2 and err.strip().splitlines()[-1].startswith(
        f"error: model openai-compatible: no server answers at {url} ("
    )


def test_an_xquad_run_through_the_server(server: Server, harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli(
        "run",
        "xquad:prompt=qa",
        f"openai-compatible:model={SERVED},url={server.url}",
        "--langs",
        "en",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    (result,) = tmp_path.glob("results/**/result.json")
    assert json.loads(result.read_text())["model"]["options"]["model"] == SERVED


def test_vllm_without_the_extra_is_one_line(harness_cli: Cli, tiny_causal_lm_dir: Path) -> None:
    pytest.importorskip("harness_serving")
    try:
        import vllm  # noqa: F401
    except ImportError:
        code, _, err = harness_cli("run", "xquad:prompt=qa", f"vllm:path={tiny_causal_lm_dir}", "--quiet")
        assert code == 2 and err.strip().splitlines()[-1] == (
            'error: model vllm needs vLLM: pip install ".[vllm]" (on a machine with a CUDA GPU)'
        )
    else:
        pytest.skip("vLLM is installed")
