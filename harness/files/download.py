"""Downloading one file: resumed after an interruption, checked before it is used, put in place
atomically, and every failure one line naming the file.

The bytes go to a hidden ``.NAME.part`` beside the target. A connection cut part way (or a run
killed) leaves that partial file; the next attempt asks only for the rest (an HTTP ``Range``
request) and appends it. Only once the whole file hashes to its pinned SHA-256 is it renamed
into place: a file with one byte changed is refused, its partial copy deleted, and nothing is
installed. A site's own copy of the sources (``--mirror``) stands in for the official hosts.

The HTTP client is ``httpx2``, the client ``huggingface_hub`` itself depends on (so hub and
benchmark downloads share one maintained stack, its proxy and certificate settings): streaming,
timeouts split into connect and read, redirects, and typed errors for a refused connection, a
timeout or a cut response, which the standard library would leave to hand-written code.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from harness.errors import HarnessError

if TYPE_CHECKING:
    import httpx2

#: Seconds to wait for a connection, or for the next bytes of a response (``--timeout``).
DEFAULT_TIMEOUT = 60.0
#: Attempts of one file while each brings more bytes (a cut connection is resumed at once).
ATTEMPTS = 5


class ProgressBar(Protocol):
    """What a download reports its bytes to (a tqdm bar)."""

    def update(self, n: int) -> object: ...


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` as a mirror serves it: ``MIRROR/HOST/PATH`` (the layout ``wget -x`` makes of a
    list of URLs, so a site builds its mirror from ``harness data list --json``)."""
    if not mirror:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def partial_path(target: Path) -> Path:
    """Where the bytes of ``target`` gather until they are checked."""
    return target.with_name(f".{target.name}.part")


@dataclass(frozen=True)
class Fetched:
    """A file in place: its checksum and size, and how many bytes this download transferred."""

    sha256: str
    size: int
    transferred: int


class Downloader:
    """One HTTP client for the files of a command (connections are kept between them)."""

    def __init__(
        self, *, mirror: str | None = None, timeout: float = DEFAULT_TIMEOUT, progress: ProgressBar | None = None
    ) -> None:
        import httpx2

        self.mirror = mirror
        self.timeout = timeout
        #: A bar with ``update(bytes)`` (tqdm), or None.
        self.progress = progress
        self._client = httpx2.Client(
            timeout=httpx2.Timeout(timeout), follow_redirects=True, headers={"Accept-Encoding": "identity"}
        )

    def __enter__(self) -> Downloader:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._client.close()

    def fetch(self, url: str, target: Path, sha256: str | None, size: int | None = None) -> Fetched:
        """Download ``url`` to ``target`` (resuming a partial copy), check it against ``sha256``
        (None: not pinned, any content is taken and its checksum returned) and rename it into place."""
        source = mirrored(url, self.mirror)
        size = size if sha256 is not None else None  # an unpinned file's declared size only guides the bar
        part = partial_path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        if size is not None and part.exists() and part.stat().st_size >= size and _hash(part) != (sha256, size):
            part.unlink()  # a partial copy as long as the file that is not the file: a stale one
        if part.exists() and self.progress is not None:
            self.progress.update(part.stat().st_size)  # the bar counts the bytes on disk
        transferred = 0
        for attempt in range(ATTEMPTS):
            before = part.stat().st_size if part.exists() else 0
            try:
                transferred += self._attempt(source, part, size)
                break
            except _Restart:  # the server has nothing after the partial copy: it changed, start over
                continue
            except _Cut as cut:
                transferred += cut.received
                got = part.stat().st_size if part.exists() else 0
                if got <= before or attempt == ATTEMPTS - 1:
                    raise HarnessError(
                        f"{source}: the connection broke after {got:,} of "
                        f"{'?' if size is None else f'{size:,}'} bytes of {target.name} "
                        f"({cut.reason}); run the same command again to resume"
                    ) from None
        else:
            raise HarnessError(f"{source}: the server refused to resume {target.name} {ATTEMPTS} times")
        digest, length = _hash(part)
        if size is not None and length != size:
            part.unlink()
            raise HarnessError(
                f"{source}: {target.name} is {length:,} bytes, expected {size:,}; refused, nothing installed"
            )
        if sha256 is not None and digest != sha256:
            part.unlink()
            raise HarnessError(
                f"{source}: {target.name} has sha256 {digest}, expected {sha256}; refused, nothing installed"
            )
        os.replace(part, target)
        return Fetched(digest, length, transferred)

    def _attempt(self, source: str, part: Path, size: int | None) -> int:
        """One request: the whole file, or the rest of a partial copy; returns the bytes received."""
        import httpx2

        have = part.stat().st_size if part.exists() else 0
        if size is not None and have >= size:
            return 0  # every byte is there already (a killed run that had finished this file)
        headers = {"Range": f"bytes={have}-"} if have else {}
        received = 0
        try:
            with self._client.stream("GET", source, headers=headers) as response:
                if response.status_code == 416 and have:
                    part.unlink()
                    raise _Restart()
                if response.status_code >= 400:
                    reason = response.reason_phrase or ""
                    raise HarnessError(f"{source}: HTTP {response.status_code} {reason}".rstrip())
                resumed = response.status_code == 206 and _range_start(response) == have
                with open(part, "ab" if resumed else "wb") as handle:
                    if have and not resumed and self.progress is not None:
                        self.progress.update(-have)  # the server sent the whole file again
                    for chunk in response.iter_raw():  # as the bytes arrive: a cut loses none
                        handle.write(chunk)
                        received += len(chunk)
                        if self.progress is not None:
                            self.progress.update(len(chunk))
        except httpx2.ConnectTimeout:
            raise HarnessError(f"{source}: no connection within {self.timeout:g} s") from None
        except httpx2.ConnectError as error:
            raise HarnessError(f"{source}: cannot connect ({_reason(error)})") from None
        except httpx2.TimeoutException:
            if received:
                raise _Cut(received, f"no data for {self.timeout:g} s") from None
            raise HarnessError(f"{source}: no response within {self.timeout:g} s") from None
        except (httpx2.RemoteProtocolError, httpx2.ReadError) as error:
            raise _Cut(received, _reason(error)) from None
        except httpx2.HTTPError as error:
            raise HarnessError(f"{source}: {_reason(error)}") from None
        return received


class _Restart(Exception):
    """A resume the server refused (416): the partial copy is gone, the next attempt starts over."""


class _Cut(Exception):
    """A response that ended before the file did; ``received`` bytes arrived first."""

    def __init__(self, received: int, reason: str) -> None:
        super().__init__(reason)
        self.received = received
        self.reason = reason


def _range_start(response: httpx2.Response) -> int | None:
    """The first byte a 206 response holds (``Content-Range: bytes START-END/TOTAL``)."""
    value = response.headers.get("Content-Range", "")
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _reason(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0]


def _hash(path: Path) -> tuple[str, int]:
    digest, length = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            length += len(chunk)
    return digest.hexdigest(), length
