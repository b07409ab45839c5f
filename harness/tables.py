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


def format_table(header: list[str], rows: Iterable[list[str]]) -> str:
    """Columns padded to their widest cell, a rule under the header, no trailing blanks: every
    table the harness prints (leaderboard, results, listings) looks the same."""
    rows = list(rows)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines)
