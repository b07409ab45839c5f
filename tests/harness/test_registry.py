"""Plugins are found through entry points; broken, duplicate and unknown names are reported clearly."""

from __future__ import annotations

import json
import os
import types
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from harness.errors import RegistryError
from harness.hookspecs import hookimpl
import harness.registry as registry_module
from harness.registry import DISABLE_PLUGINS_ENV, PLUGINS_ENV, ModelSpec, PluginInfo, Registry, TaskSpec
from tests.harness.fakes import fake_registry

FAKES = "tests.harness.fakes"


def _plugin(tasks: list[TaskSpec] = (), models: list[ModelSpec] = ()) -> types.SimpleNamespace:
    ns = types.SimpleNamespace()
    ns.harness_tasks = hookimpl(lambda: list(tasks))
    ns.harness_models = hookimpl(lambda: list(models))
    return ns


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
    with pytest.raises(RegistryError, match="unknown task 'fake-lokup'; did you mean 'fake-lookup'"):
        fake_registry().task("fake-lokup")


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
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [
        EntryPoint("fakes", FAKES, group), EntryPoint("broken", "no_such_module_for_harness_tests", group)])
    with pytest.warns(RuntimeWarning, match="plugin 'broken' failed to load and is skipped: ModuleNotFoundError"):
        registry = Registry.discover()
    assert "fake-lookup" in registry.tasks.entries and "word-overlap" in registry.models.entries


def test_a_misspelled_hook_makes_the_plugin_broken_instead_of_silently_empty() -> None:
    registry = Registry()
    plugin = types.SimpleNamespace(harness_task=hookimpl(lambda: [TaskSpec("lost", "m:T")]))
    with pytest.warns(RuntimeWarning, match="plugin 'typo' failed to load and is skipped: ValueError: unknown hook "
                      "'harness_task'; did you mean 'harness_tasks'"):
        registry.add_plugin(plugin, PluginInfo("typo"))
    assert [b.plugin.name for b in registry.broken] == ["typo"] and not registry.tasks.entries
    registry.add_plugin(_plugin(tasks=[TaskSpec("ok", "m:T")]), PluginInfo("good"))  # later plugins still load
    assert list(registry.tasks.entries) == ["ok"]


PLUGIN_SOURCE = '''
from harness.hookspecs import hookimpl
from harness.registry import ModelSpec

{prelude}

@hookimpl
def harness_models():
    return [ModelSpec("{model}", "tests.harness.fakes:WordOverlap")]
'''


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only_fakes: None) -> Path:
    """A folder on sys.path where tests write plugin modules that no distribution installs."""
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def write_plugin(folder: Path, module: str, *, model: str = "extra-model", prelude: str = "") -> str:
    (folder / f"{module}.py").write_text(PLUGIN_SOURCE.format(prelude=prelude, model=model), encoding="utf-8")
    return module


@pytest.mark.parametrize("prelude, reason", [
    ("import sys; sys.exit(0)", "SystemExit: 0"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt: "),
    ("raise BaseException('plugin gave up')", "BaseException: plugin gave up"),
])
def test_a_plugin_that_exits_or_interrupts_at_import_is_contained(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch, prelude: str, reason: str
) -> None:
    monkeypatch.setenv(PLUGINS_ENV, write_plugin(plugin_dir, f"quits_{abs(hash(prelude))}", prelude=prelude))
    with pytest.warns(RuntimeWarning, match="failed to load and is skipped"):
        registry = Registry.discover()
    assert [b.reason for b in registry.broken] == [reason]
    assert "word-overlap" in registry.models.entries and "extra-model" not in registry.models.entries


def test_a_plugin_that_exits_at_import_does_not_end_the_command(harness_cli: Any, plugin_dir: Path) -> None:
    module = write_plugin(plugin_dir, "exits_at_import", prelude="import sys; sys.exit(0)")
    code, out, err = harness_cli("--plugin", module, "run", "fake-lookup", "word-overlap", "--quiet",
                                 "--no-leaderboard")
    assert code == 0 and "main score: p@1 = 0.6667" in out  # 4 of 6 questions, see tests/harness/fakes.py
    assert "warning: plugin 'exits_at_import' failed to load and is skipped: SystemExit: 0" in err


def test_plugin_option_and_environment_load_modules_that_are_not_installed(
    harness_cli: Any, plugin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(plugin_dir, "by_option", model="from-option")
    write_plugin(plugin_dir, "by_env", model="from-env")
    code, out, err = harness_cli("--plugin", "by_option", "list", "--json")
    models = json.loads(out)["models"]
    assert code == 0 and models["from-option"]["plugin"] == "by_option" and "from-env" not in models
    assert PLUGINS_ENV not in os.environ  # the option does not outlive the command
    monkeypatch.setenv(PLUGINS_ENV, "by_env")
    code, out, err = harness_cli("--plugin", "by_option", "list", "--json")
    assert {"from-option", "from-env"} <= set(json.loads(out)["models"])


def test_disabled_plugins_are_not_loaded(harness_cli: Any, plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PLUGINS_ENV, write_plugin(plugin_dir, "blocked_module", model="blocked-model"))
    monkeypatch.setenv(DISABLE_PLUGINS_ENV, "blocked_module")
    registry = Registry.discover()
    assert "blocked-model" not in registry.models.entries and "word-overlap" in registry.models.entries
    monkeypatch.setenv(DISABLE_PLUGINS_ENV, "fakes, blocked_module")  # an entry-point name and a module name
    registry = Registry.discover()
    assert not registry.models.entries and not registry.tasks.entries and not registry.broken
    code, out, err = harness_cli("run", "fake-lookup", "word-overlap", "--quiet")
    assert code == 2 and err.splitlines()[-1].startswith("error: unknown task 'fake-lookup'")
