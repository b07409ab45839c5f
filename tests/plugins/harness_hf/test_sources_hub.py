"""Models named as on the hub: downloaded through ``huggingface_hub`` from a real HTTP server on
127.0.0.1 that serves a tiny model in the hub's URL layout (``HF_ENDPOINT``), never the internet.

The server answers the three kinds of request the library makes: a revision's commit
(``/api/models/ORG/NAME/revision/REV``), the commit's file list (``.../tree/COMMIT``) and each file
(``/ORG/NAME/resolve/COMMIT/FILE``). It counts them, so a second run from the cache, and offline
mode, are seen to send none.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness_hf.sources import hub_commit, resolve_source
from tests.harness.data_server import FileServer, closed_port, serving

OWNER = "model hf-reader"
MAIN = "a" * 40
TAGGED = "b" * 40
REVISIONS = {"main": MAIN, "v1": TAGGED, TAGGED: TAGGED, MAIN: MAIN}


def _hub(server: FileServer, repo: str, model: Path) -> dict[str, bytes]:
    """Serve ``model``'s files as hub repository ``repo`` at both commits; plus a gated and a
    missing repository. Returns the files served (path -> bytes)."""
    files = {p.relative_to(model).as_posix(): p.read_bytes() for p in sorted(model.rglob("*")) if p.is_file()}
    files["flax_model.msgpack"] = b"weights of another framework, never fetched"

    def revision(path: str) -> tuple[int, dict[str, str], bytes]:
        asked = path.split("?")[0].rsplit("/revision/", 1)[1]
        if asked not in REVISIONS:
            return 404, {"X-Error-Code": "RevisionNotFound"}, b'{"error": "Invalid rev id"}'
        body = {
            "id": repo,
            "modelId": repo,
            "sha": REVISIONS[asked],
            "private": False,
            "siblings": [{"rfilename": name} for name in files],
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def tree(path: str) -> tuple[int, dict[str, str], bytes]:
        entries = [
            {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
            for name, data in files.items()
        ]
        return 200, {"Content-Type": "application/json"}, json.dumps(entries).encode()

    def resolve(path: str) -> tuple[int, dict[str, str], bytes]:
        commit, name = path.split("?")[0].split("/resolve/", 1)[1].split("/", 1)
        data = files[name]
        return 200, {"X-Repo-Commit": REVISIONS[commit], "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}, data

    routes = server.behaviour.routes
    routes[f"/api/models/{repo}/revision/"] = revision
    routes[f"/api/models/{repo}/tree/"] = tree
    routes[f"/{repo}/resolve/"] = resolve
    routes["/api/models/org/gated/"] = lambda path: (401, {"X-Error-Code": "GatedRepo"}, b'{"error": "gated"}')
    routes["/api/models/org/missing/"] = lambda path: (404, {"X-Error-Code": "RepoNotFound"}, b'{"error": "no"}')
    return files


@pytest.fixture
def hub_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_reader_dir: Path) -> FileServer:
    with serving() as server:
        _hub(server, "org/tiny", tiny_reader_dir)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
        monkeypatch.delenv("HF_HOME", raising=False)
        for name in ("HARNESS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            monkeypatch.delenv(name, raising=False)
        yield server


def test_a_revision_is_downloaded_at_its_commit_then_read_from_the_cache(
    hub_server: FileServer, tiny_reader_dir: Path, tmp_path: Path
) -> None:
    folder = resolve_source("org/tiny@v1", OWNER)
    assert folder == tmp_path / "hub-cache" / "models--org--tiny" / "snapshots" / TAGGED
    assert hub_commit(folder) == TAGGED and hub_commit(tiny_reader_dir) is None
    for file in (p for p in tiny_reader_dir.rglob("*") if p.is_file()):
        assert (folder / file.relative_to(tiny_reader_dir)).read_bytes() == file.read_bytes()
    assert not (folder / "flax_model.msgpack").exists()  # another framework's weights are not fetched
    assert (tmp_path / "hub-cache" / "models--org--tiny" / "refs" / "v1").read_text() == TAGGED
    assert any("/revision/v1" in r.path for r in hub_server.requests)
    hub_server.requests.clear()
    assert resolve_source("org/tiny", OWNER, revision="v1") == folder
    assert hub_server.requests == []  # the second time, from the cache


def test_a_run_records_the_commit_and_a_second_run_sends_no_request(hub_server: FileServer, harness_cli) -> None:
    args = (
        "run",
        "xquad",
        "hf-reader:path=org/tiny",
        "--limit",
        "1",
        "--langs",
        "en",
        "--no-leaderboard",
        "--quiet",
        "--bootstrap",
        "0",
        "--json",
        "--no-cache",
    )
    code, out, err = harness_cli(*args)
    assert code == 0, err
    model = json.loads(out)["results"][0]["result"]["model"]
    assert model["details"]["path"].endswith(f"models--org--tiny/snapshots/{MAIN}")
    assert hub_server.requests
    hub_server.requests.clear()
    code, out, err = harness_cli(*args)
    assert code == 0, err
    assert hub_server.requests == []
    assert json.loads(out)["results"][0]["result"]["model"]["weights"] == model["weights"]


@pytest.mark.parametrize("variable", ["HARNESS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_sends_no_request(hub_server: FileServer, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "1")
    expected = rf"not in the Hugging Face cache .*; {variable}=1, so nothing is downloaded$"
    with pytest.raises(HarnessError, match=expected):
        resolve_source("org/tiny", OWNER)
    assert hub_server.requests == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("org/gated", "org/gated is gated on the hub: accept its terms at http://127.0.0.1:"),
        ("org/missing", "org/missing is not a model on the hub (http://127.0.0.1:"),
        ("org/tiny@v9", "org/tiny has no revision v9 on the hub (http://127.0.0.1:"),
    ],
)
def test_gated_missing_or_unknown_revision_is_one_line(hub_server: FileServer, name: str, expected: str) -> None:
    with pytest.raises(HarnessError) as caught:
        resolve_source(name, OWNER)
    message = str(caught.value)
    assert message.startswith(f"{OWNER}: {expected}") and "\n" not in message


def test_an_unreachable_hub_is_one_line(hub_server: FileServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(HarnessError) as caught:
        resolve_source("org/tiny", OWNER)
    message = str(caught.value)
    assert message.startswith(f"{OWNER}: org/tiny is not in the Hugging Face cache and the hub (http://127.0.0.1:")
    assert "could not give it: " in message and "\n" not in message


def test_data_get_then_run_by_hub_name_needs_no_other_step(
    hub_server: FileServer, real_data: Path, tmp_path: Path, harness_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``harness data get xquad && harness run xquad hf-reader:path=org/name``: the XQuAD files
    from the mirror (the same server, copies of the real files), the model from the hub."""
    from harness.data.home import read_manifest
    from harness_squad import metadata

    benchmark = read_manifest(metadata.XQUAD.data.manifest)["xquad"]
    for item in benchmark.files:
        host_path = item.url.split("://", 1)[1]
        hub_server.behaviour.files[f"/{host_path}"] = real_data / benchmark.folder / item.path
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "data-home"))
    monkeypatch.setenv("HARNESS_DATA_MIRROR", hub_server.url)
    code, out, err = harness_cli("data", "get", "xquad", "--quiet")
    assert code == 0, err
    code, out, err = harness_cli(
        "run",
        "xquad",
        "hf-reader:path=org/tiny",
        "--limit",
        "2",
        "--no-leaderboard",
        "--quiet",
        "--bootstrap",
        "0",
        "--json",
        "--no-cache",
    )
    assert code == 0, err
    result = json.loads(out)["results"][0]["result"]
    assert result["data"]["source"] == str(tmp_path / "data-home" / "xquad") and not result["data"]["demo"]
    assert [row["count"] for row in result["rows"] if row["subset"] != "mean"] == [2] * 12  # 2 real questions each
