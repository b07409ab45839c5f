"""sha256_path: one digest for a predictions file or a predictions folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.files.io import sha256_path, sha256_text


def test_file_digest_is_the_plain_sha256(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(b"{}\n")
    assert sha256_path(path) == hashlib.sha256(b"{}\n").hexdigest()


def test_folder_digest_covers_names_and_contents(tmp_path: Path) -> None:
    folder = tmp_path / "predictions"
    folder.mkdir()
    a, b = b"{}", b'{"q": "x"}'
    (folder / "b.json").write_bytes(b)
    (folder / "a.json").write_bytes(a)
    # name order, each "relative name <TAB> sha256 of the file", hashed as sha256_text hashes parts
    digest = sha256_path(folder)
    assert digest == sha256_text(f"a.json\t{hashlib.sha256(a).hexdigest()}", f"b.json\t{hashlib.sha256(b).hexdigest()}")
    (folder / "b.json").rename(folder / "c.json")
    renamed = sha256_path(folder)
    assert renamed != digest
    (folder / "c.json").write_bytes(b'{"q": "y"}')
    assert sha256_path(folder) not in (digest, renamed)
