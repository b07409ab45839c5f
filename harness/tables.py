"""Scores and tables as text, one way for every command (results, leaderboard, listings).

A light module (standard library only), so ``harness list`` can print tables without importing
the leaderboard's file locking and schema validation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def format_score(value: float | None, interval: Sequence[float] | None = None) -> str:
    """A score as text: up to four decimals, trailing zeros dropped, so fractions (LAReQA's mAP)
    and percentages (F1, EM) both read naturally (0.1357, 99.8, 0); with its bootstrap interval
    when given: ``72.4 [70.1, 74.6]``."""
    if value is None:
        return "-"
    text = f"{value:.4f}".rstrip("0").rstrip(".") or "0"
    if interval is None:
        return text
    return f"{text} [{format_score(interval[0])}, {format_score(interval[1])}]"


#: Width a table is fitted to when the output is not a terminal (a pipe, a file, a test).
DEFAULT_WIDTH = 100
#: Narrowest a shortened column gets (its header stays whole).
MIN_COLUMN = 10
GAP = "  "


def terminal_width() -> int:
    """Columns of the terminal, or :data:`DEFAULT_WIDTH` (``$COLUMNS`` wins, as for every program)."""
    import shutil

    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _shorten(cell: str, width: int) -> str:
    return cell if len(cell) <= width else cell[: width - 1] + "\u2026"


def format_table(header: list[str], rows: Iterable[list[str]], max_width: int | None = None) -> str:
    """Columns padded to their widest cell, a rule under the header, no trailing blanks: every
    table the harness prints (leaderboard, results, listings) looks the same.

    With ``max_width`` the widest columns are cut (their cells end in "…") until the table fits,
    none below its header or :data:`MIN_COLUMN`; commands pass the terminal's width unless the
    user asks for ``--wide``."""
    rows = list(rows)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    floors = [max(len(name), MIN_COLUMN) for name in header]
    if max_width is not None:
        excess = sum(widths) + len(GAP) * (len(widths) - 1) - max_width
        while excess > 0:  # one character at a time off the column with the most to spare
            column = max(range(len(widths)), key=lambda i: widths[i] - floors[i])
            if widths[column] <= floors[column]:
                break
            widths[column] -= 1
            excess -= 1
        rows = [[_shorten(cell, w) for cell, w in zip(row, widths)] for row in rows]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(GAP.join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines)
