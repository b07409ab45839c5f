"""``--threads``: resolved before the model loads, applied to torch once, recorded in the result;
torch is never imported for a model that does not need it. Each run is a fresh subprocess, since
torch's thread settings belong to the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]

RUN = """
import json, pathlib, sys
{imports}
from harness.running import runner
from harness.running.settings import ExecutionOptions, OutputOptions
from tests.harness.fakes import fake_registry
outcome = runner.run("fake-lookup", {model!r}, execution=ExecutionOptions(threads={threads!r}),
                     registry=fake_registry(),
                     output=OutputOptions(output_dir=pathlib.Path(sys.argv[1]), show_progress=False))
torch = sys.modules.get("torch")
print(json.dumps({{"recorded": outcome.result.provenance.execution["threads"],
                   "torch": [torch.get_num_threads(), torch.get_num_interop_threads()] if torch else None}}))
"""


def run_in_subprocess(tmp_path: Path, *, model: str, threads: int | None, imports: str = "") -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", RUN.format(imports=imports, model=model, threads=threads), str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_threads_are_applied_to_torch_and_recorded(tmp_path: Path) -> None:
    # torch imported before the run, as a torch model would: one intra-op and one inter-op thread
    assert run_in_subprocess(tmp_path, model="letter-counts", threads=1, imports="import torch") == {
        "recorded": 1,
        "torch": [1, 1],
    }


def test_a_model_without_torch_does_not_import_it_and_gets_the_available_cores(tmp_path: Path) -> None:
    assert run_in_subprocess(tmp_path, model="word-overlap", threads=None) == {
        "recorded": len(os.sched_getaffinity(0)),
        "torch": None,
    }


def test_threads_must_be_positive(harness_cli: Any, only_fakes: None) -> None:
    code, _, err = harness_cli("run", "fake-lookup", "word-overlap", "--threads", "0", "--dry-run")
    assert (code, err.splitlines()[-1]) == (2, "error: --threads must be a positive number, not 0")
