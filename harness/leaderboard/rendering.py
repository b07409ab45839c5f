"""The leaderboard as text: one ranked table per scope, language matrices, and JSON for ``--json``.

Every line fits the width a command passes (the terminal's, unless the user asks for
``--wide``): tables are cut by :func:`~harness.tables.format_table`, the prose lines around them
(scope, model cards) wrapped.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping

from harness.errors import HarnessError
from harness.leaderboard.entry import PAIR_AXES, Leaderboard, LeaderboardEntry, ModelCard
from harness.leaderboard.ranking import RankedGroup, ranked
from harness.tables import format_score, format_table

#: Indent of a wrapped line's continuation.
INDENT = "  "
#: A matrix's cells: row language -> column language -> value (None: not computed).
Cells = Mapping[str, Mapping[str, float | None]]


def render(board: Leaderboard, task: str | None = None, max_width: int | None = None) -> str:
    """The leaderboard as text tables, one per scope (see :func:`ranked`), best first; tied ranks
    marked as on the page (``=2``); each submission's model card under its table; ``max_width``
    as :func:`format_table`'s, and the lines around the tables wrapped to it."""
    groups = ranked(board, task)
    if not groups:
        return "(no entries)" if task is None else f"(no entries for task '{task}')"
    return "\n\n".join(_block(group, max_width) for group in groups)


def _block(group: RankedGroup, max_width: int | None) -> str:
    scope = group.scope
    lines = [*_fit(f"{scope.task} ({scope.split}) - main score: {group.main_metric}", max_width),
             *_fit(f"scope: {group.description}", max_width)]
    rows = [[f"={e.tied_with}" if e.tied_with else str(e.rank), e.entry.model.label,
             format_score(e.entry.main_score, e.entry.main_interval), "-" if e.entry.count is None else str(e.entry.count),
             e.entry.finished_at[:10]] for e in group.entries]
    lines.append(format_table(["#", "model", group.main_metric, "count", "date"], rows, max_width))
    cards = [(e.entry.model.label, e.entry.card) for e in group.entries if e.entry.card is not None]
    if cards:
        lines.append("model cards:")
        lines += [line for label, card in cards for line in _fit(f"{label}: {_card_line(card)}", max_width, INDENT)]
    return "\n".join(lines)


def _fit(text: str, width: int | None, indent: str = "") -> list[str]:
    """``text`` after ``indent`` as lines of at most ``width`` characters, continuations indented
    once more; one line when there is no width to fit."""
    if width is None:
        return [indent + text]
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + INDENT, break_on_hyphens=False)


def _card_line(card: ModelCard) -> str:
    return card_summary(card) if card.link is None else f"{card_summary(card)}; {card.link}"


def card_summary(card: ModelCard) -> str:
    """A model card in words (the page's too): how the model was trained, its size and licence."""
    training = [name for name, flag in (("zero-shot", card.zero_shot),
                                        ("translate-train", card.translated_training_data)) if flag]
    parts = [", ".join(training) or "not zero-shot"]
    if card.parameters is not None:
        parts.append(f"{compact(card.parameters)} parameters")
    if card.license is not None:
        parts.append(f"licence {card.license}")
    return "; ".join(parts)


def compact(count: int) -> str:
    """A count in three significant digits with its unit: 550M, 1.23B, 270K, 999."""
    for unit, size in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return str(count)


def render_json(board: Leaderboard, task: str | None = None) -> str:
    """The ranked groups (:meth:`RankedGroup.to_dict`) as ``harness leaderboard show --json`` prints them."""
    return json.dumps([group.to_dict() for group in ranked(board, task)], indent=1, ensure_ascii=False)


def render_matrix(board: Leaderboard, task: str, metric: str | None = None) -> str:
    """One matrix per entry of ``task``: a matrix the entry carries (``metric`` naming one of its
    ``matrices``, e.g. LAReQA's ``one_target_mrr``: rows its first language, columns its second),
    else its language-pair rows (e.g. MLQA's G-XLT) for the row metric ``metric`` (rows the
    context language, columns the question language); the title of each names its axes."""
    blocks = []
    for entry in board.entries:
        if entry.scope.task != task:
            continue
        found = _matrix(entry, metric)
        if found is None:
            continue
        name, cells, axes = found
        columns = list(dict.fromkeys(column for row in cells.values() for column in row))
        body = [[row] + [format_score(values.get(column)) for column in columns] for row, values in cells.items()]
        blocks.append(f"{entry.model.label} - {name} ({axes})\n" + format_table([""] + columns, body))
    if not blocks:
        names = sorted({n for e in board.entries if e.scope.task == task for n in e.matrices})
        raise HarnessError(f"no matrix{f' {metric!r}' if metric else ''} for task '{task}' on this leaderboard "
                           f"(matrices: {', '.join(names) or 'none'}; or a row metric of language-pair rows)")
    return "\n\n".join(blocks)


def _matrix(entry: LeaderboardEntry, metric: str | None) -> tuple[str, Cells, str] | None:
    """The matrix ``metric`` of ``entry`` (a carried one, else its language-pair rows), its name
    and what its rows and columns are; None where the entry has language-pair rows for neither."""
    if metric in entry.matrices:
        return metric, entry.matrices[metric], "rows: first language, columns: second"
    pairs = [row for row in entry.rows if len(row.languages) == 2]
    if not pairs:
        return None
    name = metric or next(iter(pairs[0].metrics))
    if name not in pairs[0].metrics:
        raise HarnessError(f"'{name}' is neither a row metric nor a matrix of task {entry.scope.task} "
                           f"(known: {', '.join([*pairs[0].metrics, *entry.matrices])})")
    cells: dict[str, dict[str, float | None]] = {}
    for row in pairs:
        cells.setdefault(row.languages[0], {})[row.languages[1]] = row.metrics[name]
    return name, cells, f"rows: {PAIR_AXES[0]} language, columns: {PAIR_AXES[1]} language"
