"""A scripted OpenAI-compatible server on 127.0.0.1 (a thread of the test process) that answers as a
reasoning model does: each prompt's reply is looked up by its question (the text after its last
``Question: ``), and comes back as the message content (``<think>`` trace included), or with the
trace in ``reasoning_content`` as vLLM's reasoning parsers return it, with a ``finish_reason``. It
records the bodies it was sent, so tests see the stop strings and budgets a client asks for."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.harness.fake_generator import question_of

SERVED = "tiny-reasoner"


@dataclass(frozen=True)
class Reply:
    """What the server answers one question: ``content``, the trace apart (``reasoning``) or not,
    and why it ended (``length``: the budget ran out)."""

    content: str
    finish_reason: str = "stop"
    reasoning: str | None = None
    tokens: int = 8


class TraceServer:
    def __init__(self, replies: Mapping[str, Reply]) -> None:
        self.replies = dict(replies)
        self.bodies: list[dict[str, Any]] = []
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
                chat = self.path.endswith("/chat/completions")
                prompt = body["messages"][-1]["content"] if chat else body["prompt"]
                answer = server.replies.get(question_of(prompt), Reply(""))
                if chat:
                    message = {"role": "assistant", "content": answer.content}
                    if answer.reasoning is not None:
                        message["reasoning_content"] = answer.reasoning
                    choice: dict[str, Any] = {"message": message, "finish_reason": answer.finish_reason}
                else:
                    choice = {"text": answer.content, "finish_reason": answer.finish_reason}
                self.reply(
                    {
                        "choices": [choice],
                        "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": answer.tokens},
                    }
                )

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
