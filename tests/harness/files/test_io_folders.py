"""Prediction formats that are folders (MKQA's ``<lang>.jsonl`` files): content hash and atomic replacement."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.files.io import sha256_file, sha256_path, write_folder_atomic


def test_sha256_path_hashes_names_and_contents(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_folder_atomic(a, {"en.jsonl": b"1\n", "fr.jsonl": b"2\n"})
    write_folder_atomic(b, {"fr.jsonl": b"2\n", "en.jsonl": b"1\n"})
    assert sha256_path(a) == sha256_path(b)  # creation order does not matter
    write_folder_atomic(b, {"fr.jsonl": b"2\n", "de.jsonl": b"1\n"})
    assert sha256_path(a) != sha256_path(b)  # a renamed file does
    assert sha256_path(a / "en.jsonl") == sha256_file(a / "en.jsonl")


def test_write_folder_atomic_replaces_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "predictions"
    write_folder_atomic(target, {"en.jsonl": b"old\n", "fr.jsonl": b"old\n"})
    write_folder_atomic(target, {"en.jsonl": b"new\n"})
    assert sorted(p.name for p in target.iterdir()) == ["en.jsonl"]
    assert (target / "en.jsonl").read_bytes() == b"new\n"

    calls = []

    def failing_write(self: Path, data: bytes) -> int:
        calls.append(self.name)
        if len(calls) == 2:
            raise OSError("disk full")
        return original(self, data)

    original = Path.write_bytes
    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(OSError):
        write_folder_atomic(target, {"en.jsonl": b"newer\n", "fr.jsonl": b"newer\n"})
    monkeypatch.undo()
    assert (target / "en.jsonl").read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions"]  # no staging folder left


def test_atomic_writes_get_a_plain_file_mode(tmp_path: Path) -> None:
    import os

    from harness.files.io import dump_json

    mask = os.umask(0o022)
    try:
        dump_json({"a": 1}, tmp_path / "x.json")
    finally:
        os.umask(mask)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o644


def test_an_atomic_folder_gets_a_plain_folder_mode_and_leaves_nothing_on_failure(tmp_path: Path) -> None:
    import os

    from harness.files.io import atomic_folder

    mask = os.umask(0o022)
    try:
        with atomic_folder(tmp_path / "index") as staging:
            (staging / "index.json").write_text("{}", encoding="utf-8")
            assert not (tmp_path / "index").exists()  # nothing in place until the block ends
    finally:
        os.umask(mask)
    assert (tmp_path / "index").stat().st_mode & 0o777 == 0o755  # not mkdtemp's 0700
    assert (tmp_path / "index" / "index.json").read_text(encoding="utf-8") == "{}"
    with pytest.raises(RuntimeError, match="encoder crashed"), atomic_folder(tmp_path / "index") as staging:
        (staging / "shard-0.npy").write_bytes(b"partial")
        raise RuntimeError("encoder crashed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # the old folder stays, no staging left
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == ["index.json"]
