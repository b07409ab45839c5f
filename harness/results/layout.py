"""The results tree: where a run's files go, declared once and read through here.

``<output>/<task>/<model folder>/<run id>-<UTC time>[-N]/`` holds ``result.json``, the
predictions under the task's own file name, ``instances.jsonl`` and ``parts/`` (its finished units, which
``--resume`` reuses after an interruption). The run id (a hash of everything that decides
the scores) leads the folder name, so ``--resume`` continues the newest folder of the same
configuration; the time stamp gives a configuration run again a folder of its own instead of
overwriting the earlier run.

Two processes that start the same configuration at the same second get two folders: a folder is
claimed with an exclusive ``mkdir`` (the first to create a name owns it, the other takes the next
number), so no run ever writes into a folder another run is writing. Both results are valid; the
leaderboard keeps one entry per configuration (the later result replaces the earlier).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from harness.results.instances import INSTANCES_FILE
from harness.results.result import RESULT_FILE

#: The folder of a run's finished units (see :mod:`harness.running.execution`).
PARTS_DIR = "parts"


def slug(text: str) -> str:
    """``text`` as one safe path component."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


@dataclass(frozen=True)
class RunFolder:
    """One run's folder and the places of its files."""

    path: Path

    @property
    def result(self) -> Path:
        return self.path / RESULT_FILE

    @property
    def instances(self) -> Path:
        return self.path / INSTANCES_FILE

    @property
    def parts(self) -> Path:
        return self.path / PARTS_DIR

    def predictions(self, file_name: str) -> Path:
        """The predictions file (or folder) under the task's ``prediction_file`` name."""
        return self.path / file_name


def model_folder(typed: str | None, label: str) -> str:
    """The model's folder: the model as the user typed it (``bm25``, ``e5-small``), followed by
    the label it resolved to when that says more (``dense--e5-small_exact``)."""
    label = slug(label)
    if typed is None:
        return label
    typed = slug(typed)
    return typed if typed.lower() == label.lower() else f"{typed}--{label}"


def configuration_folder(output_dir: Path, task_name: str, model: str) -> Path:
    """The folder of every run of one task by one model (``model`` from :func:`model_folder`)."""
    return output_dir / slug(task_name) / model


def claim_run_folder(parent: Path, run_id: str) -> RunFolder:
    """A new, empty run folder under ``parent``, created here and owned by the caller alone."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name, number = f"{run_id}-{stamp}", 1
    while True:
        try:
            parent.mkdir(parents=True, exist_ok=True)
            (parent / name).mkdir()
        except FileExistsError:  # the same configuration started within the same second
            number += 1
            name = f"{run_id}-{stamp}-{number}"
        except FileNotFoundError:  # a failed run removed the empty parent meanwhile: make it again
            continue
        else:
            return RunFolder(parent / name)


def discard_if_empty(folder: RunFolder, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` (included) while they are empty: a run
    that fails before saving anything leaves nothing behind. Saved units are kept (``--resume``)."""
    for path in [folder.parts, folder.path, *folder.path.parents]:
        try:
            path.rmdir()  # only ever removes an empty folder
        except OSError:  # not empty (or already gone): what is above it is not empty either
            if path.exists():
                return
        if path == root:
            return


def latest_run_folder(parent: Path, run_id: str) -> RunFolder | None:
    """The newest folder of run ``run_id`` under ``parent`` (the one ``--resume`` continues)."""
    if not parent.is_dir():
        return None
    earlier = sorted(
        (p for p in parent.glob(f"{run_id}-*") if p.is_dir()), key=lambda p: (p.name.split("-")[1], _number(p.name))
    )
    return RunFolder(earlier[-1]) if earlier else None


def _number(name: str) -> int:
    """The ``-N`` suffix of a run folder's name (1 when there is none)."""
    parts = name.split("-")
    return int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 1


def task_results(task_folder: Path) -> list[Path]:
    """The result files of every run in one task's folder of a results tree (every model's)."""
    return sorted(task_folder.glob(f"*/*/{RESULT_FILE}"))
