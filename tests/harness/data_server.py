"""A real HTTP server on 127.0.0.1 standing in for the official hosts (``harness data``'s mirror
setting, the hub's ``HF_ENDPOINT``): it serves files by URL path with HTTP ``Range`` support,
and can misbehave on purpose: cut a response half way, change one byte, stall, or answer 404.
It counts every request, so a test can assert that offline mode sent none and that a resumed
download asked only for the rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Request:
    method: str
    path: str
    range: str | None
    #: Body bytes the server sent in answer.
    sent: int = 0


@dataclass
class Behaviour:
    """What the server does, path by path (URL paths, query included)."""

    #: URL path -> file on disk or bytes.
    files: dict[str, Path | bytes] = field(default_factory=dict)
    #: URL path -> how many more responses to cut after half their body.
    cut: dict[str, int] = field(default_factory=dict)
    #: URL paths served with one byte changed.
    changed: set[str] = field(default_factory=set)
    #: URL paths answered only after this many seconds.
    stall: dict[str, float] = field(default_factory=dict)
    #: Extra routes: URL path -> (status, headers, body), for the hub's API.
    routes: dict[str, Callable[[str], tuple[int, dict[str, str], bytes]]] = field(default_factory=dict)


class FileServer:
    """``ThreadingHTTPServer`` on a free port of 127.0.0.1, serving a :class:`Behaviour`."""

    def __init__(self) -> None:
        self.behaviour = Behaviour()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else small responses wait on delayed ACKs (40 ms each)

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                self._answer(head=True)

            def do_GET(self) -> None:
                self._answer(head=False)

            def _answer(self, head: bool) -> None:
                request = Request(self.command, self.path, self.headers.get("Range"))
                with outer._lock:
                    outer.requests.append(request)
                behaviour = outer.behaviour
                path = self.path
                if path in behaviour.stall:
                    time.sleep(behaviour.stall[path])
                bare = path.split("?")[0]
                route = next((r for prefix, r in behaviour.routes.items() if bare.startswith(prefix)), None)
                if route is not None:
                    status, headers, body = route(path)
                    self._send(status, headers, body, head, request)
                    return
                if path not in behaviour.files:
                    self._send(404, {}, b"not found", head, request)
                    return
                source = behaviour.files[path]
                body = source if isinstance(source, bytes) else source.read_bytes()
                if path in behaviour.changed:
                    middle = len(body) // 2
                    body = body[:middle] + bytes([body[middle] ^ 0x01]) + body[middle + 1 :]
                start, status, headers = 0, 200, {"Accept-Ranges": "bytes"}
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes="):
                    start = int(wanted[6:].split("-")[0])
                    if start >= len(body):
                        self._send(416, {"Content-Range": f"bytes */{len(body)}"}, b"", head, request)
                        return
                    status = 206
                    headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
                part = body[start:]
                if behaviour.cut.get(path, 0) > 0:
                    behaviour.cut[path] -= 1
                    self.send_response(status)
                    for key, value in {**headers, "Content-Length": str(len(part))}.items():
                        self.send_header(key, value)
                    self.end_headers()
                    half = part[: len(part) // 2]
                    self.wfile.write(half)
                    self.wfile.flush()
                    request.sent = len(half)
                    self.close_connection = True
                    return
                self._send(status, headers, part, head, request)

            def _send(self, status: int, headers: dict[str, str], body: bytes, head: bool, request: Request) -> None:
                self.send_response(status)
                for key, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(key, value)
                self.end_headers()
                if not head:
                    self.wfile.write(body)
                    request.sent = len(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def requests_for(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]


@contextmanager
def serving() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (a connection to it is refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
