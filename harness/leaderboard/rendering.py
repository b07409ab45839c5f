"""The leaderboard as text: one ranked table per scope, language matrices, and JSON for ``--json``.

Every line fits the width a command passes (the terminal's, unless the user asks for
``--wide``): tables are cut by :func:`~harness.display.tables.format_table`, the prose lines around them
(scope, model cards) wrapped.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.display.tables import format_score, format_table
from harness.errors import HarnessError
from harness.leaderboard.entry import PAIR_AXES, Leaderboard, LeaderboardEntry, ModelCard, PairedDifference
from harness.leaderboard.ranking import RankedGroup, ranked
from harness.leaderboard.records import entry_records, reported_records, to_csv
from harness.leaderboard.reported import ReportedResult
from harness.leaderboard.scope import coverage, task_languages

#: Indent of a wrapped line's continuation.
INDENT = "  "
#: A matrix's cells: row language -> column language -> value (None: not computed).
Cells = Mapping[str, Mapping[str, float | None]]


#: Decimals of a metric in fractions (LAReQA's mAP: 0.1722) and in percent (F1: 26.99): one
#: format per metric, whatever the values of a table (issue 31: 26.9962, 51.2428 and 60 side by side).
DECIMALS = {"fraction": 4, "percent": 2}


def metric_unit(values: Iterable[float | None]) -> str | None:
    """A metric's unit as its values show it, where nothing declares it: ``fraction`` when every
    value lies in [0, 1] and one lies strictly between, ``percent`` when one exceeds 1, None when
    the values cannot tell (all 0 or 1). Read over a whole board, so one metric keeps one unit."""
    found = [v for v in values if v is not None]
    if any(v > 1 for v in found):
        return "percent"
    return "fraction" if any(0 < v < 1 for v in found) else None


def metric_units(board: Leaderboard, reported: Sequence[ReportedResult] = ()) -> dict[str, str]:
    """The unit of every metric on ``board`` and among ``reported`` (whose files declare it): as
    the board's values show it, else as the papers declare it, else ``percent`` (values that are
    all 0 or 1 cannot tell; an F1 of an empty baseline is one)."""
    values: dict[str, list[float | None]] = {}
    for entry in board.entries:
        values.setdefault(entry.main_metric, []).append(
            entry.main_score
        )  # a main score may name a row (XTREME's all_task)
        for row in entry.rows:
            for name, value in row.metrics.items():
                values.setdefault(name, []).append(value)
    declared = {result.metric: result.unit for result in reported}
    return {**declared, **{name: metric_unit(found) or declared.get(name, "percent") for name, found in values.items()}}


def number(value: float | None, unit: str, interval: Sequence[float] | None = None) -> str:
    """A number in its metric's one format (:data:`DECIMALS`), with its interval when given."""
    if value is None:
        return "-"
    places = DECIMALS[unit]
    text = f"{value:.{places}f}"
    return text if interval is None else f"{text} [{interval[0]:.{places}f}, {interval[1]:.{places}f}]"


def places(values: Iterable[float | None]) -> int:
    """Decimal places of the most precise of ``values`` as stored (0.29: 2, 45.1: 1, 94: 0). A
    paper's table prints its numbers to one place, and JSON keeps none of a number's trailing
    zeros: the 0.80 printed beside 0.76 is stored as 0.8, so a table's places are its values' most."""
    return max((len(f"{v:g}".partition(".")[2]) for v in values if v is not None), default=0)


def printed(value: float | None, digits: int | None = None) -> str:
    """A reported number as the paper printed it, to ``digits`` places (see :func:`places`;
    default: the number's own last digit)."""
    if value is None:
        return "-"
    return f"{value:g}" if digits is None else f"{value:.{digits}f}"


def _reported_values(result: ReportedResult) -> list[float | None]:
    return [result.score, *result.main.subsets.values()]


def render(board: Leaderboard, task: str | None = None, max_width: int | None = None) -> str:
    """The leaderboard as text tables, one per scope (see :func:`ranked`), best first; tied ranks
    marked as on the page (``=2``); each submission's model card under its table; ``max_width``
    as :func:`format_table`'s, and the lines around the tables wrapped to it."""
    groups = ranked(board, task)
    if not groups:
        return "(no entries)" if task is None else f"(no entries for task '{task}')"
    units = metric_units(board)
    return "\n\n".join(_block(group, units[group.main_metric], max_width) for group in groups)


def _block(group: RankedGroup, unit: str, max_width: int | None) -> str:
    scope = group.scope
    lines = [
        *_fit(f"{scope.task} ({scope.split}) - main score: {group.main_metric} ({unit})", max_width),
        *_fit(f"scope: {group.description}", max_width),
    ]
    rows = [
        [
            f"={e.tied_with}" if e.tied_with else str(e.rank),
            e.entry.model.label,
            number(e.entry.main_score, unit, e.entry.main_interval),
            "-" if e.entry.count is None else str(e.entry.count),
            e.entry.finished_at[:10],
        ]
        for e in group.entries
    ]
    lines.append(format_table(["#", "model", f"{group.main_metric} [95% interval]", "count", "date"], rows, max_width))
    paired = [f"#{e.rank} {paired_summary(p)}" for e in group.entries if (p := e.paired_with_above) is not None]
    if paired:
        lines += _fit(
            "the entry above minus each entry, question by question (harness leaderboard pair; ties from these "
            f"where given, else from overlapping intervals): {'; '.join(paired)}",
            max_width,
        )
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


def paired_summary(paired: PairedDifference) -> str:
    """A paired comparison in a line (``leaderboard pair`` prints it too): the difference, its
    interval and the permutation p."""
    low, high = paired.interval
    return f"{format_score(paired.difference)} [{format_score(low)}, {format_score(high)}] p {paired.p_permutation:.2g}"


def card_summary(card: ModelCard) -> str:
    """A model card in words (the page's too): how the model was trained, its size and licence."""
    training = [
        name
        for name, flag in (("zero-shot", card.zero_shot), ("translate-train", card.translated_training_data))
        if flag
    ]
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


def render_json(
    board: Leaderboard,
    task: str | None = None,
    reported: Sequence[ReportedResult] | None = None,
    model: str | None = None,
) -> str:
    """The ranked groups (:meth:`RankedGroup.to_dict`) as ``harness leaderboard show --json`` prints
    them, or a model's rows across tasks (:func:`model_rows`); with ``reported`` (``--reported``)
    an object holding those (``groups`` or ``model_rows``) and the reported results apart."""
    verified: Any = model_rows(board, model) if model else [group.to_dict() for group in ranked(board, task)]
    if reported is None:
        return json.dumps(verified, indent=1, ensure_ascii=False)
    return json.dumps(
        {"model_rows" if model else "groups": verified, "reported": [result.to_dict() for result in reported]},
        indent=1,
        ensure_ascii=False,
    )


def board_csv(
    board: Leaderboard, task: str | None = None, model: str | None = None, reported: Sequence[ReportedResult] = ()
) -> str:
    """Every number of the entries (of ``task``, of the models whose label contains ``model``) as
    CSV records (:mod:`~harness.leaderboard.records`), then those of ``reported``, marked so."""
    entries = [
        e
        for e in board.entries
        if (task is None or e.scope.task == task) and (model is None or model.casefold() in e.model.label.casefold())
    ]
    return to_csv(
        [*(r for e in entries for r in entry_records(e)), *(r for x in reported for r in reported_records(x))]
    )


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
        raise HarnessError(
            f"no matrix{f' {metric!r}' if metric else ''} for task '{task}' on this leaderboard "
            f"(matrices: {', '.join(names) or 'none'}; or a row metric of language-pair rows)"
        )
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
        raise HarnessError(
            f"'{name}' is neither a row metric nor a matrix of task {entry.scope.task} "
            f"(known: {', '.join([*pairs[0].metrics, *entry.matrices])})"
        )
    cells: dict[str, dict[str, float | None]] = {}
    for row in pairs:
        cells.setdefault(row.languages[0], {})[row.languages[1]] = row.metrics[name]
    return name, cells, f"rows: {PAIR_AXES[0]} language, columns: {PAIR_AXES[1]} language"


def model_rows(board: Leaderboard, model: str) -> list[dict[str, Any]]:
    """One row per entry of the models whose label contains ``model`` (any case), across tasks:
    the entry's scope, main score with its interval and unit, and its rank in its scope (of how
    many), in the order of the ranked tables. A one-line error naming the board's models where
    none matches."""
    units = metric_units(board)
    rows = []
    for group in ranked(board):
        for placed in group.entries:
            entry = placed.entry
            if model.casefold() in entry.model.label.casefold():
                rows.append(
                    {
                        "model": entry.model.label,
                        "task": group.scope.task,
                        "split": group.scope.split,
                        "scope": group.description,
                        "main_metric": group.main_metric,
                        "unit": units[group.main_metric],
                        "main_score": entry.main_score,
                        "main_interval": None if entry.main_interval is None else list(entry.main_interval),
                        "rank": placed.rank,
                        "tied_with": placed.tied_with,
                        "of": len(group.entries),
                        "count": entry.count,
                        "key": entry.key,
                    }
                )
    if not rows:
        labels = sorted({e.model.label for e in board.entries})
        raise HarnessError(
            f"no entry of a model matching '{model}' on this leaderboard (models: {', '.join(labels) or 'none'})"
        )
    return rows


def render_model(board: Leaderboard, model: str, max_width: int | None = None) -> str:
    """One table across tasks for the models whose label contains ``model`` (:func:`model_rows`)."""
    body = [
        [
            r["model"],
            f"{r['task']} ({r['split']})",
            f"{r['main_metric']} ({r['unit']})",
            number(r["main_score"], r["unit"], r["main_interval"]),
            f"{'=' + str(r['tied_with']) if r['tied_with'] else r['rank']} of {r['of']}",
            "-" if r["count"] is None else str(r["count"]),
            r["scope"],
        ]
        for r in model_rows(board, model)
    ]
    return format_table(
        ["model", "task", "main metric", "score [95% interval]", "rank", "count", "scope"], body, max_width
    )


def render_reported(results: Sequence[ReportedResult], max_width: int | None = None) -> str:
    """Papers' reported results as text: one table per scope (task, options, split, languages,
    metric), systems in the papers' order, numbers as printed, a column per language the papers
    print -- not ranked, and said to be neither re-scored nor comparable with the board's entries
    unless their scopes agree."""
    if not results:
        return "(no reported results)"
    groups: dict[str, list[ReportedResult]] = {}
    for result in results:
        key = json.dumps(
            [result.task, result.task_options, result.split, sorted(result.languages), result.metric], sort_keys=True
        )
        groups.setdefault(key, []).append(result)
    blocks = []
    for members in groups.values():
        first = members[0]
        options = ",".join(f"{k}={v}" for k, v in sorted(first.task_options.items())) or "no options"
        lines = [
            *_fit(
                f"REPORTED {first.task} ({first.split}) - {first.metric} ({first.unit}): as printed in the "
                "papers, no predictions, not re-scored, not ranked",
                max_width,
            ),
            *_fit(f"scope: {options}; {coverage(first.languages, task_languages(first.task))}", max_width),
        ]
        subsets = list(dict.fromkeys(subset for r in members for subset in r.main.subsets))
        digits = places(v for r in members for v in _reported_values(r))
        rows = [
            [
                r.model,
                printed(r.score, digits) if r.spread is None else f"{printed(r.score, digits)} ± {r.spread:g}",
                *(printed(r.main.subsets.get(subset), digits) for subset in subsets),
                r.source,
            ]
            for r in members
        ]
        lines.append(format_table(["system", first.metric, *subsets, "source"], rows, max_width))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_markdown(board: Leaderboard, reported: Sequence[ReportedResult] = ()) -> str:
    """The headline numbers of a board as a Markdown table (the README's): each entry of a model
    with a model card, its main score with its interval, and beside it the best number the papers
    report on a :func:`comparable` scope, with who reports it and the options it was measured with
    where they differ from the entry's."""
    units = metric_units(board, reported)
    lines = [
        "| task (split) | scope | model | main metric | score [95% interval] | best reported in the papers |",
        "|---|---|---|---|---|---|",
    ]
    for group in ranked(board):
        for placed in group.entries:
            entry = placed.entry
            if entry.card is None:
                continue
            unit = units[group.main_metric]
            best = max(comparable(group, reported), key=lambda r: r.score or 0.0, default=None)
            beside = (
                "–"
                if best is None
                else f"{printed(best.score, places(_reported_values(best)))} ({best.model}{_differing(best, group)}; {best.source})"
            )
            declared = task_languages(group.scope.task)
            # e.g. --langs en alone, or an edition's list of the task's languages (named)
            languages = frozenset(group.scope.languages)
            some = declared is not None and (languages < declared.all or declared.edition_of(languages) is not None)
            scope = ", ".join(
                filter(
                    None,
                    [
                        ",".join(f"{k}={v}" for k, v in sorted(group.scope.task_options.items())),
                        coverage(group.scope.languages, declared) if some else "",
                        f"limit {group.scope.limit} per language" if group.scope.limit else "",
                    ],
                )
            )
            lines.append(
                f"| {group.scope.task} ({group.scope.split}) | {scope or '–'} | {entry.model.label} | "
                f"{group.main_metric} ({unit}) | {number(entry.main_score, unit, entry.main_interval)} | {beside} |"
            )
    return "\n".join(lines)


def comparable(group: RankedGroup, reported: Sequence[ReportedResult]) -> list[ReportedResult]:
    """The reported results measured on nearly the scope of ``group``: the same task, split, metric
    and language set, and no task option the group's scope lacks (LAReQA's monolingual pools, say,
    are another task); an option's value may differ (a candidate form), and is then named."""
    scope = group.scope
    return [
        r
        for r in reported
        if r.score is not None
        and (r.task, r.split, r.metric) == (scope.task, scope.split, group.main_metric)
        and set(r.languages) == set(scope.languages)
        and set(r.task_options) <= set(scope.task_options)
    ]


def _differing(result: ReportedResult, group: RankedGroup) -> str:
    """``, candidates=pair``: the reported result's options whose values are not the group's."""
    options = [f"{k}={v}" for k, v in sorted(result.task_options.items()) if group.scope.task_options.get(k) != v]
    return "".join(f", {option}" for option in options)
