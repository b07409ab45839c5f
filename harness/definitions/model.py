"""The base of model adapters and the settings the runner gives every model.

A model adapter subclasses :class:`Model`, takes its options as keyword arguments of
``__init__`` (see :mod:`harness.options`) plus ``runtime``, implements one or more protocols of
:mod:`harness.definitions.protocols` and declares them in :attr:`Model.provides`, and says who it is in :meth:`Model.identity` so that a result can
tell two runs of "the same" model with different weights or options apart.
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from harness.definitions.protocols import CAPABILITIES, protocol_methods
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.definitions.specs import ModelFinder

DeviceChoice = Literal["auto", "cpu", "cuda"]


@dataclass
class Runtime:
    """Where and how a model runs: device request, batch size, seed, CPU threads.

    The device is resolved on first use, so models that never touch torch (BM25, say) do not
    pay for importing it.
    """

    device_request: str = "auto"
    batch_size: int | None = None
    seed: int = 0
    #: Where models may keep what they build once (e.g. a converted checkpoint).
    cache_dir: Path | None = None
    #: CPU threads for the model's arithmetic; None: :func:`default_threads`. The runner resolves
    #: it before loading the model (so a model may pass it to its own engine) and applies it to
    #: torch after (:func:`apply_threads`).
    threads: int | None = None
    #: The plugins this run was given: a composite model (``dense:encoder=...``) resolves its inner
    #: model here, so a model registered at run time (``--plugin``, a test's registry) is found
    #: there too. None: the installed plugins, discovered when first asked for.
    registry: ModelFinder | None = field(default=None, repr=False, compare=False)
    _device: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_device(self.device_request)
        if self.device_request.startswith("cuda"):
            # checked now for every model, not only those that touch torch: a model that never
            # asks for the device (BM25) must not run on the CPU silently when a GPU was asked for
            resolve_device(self.device_request)
        if self.threads is not None and self.threads < 1:
            raise HarnessError(f"--threads must be a positive number, not {self.threads}")
        if self.batch_size is not None and self.batch_size < 1:
            raise HarnessError(f"--batch-size must be a positive number, not {self.batch_size}")

    @property
    def device(self) -> str:
        """The resolved torch device name ("cpu", "cuda", "cuda:1")."""
        if self._device is None:
            self._device = resolve_device(self.device_request)
        return self._device

    @property
    def device_used(self) -> str:
        """The device for provenance: the resolved one, or "cpu" if no model asked for one."""
        return self._device or "cpu"


@dataclass(frozen=True)
class ModelIdentity:
    """What a result records about the model.

    ``label`` is the human name shown on the leaderboard; ``weights`` a content hash or a
    revision of the weights; ``options`` every option that changes the scores.
    """

    name: str
    label: str
    weights: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {**self.key(), "details": self.details}

    def key(self) -> dict[str, Any]:
        """What decides a model's scores (name, label, weights, options; not ``details``): the
        model part of a leaderboard entry's key, and an inner model's part of its composite's
        identity, so two runs over different weights or options never share a result."""
        return {"name": self.name, "label": self.label, "weights": self.weights, "options": self.options}


class Model(ABC):
    """Base class of model adapters."""

    #: The capabilities (protocols of :mod:`harness.definitions.protocols`) this model provides. The runner
    #: routes by this declaration alone: a method or attribute that happens to share a protocol's
    #: name (an ``index`` attribute on an encoder, say) changes nothing.
    provides: ClassVar[frozenset[type]] = frozenset()
    #: The registered name; set by the runner from the spec.
    name: str = ""
    #: Numeric precision of the forward pass, for the result's execution record.
    precision: str = "n/a"
    #: Whether :meth:`identity` alone tells this model apart from every other. Registered models
    #: are built from their name and options; an in-memory object with no weights to fingerprint
    #: is not (:mod:`harness.models.objects`): its result says so and no on-disk cache is shared with it.
    reproducible: bool = True
    #: An encoder whose vectors all have L2 norm 1 says so, and the embedding cache then refuses
    #: rows of another norm as damage (:func:`harness.models.cache.unsound_rows`).
    normalizes: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the declaration when the class is defined, so a model that declares a capability
        without its methods fails where it is written, not in the middle of a run."""
        super().__init_subclass__(**kwargs)
        for capability in cls.provides:
            if capability not in CAPABILITIES:
                known = ", ".join(c.__name__ for c in CAPABILITIES)
                raise TypeError(f"{cls.__qualname__}.provides names {capability!r}, not a capability ({known})")
            missing = [m for m in protocol_methods(capability) if not callable(getattr(cls, m, None))]
            if missing:
                raise TypeError(f"{cls.__qualname__} declares {capability.__name__} but has no method {missing[0]}()")

    @abstractmethod
    def identity(self) -> ModelIdentity:
        """Name, weights hash or revision, and options of this model."""


def label_with_options(base: str, options: dict[str, Any], defaults: dict[str, Any]) -> str:
    """A leaderboard label that shows the options differing from their defaults."""
    changed = [f"{k}={v}" for k, v in options.items() if k in defaults and v != defaults[k]]
    return f"{base} ({', '.join(changed)})" if changed else base


def constructor_defaults(model: type) -> dict[str, Any]:
    """The defaults of ``model``'s keyword options, read from its constructor's signature: where
    a model declares them once (for :func:`label_with_options`)."""
    return {name: p.default for name, p in inspect.signature(model).parameters.items() if p.default is not p.empty}


def default_threads() -> int:
    """The cores this process may use (its CPU affinity, which containers and ``taskset`` narrow,
    unlike ``os.cpu_count``) shared equally by the ranks torchrun started on this machine, or
    fewer when this process already limited torch to fewer (a host program, a test session): more
    threads than cores only make them fight, and a limit someone set on purpose is kept."""
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
    cores = max(1, len(os.sched_getaffinity(0)) // max(local_ranks, 1))
    torch = sys.modules.get("torch")
    return min(cores, torch.get_num_threads()) if torch is not None else cores


def apply_threads(runtime: Runtime) -> None:
    """Give torch the runtime's threads (:func:`default_threads` when it names none) as intra-op
    threads and one inter-op thread (batches run one after the other, so a second pool would only
    take cores from the first). Does nothing when torch was never imported: a BM25 run does not
    pay for importing it."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.set_num_threads(default_threads() if runtime.threads is None else runtime.threads)
    if torch.get_num_interop_threads() != 1:
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError as error:  # torch allows it once, before any inter-op work
            warnings.warn(
                f"torch inter-op threads stay at {torch.get_num_interop_threads()}: {error}",
                RuntimeWarning,
                stacklevel=2,
            )


def check_device(choice: str) -> None:
    """Reject a device name that can never work, before any work is done."""
    if choice not in ("auto", "cpu", "cuda") and not (choice.startswith("cuda:") and choice[5:].isdigit()):
        raise HarnessError(f"unknown device '{choice}' (use auto, cpu, cuda or cuda:N)")


def resolve_device(choice: DeviceChoice | str) -> str:
    """``auto`` takes a GPU when torch sees one; ``cuda`` without a GPU is an error, not a fallback."""
    check_device(choice)
    if choice == "cpu":
        return "cpu"
    try:
        import torch
    except ImportError:
        if choice == "auto":
            return "cpu"
        raise HarnessError("--device cuda needs torch, which is not installed") from None
    if torch.cuda.is_available():
        if choice.startswith("cuda:") and int(choice[5:]) >= torch.cuda.device_count():
            raise HarnessError(f"--device {choice}: torch sees {torch.cuda.device_count()} GPU(s)")
        return "cuda" if choice == "auto" else str(choice)
    if choice == "auto":
        return "cpu"
    raise HarnessError("--device cuda was asked for, but torch sees no GPU")
