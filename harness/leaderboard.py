"""The leaderboard: every run folded into one JSON file, safely, and shown as a table.

Updates take a file lock and replace the file atomically, so two runs finishing at once both
land and a crash never leaves a broken leaderboard. An entry is keyed by what makes scores
comparable (task and options, split, data, languages, limit, model identity): re-running the
same thing replaces its entry, anything else adds one.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness.errors import HarnessError
from harness.io import dump_json, read_json, remove_temporaries, sha256_text
from harness.provenance import now_iso
from harness.results import RunResult
from harness.tables import format_score, format_table
from harness.validation import validate

SCHEMA = "leaderboard"
SCHEMA_VERSION = "1.0"
#: The page's HTML and script; :func:`page` puts a leaderboard's JSON where the marker is.
PAGE_TEMPLATE = Path(__file__).with_name("leaderboard_page.html")
PAGE_DATA_MARKER = "/*LEADERBOARD_JSON*/"
#: Characters written as JSON ``\u`` escapes inside the page's script element: with no ``<`` there,
#: no text in the leaderboard (a model named ``</script><img src=x onerror=...>``) can end the
#: element or open a comment (``>`` and ``&`` as well, as HTML-safe JSON writers do).
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def entry_from_result(result: RunResult, result_path: Path) -> dict[str, Any]:
    """The leaderboard entry for one run result."""
    identity = result.model.identity
    model = identity.key()
    data = result.data
    fingerprint = data.fingerprint
    key = sha256_text(
        json.dumps(
            [result.task.name, result.task.options, data.split, fingerprint, list(data.languages), data.limit, model],
            sort_keys=True,
        )
    )[:16]
    extra: dict[str, Any] = {}
    if result.main_score.interval is not None:
        extra["main_interval"] = list(result.main_score.interval)
    if result.task.scorer_signature is not None:
        extra["scorer_signature"] = result.task.scorer_signature
    matrices = {name: value for name, value in result.diagnostics.items() if _is_matrix(value)}
    if matrices:
        extra["matrices"] = matrices
    return {
        "key": key,
        "task": result.task.name,
        "task_options": result.task.options,
        "split": data.split,
        "languages": list(data.languages),
        "limit": data.limit,
        "demo": data.demo,
        "data_fingerprint": fingerprint,
        "model": model,
        "main_metric": result.main_score.metric,
        "main_score": result.main_score.value,
        "higher_is_better": result.task.higher_is_better,
        "rows": [row.to_dict() for row in result.rows],
        "run_id": result.run_id,
        "kind": result.kind,
        "result_path": str(result_path),
        "finished_at": result.provenance.finished_at,
        "harness_version": result.provenance.harness_version,
        **extra,
    }


def _is_matrix(value: Any) -> bool:
    """Whether a diagnostic is a language x language matrix: ``{row: {column: number}}`` (any
    task's: the leaderboard names no benchmark)."""
    return (isinstance(value, dict) and bool(value) and all(
        isinstance(row, dict) and row and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                              for x in row.values()) for row in value.values()))


def load(path: Path) -> dict[str, Any]:
    """Read and validate a leaderboard (an empty one if the file does not exist yet)."""
    if not path.exists():
        return {"schema_version": SCHEMA_VERSION, "updated_at": now_iso(), "entries": []}
    board = read_json(path)
    validate(board, SCHEMA, file=path)
    return board


def add_result(path: Path, result: RunResult, result_path: Path) -> dict[str, Any]:
    """Fold one run result into the leaderboard at ``path`` (locked, atomic); return the entry."""
    entry = entry_from_result(result, result_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=120):
        remove_temporaries(path.parent, path.name)  # of a run killed mid-update: every writer holds the lock
        board = load(path)
        board["entries"] = [e for e in board["entries"] if e["key"] != entry["key"]] + [entry]
        board["entries"].sort(key=lambda e: (e["task"], e["split"], e["demo"], e["key"]))
        board["updated_at"] = now_iso()
        validate(board, SCHEMA, file=path)
        dump_json(board, path)
    return entry


#: What an entry's number depends on besides the model (issue 13): only entries that agree on all
#: of it are ranked together. ``scorer_signature`` is part of it where an entry records one.
SCOPE_FIELDS = ("task", "task_options", "split", "languages", "limit", "demo", "data_fingerprint", "scorer_signature")


def scope(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry's scope: task and its options, split, language set, limit, demo data or not, data
    fingerprint, and scorer signature when the entry has one. Demo and ``--limit`` runs thus never
    rank with full runs, nor MLQA XLT with G-XLT, nor a subset of languages with all of them."""
    out = {name: entry[name] for name in SCOPE_FIELDS if name in entry}
    out["languages"] = sorted(out["languages"])  # a set: --langs de,en is --langs en,de
    return out


@cache
def _task_languages(task: str) -> frozenset[str] | None:
    """The languages a task declares (from the installed plugins' light metadata), or None for a
    task no installed plugin knows (a board from elsewhere)."""
    from harness.registry import Registry

    entry = Registry.discover().tasks.entries.get(task)
    return None if entry is None else frozenset(entry[0].languages)


def _coverage(task: str, languages: list[str]) -> str:
    """``N languages``, or, where a run left some of the task's languages out, ``incomplete: N of
    M languages`` with the missing ones: one rule for every task."""
    declared = _task_languages(task)
    listed = f"{len(languages)} languages" if len(languages) > 8 else "languages " + ",".join(languages)
    if declared is None or not set(languages) < declared:
        return listed
    missing = sorted(declared - set(languages))
    shown = ",".join(missing) if len(missing) <= 8 else f"{len(missing)} of them"
    return f"incomplete: {len(languages)} of {len(declared)} languages (missing {shown})"


def _describe(scope_: dict[str, Any]) -> str:
    """One line saying what a scope is, for the title of its table."""
    parts = [_options(scope_["task_options"]) or "no options", _coverage(scope_["task"], scope_["languages"]),
             "demo data" if scope_["demo"] else f"data {scope_['data_fingerprint'][:12]}"]
    if scope_["limit"]:
        parts.append(f"limit {scope_['limit']} per language")
    if "scorer_signature" in scope_:
        parts.append(f"scorer {scope_['scorer_signature']}")
    return "; ".join(parts)


def ranked(board: dict[str, Any], task: str | None = None) -> list[dict[str, Any]]:
    """The entries grouped by scope and main metric (a task whose main metric depends on the run,
    such as XTREME's all_task and the mean of an incomplete submission, never ranks the two
    together), best first: full-data runs before ``--limit`` runs before demo runs. Each group is
    ``{"scope", "description", "main_metric", "higher_is_better", "entries": [{"rank", "model",
    "main_score", "main_interval", "count", "finished_at", "key", "tied_with"}]}``; ``count`` is the number of questions the entry's summary
    (first) row rests on, ``tied_with`` the rank its statistical tie starts at (:func:`tie_marks`)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in board["entries"]:
        if task is None or entry["task"] == task:
            groups.setdefault(json.dumps([scope(entry), entry["main_metric"]], sort_keys=True), []).append(entry)
    out = []
    for group in groups.values():
        group.sort(key=lambda e: e["main_score"], reverse=group[0]["higher_is_better"])
        out.append({
            "scope": scope(group[0]), "description": _describe(scope(group[0])), "main_metric": group[0]["main_metric"],
            "higher_is_better": group[0]["higher_is_better"],
            "entries": [{"rank": rank, "model": entry["model"]["label"], "main_score": entry["main_score"],
                         "main_interval": entry.get("main_interval"),
                         "count": entry["rows"][0]["count"] if entry["rows"] else None,
                         "finished_at": entry["finished_at"], "key": entry["key"], "tied_with": tied}
                        for rank, (entry, tied) in enumerate(zip(group, tie_marks(group)), start=1)],
        })
    out.sort(key=lambda g: _scope_order(g["scope"]) + (g["main_metric"],))
    return out


def tie_marks(entries: list[dict[str, Any]]) -> list[int | None]:
    """Statistically tied ranks of ``entries`` (ranked best first): an entry whose main-score
    interval overlaps the interval of the entry ranked just above it is tied with it, and ties
    chain (1 overlaps 2, 2 overlaps 3: all three tied). Each entry's mark is the rank its tie
    starts at (shown as "=2"), or None where it is tied with neither neighbour; an entry with no
    interval (no bootstrap) is never tied. Overlap of two intervals is a conservative reading: it
    says the ranking between the two is not established, not that the models are equal."""
    marks: list[int | None] = [None] * len(entries)
    start = 0
    for i in range(1, len(entries)):
        above, here = entries[i - 1].get("main_interval"), entries[i].get("main_interval")
        if above is not None and here is not None and here[0] <= above[1] and above[0] <= here[1]:
            marks[start] = marks[i] = start + 1
        else:
            start = i
    return marks


def _scope_order(scope_: dict[str, Any]) -> tuple[Any, ...]:
    """Tables in reading order: by task and split; full data, then ``--limit``, then demo runs;
    no options before options; more languages before fewer."""
    return (scope_["task"], scope_["split"], scope_["demo"], scope_["limit"] or 0, _options(scope_["task_options"]),
            -len(scope_["languages"]), scope_["languages"], json.dumps(scope_, sort_keys=True))


def _options(options: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def render(board: dict[str, Any], task: str | None = None, max_width: int | None = None) -> str:
    """The leaderboard as text tables, one per scope (see :func:`ranked`), best first; tied ranks
    marked as on the page (``=2``, :func:`tie_marks`); ``max_width`` as :func:`format_table`'s."""
    groups = ranked(board, task)
    if not groups:
        return "(no entries)" if task is None else f"(no entries for task '{task}')"
    blocks = []
    for group in groups:
        scope_ = group["scope"]
        title = f"{scope_['task']} ({scope_['split']}) - main score: {group['main_metric']}\nscope: {group['description']}"
        rows = [[f"={e['tied_with']}" if e["tied_with"] else str(e["rank"]), e["model"], format_score(e["main_score"], e["main_interval"]),
                 "-" if e["count"] is None else str(e["count"]), e["finished_at"][:10]] for e in group["entries"]]
        blocks.append(title + "\n" + format_table(["#", "model", group["main_metric"], "count", "date"], rows,
                                                   max_width))
    return "\n\n".join(blocks)


def render_matrix(board: dict[str, Any], task: str, metric: str | None = None) -> str:
    """One matrix per entry of ``task``: a matrix the entry carries (``metric`` naming one of its
    ``matrices``, e.g. LAReQA's ``one_target_mrr``), else its language-pair rows (e.g. MLQA's
    G-XLT) for the row metric ``metric``; rows are the first language, columns the second."""
    blocks = []
    for entry in board["entries"]:
        if entry["task"] != task:
            continue
        carried = entry.get("matrices", {})
        if metric in carried:
            name, cells = metric, {(a, b): value for a, row in carried[metric].items() for b, value in row.items()}
        else:
            pairs = [row for row in entry["rows"] if len(row.get("languages", [])) == 2]
            if not pairs:
                continue
            name = metric or next(iter(pairs[0]["metrics"]))
            if name not in pairs[0]["metrics"]:
                known = [*pairs[0]["metrics"], *carried]
                raise HarnessError(f"'{name}' is neither a row metric nor a matrix of task {task} "
                                   f"(known: {', '.join(known)})")
            cells = {tuple(row["languages"]): row["metrics"][name] for row in pairs}
        firsts = list(dict.fromkeys(a for a, _ in cells))
        seconds = list(dict.fromkeys(b for _, b in cells))
        body = [[a] + [format_score(cells.get((a, b))) for b in seconds] for a in firsts]
        blocks.append(f"{entry['model']['label']} - {name} (rows: first language, columns: second)\n"
                      + format_table([""] + seconds, body))
    if not blocks:
        names = sorted({n for e in board["entries"] if e["task"] == task for n in e.get("matrices", {})})
        raise HarnessError(f"no matrix{f' {metric!r}' if metric else ''} for task '{task}' on this leaderboard "
                           f"(matrices: {', '.join(names) or 'none'}; or a row metric of language-pair rows)")
    return "\n\n".join(blocks)


def page(board: dict[str, Any]) -> str:
    """A self-contained HTML page of ``board``: the leaderboard's JSON, and its ranking by scope
    (:func:`ranked`, so the page ranks exactly as ``harness leaderboard show``), embedded in the
    page, so the file opens from disk, can be mailed or published as one file, and shows exactly
    the leaderboard it was made from."""
    embedded = {"board": board, "groups": ranked(board)}
    data = json.dumps(embedded, ensure_ascii=False, allow_nan=False, separators=(",", ":")).translate(_SCRIPT_SAFE)
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    return template.replace(PAGE_DATA_MARKER, data, 1)


def page_server(path: Path, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """An HTTP server whose every GET of ``/`` answers the page of the leaderboard at ``path``, read
    afresh (a run finishing meanwhile shows on reload); anything else is 404. Nothing is bound
    beyond ``host`` (this machine by default)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                self.send_error(404)
                return
            try:
                body = page(load(path)).encode("utf-8")
            except HarnessError as exc:
                self.send_error(500, explain=str(exc))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
            print(f"{self.address_string()} {format % args}", file=sys.stderr)

    try:
        return ThreadingHTTPServer((host, port), Handler)
    except (OSError, OverflowError) as exc:  # OverflowError: a port outside 0-65535
        raise HarnessError(f"cannot serve on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
