"""``harness data``: benchmark files fetched from a real HTTP server on 127.0.0.1 standing in for
the official hosts (the mirror setting), never from the internet.

The server (:mod:`tests.harness.data_server`) counts requests and can cut a response half way,
change a byte, stall or answer 404, so each failure a real download meets is reproduced here
and must end as one line with nothing half-installed. The whole-benchmark test serves copies of
the real files (``HARNESS_REAL_DATA``) under their official URLs' paths, MLQA as a zip made from
its dev files, and checks them against the checksums the plugins pin.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from harness.data.command import get
from harness.data.home import HomeRecord, Known, read_manifest, verify
from harness.definitions.registry import Registry
from harness.errors import HarnessError
from harness.files.download import ATTEMPTS, partial_path
from tests.harness.data_server import FileServer, closed_port, serving


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _url_path(url: str) -> str:
    """The path a mirror serves ``url`` at: ``/HOST/PATH``."""
    parts = urlsplit(url)
    return f"/{parts.netloc}{parts.path}"


@pytest.fixture
def server() -> FileServer:
    with serving() as running:
        yield running


@pytest.fixture(autouse=True)
def _online(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_OFFLINE", "HF_HUB_OFFLINE", "HARNESS_DATA_MIRROR"):
        monkeypatch.delenv(name, raising=False)


# ---------------------------------------------------------------------------------------------
# A benchmark declared in a manifest of the test's own, as a third-party plugin would declare it


FILES = {"one.txt": b"first file\n" * 5000, "sub/two.txt": b"second file\n" * 3000}


def _benchmark(
    tmp_path: Path,
    files: dict[str, bytes] = FILES,
    *,
    archive: dict[str, object] | None = None,
    pinned: bool = True,
    name: str = "toy",
):
    """A manifest in ``tmp_path`` declaring ``files`` at https://example.org/toy/..., read back."""
    items = [
        {
            "path": path,
            "url": f"https://example.org/toy/{path}",
            "sha256": _sha(data) if pinned else None,
            "size": len(data),
            "split": "test",
            **({} if pinned else {"unpinned": "a test's own"}),
        }
        for path, data in files.items()
    ]
    benchmark: dict[str, object] = {
        "name": name,
        "title": "toy",
        "folder": f"{name}-folder",
        "licence": "CC0",
        "source": "a test",
        "files": items,
    }
    if archive is not None:
        benchmark = {**benchmark, "files": [], "archives": [archive]}
    manifest = tmp_path / f"{name}-manifest" / "data.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"benchmarks": [benchmark]}), encoding="utf-8")
    return read_manifest(manifest)[name]


def _serve(server: FileServer, files: dict[str, bytes] = FILES) -> None:
    for path, data in files.items():
        server.behaviour.files[f"/example.org/toy/{path}"] = data


def test_get_installs_checked_files_and_records_them(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    report = get(benchmark, home, mirror=server.url, show_progress=False)
    assert report.installed == 2 and report.transferred == sum(map(len, FILES.values()))
    for path, data in FILES.items():
        assert (home / "toy-folder" / path).read_bytes() == data
    record = HomeRecord(home)
    assert record.files["toy-folder/one.txt"]["sha256"] == _sha(FILES["one.txt"])
    assert record.files["toy-folder/one.txt"]["pinned"] is True
    assert [f.verdict for f in verify(benchmark, home, record)] == ["ok", "ok"]
    count = len(server.requests)
    again = get(benchmark, home, mirror=server.url, show_progress=False)
    assert again.installed == 0 and again.kept == 2 and len(server.requests) == count  # nothing fetched again


def test_cut_download_is_resumed_not_restarted(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    path, size = "/example.org/toy/one.txt", len(FILES["one.txt"])
    server.behaviour.cut[path] = 1
    get(benchmark, home, mirror=server.url, show_progress=False)
    first, second = server.requests_for(path)
    assert first.range is None and first.sent == size // 2
    assert second.range == f"bytes={size // 2}-" and second.sent == size - size // 2  # only the rest
    assert (home / "toy-folder/one.txt").read_bytes() == FILES["one.txt"]


def test_interrupted_run_leaves_a_partial_file_the_next_run_resumes(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    path, size = "/example.org/toy/one.txt", len(FILES["one.txt"])
    server.behaviour.cut[path] = ATTEMPTS  # every attempt of this run is cut
    with pytest.raises(HarnessError, match=r"connection broke after .* run the same command again to resume") as caught:
        get(benchmark, home, mirror=server.url, show_progress=False)
    assert "\n" not in str(caught.value)
    target = home / "toy-folder/one.txt"
    have = partial_path(target).stat().st_size
    assert not target.exists() and size // 2 <= have < size
    server.requests.clear()
    get(benchmark, home, mirror=server.url, show_progress=False)
    (resumed,) = server.requests_for(path)
    assert resumed.range == f"bytes={have}-" and resumed.sent == size - have
    assert target.read_bytes() == FILES["one.txt"] and not partial_path(target).exists()


@pytest.mark.parametrize("pinned", [True, False])
def test_a_stale_partial_copy_is_started_over(tmp_path: Path, server: FileServer, pinned: bool) -> None:
    benchmark, home = _benchmark(tmp_path, pinned=pinned), tmp_path / "home"
    _serve(server)
    target = home / "toy-folder/one.txt"
    target.parent.mkdir(parents=True)
    partial_path(target).write_bytes(b"an older, longer file " * 4000)  # 88,000 bytes, the file has 55,000
    get(benchmark, home, mirror=server.url, show_progress=False)
    assert target.read_bytes() == FILES["one.txt"] and not partial_path(target).exists()
    requests = server.requests_for("/example.org/toy/one.txt")
    # pinned: the stale copy is seen before any request; unpinned: the server answers 416 to its resume
    assert [r.range for r in requests] == ([None] if pinned else ["bytes=88000-", None])


def test_a_changed_byte_is_refused_and_nothing_installed(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    server.behaviour.changed.add("/example.org/toy/sub/two.txt")
    expected = _sha(FILES["sub/two.txt"])
    with pytest.raises(
        HarnessError,
        match=rf"two.txt has sha256 [0-9a-f]{{64}}, expected {expected}; refused, "
        "nothing installed",
    ):
        get(benchmark, home, mirror=server.url, show_progress=False)
    target = home / "toy-folder/sub/two.txt"
    assert not target.exists() and not partial_path(target).exists()
    assert "toy-folder/sub/two.txt" not in HomeRecord(home).files


@pytest.mark.parametrize("failure", ["404", "refused", "timeout"])
def test_network_failures_are_one_line(tmp_path: Path, server: FileServer, failure: str) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    mirror, expected = server.url, ""
    if failure == "404":
        del server.behaviour.files["/example.org/toy/one.txt"]
        expected = r"one.txt: HTTP 404 Not Found$"
    elif failure == "refused":
        mirror, expected = f"http://127.0.0.1:{closed_port()}", r"one.txt: cannot connect \("
    else:
        server.behaviour.stall["/example.org/toy/one.txt"] = 2.0
        expected = r"one.txt: no response within 0.3 s$"
    with pytest.raises(HarnessError, match=expected) as caught:
        get(benchmark, home, mirror=mirror, timeout=0.3, show_progress=False)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(mirror)
    assert not (home / "toy-folder/one.txt").exists()


@pytest.mark.parametrize("variable", ["HARNESS_OFFLINE", "HF_HUB_OFFLINE"])
def test_offline_makes_no_request(
    tmp_path: Path, server: FileServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    monkeypatch.setenv(variable, "1")
    with pytest.raises(
        HarnessError,
        match=rf"^offline \({variable}=1\): toy needs https://example.org/toy/one.txt for "
        rf"{home / 'toy-folder/one.txt'}; nothing was downloaded$",
    ):
        get(benchmark, home, mirror=server.url, show_progress=False)
    assert server.requests == []


def test_two_gets_on_one_home_keep_both_records(
    tmp_path: Path, server: FileServer, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading
    import time

    first, home = _benchmark(tmp_path), tmp_path / "home"
    second = _benchmark(tmp_path, {"three.txt": b"third file\n" * 100}, name="other")
    _serve(server)
    server.behaviour.files["/example.org/toy/three.txt"] = b"third file\n" * 100
    server.behaviour.stall["/example.org/toy/one.txt"] = 0.5  # the first holds the home while the second starts
    worker = threading.Thread(target=get, args=(first, home), kwargs={"mirror": server.url, "show_progress": False})
    worker.start()
    while not server.requests:
        time.sleep(0.01)
    get(second, home, mirror=server.url, show_progress=False)
    worker.join()
    assert {"toy-folder/one.txt", "toy-folder/sub/two.txt", "other-folder/three.txt"} <= set(HomeRecord(home).files)
    assert f"waiting for another harness data command on {home}" in capsys.readouterr().err


def test_split_takes_only_its_files(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path), tmp_path / "home"
    _serve(server)
    with pytest.raises(HarnessError, match=r"^benchmark toy has no split 'dev' \(splits: test\)$"):
        get(benchmark, home, "dev", mirror=server.url, show_progress=False)
    assert server.requests == []
    dev = json.loads(benchmark.manifest.read_text())
    dev["benchmarks"][0]["files"][1]["split"] = "dev"
    (tmp_path / "split" / "data.json").parent.mkdir()
    (tmp_path / "split" / "data.json").write_text(json.dumps(dev))
    split_benchmark = read_manifest(tmp_path / "split" / "data.json")["toy"]
    assert get(split_benchmark, home, "dev", mirror=server.url, show_progress=False).installed == 1
    assert [r.path for r in server.requests] == ["/example.org/toy/sub/two.txt"]
    assert not (home / "toy-folder/one.txt").exists()
    assert [f.verdict for f in verify(split_benchmark, home, HomeRecord(home))] == ["ok"]  # test never fetched


def test_unpinned_file_records_its_first_checksum_and_is_held_to_it(tmp_path: Path, server: FileServer) -> None:
    benchmark, home = _benchmark(tmp_path, pinned=False), tmp_path / "home"
    _serve(server)
    report = get(benchmark, home, mirror=server.url, show_progress=False)
    assert any(f"sha256 it downloaded with, {_sha(FILES['one.txt'])}, is recorded" in note for note in report.notes)
    record = HomeRecord(home)
    assert record.files["toy-folder/one.txt"] == {
        **record.files["toy-folder/one.txt"],
        "sha256": _sha(FILES["one.txt"]),
        "pinned": False,
    }
    target = home / "toy-folder/one.txt"
    target.write_bytes(b"X" + FILES["one.txt"][1:])
    (finding, _) = verify(benchmark, home, HomeRecord(home))
    assert finding.verdict == "changed" and finding.detail.endswith(f"expected {_sha(FILES['one.txt'])}")


# ---------------------------------------------------------------------------------------------
# Archives


def _zip(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16  # a symbolic link, as zip writes one
            archive.writestr(info, target)
    return buffer.getvalue()


def _tar(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def _archive_benchmark(
    tmp_path: Path, server: FileServer, kind: str, payload: bytes, members: dict[str, bytes], name: str = "toy"
):
    url = f"https://example.org/toy/archive.{'zip' if kind == 'zip' else 'tar.gz'}"
    server.behaviour.files[_url_path(url)] = payload
    archive = {
        "url": url,
        "format": kind,
        "sha256": None,
        "unpinned": "a test's own",
        "size": len(payload),
        "members": [{"path": p, "sha256": _sha(d), "size": len(d), "split": "test"} for p, d in members.items()],
    }
    return _benchmark(tmp_path, archive=archive, name=name)


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_archive_extracted_with_members_checked(tmp_path: Path, server: FileServer, kind: str) -> None:
    members = {"data/one.txt": FILES["one.txt"], "data/sub/two.txt": FILES["sub/two.txt"]}
    payload = (_zip if kind == "zip" else _tar)({**members, "data/README": b"not declared\n"})
    benchmark = _archive_benchmark(tmp_path, server, kind, payload, members)
    home = tmp_path / "home"
    report = get(benchmark, home, mirror=server.url, show_progress=False)
    assert report.installed == 3
    assert (home / "toy-folder/data/sub/two.txt").read_bytes() == FILES["sub/two.txt"]
    record = HomeRecord(home)
    assert record.files["toy-folder/data/README"]["pinned"] is False  # extracted, its checksum recorded
    assert record.files[f"toy-folder/{benchmark.archives[0].name}"]["sha256"] == _sha(payload)
    assert not (home / ".downloads" / "toy-folder" / benchmark.archives[0].name).exists()  # deleted once extracted
    assert sorted(f.verdict for f in verify(benchmark, home, record)) == ["ok", "ok", "ok"]
    (home / "toy-folder/data/README").write_bytes(b"changed\n")
    assert [f.path.name for f in verify(benchmark, home, HomeRecord(home)) if f.verdict == "changed"] == ["README"]


@pytest.mark.parametrize("kind", ["zip", "tar"])
@pytest.mark.parametrize("evil", ["../outside.txt", "/etc/evil.txt", "link-out"])
def test_archive_with_a_member_outside_is_refused(tmp_path: Path, server: FileServer, kind: str, evil: str) -> None:
    members = {"data/one.txt": FILES["one.txt"]}
    build = _zip if kind == "zip" else _tar
    payload = (
        build(members, {"data/link": "../../../etc/passwd"})
        if evil == "link-out"
        else build({**members, evil: b"escaped\n"})
    )
    benchmark = _archive_benchmark(tmp_path, server, kind, payload, members)
    home = tmp_path / "work" / "home"
    expected = "links outside the folder" if evil == "link-out" else "would be written outside the folder"
    with pytest.raises(HarnessError, match=f"{expected}.*; the archive is refused, nothing extracted"):
        get(benchmark, home, mirror=server.url, show_progress=False)
    assert not (home / "toy-folder/data/one.txt").exists()
    assert not (tmp_path / "work" / "outside.txt").exists() and not (home / "outside.txt").exists()
    assert [p.name for p in (home / "toy-folder").iterdir()] == []  # no staging folder left behind


def test_archive_member_with_a_changed_byte_is_refused(tmp_path: Path, server: FileServer) -> None:
    members = {"data/one.txt": FILES["one.txt"]}
    payload = _zip({"data/one.txt": b"X" + FILES["one.txt"][1:]})
    benchmark = _archive_benchmark(tmp_path, server, "zip", payload, members)
    home = tmp_path / "home"
    with pytest.raises(HarnessError, match=r"member data/one.txt has sha256 .* refused, nothing installed"):
        get(benchmark, home, mirror=server.url, show_progress=False)
    assert not (home / "toy-folder/data/one.txt").exists()


def test_manifest_refuses_a_destination_outside_its_folder(tmp_path: Path) -> None:
    manifest = tmp_path / "data.json"
    manifest.write_text(
        json.dumps(
            {
                "benchmarks": [
                    {
                        "name": "bad",
                        "title": "t",
                        "folder": "bad",
                        "licence": "l",
                        "source": "s",
                        "files": [{"path": "../escape.json", "url": "https://example.org/x", "sha256": "0" * 64}],
                    }
                ]
            }
        )
    )
    with pytest.raises(HarnessError, match=r"data.json.*path"):
        read_manifest(manifest)


# ---------------------------------------------------------------------------------------------
# The plugins' own benchmarks, served from copies of the real files


BENCHMARKS = ("xquad", "xquad-r", "mlqa", "xor-tydi", "tatoeba")


def _mirror_of(known: Known, real_data: Path, server: FileServer, tmp_path: Path) -> None:
    """Serve every file of :data:`BENCHMARKS` at its official URL's path, from the real-data folder
    (whose layout is the data home's), and MLQA as a zip of its dev files."""
    for name in BENCHMARKS:
        benchmark = known.get(name)
        for item in benchmark.files:
            server.behaviour.files[_url_path(item.url)] = real_data / benchmark.folder / item.path
        for archive in benchmark.archives:
            zipped = tmp_path / archive.name
            with zipfile.ZipFile(zipped, "w") as handle:  # stored: the test's time goes to the checks
                for member in archive.members:
                    handle.write(real_data / benchmark.folder / member.path, member.path)
            server.behaviour.files[_url_path(archive.url)] = zipped


def test_get_of_the_real_benchmarks_then_verify_and_run(
    real_data: Path, tmp_path: Path, server: FileServer, harness_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    known = __import__("harness.data.home").data.home.known_benchmarks(Registry.discover())
    _mirror_of(known, real_data, server, tmp_path)
    home = tmp_path / "home"
    monkeypatch.setenv("HARNESS_DATA_MIRROR", server.url)
    code, out, err = harness_cli("data", "get", *BENCHMARKS, "--data-home", home, "--quiet")
    assert code == 0, err
    assert "mlqa: 50 files installed" in out and "MLQA_V1.zip has no pinned checksum" in out
    for name in BENCHMARKS:  # every pinned file is the real file
        benchmark = known.get(name)
        for item in benchmark.expected():
            assert _sha(benchmark.path(home, item).read_bytes()) == _sha(
                (real_data / benchmark.folder / item.path).read_bytes()
            )
    code, out, err = harness_cli("data", "verify", "--data-home", home)
    assert code == 0 and out.endswith("299 files; ok 299\n"), out + err  # 12 + 11 + (49 + LICENSE) + 2 + 224
    code, out, _ = harness_cli("data", "list", "--data-home", home, "--json")
    listed = {b["name"]: b for b in json.loads(out)["benchmarks"]}
    assert all(listed[name]["complete"] for name in BENCHMARKS) and not listed["mkqa"]["present"]

    monkeypatch.setenv("HARNESS_DATA", str(home))
    for task, model, folder in [
        ("xquad", "oracle", "xquad"),
        ("lareqa", "oracle", "lareqa/xquad-r"),
        ("mlqa", "oracle", "mlqa"),
        ("xor-full", "oracle", "xor-tydi"),
        ("tatoeba", "oracle", "tatoeba/v1"),
    ]:
        code, out, err = harness_cli(
            "run", task, model, "--limit", "2", "--no-leaderboard", "--quiet", "--bootstrap", "0", "--json"
        )
        assert code == 0, err
        assert f"Using {home / folder} for {task}, the data home's copy" in err
        result = json.loads(out)["results"][0]["result"]
        assert result["data"]["demo"] is False and result["data"]["source"] == str(home / folder)
    changed = home / "xquad" / "xquad.de.json"
    changed.write_bytes(changed.read_bytes().replace(b"Die", b"die", 1))
    code, out, err = harness_cli("data", "verify", "xquad", "--data-home", home)
    assert code == 2 and f"error: {changed} is changed: sha256" in err and err.count("\n") == 1


def test_a_plugin_tarball_is_fetched_unpinned_recorded_and_run(
    tmp_path: Path, server: FileServer, harness_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XTREME's TyDiQA-GoldP tarball (no copy here: unpinned), stood in for by a tarball of the demo
    data under the release's names: extracted, recorded, then found by ``harness run tydiqa``."""
    from harness.demo import parallel_qa_dir

    english = (parallel_qa_dir() / "en.json").read_bytes()
    names = ["arabic", "bengali", "english", "finnish", "indonesian", "korean", "russian", "swahili", "telugu"]
    payload = _tar({f"tydiqa-goldp-v1.1-dev/tydiqa-goldp-dev-{name}.json": english for name in names})
    server.behaviour.files["/storage.googleapis.com/tydiqa/v1.1/tydiqa-goldp-v1.1-dev.tgz"] = payload
    home = tmp_path / "home"
    code, out, err = harness_cli("data", "get", "tydiqa", "--data-home", home, "--mirror", server.url, "--quiet")
    assert code == 0, err
    assert "tydiqa: 9 files installed" in out and f"sha256 it downloaded with, {_sha(payload)}, is recorded" in out
    record = json.loads((home / "manifest.json").read_text())["files"]
    assert record["tydiqa/tydiqa-goldp-v1.1-dev/tydiqa-goldp-dev-swahili.json"]["sha256"] == _sha(english)
    code, out, err = harness_cli("data", "verify", "tydiqa", "--data-home", home)
    assert code == 0 and out.endswith("9 files; ok 9\n")
    monkeypatch.setenv("HARNESS_DATA", str(home))
    code, out, err = harness_cli(
        "run", "tydiqa", "oracle", "--langs", "en", "--limit", "1", "--no-leaderboard", "--quiet", "--bootstrap", "0"
    )
    assert code == 0 and f"Using {home / 'tydiqa'} for tydiqa" in err


def test_run_without_the_data_home_says_how_to_get_it(
    harness_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "empty"))
    code, out, err = harness_cli(
        "run", "xquad", "oracle", "--limit", "1", "--no-leaderboard", "--quiet", "--bootstrap", "0"
    )
    assert (
        code == 0
        and "Using the built-in demo data for xquad (the real benchmark files: `harness data get xquad` or --data-dir)"
        in err
    )
    code, out, err = harness_cli("run", "xor-full", "oracle", "--no-leaderboard")
    assert code == 2 and err == (
        "error: task xor-full has no built-in demo data; run `harness data get xor-tydi`, "
        "or pass --data-dir with the benchmark files\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("nosuchtask", "oracle"),
        ("xquad", "nosuchmodel"),
        ("xquad", "oracle:nosuch=1"),
        ("xquad", "oracle", "--split", "nosuch"),
        ("xor-full", "oracle"),
        ("xquad,xor-full", "oracle"),
    ],
)
def test_where_the_data_comes_from_is_said_only_once_it_is_used(harness_cli, args: tuple[str, ...]) -> None:
    code, out, err = harness_cli("run", *args, "--no-leaderboard")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Using" not in err


def test_partial_data_home_is_one_line(tmp_path: Path, harness_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "xquad").mkdir(parents=True)
    (home / "xquad" / "xquad.en.json").write_text("{}")
    monkeypatch.setenv("HARNESS_DATA", str(home))
    code, _, err = harness_cli("run", "xquad", "oracle", "--no-leaderboard")
    assert code == 2 and "holds part of xquad (11 files missing" in err and "harness data get xquad" in err


def test_verify_of_a_benchmark_not_there_is_one_line(harness_cli, tmp_path: Path) -> None:
    code, out, err = harness_cli("data", "verify", "--data-home", tmp_path / "home")
    assert code == 0 and "no benchmark there yet" in out
    code, out, err = harness_cli("data", "verify", "xquad", "--data-home", tmp_path / "home")
    assert (
        code == 2 and err == f"error: xquad is not in the data home {tmp_path / 'home'}: run `harness data get xquad`\n"
    )


def test_data_list_names_every_plugin_benchmark(harness_cli, tmp_path: Path) -> None:
    code, out, _ = harness_cli("data", "list", "--json", "--data-home", tmp_path)
    listed = {b["name"]: b for b in json.loads(out)["benchmarks"]}
    assert {"xquad", "xquad-r", "mlqa", "xor-tydi", "tatoeba", "mkqa", "panx"} <= set(listed)
    assert listed["xor-tydi"]["tasks"] == ["xor-engspan", "xor-full", "xor-retrieve"]
    assert listed["panx"]["manual"]["url"].startswith("https://www.amazon.com/clouddrive/share/")


def test_manual_step_is_stated_then_verified(tmp_path: Path, harness_cli) -> None:
    home = tmp_path / "home"
    code, _, err = harness_cli("data", "get", "panx", "--data-home", home)
    assert code == 2 and err.count("\n") == 1
    assert f"save it as {home / 'panx' / 'AmazonPhotos.zip'}, then run `harness data verify panx`" in err
    (home / "panx").mkdir(parents=True)
    (home / "panx" / "AmazonPhotos.zip").write_bytes(b"the file behind the click")
    code, out, err = harness_cli("data", "verify", "panx", "--data-home", home)
    assert code == 0 and "recorded" in out and _sha(b"the file behind the click") in out
    (home / "panx" / "AmazonPhotos.zip").write_bytes(b"another file")
    code, out, err = harness_cli("data", "verify", "panx", "--data-home", home)
    assert code == 2 and "AmazonPhotos.zip is changed" in err


def test_ctrl_c_during_get_says_how_to_resume(
    harness_cli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.data import command as datacommand

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(datacommand, "get", interrupted)
    with pytest.raises(SystemExit) as caught:
        harness_cli("data", "get", "xquad")
    assert caught.value.code == 130
    assert capsys.readouterr().err == (
        "interrupted: what was downloaded is kept; run the same command again to resume\n"
    )


def test_each_task_reads_its_files_inside_its_benchmarks_folder() -> None:
    """A task's ``data_subdir`` (where ``--data-dir`` finds its files) lies inside the folder its
    benchmark's files are installed in, so the data home serves the task as it is."""
    from harness.data.home import resolve
    from harness.definitions.registry import load_target

    registry = Registry.discover()
    checked = 0
    for name, (spec, plugin) in registry.tasks.entries.items():
        meta = load_target(spec, plugin, "task").metadata
        if meta.data is not None:
            folder = resolve(meta.data).folder
            assert meta.data_subdir == folder or meta.data_subdir.startswith(folder + "/"), name
            checked += 1
    assert checked >= 10  # xquad, lareqa, mlqa, three xor tasks, mkqa, tatoeba, tydiqa, panx


def test_a_demo_result_is_rescored_on_the_demo_data_not_the_data_home(
    harness_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.demo import parallel_qa_dir

    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "home"))
    code, out, err = harness_cli(
        "run",
        "xquad",
        "oracle",
        "--limit",
        "2",
        "--no-leaderboard",
        "--bootstrap",
        "0",
        "--quiet",
        "--output-dir",
        tmp_path / "results",
    )
    assert code == 0, err
    (result,) = (tmp_path / "results").glob("xquad/*/*/result.json")
    home = tmp_path / "home" / "xquad"  # a data home holding other XQuAD files
    home.mkdir(parents=True)
    for lang in ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"):
        (home / f"xquad.{lang}.json").write_bytes((parallel_qa_dir() / "en.json").read_bytes())
    code, out, err = harness_cli("validate", result, "--rescore")
    assert code == 0 and "are what its predictions score" in out, err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("--mirror", "ftp://example.org"),
            "error: mirror ftp://example.org (--mirror, $HARNESS_DATA_MIRROR): give an http:// or https:// URL",
        ),
        (("--timeout", "-1"), "error: --timeout -1: give a number of seconds above 0"),
        (("--split", "dev"), "error: benchmark xquad has no split 'dev' (splits: test)"),
    ],
)
def test_get_options_are_checked_before_any_request(
    harness_cli, tmp_path: Path, args: tuple[str, ...], line: str
) -> None:
    code, out, err = harness_cli("data", "get", "xquad", *args, "--data-home", tmp_path / "home")
    assert code == 2 and err == line + "\n" and not (tmp_path / "home").exists()


def test_a_data_home_that_is_a_file_is_one_line(harness_cli, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, out, err = harness_cli("data", "get", "xquad", "--data-home", tmp_path / "file" / "home")
    assert code == 2 and "must be a folder, but" in err and err.count("\n") == 1
