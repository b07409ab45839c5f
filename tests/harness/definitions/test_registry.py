"""Plugins are found through entry points; broken, duplicate and unknown names are reported clearly."""

from __future__ import annotations

import json
import os
import types
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import harness.definitions.registry as registry_module
from harness.definitions.hookspecs import hookimpl
from harness.definitions.registry import DISABLE_PLUGINS_ENV, PLUGINS_ENV, Registry
from harness.definitions.specs import ModelSpec, PluginInfo, TaskSpec
from harness.errors import RegistryError
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
    registry.add_plugin(
        _plugin(models=[ModelSpec("twin", "b:B"), ModelSpec("solo", "b:C")]), PluginInfo("second", "pkg-b", "2.0")
    )
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
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda group: [
            EntryPoint("fakes", FAKES, group),
            EntryPoint("broken", "no_such_module_for_harness_tests", group),
        ],
    )
    with pytest.warns(RuntimeWarning, match="plugin 'broken' failed to load and is skipped: ModuleNotFoundError"):
        registry = Registry.discover()
    assert "fake-lookup" in registry.tasks.entries and "word-overlap" in registry.models.entries


def test_a_misspelled_hook_makes_the_plugin_broken_instead_of_silently_empty() -> None:
    registry = Registry()
    plugin = types.SimpleNamespace(harness_task=hookimpl(lambda: [TaskSpec("lost", "m:T")]))
    with pytest.warns(
        RuntimeWarning,
        match="plugin 'typo' failed to load and is skipped: ValueError: unknown hook "
        "'harness_task'; did you mean 'harness_tasks'",
    ):
        registry.add_plugin(plugin, PluginInfo("typo"))
    assert [b.plugin.name for b in registry.broken] == ["typo"] and not registry.tasks.entries
    registry.add_plugin(_plugin(tasks=[TaskSpec("ok", "m:T")]), PluginInfo("good"))  # later plugins still load
    assert list(registry.tasks.entries) == ["ok"]


PLUGIN_SOURCE = """
from harness.definitions.hookspecs import hookimpl
from harness.definitions.registry import ModelSpec

{prelude}

@hookimpl
def harness_models():
    return [ModelSpec("{model}", "tests.harness.fakes:WordOverlap")]
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only_fakes: None) -> Path:
    """A folder on sys.path where tests write plugin modules that no distribution installs."""
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def write_plugin(folder: Path, module: str, *, model: str = "extra-model", prelude: str = "") -> str:
    (folder / f"{module}.py").write_text(PLUGIN_SOURCE.format(prelude=prelude, model=model), encoding="utf-8")
    return module


@pytest.mark.parametrize(
    "prelude, reason",
    [
        ("import sys; sys.exit(0)", "SystemExit: 0"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt: "),
        ("raise BaseException('plugin gave up')", "BaseException: plugin gave up"),
    ],
)
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
    code, out, err = harness_cli(
        "--plugin", module, "run", "fake-lookup", "word-overlap", "--quiet", "--no-leaderboard"
    )
    assert code == 0 and "main score: p@1 (0-1) = 0.6667" in out  # 4 of 6 questions, see tests/harness/fakes.py
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


TASK_PLUGIN_SOURCE = """
from harness.definitions.hookspecs import hookimpl
from harness.definitions.protocols import Retriever
from harness.definitions.specs import Edition
from harness.definitions.task import TaskMetadata
from tests.harness.fakes import FakeLookup


class Declared(FakeLookup):
    metadata = TaskMetadata(**{{**dict(
        name="declared-lookup", description="the fake lookup, declared in one module", reference="tests",
        languages=("de", "en", "fr"), splits=("test",), main_metric="p@1", needs=Retriever,
        prediction_format="fake-predictions"), **{fields}}})


@hookimpl
def harness_tasks():
    return [Declared]
"""


def write_task_plugin(folder: Path, module: str, fields: str = "{}") -> str:
    """A single-module task plugin: metadata, task class and hook in one file; ``fields`` (Python
    source of a dict) overrides metadata fields."""
    (folder / f"{module}.py").write_text(TASK_PLUGIN_SOURCE.format(fields=fields), encoding="utf-8")
    return module


def test_a_hook_may_return_the_task_class_itself(harness_cli: Any, plugin_dir: Path) -> None:
    module = write_task_plugin(plugin_dir, "one_module_task")
    code, out, err = harness_cli("--plugin", module, "list", "--json")
    assert code == 0, err
    listed = json.loads(out)["tasks"]["declared-lookup"]
    assert {key: listed[key] for key in ("summary", "languages", "plugin")} == {
        "summary": "the fake lookup, declared in one module",
        "languages": ["de", "en", "fr"],
        "plugin": module,
    }
    code, out, err = harness_cli(
        "--plugin", module, "run", "declared-lookup", "word-overlap", "--quiet", "--no-leaderboard"
    )
    assert code == 0, err
    assert (
        "main score: p@1 = 0.6667" in out
    )  # no scale declared: no unit; the fake lookup's own score (4 of 6, see tests/harness/fakes.py)


@pytest.mark.parametrize(
    "fields, line",
    [
        (
            '{"needs": str}',
            "task 'declared-lookup': field 'needs': str is not a capability (capabilities: Encoder, "
            "Retriever, Reader, OpenDomainQA, PredictionSource, Translator, PairClassifier, TokenTagger, "
            "MultipleChoice, Generator, LoglikelihoodScorer)",
        ),
        ('{"languages": ()}', "task 'declared-lookup': field 'languages': names no language"),
        ('{"languages": "en"}', "task 'declared-lookup': field 'languages': must be tuple[str, ...], not str"),
        ('{"languages": ("en", "de", "en")}', "task 'declared-lookup': field 'languages': 'en' is listed twice"),
        ('{"splits": ()}', "task 'declared-lookup': field 'splits': names no split"),
        (
            '{"editions": (Edition("OLD", ("de", "it")),)}',
            "task 'declared-lookup': field 'editions': OLD: it is not one of the task's languages",
        ),
        ('{"editions": (Edition("OLD", ()),)}', "task 'declared-lookup': field 'editions': OLD: names no language"),
        ('{"main_metric": ("f1", "em")}', "task 'declared-lookup': field 'main_metric': must be str, not tuple"),
        ('{"main_metric": ""}', "task 'declared-lookup': field 'main_metric': must not be empty"),
        ('{"higher_is_better": "yes"}', "task 'declared-lookup': field 'higher_is_better': must be bool, not str"),
        (
            '{"name": "my lookup"}',
            "task 'my lookup': field 'name': 'my lookup' is not a name: letters, digits, '.', '_' "
            "and '-', starting with a letter or digit",
        ),
    ],
)
def test_bad_task_metadata_breaks_its_plugin_in_one_line_naming_plugin_and_field(
    harness_cli: Any, plugin_dir: Path, fields: str, line: str
) -> None:
    module = write_task_plugin(plugin_dir, f"bad_metadata_{abs(hash(fields))}", fields)
    code, out, err = harness_cli("--plugin", module, "list")
    assert code == 0
    assert "fake-lookup" in out and "word-overlap" in out and "declared-lookup" not in out  # the others are listed
    assert err.splitlines() == [f"warning: plugin '{module}' failed to load and is skipped: RegistryError: {line}"]
    code, out, err = harness_cli("--plugin", module, "list", "--json")
    assert json.loads(out)["broken"] == [{"plugin": module, "reason": f"RegistryError: {line}"}]


@pytest.mark.parametrize(
    "spec, reason",
    [
        (
            'ModelSpec("my model", "tests.harness.fakes:WordOverlap")',
            "RegistryError: model 'my model': field 'name': 'my model' is not a name: letters, digits, '.', '_' and '-', "
            "starting with a letter or digit",
        ),
        (
            'ModelSpec("dotted", "tests.harness.fakes.WordOverlap")',
            "RegistryError: model 'dotted': field 'target': 'tests.harness.fakes.WordOverlap' is not an importable "
            "'package.module:Class'",
        ),
        (
            'ModelSpec("summed", "tests.harness.fakes:WordOverlap", ("a", "b"))',
            "RegistryError: model 'summed': field 'summary': must be str, not tuple",
        ),
        ('"word-overlap"', "TypeError: harness_models returned 'word-overlap', not a ModelSpec"),
    ],
)
def test_a_bad_model_spec_breaks_its_plugin(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch, spec: str, reason: str
) -> None:
    source = PLUGIN_SOURCE.format(prelude="", model="unused").replace(
        'ModelSpec("unused", "tests.harness.fakes:WordOverlap")', spec
    )
    module = f"bad_model_spec_{abs(hash(spec))}"
    (plugin_dir / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.setenv(PLUGINS_ENV, module)
    with pytest.warns(RuntimeWarning, match=f"plugin '{module}' failed to load"):
        registry = Registry.discover()
    assert [b.reason for b in registry.broken] == [reason]
    assert "word-overlap" in registry.models.entries  # the fakes plugin still loads


def test_a_task_class_without_metadata_breaks_its_plugin() -> None:
    from tests.harness.fakes import FakeLookup

    class Bare(FakeLookup):
        metadata = None  # type: ignore[assignment]

    registry = Registry()
    with pytest.warns(
        RuntimeWarning, match="RegistryError: task class .*Bare: field 'metadata': must be a TaskMetadata, not NoneType"
    ):
        registry.add_plugin(types.SimpleNamespace(harness_tasks=hookimpl(lambda: [Bare])), PluginInfo("bare"))
    assert [b.plugin.name for b in registry.broken] == ["bare"] and not registry.tasks.entries
