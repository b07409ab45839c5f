"""Errors the command line turns into one clear line and exit code 2.

Anything a user can get wrong (a malformed file, an unknown name, a model that cannot run a
task) raises a :class:`HarnessError`; a traceback is reserved for bugs in the harness itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches
from os import PathLike


def one_line(text: str) -> str:
    """``text`` with every character that could break or hide the line (line and paragraph
    separators, other control characters) written as its escape: an error quotes ids and lines
    from the user's files, and must stay the one line the command line promises."""
    return "".join(char if char.isprintable() or char == " " else repr(char)[1:-1] for char in text)


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.5) -> str:
    """``; did you mean 'NAME'?`` naming the known name closest to a mistyped one, or "" when
    none is close (``cutoff``: :func:`difflib.get_close_matches`'): what every unknown name the
    user typed gets."""
    close = get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"; did you mean '{close[0]}'?" if close else ""


class HarnessError(Exception):
    """A problem with the user's input or set-up, reported as one line (exit code 2)."""

    exit_code = 2


class InputError(HarnessError):
    """Bad input data: names the file, the record and the field so the user can fix it."""

    def __init__(
        self,
        message: str,
        *,
        file: str | PathLike[str] | None = None,
        record: object | None = None,
        field: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.record = record
        self.field = field
        self.reason = message
        parts = []
        if self.file is not None:
            parts.append(self.file)
        if record is not None:
            parts.append(f"record {one_line(str(record))}")
        if field is not None:
            parts.append(f"field '{one_line(field)}'")
        parts.append(message)
        super().__init__(": ".join(parts))


class RegistryError(HarnessError):
    """An unknown, ambiguous or broken plugin name."""


class CapabilityError(HarnessError):
    """A model that cannot do what a task needs."""
