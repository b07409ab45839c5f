"""Every prediction format a registered task names has a schema `harness validate` can find."""

from __future__ import annotations

import pytest

from harness.definitions.registry import Registry, load_target
from harness.definitions.validation import validate
from harness.errors import InputError

REGISTRY = Registry.discover()


@pytest.mark.parametrize("name", sorted(REGISTRY.tasks.entries))
def test_the_prediction_format_of_every_task_has_a_schema(name: str) -> None:
    spec, plugin = REGISTRY.task(name)
    fmt = load_target(spec, plugin, "task").metadata.prediction_format
    # null is no prediction file: a known schema refuses it; an unknown name is a HarnessError instead
    with pytest.raises(InputError, match=f"does not match schema {fmt}"):
        validate(None, fmt, file="-")
