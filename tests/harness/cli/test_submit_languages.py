"""Issue 31, item 9: a submission of one language's file is told what a submission can say (its
entry's ``languages``), not the ``--langs`` flag that ``submit`` does not take."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

Cli = Callable[..., tuple[int, str, str]]

CARD = {"name": "gold", "zero_shot": True, "translated_training_data": False}


def test_one_languages_file_is_told_the_entrys_languages_field(harness_cli: Cli, tmp_path: Path) -> None:
    code, _, err = harness_cli("run", "mlqa", "oracle", "--quiet", "--no-leaderboard", "--output-dir", "out")
    assert code == 0, err
    (folder,) = [p for p in (tmp_path / "out").glob("**/predictions*") if p.is_dir()]
    one = sorted(folder.iterdir())[0]  # e.g. dev-context-ar-question-ar.json
    pair = one.stem.split("context-")[1].replace("-question-", "-")
    submission = tmp_path / "inbox" / "one"
    submission.mkdir(parents=True)
    shutil.copy(one, submission / one.name)

    def submit(entry: dict) -> tuple[int, str, str]:
        manifest = {"model": CARD, "entries": [{"task": "mlqa", "predictions": one.name, **entry}]}
        (submission / "submission.json").write_text(json.dumps(manifest), encoding="utf-8")
        return harness_cli(
            "submit", str(submission), "--output-dir", "intake", "--leaderboard", "board.json", "--quiet"
        )

    code, out, _ = submit({})
    assert code == 2
    assert "--langs" not in out and "choose one with submission.json's entries[0].languages" in out, out
    code, out, err = submit({"languages": [pair.split("-")[0]]})  # MLQA: a language is the pair of it with itself
    assert code == 0, out + err
    assert out.splitlines()[0].endswith("mlqa f1 100"), out  # gold answers score F1 100 by definition
