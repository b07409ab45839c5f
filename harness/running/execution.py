"""Executing a run: the model loaded once for a suite, the texts of all its tasks encoded in one
shared queue, then each task predicted unit by unit, every finished unit saved so that
``--resume`` can skip it.

Under torchrun every rank executes the same units in the same order (encoding is shared out
across ranks by the encoding service); only rank 0 saves units and, later, records results.
"""

from __future__ import annotations

import random
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.definitions.model import Model, ModelIdentity, Runtime, apply_threads
from harness.definitions.protocols import EncodingRequest, PredictionSource
from harness.definitions.specs import PluginInfo
from harness.definitions.task import RunContext
from harness.errors import InputError
from harness.files.io import dump_json, json_bytes, read_json, sha256_text
from harness.models.batching import ServiceStats, across_ranks
from harness.models.capabilities import declared, provide
from harness.models.compose import ModelSource, model_service
from harness.models.distributed import World, current_world
from harness.models.encoding import EncodingPlan, EncodingService, EncodingStats, ReportsEncoding
from harness.models.generation import GenerationService, GenerationStats, ReportsGeneration
from harness.models.loglikelihood import LoglikelihoodStats, ScoringService
from harness.results.layout import RunFolder, slug
from harness.running.planning import LoadedTask
from harness.running.timing import Clock, PhaseTimer


@dataclass
class LoadedModel:
    """The model of a run, loaded once for all its tasks, with what results record about it;
    ``service`` is the shared encoding queue of a plain encoder, or the generation service of a
    generator (:func:`harness.models.compose.model_service`)."""

    model: Model
    plugin: PluginInfo
    identity: ModelIdentity
    #: The model as the user typed it (the run folder's name); None for a model object.
    typed: str | None
    service: EncodingService | GenerationService | None

    @property
    def encoding(self) -> EncodingService | None:
        """The shared encoding queue, when the model is a plain encoder."""
        return self.service if isinstance(self.service, EncodingService) else None

    @property
    def replay(self) -> bool:
        """A predictions file or reference answers: no inference, any task."""
        return PredictionSource in declared(self.model)

    def capability(self, task: LoadedTask) -> Any:
        """The model as what ``task`` needs (behind its service, where it has one)."""
        if self.replay:
            return self.model
        return provide(
            self.service or self.model, task.task.metadata.needs, model_name=self.model.name, task_name=task.name
        )


def prepare_model(
    source: ModelSource, runtime: Runtime, timer: PhaseTimer, *, typed: str | None, show_progress: bool
) -> LoadedModel:
    """Instantiate the model (timed), give torch its threads, and put the encoding queue in front
    of a plain encoder and the generation service in front of a generator."""
    model = timer.time("load_model", lambda: source.instantiate(runtime))
    apply_threads(runtime)  # once torch is imported, if the model needed it
    identity = model.identity()
    replay = PredictionSource in declared(model)
    service = None if replay else model_service(model, runtime, identity, show_progress=show_progress)
    return LoadedModel(model, source.plugin, identity, typed, service)


@dataclass(frozen=True)
class Plan:
    """What a run would do (``--dry-run``): tasks, data, device, and the encoding work."""

    model: str
    device: str
    precision: str
    world_size: int
    tasks: list[dict[str, Any]]
    encoding: EncodingPlan | None


@dataclass
class Session:
    """A suite ready to run or to describe: its tasks with their data, the model loaded once,
    and the texts every task will encode (one shared queue)."""

    tasks: list[LoadedTask]
    model: LoadedModel
    runtime: Runtime
    world: World = field(default_factory=current_world)
    shared: PhaseTimer = field(default_factory=lambda: PhaseTimer("shared"))
    clock: Clock = field(default_factory=Clock)

    @property
    def requests(self) -> list[EncodingRequest]:
        return [r for loaded in self.tasks for r in loaded.task.encoding_requests(loaded.data)]

    def prefetch(self) -> None:
        """Encode the texts of every task at once (deduplicated, cached, length-batched)."""
        service = self.model.encoding
        if service is not None:
            self.shared.time("encode_shared", lambda: service.prefetch(self.requests))
        seed_everything(self.runtime.seed)

    def plan(self) -> Plan:
        """What :meth:`prefetch` and the tasks would do, without doing it."""
        # "auto" for a model that never imported torch runs on the CPU: importing torch to say so
        # would cost seconds; a device asked for by name is checked as the run would check it
        runtime = self.runtime
        resolve = runtime.device_request != "auto" or "torch" in sys.modules
        service = self.model.encoding
        return Plan(
            model=self.model.identity.label,
            device=runtime.device if resolve else runtime.device_used,
            precision=self.model.model.precision,
            world_size=self.world.size,
            tasks=[
                {
                    "task": t.name,
                    "options": t.task.options(),
                    "source": t.data.source,
                    "split": t.data.split,
                    "languages": list(t.data.languages),
                    "units": t.task.units(t.data),
                    "statistics": t.data.statistics,
                }
                for t in self.tasks
            ],
            encoding=service.plan(self.requests, seed=runtime.seed) if service is not None else None,
        )

    def _stats(self) -> tuple[EncodingStats | None, GenerationStats | None, LoglikelihoodStats | None]:
        """What the model's services did: its own queue's, or a composite's (retrieve-read); the
        log-likelihood service's beside the generation service's, for a model that scores."""
        service, model = self.model.service, self.model.model
        encoding = (
            service.stats
            if isinstance(service, EncodingService)
            else model.encoding_stats
            if isinstance(model, ReportsEncoding)
            else None
        )
        generation = (
            service.stats
            if isinstance(service, GenerationService)
            else model.generation_stats
            if isinstance(model, ReportsGeneration)
            else None
        )
        scoring = service.scoring.stats if isinstance(service, ScoringService) else None
        return encoding, generation, scoring

    def gather_stats(
        self,
    ) -> list[tuple[EncodingStats | None, GenerationStats | None, LoglikelihoodStats | None]] | None:
        """Every rank's :meth:`_stats` under torchrun (a collective: every rank calls it at the
        same point), None in one process."""
        return self.world.gather_objects(self._stats()) if self.world.size > 1 else None

    def execution_record(
        self, ranks: list[tuple[EncodingStats | None, GenerationStats | None, LoglikelihoodStats | None]] | None = None
    ) -> dict[str, Any]:
        """How the suite ran, for each result's provenance. With ``ranks`` (:meth:`gather_stats`)
        ``encoding`` and ``generation`` stay this rank's (rank 0's), ``ranks`` holds every
        rank's, and ``all_ranks`` the whole run's work and rates
        (:func:`~harness.models.batching.across_ranks`): a rank encodes its share only."""
        runtime, model = self.runtime, self.model.model
        encoding, generation, scoring = self._stats()
        stats = encoding or generation
        record = {
            "world_size": self.world.size,
            "device": runtime.device_used,
            "precision": model.precision,
            "threads": runtime.threads,
            "batch_size": stats.batch_size if stats else runtime.batch_size,
            "suite": [t.name for t in self.tasks],
            "encoding": _as_dict(encoding),
            "generation": _as_dict(generation),
            "loglikelihood": _as_dict(scoring),
        }
        if ranks is not None:
            record["ranks"] = [
                {"encoding": _as_dict(e), "generation": _as_dict(g), "loglikelihood": _as_dict(s)} for e, g, s in ranks
            ]
            record["all_ranks"] = {
                "encoding": across_ranks([e for e, _, _ in ranks]),
                "generation": across_ranks([g for _, g, _ in ranks]),
                "loglikelihood": across_ranks([s for _, _, s in ranks]),
            }
        return record


def _as_dict(stats: ServiceStats | None) -> dict[str, Any] | None:
    return None if stats is None else stats.as_dict()


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


@dataclass
class UnitPredictions:
    """A task's predictions, unit by unit, and the units an interrupted run had saved."""

    predictions: dict[str, Any]
    resumed: list[str]


def predict_units(
    loaded: LoadedTask, session: Session, run_id: str, folder: RunFolder | None, *, show_progress: bool
) -> UnitPredictions:
    """Predict every unit of ``loaded`` (a replayed file: all at once), saving each finished unit
    in ``folder`` (when there is one, on rank 0) and reusing the units it already holds."""
    task, data, timer, world = loaded.task, loaded.data, loaded.timer, session.world
    capability = session.model.capability(loaded)
    if session.model.replay:
        return UnitPredictions(timer.time("predict", lambda: capability.predictions_for(task, data)), [])
    units = task.units(data)
    saved = _saved_parts(folder, run_id, units) if folder is not None else {}
    world.barrier()  # every rank knows which units are saved before rank 0 saves more
    context = RunContext(runtime=session.runtime, show_progress=show_progress and world.is_main)
    out = UnitPredictions({}, [])
    for unit in units:
        if unit in saved:
            out.predictions[unit] = saved[unit]
            out.resumed.append(unit)
            continue
        out.predictions[unit] = timer.time(
            "predict",
            lambda: task.predict(capability, data, unit, context),  # noqa: B023 (timed now)
            detail=unit,
        )
        if folder is not None and world.is_main:
            _save_part(folder, run_id, unit, out.predictions[unit])
    return out


def _save_part(folder: RunFolder, run_id: str, unit: str, predictions: Any) -> None:
    dump_json(
        {"run_id": run_id, "unit": unit, "predictions": predictions, "sha256": _part_digest(run_id, unit, predictions)},
        folder.parts / f"{slug(unit)}.json",
        indent=None,
    )


def _part_digest(run_id: str, unit: str, predictions: Any) -> str:
    """Checksum of a saved unit: a unit file whose content is not what this run wrote (edited,
    or from another version) is recomputed rather than trusted."""
    return sha256_text(run_id, unit, json_bytes(predictions, indent=None).decode("utf-8"))


def _saved_parts(folder: RunFolder, run_id: str, units: Sequence[str]) -> dict[str, Any]:
    """Units an earlier, interrupted run of the same run id finished. A unit file that is cut
    short, not this run's, or not what the run wrote is dropped with a warning, so its unit is
    predicted again: resuming never stops on, nor trusts, a damaged part."""
    saved: dict[str, Any] = {}
    problem: str | None
    for path in sorted(folder.parts.glob("*.json")) if folder.parts.exists() else []:
        try:
            part = read_json(path)
        except InputError as exc:
            problem = exc.reason
        else:
            problem = _part_problem(part, run_id, units)
            if problem is None:
                saved[part["unit"]] = part["predictions"]
                continue
        warnings.warn(f"{path}: {problem}; that unit is predicted again", RuntimeWarning, stacklevel=2)
        path.unlink(missing_ok=True)
    return saved


def _part_problem(part: Any, run_id: str, units: Sequence[str]) -> str | None:
    """Why a parsed unit file cannot be reused, or None."""
    if not isinstance(part, dict) or not {"run_id", "unit", "predictions", "sha256"} <= part.keys():
        return "not a unit file of this harness version"
    if part["run_id"] != run_id:
        return "a unit of another run"
    if part["unit"] not in units:
        return f"unit {part['unit']!r} is not a unit of this run"
    if part["sha256"] != _part_digest(run_id, part["unit"], part["predictions"]):
        return "its content does not match its checksum"
    return None
