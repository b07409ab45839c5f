"""Issue 31, item 1: ``--langs`` restricts LAReQA's candidate pool too, which makes it another
task; the result says so, and ``lareqa:pool=all`` asks the chosen languages' questions against
the pool of every language.

Independent figure: the ``de`` row of the full demo run (every language in the pool) is what
``pool=all --langs de`` must give, question for question."""

from __future__ import annotations

import json
from collections.abc import Callable

Cli = Callable[..., tuple[int, str, str]]


def _result(harness_cli: Cli, *args: str) -> dict:
    code, out, err = harness_cli("run", *args, "--quiet", "--no-cache", "--no-leaderboard", "--json")
    assert code == 0, err
    return json.loads(out)["results"][0]["result"]


def test_langs_restricting_the_pool_is_said_and_pool_all_keeps_it(harness_cli: Cli) -> None:
    full = _result(harness_cli, "lareqa", "bm25")
    de_row = next(row for row in full["rows"] if row["subset"] == "de")
    everyone = set(full["diagnostics"]["pool"]["languages"])
    assert full["diagnostics"]["pool"]["left_out_by_langs"] == []
    assert not any(note.startswith("pool:") for note in full["notes"])

    alone = _result(harness_cli, "lareqa", "bm25", "--langs", "de")
    assert alone["diagnostics"]["pool"]["languages"] == ["de"]
    assert set(alone["diagnostics"]["pool"]["left_out_by_langs"]) == everyone - {"de"}
    (note,) = [note for note in alone["notes"] if note.startswith("pool:")]
    assert "lareqa:pool=all" in note and "not that pool's" in note
    assert alone["main_score"]["value"] != de_row["metrics"]["map"]  # a different, easier task

    pooled = _result(harness_cli, "lareqa:pool=all", "bm25", "--langs", "de")
    assert set(pooled["diagnostics"]["pool"]["languages"]) == everyone
    assert pooled["diagnostics"]["pool"]["candidates"] == full["diagnostics"]["pool"]["candidates"]
    assert not any(note.startswith("pool:") for note in pooled["notes"])
    assert [row["subset"] for row in pooled["rows"]] == ["all", "de"]
    assert pooled["rows"][1]["metrics"] == de_row["metrics"]
    assert pooled["main_score"]["value"] == de_row["metrics"]["map"]
    assert pooled["task"]["scorer_signature"].endswith("|pool:all")


def test_the_table_says_the_pool_was_restricted(harness_cli: Cli) -> None:
    code, out, err = harness_cli(
        "run", "lareqa", "bm25", "--langs", "de,en", "--quiet", "--no-cache", "--no-leaderboard"
    )
    assert code == 0, err
    assert "note: pool: the candidates of the 2 language(s) run only" in out
