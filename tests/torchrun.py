"""``harness run`` as a user starts it: in one process, or across gloo ranks under torchrun.

The distributed tests run a command both ways and hold the scores equal; this is the one place
that knows how torchrun is started (a free port on 127.0.0.1, one node, c10d rendezvous)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(plugins: str | None = None) -> dict[str, str]:
    """The processes' environment: one thread each (two ranks share the test machine), the
    checkout on the path (the tests' own modules: fake models, plugins) and ``plugins`` named in
    ``HARNESS_PLUGINS``."""
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")])),
    }
    if plugins is not None:
        env["HARNESS_PLUGINS"] = plugins
    return env


def harness_run(cwd: Path, args: list[str], env: dict[str, str], ranks: int = 1) -> None:
    """``harness run ARGS`` in ``cwd``, in one process or across ``ranks`` torchrun ranks; a
    failure fails the test with the end of its error output."""
    launcher = (
        [
            "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(ranks),
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{free_port()}",
        ]
        if ranks > 1
        else []
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, *launcher, "-m", "harness", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
