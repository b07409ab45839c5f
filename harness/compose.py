"""Models built from other models: a model option that names another model, options and all.

Composite models (a dense index over any encoder, translate-test in front of any retriever) take
the inner model as a spec string, ``name:key=value,...``, exactly as on the command line. More
than one inner option needs ``--model-args`` JSON, since commas separate the outer options.
"""

from __future__ import annotations

from typing import Any

from harness.capabilities import provide
from harness.errors import RegistryError
from harness.model import Model, Runtime
from harness.options import bind_options, parse_named
from harness.registry import Registry


def load_model(text: str, runtime: Runtime, *, needs: type | None, owner: str,
               registry: Registry | None = None) -> tuple[Model, Any]:
    """Instantiate the model named in ``text``; return it (for its identity) and it as a ``needs``
    (adapted where the harness knows how; itself when ``needs`` is None), or raise a one-line
    error naming ``owner``, the composite that asked for it."""
    named = parse_named(text)
    spec, plugin = (registry or Registry.discover()).model(named.name)
    try:
        model_cls = spec.load()
    except Exception as exc:  # the same one-line report as the runner's
        raise RegistryError(f"model '{spec.name}' from {plugin} failed to import: {type(exc).__name__}: {exc}") from exc
    if needs is not None:
        provide(model_cls, needs, model_name=named.name, task_name=owner)
    model: Model = model_cls(runtime=runtime, **bind_options(model_cls, named.options, owner=f"model {named.name}"))
    model.name = named.name
    return model, model if needs is None else provide(model, needs, model_name=named.name, task_name=owner)
