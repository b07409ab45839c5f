"""Loading a model from its spec string, for the runner and for models built from other models.

Composite models (a dense index over any encoder, translate-test in front of any retriever) take
the inner model as a spec string, ``name:key=value,...``, exactly as on the command line, and
load it through the same :func:`resolve_model` the runner uses. More than one inner option needs
``--model-args`` JSON, since commas separate the outer options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.capabilities import is_plain_encoder, provide
from harness.encoding import EncodingService
from harness.model import Model, ModelIdentity, Runtime
from harness.options import bind_options, parse_named
from harness.protocols import Encoder, Retriever
from harness.registry import PluginInfo, Registry, load_target


@dataclass(frozen=True)
class ModelChoice:
    """A model named on the command line or in a composite's options: its class and bound
    options, resolved (and checked) before any weights are loaded."""

    name: str
    cls: type[Model]
    plugin: PluginInfo
    options: dict[str, Any]

    def check(self, needs: type, task_name: str) -> None:
        """Stop before loading anything if the model cannot provide what ``task_name`` needs."""
        provide(self.cls, needs, model_name=self.name, task_name=task_name)

    def instantiate(self, runtime: Runtime) -> Model:
        model = self.cls(runtime=runtime, **self.options)
        model.name = self.name
        return model


def resolve_model(text: str, registry: Registry, model_args: str | None = None) -> ModelChoice:
    """The model named in ``text`` (``name:key=value,...``, options merged with ``model_args`` JSON)."""
    named = parse_named(text, model_args)
    spec, plugin = registry.model(named.name)
    model_cls = load_target(spec, plugin, "model")
    return ModelChoice(named.name, model_cls, plugin, bind_options(model_cls, named.options, owner=f"model {named.name}"))


def encoding_service(model: Model, runtime: Runtime, identity: ModelIdentity, *,
                     show_progress: bool) -> EncodingService | None:
    """The shared encoding queue (dedup, the embedding cache, length batches) for a plain
    encoder; None for any other model."""
    if not is_plain_encoder(model):
        return None
    return EncodingService.for_model(model, runtime, identity.as_dict(), show_progress=show_progress)


def load_model(text: str, runtime: Runtime, *, needs: type | None, owner: str,
               registry: Registry | None = None) -> tuple[Model, Any]:
    """Instantiate the model named in ``text``; return it (for its identity) and it as a ``needs``
    (adapted where the harness knows how; itself when ``needs`` is None), or raise a one-line
    error naming ``owner``, the composite that asked for it."""
    choice = resolve_model(text, registry or Registry.discover())
    if needs is not None:
        choice.check(needs, owner)
    model = choice.instantiate(runtime)
    if needs is None:
        return model, model
    capability: Any = model
    if needs in (Encoder, Retriever):
        # an inner encoder gets what a top-level one gets
        capability = encoding_service(model, runtime, model.identity(), show_progress=False) or model
    return model, provide(capability, needs, model_name=choice.name, task_name=owner)


def identity_part(model: Model) -> dict[str, Any]:
    """An inner model as its composite's identity records it: name, label, weights and options,
    so two composites over different inner models (or weights) never share a result."""
    return model.identity().key()
