"""Reading and writing run results and the leaderboard as typed objects: the harness's pydantic
records (:mod:`harness.files.records`) against the hand-written ``to_dict``/``from_dict`` they
replaced, and pydantic against msgspec and cattrs on the same records.

Data: the shipped board, ``leaderboard/leaderboard.json``, and the ``result.json`` files of its
runs under ``leaderboard/results/`` (23 of each when measured: 304 rows, intervals, provenance,
diagnostics), parsed once outside the timing; with ``--instances``, a run's per-question file
too. Load is dict -> objects, dump is objects -> dict (the JSON text is parsed and written by the
same ``json`` calls either way; one parse and one schema check of the board are timed apart, for
scale).

Baseline: the hand-written code at ``--baseline`` (default ``fa6b4c0``, the last commit before
the change), read with ``git show`` and imported beside the current code; both sides must give
the same objects and the same dicts. Candidates on the results' rows (``ResultRow``, the records
the three libraries map without custom code): pydantic ``TypeAdapter``,
``msgspec.convert``/``msgspec.to_builtins`` and a ``cattrs.Converter`` on the same dataclasses.
Their dumps keep empty optional fields (the file omits them), so msgspec's and cattrs's dump
figures are lower bounds of what the file's layout costs them. The sides run in turn
``--repeat`` times with the garbage collector off (see :func:`timed`); min and median per side
and the ratio are printed.

    python benchmarks/bench_result_io.py --instances RUN/instances.jsonl   # the bench extra: msgspec, cattrs

Measured on the AMD EPYC (AVX-512 BF16; 2 cores shared with other jobs, load average near 4.5),
31 runs each, min (median) in milliseconds, hand-written -> pydantic:

- 23 results, load 1.04 (1.09) -> 0.99 (1.07); dump 0.61 (0.86) -> 3.88 (8.52)
- the board, load 0.61 (0.63) -> 0.66 (0.70); dump 0.32 (0.42) -> 2.42 (4.10)
- 15,747 per-question records (MLQA oracle, ``--instances``), dump 13.9 (17.6) -> 31.5 (35.6) in
  one call, 53.6 (58.3) one by one
- 304 rows, no custom code, load / dump: pydantic 0.41 / 0.42, msgspec 0.24 / 0.20, cattrs 1.37 / 0.39
- for scale: the board's schema check (run on every read and write of it) 56-142 ms; once per
  process, pydantic's import 36-82 ms and its adapters' build on the first board 23-43 ms.

So pydantic reads as fast as the hand-written code and writes 2-10x slower: a few milliseconds a
result or board, beside a schema check ten times as long on every write, and 20 ms more for
16,000 per-question records. msgspec is 1.7-2x faster than pydantic on the rows, but on
dataclasses it writes every field (no per-field omission, no reordered or nested keys): the
files' layout would need the records rewritten as ``msgspec.Struct`` (no ``dataclasses.replace``
nor ``dataclasses.fields``, which callers use) and hand-written layout code again; cattrs reads
3x slower than pydantic and derives no JSON Schema. pydantic lays the files out with declarations
on the fields and derives the schemas that tests/harness/results/test_record_schemas.py checks against
``schemas/``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import cattrs
import msgspec
from pydantic import TypeAdapter

from harness.definitions.validation import validate
from harness.files.records import to_json_values
from harness.leaderboard.entry import Leaderboard
from harness.results.result import ResultRow, RunResult
from harness.stats.records import Instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Side, alternate, report

ROOT = Path(__file__).resolve().parents[1]
#: The hand-written modules, in import order, and what each imports of the others.
OLD_MODULES = {
    "harness/stats/records.py": "harness.stats.records",
    "harness/results/result.py": "harness.results.result",
    "harness/leaderboard/scope.py": "harness.leaderboard.scope",
    "harness/leaderboard/entry.py": "harness.leaderboard.entry",
}


def hand_written(commit: str) -> dict[str, ModuleType]:
    """The hand-written result and leaderboard modules at ``commit``, imported as ``_old_*``."""
    loaded: dict[str, ModuleType] = {}
    for path, name in OLD_MODULES.items():
        source = subprocess.run(
            ["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        for other in loaded:
            source = source.replace(f"from {other} import", f"from _old_{other.replace('.', '_')} import")
        alias = f"_old_{name.replace('.', '_')}"
        spec = importlib.util.spec_from_loader(alias, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
        loaded[name] = module
    return loaded


def loads(label: str, read: Any, raws: list[dict[str, Any]]) -> Side:
    return Side(label, lambda: [read(raw) for raw in raws])


def dumps(label: str, objects: list[Any]) -> Side:
    return Side(label, lambda: [item.to_dict() for item in objects])


def timed(sides: list[Side], repeat: int) -> None:
    """The sides alternated with the garbage collector off (as ``timeit`` does): a full collection
    falls on whichever side happens to allocate when it is due, and in a process holding tens of
    thousands of records it costs more than the work timed (it made either side 3-9x slower in
    turn, run to run)."""
    gc.collect()
    gc.disable()
    try:
        alternate(sides, repeat)
    finally:
        gc.enable()


def compare(title: str, baseline: Side, harness: Side, repeat: int) -> None:
    print(f"\n{title}")
    timed([baseline, harness], repeat)
    report(baseline, harness, unit="ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="fa6b4c0", help="commit of the hand-written code")
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument(
        "--instances",
        type=Path,
        help="a run's instances.jsonl: also time its per-question records (written in one call by the harness)",
    )
    args = parser.parse_args()

    old = hand_written(args.baseline)
    OldResult = old["harness.results.result"].RunResult
    OldBoard = old["harness.leaderboard.entry"].Leaderboard
    board_text = (ROOT / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8")
    board_raw = json.loads(board_text)
    results_raw = [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob("leaderboard/results/**/result.json"))
    ]
    rows_raw = [row for raw in results_raw for row in raw["rows"]]
    print(f"{len(results_raw)} results ({len(rows_raw)} rows); board of {len(board_raw['entries'])} entries")

    old_results = [OldResult.from_dict(raw) for raw in results_raw]
    new_results = [RunResult.from_dict(raw) for raw in results_raw]
    old_board, new_board = OldBoard.from_dict(board_raw), Leaderboard.from_dict(board_raw)
    # The same objects and the same dicts, field for field and key for key:
    assert [o.to_dict() for o in old_results] == [n.to_dict() for n in new_results] == results_raw
    assert [list(json.dumps(o.to_dict())) for o in old_results] == [list(json.dumps(n.to_dict())) for n in new_results]
    assert json.dumps(old_board.to_dict()) == json.dumps(new_board.to_dict()) == json.dumps(board_raw)

    compare(
        f"load: {len(results_raw)} results, dict -> RunResult",
        loads("hand-written from_dict", OldResult.from_dict, results_raw),
        loads("pydantic (harness)", RunResult.from_dict, results_raw),
        args.repeat,
    )
    compare(
        f"dump: {len(results_raw)} results, RunResult -> dict",
        dumps("hand-written to_dict", old_results),
        dumps("pydantic (harness)", new_results),
        args.repeat,
    )
    compare(
        f"load: the board ({len(board_raw['entries'])} entries), dict -> Leaderboard",
        loads("hand-written from_dict", OldBoard.from_dict, [board_raw]),
        loads("pydantic (harness)", Leaderboard.from_dict, [board_raw]),
        args.repeat,
    )
    compare(
        "dump: the board, Leaderboard -> dict",
        dumps("hand-written to_dict", [old_board]),
        dumps("pydantic (harness)", [new_board]),
        args.repeat,
    )

    if args.instances is not None:
        OldInstance = old["harness.stats.records"].Instance
        lines = [json.loads(line) for line in args.instances.read_text(encoding="utf-8").splitlines()]
        old_items, new_items = [OldInstance.from_dict(raw) for raw in lines], [Instance.from_dict(raw) for raw in lines]
        assert [o.to_dict() for o in old_items] == to_json_values(Instance, new_items) == lines
        compare(
            f"dump: {len(lines)} per-question records -> dicts",
            Side("hand-written to_dict", lambda: [item.to_dict() for item in old_items]),
            Side("pydantic (harness, one call)", lambda: to_json_values(Instance, new_items)),
            args.repeat,
        )
        compare(
            "dump: the same, one call each (Instance.to_dict)",
            Side("hand-written to_dict", lambda: [item.to_dict() for item in old_items]),
            Side("pydantic, one by one", lambda: [item.to_dict() for item in new_items]),
            args.repeat,
        )

    # The three libraries on the rows, with no custom code (see the docstring).
    rows = tuple[ResultRow, ...]
    adapter, converter = TypeAdapter(rows), cattrs.Converter()
    row_objects = adapter.validate_python(rows_raw)
    candidates = {
        "pydantic": (lambda: adapter.validate_python(rows_raw), lambda: adapter.dump_python(row_objects, mode="json")),
        "msgspec": (lambda: msgspec.convert(rows_raw, rows), lambda: msgspec.to_builtins(row_objects)),
        "cattrs": (lambda: converter.structure(rows_raw, rows), lambda: converter.unstructure(row_objects, rows)),
    }
    for name, (load, _) in candidates.items():
        assert load() == row_objects, name
    for direction, index in (("load", 0), ("dump", 1)):
        sides = [Side(name, pair[index]) for name, pair in candidates.items()]
        timed(sides, args.repeat)
        print(f"\n{direction}: {len(rows_raw)} rows, each library with no custom code")
        for side in sides:
            print(f"{side.label:9} min {side.min * 1e3:8.3f} ms  median {side.median * 1e3:8.3f} ms")

    start = time.perf_counter()
    json.loads(board_text)
    parsed = time.perf_counter()
    validate(board_raw, "leaderboard", file=Path("leaderboard.json"))
    checked = time.perf_counter()
    print(
        f"\nfor scale, once: json.loads of the board {(parsed - start) * 1e3:.1f} ms, "
        f"its schema check {(checked - parsed) * 1e3:.1f} ms"
    )
    first = subprocess.run([sys.executable, "-c", FIRST_USE], cwd=ROOT, check=True, capture_output=True, text=True)
    print(f"once per process (a fresh one): {first.stdout.strip()}")


#: What a fresh process pays before its first record: pydantic's import, and building the
#: adapters (reading every field's type) on the first load and dump of the board.
FIRST_USE = """
import json, time
start = time.perf_counter()
import pydantic
imported = time.perf_counter()
from harness.leaderboard.entry import Leaderboard
raw = json.load(open("leaderboard/leaderboard.json"))
begun = time.perf_counter()
Leaderboard.from_dict(raw).to_dict()
built = time.perf_counter()
print(f"import pydantic {(imported - start) * 1e3:.1f} ms; the board's first load and dump {(built - begun) * 1e3:.1f} ms")
"""

if __name__ == "__main__":
    main()
