"""Loading a model from its spec string or a Python object, for the runner and for models built
from other models.

Composite models (a dense index over any encoder, translate-test in front of any retriever) take
the inner model as a spec string, ``name:key=value,...``, exactly as on the command line, or from
Python as a model object, and load it through the same :func:`resolve_model` the runner uses, in
the registry the run was given (``runtime.registry``), never a fresh discovery. More than one
inner option needs ``--model-args`` JSON, since commas separate the outer options.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Encoder, Generator, LoglikelihoodScorer
from harness.definitions.registry import Registry, load_target
from harness.definitions.specs import ModelFinder, PluginInfo
from harness.errors import HarnessError
from harness.models.capabilities import declared, is_plain_encoder, provide
from harness.models.encoding import EncodingService
from harness.models.generation import GenerationService
from harness.models.loglikelihood import ScoringService
from harness.options import bind_options, parse_named, path_options


class ModelSource(Protocol):
    """A model to run, known before it is loaded: its name, class and plugin, so a run can check
    that the model can run its tasks before any weights are read."""

    @property
    def name(self) -> str: ...

    @property
    def plugin(self) -> PluginInfo: ...

    @property
    def cls(self) -> type[Model]: ...

    def check(self, needs: type, task_name: str) -> None:
        """Stop before loading anything if the model cannot provide what ``task_name`` needs."""
        ...

    def instantiate(self, runtime: Runtime) -> Model: ...


@dataclass(frozen=True)
class ModelChoice:
    """A model named on the command line or in a composite's options: its class and bound
    options, resolved (and checked) before any weights are loaded."""

    name: str
    cls: type[Model]
    plugin: PluginInfo
    options: dict[str, Any]

    def check(self, needs: type, task_name: str) -> None:
        provide(self.cls, needs, model_name=self.name, task_name=task_name)

    def instantiate(self, runtime: Runtime) -> Model:
        # every model takes runtime= (the model contract); the Model base class declares no __init__
        model = self.cls(runtime=runtime, **self.options)  # type: ignore[call-arg]
        model.name = self.name
        return model


@dataclass(frozen=True)
class GivenModel:
    """A model the caller built: a harness model instance, or a Python object wrapped as one
    (:mod:`harness.models.objects`). Instantiating it returns it as it is."""

    model: Model
    plugin: PluginInfo

    @property
    def name(self) -> str:
        """The model's label: what its owner called it (a model object has no registered name)."""
        return self.model.identity().label

    @property
    def cls(self) -> type[Model]:
        return type(self.model)

    def check(self, needs: type, task_name: str) -> None:
        provide(self.model, needs, model_name=self.name, task_name=task_name)

    def instantiate(self, runtime: Runtime) -> Model:
        return self.model


def resolve_model(
    spec: object, registry: ModelFinder, model_args: str | Mapping[str, Any] | None = None, label: str | None = None
) -> ModelSource:
    """The model ``spec`` names: a registered name (``name:key=value,...``, options merged with
    ``model_args`` JSON), a harness model instance, or a Python object providing a capability;
    ``label`` names a Python object on the leaderboard."""
    if not isinstance(spec, str):
        from harness.models.objects import PYTHON_OBJECT, as_model

        if model_args:
            raise HarnessError("model_args: options go with a model name; a model object is used as it is")
        model = as_model(spec, label)
        return GivenModel(model, PYTHON_OBJECT if model.name == "python-object" else _plugin_of(model, registry))
    if label is not None:
        raise HarnessError("label names a model object; a registered model gives its own label")
    named = parse_named(spec, model_args)
    spec_entry, plugin = registry.model(named.name)
    model_cls = load_target(spec_entry, plugin, "model")
    return ModelChoice(
        named.name, model_cls, plugin, bind_options(model_cls, named.options, owner=f"model {named.name}")
    )


def _plugin_of(model: Model, registry: ModelFinder) -> PluginInfo:
    """The plugin that registers ``model``'s class, or the Python-object plugin if none does."""
    from harness.models.objects import PYTHON_OBJECT

    for spec, plugin in registry.models.entries.values():
        if spec.target == f"{type(model).__module__}:{type(model).__qualname__}":
            return plugin
    return PYTHON_OBJECT


def model_service(
    model: Model, runtime: Runtime, identity: ModelIdentity, *, show_progress: bool
) -> EncodingService | GenerationService | None:
    """The harness's service in front of a model: the shared encoding queue for a plain encoder,
    the generation service for a generator (each deduplicates, keeps the on-disk cache, batches by
    length); None for any other model. A model that its identity cannot tell apart from others (an
    in-memory object with nothing to fingerprint) is served without the on-disk cache."""
    if not model.reproducible:
        runtime = replace(runtime, cache_dir=None)
    if is_plain_encoder(model):
        return EncodingService.for_model(cast(Encoder, model), runtime, identity.as_dict(), show_progress=show_progress)
    if Generator in declared(model):
        # a generator that also scores continuations gets the log-likelihood service beside it
        service = ScoringService if LoglikelihoodScorer in declared(model) else GenerationService
        return service.for_model(cast(Generator, model), runtime, identity.as_dict())
    return None


def load_model(spec: object, runtime: Runtime, *, needs: type | None, owner: str) -> tuple[Model, Any]:
    """Instantiate the model ``spec`` names (a name with options, or a model object), in the
    run's registry; return it (for its identity) and it as a ``needs`` (adapted where the harness
    knows how; itself when ``needs`` is None), or raise a one-line error naming ``owner``, the
    composite that asked for it."""
    choice = resolve_model(spec, runtime.registry or Registry.discover())
    if needs is not None:
        choice.check(needs, owner)
    model = choice.instantiate(runtime)
    if needs is None:
        return model, model
    # an inner encoder or generator gets the service a top-level one gets
    capability = model_service(model, runtime, model.identity(), show_progress=False) or model
    return model, provide(capability, needs, model_name=choice.name, task_name=owner)


def rebuild_encoder(identity: Mapping[str, Any], registry: ModelFinder, runtime: Runtime) -> Model:
    """The encoder an identity records (an embedding-cache folder's ``model.json``), loaded as a
    run loads it: its registered name, with the options its identity lists that its constructor
    takes, and its path options (the weights, which the identity names by their hash) from where
    the identity's details say the run found them. Whether this is the model that wrote the
    folder, the caller checks by its key (:func:`harness.models.cache.verify`)."""
    name, recorded, details = identity.get("name"), identity.get("options"), identity.get("details")
    if not isinstance(name, str):
        raise HarnessError("model.json names no model")
    recorded = recorded if isinstance(recorded, dict) else {}
    details = details if isinstance(details, dict) else {}
    spec, plugin = registry.model(name)
    cls = load_target(spec, plugin, "model")
    accepted = inspect.signature(cls).parameters
    options = {key: value for key, value in recorded.items() if key in accepted}
    options.update({key: details[key] for key in path_options(cls) if key not in options and key in details})
    choice = resolve_model(name, registry, options)
    if not is_plain_encoder(choice.cls):
        raise HarnessError(f"model {name} is not an encoder")
    return choice.instantiate(runtime)


def identity_part(model: Model) -> dict[str, Any]:
    """An inner model as its composite's identity records it: name, label, weights and options,
    so two composites over different inner models (or weights) never share a result."""
    return model.identity().key()
