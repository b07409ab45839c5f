"""Models built from other models: a model option that names another model, options and all.

Composite models (a dense index over any encoder, translate-test in front of any retriever) take
the inner model as a spec string, ``name:key=value,...``, exactly as on the command line. More
than one inner option needs ``--model-args`` JSON, since commas separate the outer options.
"""

from __future__ import annotations

from typing import Any

from harness.capabilities import is_plain_encoder, provide
from harness.encoding import EncodingService
from harness.model import Model, Runtime
from harness.options import bind_options, parse_named
from harness.protocols import Encoder, Retriever
from harness.registry import Registry, load_target


def load_model(text: str, runtime: Runtime, *, needs: type | None, owner: str,
               registry: Registry | None = None) -> tuple[Model, Any]:
    """Instantiate the model named in ``text``; return it (for its identity) and it as a ``needs``
    (adapted where the harness knows how; itself when ``needs`` is None), or raise a one-line
    error naming ``owner``, the composite that asked for it."""
    named = parse_named(text)
    model_cls = load_target(*(registry or Registry.discover()).model(named.name), "model")
    if needs is not None:
        provide(model_cls, needs, model_name=named.name, task_name=owner)
    model: Model = model_cls(runtime=runtime, **bind_options(model_cls, named.options, owner=f"model {named.name}"))
    model.name = named.name
    if needs is None:
        return model, model
    capability: Any = model
    if is_plain_encoder(model) and needs in (Encoder, Retriever):
        # an inner encoder gets what a top-level one gets: dedup, the embedding cache, length batches
        capability = EncodingService.for_model(model, runtime, model.identity().as_dict(), show_progress=False)
    return model, provide(capability, needs, model_name=named.name, task_name=owner)


def identity_part(model: Model) -> dict[str, Any]:
    """An inner model as its composite's identity records it: name, label, weights and options,
    so two composites over different inner models (or weights) never share a result."""
    identity = model.identity()
    return {"name": identity.name, "label": identity.label, "weights": identity.weights, "options": identity.options}
