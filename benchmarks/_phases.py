"""Each phase of a scale benchmark in a fresh process, so the peak memory it reports is its own.

A script calls :func:`dispatch` first thing in ``main`` (it runs the phase when the script was
started as a child) and :func:`run_phase` to start one; a phase is a function of JSON-able
arguments and paths, returning a dict of figures, printed as JSON on the child's last line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
Phase = Callable[..., dict[str, Any]]


def memory_mib(field: str) -> float:
    """A line of /proc/self/status in MiB: VmHWM (peak resident), VmRSS, RssAnon (heap only)."""
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


def size_mib(folder: Path) -> float:
    """What the files under ``folder`` take on disk."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def dispatch(phases: dict[str, Phase]) -> bool:
    """Run the phase named on the command line if this is a child; whether it was."""
    if len(sys.argv) < 2 or sys.argv[1] != "--child":
        return False
    phase, raw = sys.argv[2:4]
    args = [Path(a["path"]) if isinstance(a, dict) and "path" in a else a for a in json.loads(raw)]
    print(json.dumps(phases[phase](*args)))
    return True


def run_phase(script: str, phase: str, *args: Any, env: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Run ``phase`` of ``script`` in a fresh process; None if it failed (its last error line is printed)."""
    command = [
        sys.executable,
        script,
        "--child",
        phase,
        json.dumps([{"path": str(a)} if isinstance(a, Path) else a for a in args]),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"  {phase} failed (exit {done.returncode}): {last}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])
