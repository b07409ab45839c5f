"""``kill -9`` a multi-unit ``harness run`` at each point where it holds unfinished work, then
``--resume``: the result, predictions, saved units and leaderboard entry are those of an
uninterrupted run, and nothing is left over (no temporaries, no stale or extra files).

The run is LAReQA on its demo data (three question languages, so three units) with the
``stall-overlap`` retriever of :mod:`tests.stall_plugin`, in a subprocess that stalls at a named
point and says so with a marker file; the test kills it only once the marker exists, so every
kill happens at the same place whatever the machine's speed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.stall_plugin import MARKER_ENV, STALL_ENV

CHECKOUT = Path(__file__).resolve().parent.parent
RUN = ["run", "lareqa", "stall-overlap", "--langs", "ar,de,en", "--quiet", "--no-cache"]
#: Where a stalled run gets to write before the test gives up on it (a broken test, not a timing).
PATIENCE_S = 300
#: A run folder: results/<task>/<model>/<run id>/.
RUN_DIR_DEPTH = 3

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="the stall plugin reads /proc/self/fd")


def _harness(folder: Path, *args: str, stall: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))}
    env.pop(STALL_ENV, None)
    if stall is not None:
        env.update({STALL_ENV: stall, MARKER_ENV: str(folder / "stalled")})
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "--plugin", "tests.stall_plugin", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(folder: Path, *args: str) -> None:
    process = _harness(folder, *args)
    out, err = process.communicate()
    assert process.returncode == 0, err


def _kill_when_stalled(folder: Path, stall: str) -> None:
    process = _harness(folder, *RUN, stall=stall)
    marker = folder / "stalled"
    deadline = time.monotonic() + PATIENCE_S
    while not marker.exists():
        if process.poll() is not None:
            pytest.fail(f"the run ended (exit {process.returncode}) before reaching {stall}: {process.stderr.read()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the run did not reach {stall} in {PATIENCE_S} s")
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    marker.unlink()


def _files(folder: Path, run: str | None = None) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) by relative path; the run folder ``run``
    named ``RUN`` (the time in its name differs from run to run)."""
    return {
        str(Path(root, name).relative_to(folder)).replace(f"/{run}/", "/RUN/")
        if run
        else str(Path(root, name).relative_to(folder)): Path(root, name).read_bytes()
        for root, _, names in os.walk(folder)
        for name in names
    }


def _run_dir(folder: Path) -> Path:
    (result,) = (folder / "results").glob("*/" * RUN_DIR_DEPTH + "result.json")
    return result.parent


def _entry(folder: Path) -> dict:
    """The one leaderboard entry, less the time it was written."""
    (entry,) = json.loads((folder / "results" / "leaderboard.json").read_text(encoding="utf-8"))["entries"]
    return {key: value for key, value in entry.items() if key != "finished_at"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("uninterrupted")
    _finish(folder, *RUN)
    return folder


#: Each kill point, and what the killed run left that resuming must use or remove.
POINTS = {
    "search:ar": "no unit saved yet",
    "write:.de.json.": "unit ar saved, unit de being written",
    "search:en": "units ar and de saved",
    "write:.predictions.jsonl.": "every unit saved, the predictions file being written",
    "write:.result.json.": "predictions written, the result being written",
    "write:.leaderboard.json.": "the result written, the leaderboard being updated",
}


@pytest.mark.parametrize("stall", POINTS, ids=list(POINTS.values()))
def test_resume_after_kill_9_equals_an_uninterrupted_run(tmp_path: Path, uninterrupted: Path, stall: str) -> None:
    _kill_when_stalled(tmp_path, stall)
    left = _files(tmp_path)
    temporaries = [name for name in left if name.endswith(".tmp")]
    if stall.startswith("write:"):  # the kill came mid-write: the temporary is there, the target is not
        (temporary,) = temporaries
        assert Path(temporary).name.startswith(stall[6:])
        assert Path(temporary).parent / stall[7:-1] not in {Path(name) for name in left}
    else:
        assert temporaries == []
    parts = sorted(
        Path(name).stem
        for name in left
        if Path(name).parent.name == "parts" and name.endswith(".json") and not Path(name).name.startswith(".")
    )
    assert parts == {"search:ar": [], "write:.de.json.": ["ar"], "search:en": ["ar", "de"]}.get(
        stall, ["ar", "de", "en"]
    )

    _finish(tmp_path, *RUN, "--resume")

    # a run's folder is named <run id>-<UTC time>: resuming continued the killed run's folder,
    # whose time differs from the uninterrupted run's; the files are compared below it
    run_dir, clean_dir = _run_dir(tmp_path), _run_dir(uninterrupted)
    assert run_dir.name.split("-")[0] == clean_dir.name.split("-")[0]
    assert run_dir.parent.relative_to(tmp_path) == clean_dir.parent.relative_to(uninterrupted)
    clean, resumed = (_files(folder, run.name) for folder, run in ((uninterrupted, clean_dir), (tmp_path, run_dir)))
    assert sorted(resumed) == sorted(clean)  # the same files, no temporary nor anything else left over
    for name in clean:
        if Path(name).parent.name == "parts" or Path(name).name == "predictions.jsonl":
            assert resumed[name] == clean[name], name
    relative = str(run_dir.relative_to(tmp_path).with_name("RUN") / "result.json")
    result, expected = (json.loads(files[relative]) for files in (resumed, clean))
    for key in ("run_id", "task", "model", "data", "main_score", "rows", "diagnostics", "notes"):
        assert result[key] == expected[key], key
    assert result["predictions"]["sha256"] == expected["predictions"]["sha256"]
    assert result["provenance"]["resumed_units"] == parts
    assert _entry(tmp_path) == {
        **_entry(uninterrupted),
        "result_path": str(run_dir.relative_to(tmp_path) / "result.json"),
    }
