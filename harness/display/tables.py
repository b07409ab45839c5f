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


#: How a header names a scale (see :attr:`harness.definitions.task.TaskMetadata.scale`).
UNIT_LABELS = {"percent": "%", "fraction": "0-1"}


def unit_label(metric: str, scale: str | None, unscaled: Sequence[str] = ()) -> str:
    """A metric's column header with its unit: ``f1 (%)``, ``map (0-1)``; the bare name where the
    scale is not recorded (results older than the field) or the metric is no score on it."""
    return metric if scale is None or metric in unscaled else f"{metric} ({UNIT_LABELS.get(scale, scale)})"


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
    user asks for ``--wide``. A table that cannot fit so (many columns: MKQA's 14 metrics) is
    printed whole in blocks of columns, one under the other, each led by the first column (the
    row's name)."""
    rows = list(rows)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    if max_width is None:
        return _render(header, rows, widths, range(len(widths)))
    floors = [max(len(name), MIN_COLUMN) for name in header]
    blocks = [list(range(len(widths)))]
    if sum(map(min, widths, floors)) + len(GAP) * (len(widths) - 1) > max_width:
        blocks = _column_blocks(widths, max_width)  # cutting cannot make it fit
    return "\n\n".join(_render(header, rows, _cut(widths, floors, block, max_width), block) for block in blocks)


def _cut(widths: list[int], floors: list[int], columns: Sequence[int], max_width: int) -> list[int]:
    """``widths`` with those of ``columns`` cut, one character at a time off the column with the
    most to spare above its floor, until the columns fit ``max_width`` or reach their floors."""
    widths = list(widths)
    excess = sum(widths[i] for i in columns) + len(GAP) * (len(columns) - 1) - max_width
    while excess > 0:
        column = max(columns, key=lambda i: widths[i] - floors[i])
        if widths[column] <= floors[column]:
            break
        widths[column] -= 1
        excess -= 1
    return widths


def _column_blocks(widths: list[int], max_width: int) -> list[list[int]]:
    """The columns in blocks that each fit ``max_width`` after the first column, which leads every
    block (a block holds one more column at least, however wide)."""
    blocks: list[list[int]] = []
    for column in range(1, len(widths)):
        width = sum(widths[i] for i in blocks[-1]) + len(GAP) * len(blocks[-1]) if blocks else 0
        if not blocks or (len(blocks[-1]) > 1 and width + widths[column] > max_width):
            blocks.append([0])
        blocks[-1].append(column)
    return blocks or [[0]]


def _render(header: list[str], rows: list[list[str]], widths: list[int], columns: Iterable[int]) -> str:
    columns = list(columns)
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        GAP.join(_shorten(line[i], widths[i]).ljust(widths[i]) for i in columns).rstrip() for line in lines
    )
