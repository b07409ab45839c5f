"""What a run or a scoring is asked to do, in the three groups of the command line's options:
data, execution and output.

The library API (:mod:`harness.api`) takes these as keyword arguments and the CLI as options;
both build the same three objects here and hand them to the same runner, so the two cannot
drift apart. Each group checks its values when it is made, before any work.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.definitions.model import Runtime, default_threads
from harness.errors import HarnessError
from harness.files.io import check_folder
from harness.models.generation import GenerationSettings
from harness.stats import DEFAULT_RESAMPLES
from harness.stats.bootstrap import BootstrapSettings

if TYPE_CHECKING:
    from harness.definitions.registry import Registry


@dataclass(frozen=True)
class DataOptions:
    """Which data a run or a scoring reads: a folder in the benchmark's official layout (None:
    the benchmark in the data home, ``harness data get``, else the task's built-in demo data), a
    split, languages and a per-language question limit."""

    data_dir: Path | None = None
    split: str | None = None
    languages: tuple[str, ...] | None = None
    limit: int | None = None
    #: Without ``data_dir``: the demo data even where the data home holds the benchmark (a result
    #: made on the demo data is rescored on it).
    demo: bool = False

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise HarnessError("--limit must be a positive number")


@dataclass(frozen=True)
class ExecutionOptions:
    """How the model runs: device, batching, seed, threads, the embedding cache, resuming."""

    device: str = "auto"
    batch_size: int | None = None
    seed: int = 0
    #: CPU threads (None: the cores this process may use, shared by a torchrun's local ranks).
    threads: int | None = None
    #: The embedding cache's folder (None: no cache; the CLI's default is :func:`harness.models.cache.default_root`).
    cache_dir: Path | None = None
    #: Reuse the units an interrupted run of the same configuration saved (needs an output folder).
    resume: bool = False
    #: A generator's decoding options over each prompt template's (``--gen-kwargs``, ``--system-prompt``).
    generation: GenerationSettings = field(default_factory=GenerationSettings)
    #: Keep each rendered prompt's text in the per-instance records (``--log-samples``; its digest is always kept).
    log_samples: bool = False

    def runtime(self, registry: Registry) -> Runtime:
        """The :class:`~harness.definitions.model.Runtime` models are built with (which checks device, batch
        size and threads), after checking the cache folder can be written."""
        if self.cache_dir is not None:
            check_folder(self.cache_dir, "--cache-dir")
        return Runtime(
            device_request=self.device,
            batch_size=self.batch_size,
            seed=self.seed,
            cache_dir=self.cache_dir,
            threads=default_threads() if self.threads is None else self.threads,
            registry=registry,
        )


@dataclass(frozen=True)
class OutputOptions:
    """What is written, and how much is shown. Nothing is written unless a folder is given: the
    API's default; the CLI gives ``results/`` and ``results/leaderboard.json``."""

    output_dir: Path | None = None
    leaderboard: Path | None = None
    show_progress: bool = True
    #: The command recorded in each result's provenance.
    command: tuple[str, ...] = field(default_factory=lambda: tuple(sys.argv))
    #: The bootstrap behind the rows' intervals (``resamples=0``: no intervals).
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)

    def check(self) -> None:
        """Refuse output places that cannot be written, before any work is done."""
        if self.output_dir is not None:
            check_folder(self.output_dir, "--output-dir")
        if self.leaderboard is not None:
            if self.output_dir is None:
                raise HarnessError(
                    "a leaderboard entry points at its result file: give an output folder "
                    "(output_dir) as well as the leaderboard"
                )
            if self.leaderboard.is_dir():
                raise HarnessError(f"--leaderboard {self.leaderboard} is a folder, not a file")
            check_folder(self.leaderboard.parent, "--leaderboard's folder")


def output_options(
    output_dir: str | Path | None,
    leaderboard: str | Path | None,
    *,
    progress: bool = True,
    bootstrap: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
    command: Sequence[str] | None = None,
) -> OutputOptions:
    """:class:`OutputOptions` from the API's keyword arguments (paths as text or ``Path``)."""
    extra = {} if command is None else {"command": tuple(command)}
    return OutputOptions(
        output_dir=as_path(output_dir),
        leaderboard=as_path(leaderboard),
        show_progress=progress,
        bootstrap=BootstrapSettings(resamples=bootstrap, seed=bootstrap_seed),
        **extra,
    )


def as_path(value: str | Path | None) -> Path | None:
    """A path given as text or ``Path`` (``~`` expanded), or None."""
    return None if value is None else Path(value).expanduser()
