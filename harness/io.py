"""File helpers: atomic writes, hashing, and JSON reading that reports bad input precisely.

Results, predictions and the leaderboard are written through :func:`write_atomic`, so a crash
or a refused input never leaves a half-written file behind.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from harness.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` through a temporary file in the same folder, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; give it a plain file's mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``path`` to fill; when the block ends normally, swap it
    into place whole (replacing any folder already there), else delete it. A reader sees the old
    folder or the complete new one, never a partial one, and a crash leaves no half-built folder.
    The folder gets a plain folder's mode (``mkdtemp`` would leave it private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(staging, 0o777 & ~_umask())
    try:
        yield staging
        if path.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, retired / path.name)
            os.replace(staging, path)
            shutil.rmtree(retired)
        else:
            os.replace(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_folder_atomic(path: Path, files: dict[str, bytes]) -> None:
    """Write a folder of files (name -> bytes) atomically (see :func:`atomic_folder`), for
    prediction formats that are one file per language. A name may hold sub-folders
    (``task/test-de.tsv``)."""
    with atomic_folder(path) as staging:
        for name, payload in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(payload)


def dump_json(obj: Any, path: Path, *, indent: int | None = 1) -> None:
    """Atomically write ``obj`` as UTF-8 JSON (non-ASCII kept readable)."""
    data = json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False).encode("utf-8")
    write_atomic(path, lambda handle: handle.write(data + b"\n"))


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, for provenance and cache keys."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def sha256_path(path: Path) -> str:
    """Hex SHA-256 of a file, or of a folder's files (their relative names and contents), so a
    prediction format that is a folder of files gets a content hash like a single file."""
    if path.is_file():
        return sha256_file(path)
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return sha256_text(*(f"{p.relative_to(path).as_posix()}\t{sha256_file(p)}" for p in files))


def sha256_text(*parts: str) -> str:
    """Hex SHA-256 of text parts joined unambiguously."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_json(path: Path) -> Any:
    """Parse a JSON file; a missing or malformed file raises :class:`InputError` naming it."""
    try:
        with _open_text(path) as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=path) from None
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a (gzipped) JSON-lines file."""
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"malformed JSON: {exc.msg}", file=path, record=f"line {number}") from None
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from None
