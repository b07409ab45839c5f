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
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from harness.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, write: Callable[[IO[bytes]], object]) -> None:
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


def check_folder(path: Path, what: str) -> None:
    """Refuse, before any work, a folder the harness is to write in that cannot be one because
    it, or a folder above it, is a file (else the run would end in ``NotADirectoryError`` or
    ``FileExistsError`` after the work, with nothing saved)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise InputError(f"{what} must be a folder, but {candidate} is a file", file=path)
            return


def check_known_ids(ids: Iterable[str], known: Container[str], *, file: Path, what: str) -> None:
    """Refuse predictions for ids that are no question of the data (every task's one rule): the
    official scorers ignore them, which hides predictions made for another file or split. The
    error names the first such id and how many there are."""
    unknown = [qid for qid in ids if qid not in known]
    if unknown:
        raise InputError(
            f"not a question of {what} ({len(unknown)} such id(s): predictions for another file?)",
            file=file,
            field=unknown[0],
        )


def json_bytes(obj: Any, *, indent: int | None = 1) -> bytes:
    """``obj`` as the UTF-8 JSON text :func:`dump_json` writes (non-ASCII kept readable)."""
    return json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False).encode("utf-8") + b"\n"


def dump_json(obj: Any, path: Path, *, indent: int | None = 1) -> None:
    """Atomically write ``obj`` as UTF-8 JSON (non-ASCII kept readable)."""
    data = json_bytes(obj, indent=indent)
    write_atomic(path, lambda handle: handle.write(data))


def remove_temporaries(folder: Path, name: str | None = None) -> list[Path]:
    """Delete what :func:`write_atomic` and :func:`atomic_folder` leave in ``folder`` when the
    process is killed mid-write (``.NAME.XXXX.tmp`` files or folders, ``.NAME.XXXX.old``
    folders), only those of the file ``name`` when it is given; return them. Only for a folder
    (or a file) that one writer owns at a time, before it writes there."""
    stem = f".{name}.*" if name else ".*"
    removed = []
    for path in sorted(folder.glob(stem + ".tmp")) + sorted(folder.glob(stem + ".old")) if folder.is_dir() else []:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


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


def sha256_values(value: Any) -> str:
    """Hex SHA-256 of a JSON-like value (mappings, sequences, numbers, text; dataclasses and numpy
    arrays as their fields and lists), independent of key order: the digest of predictions as read
    from a folder, which is never walked (see :func:`harness.running.runner.file_identity`)."""
    return sha256_text(json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain))


def _plain(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"no digest for a {type(value).__name__}")


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


class DuplicateKeyError(ValueError):
    """A key given twice in one JSON object (raised by :func:`_unique_pairs`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a repeated key: ``json`` would keep the last value
    silently, so a predictions file answering one id twice would lose an answer unseen."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number (JSON has no NaN or Infinity)")


def parse_json(text: str, *, unique_keys: bool = False, allow_nan: bool = True) -> Any:
    """``json.loads`` whose failures are all ``ValueError``: besides malformed text, nesting too
    deep for Python's recursion limit (``[[[[...``) and integers past Python's digit limit would
    otherwise escape as ``RecursionError`` or a bare ``ValueError`` (a traceback, not one line).
    With ``unique_keys`` a key repeated in one object raises :class:`DuplicateKeyError` (see
    :func:`_unique_pairs`); without ``allow_nan``, ``NaN`` and ``Infinity`` are refused (options:
    a result file, being strict JSON, could not record them)."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_pairs if unique_keys else None,
            parse_constant=None if allow_nan else _no_constant,
        )
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _decode_reason(exc: json.JSONDecodeError, *, in_line: bool) -> str:
    """The parser's reason with its place: ``json`` words some reasons to end in the place
    ("Unterminated string starting at", "Invalid control character at"), so the place follows
    the reason (a column for a line of JSON lines, whose record names the line); a text that
    ends there, or in an unterminated string, is said to be cut short, the usual cause."""
    where = f"column {exc.colno}" if in_line else f"line {exc.lineno} column {exc.colno}"
    reason = f"{exc.msg} {where}" if exc.msg.endswith(" at") else f"{exc.msg} at {where}"
    if exc.msg.startswith("Unterminated") or not exc.doc[exc.pos :].strip():
        reason += " (the text ends there: cut short?)"
    return reason


def _json_error(exc: ValueError, *, file: Path, record: str | None = None) -> InputError:
    """The one-line error for a failure of :func:`parse_json`."""
    if isinstance(exc, DuplicateKeyError):
        return InputError(
            "given twice in one JSON object (only one value may be meant)", file=file, record=record, field=exc.key
        )
    if isinstance(exc, json.JSONDecodeError):
        return InputError(
            f"malformed JSON: {_decode_reason(exc, in_line=record is not None)}", file=file, record=record
        )
    return InputError(f"malformed JSON: {exc}", file=file, record=record)


def read_json(path: Path, *, unique_keys: bool = False) -> Any:
    """Parse a JSON file; a missing or malformed file raises :class:`InputError` naming it.
    ``unique_keys`` refuses a key repeated in one object (for ``{id: answer}`` predictions)."""
    try:
        with _open_text(path) as handle:
            text = handle.read()
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from None
    try:
        return parse_json(text, unique_keys=unique_keys)
    except ValueError as exc:
        raise _json_error(exc, file=path) from None


def iter_jsonl(path: Path, *, unique_keys: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a (gzipped) JSON-lines file."""
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = parse_json(line, unique_keys=unique_keys)
                except ValueError as exc:
                    raise _json_error(exc, file=path, record=f"line {number}") from None
                yield number, item
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=path) from None
