"""Fixtures of the core tests: a world where the fake plugin is the only installed one."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

import harness.definitions.registry as registry_module
from harness.definitions.registry import DISABLE_PLUGINS_ENV, PLUGINS_ENV


@pytest.fixture
def only_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry points name only ``tests.harness.fakes``: every registry (the CLI's too) holds the fake
    task and models and no first-party plugin."""
    monkeypatch.setattr(
        registry_module, "entry_points", lambda group: [EntryPoint("fakes", "tests.harness.fakes", group)]
    )
    monkeypatch.delenv(PLUGINS_ENV, raising=False)
    monkeypatch.delenv(DISABLE_PLUGINS_ENV, raising=False)
