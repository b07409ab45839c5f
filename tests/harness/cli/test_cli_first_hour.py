"""Issue 31: what a new user's first hour met on the command line (abbreviations, global
options after the command, ...)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(
    ("argv", "typed", "wanted"),
    [
        (("run", "lareqa", "bm25", "--lang", "de"), "--lang", "--langs"),
        (("score", "xquad", "--predictions", "p.json", "--input-rule", "official"), "--input-rule", "--input-rules"),
        (("list", "--jso"), "--jso", "--json"),
        (("leaderboard", "show", "--tas", "xquad"), "--tas", "--task"),
        (("--verbos", "list"), "--verbos", "--verbose"),
    ],
)
def test_an_abbreviated_option_is_refused_with_its_full_name(
    harness_cli: Cli, argv: tuple[str, ...], typed: str, wanted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        harness_cli(*argv)
    out, err = capsys.readouterr()
    assert (caught.value.code, out) == (2, "")
    assert err.count("\n") == 1
    assert f"unknown option '{typed}'; did you mean '{wanted}'?" in err


def test_global_options_after_the_command(harness_cli: Cli) -> None:
    code, _, err = harness_cli("run", "lareqa", "bm25", "--limit", "1", "--dry-run", "--no-cache", "-v")
    assert code == 0, err
    assert " INFO lareqa: load_data" in err  # -v after the command turned the step log on
    code, _, err = harness_cli("run", "lareqa", "bm25", "--limit", "1", "--dry-run", "--no-cache")
    assert code == 0 and " INFO " not in err
    code, _, err = harness_cli(
        "run", "lareqa", "bm25", "--limit", "1", "--dry-run", "--no-cache", "--log-level", "info"
    )
    assert code == 0 and " INFO lareqa: load_data" in err


def test_plugin_after_the_command_is_loaded(harness_cli: Cli) -> None:
    code, out, err = harness_cli("list", "--json", "--plugin", "tests.stall_plugin")
    assert code == 0, err
    assert json.loads(out)["models"]["stall-overlap"]["plugin"] == "tests.stall_plugin"


def test_dir_of_the_package_lists_the_public_api() -> None:
    import harness

    assert {"evaluate", "plan", "score", "tasks", "Outcome", "__version__"} <= set(dir(harness))
    assert "Any" not in dir(harness)


def test_api_errors_name_keywords_and_the_command_line_flags(harness_cli: Cli, tmp_path: Path) -> None:
    import harness
    from harness.errors import HarnessError

    missing = tmp_path / "nope"
    with pytest.raises(HarnessError) as caught:
        harness.evaluate("lareqa", "bm25", data_dir=missing)
    assert str(caught.value) == f"data_dir {missing} does not exist"
    with pytest.raises(HarnessError) as caught:
        harness.evaluate("lareqa", "bm25", labels=missing)
    assert str(caught.value).startswith("labels go with a model family")
    code, _, err = harness_cli("run", "lareqa", "bm25", "--data-dir", str(missing))
    assert (code, err) == (2, f"error: --data-dir {missing} does not exist\n")


def test_cache_info_lists_no_lock_file_as_a_model(harness_cli: Cli, tmp_path: Path) -> None:
    models = tmp_path / "cache" / "models"
    (models / "tiny-abc-float32").mkdir(parents=True)
    (models / "tiny-abc-float32" / "model.bin").write_bytes(b"0" * 2048)
    (models / "tiny-abc-float32.lock").write_bytes(b"")  # what a conversion's FileLock leaves
    code, out, err = harness_cli("cache", "info", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert "models/tiny-abc-float32 " in out and ".lock" not in out


def test_list_shows_one_task(harness_cli: Cli) -> None:
    code, out, err = harness_cli("list", "lareqa")
    assert code == 0, err
    assert "languages    ar,de,el,en,es,hi,ru,th,tr,vi,zh" in out
    assert "model needs  Retriever (also: Encoder, adapted)" in out
    assert "pool        multilingual  multilingual|all|mono" in out
    assert "  xquad-r/de.json" in out
    code, _, err = harness_cli("list", "xqad")
    assert (code, err) == (2, "error: unknown task 'xqad'; did you mean 'xquad'? (see harness list)\n")


def test_list_json_is_a_task_browser(harness_cli: Cli) -> None:
    import harness

    code, out, err = harness_cli("list", "--json")
    assert code == 0, err
    tasks = json.loads(out)["tasks"]
    assert tasks["xor-retrieve"]["options"][:2] == [
        {"name": "corpus", "default": None, "type": "Path | None"},
        {"name": "top_k", "default": 100, "type": "int"},
    ]
    assert tasks["xquad"]["served_by"] == ["Reader", "Generator"] and tasks["xquad"]["splits"] == ["test"]
    # Tatoeba's editions: XTREME's 36 languages within the 41 of XTREME-R (Ruder et al. 2021 add five)
    editions = tasks["tatoeba"]["editions"]
    assert [len(editions["XTREME"]), len(editions["XTREME-R"])] == [36, 41] and tasks["xquad"]["editions"] == {}
    assert set(editions["XTREME-R"]) - set(editions["XTREME"]) == {"az", "lt", "pl", "ro", "uk"}
    assert [t.name for t in harness.tasks(needs="Encoder", languages="de,ja")] == sorted(
        name for name, t in tasks.items() if "Encoder" in t["served_by"] and {"de", "ja"} <= set(t["languages"])
    )


def test_every_score_says_its_unit(harness_cli: Cli) -> None:
    """Issue 31, item 3: LAReQA's mAP stays the fraction its official code prints, XQuAD's F1 the
    percent; the table headers, the main score and the result (--json) say which."""
    code, out, err = harness_cli("run", "lareqa", "bm25", "--langs", "de", "--quiet", "--no-cache", "--no-leaderboard")
    assert code == 0, err
    assert "subset  map (0-1)  map@20 (0-1)  count" in out and "main score: map (0-1) = 0.7371" in out
    code, out, err = harness_cli(
        "run", "lareqa", "bm25", "--langs", "de", "--quiet", "--no-cache", "--no-leaderboard", "--json"
    )
    assert json.loads(out)["results"][0]["result"]["task"]["scale"] == "fraction"
    code, out, err = harness_cli("run", "xquad", "oracle", "--langs", "de", "--quiet", "--no-leaderboard", "--json")
    assert code == 0, err
    task = json.loads(out)["results"][0]["result"]["task"]
    assert task["scale"] == "percent" and "unscaled" not in task
    from harness.results.result import TaskRecord

    mkqa = TaskRecord.from_dict({**task, "name": "mkqa", "unscaled": ["best_f1_threshold"]})
    assert (mkqa.unit("best_f1"), mkqa.unit("best_f1_threshold")) == ("percent", None)
