"""The data home: one folder holding each benchmark's official files, in the layout its tasks read,
and the plugins' data manifests that say what those files are.

A plugin declares its benchmarks as data (a ``data.json`` beside its tasks, checked against
``schemas/data-manifest.schema.json``): each file's official URL, SHA-256, size, split and place
below the benchmark's folder; a task points at its benchmark with ``TaskMetadata.data``. So the
harness names no benchmark, and a third-party plugin's benchmark is fetched, listed and verified
the same way as the first-party ones.

The data home is ``--data-home``, else ``$HARNESS_DATA``, else ``~/.cache/xlqa-harness/data``.
Each benchmark has its folder there (``xquad/``, ``mlqa/MLQA_V1/dev/``...), the layout a task's
``--data-dir`` takes, so ``harness run`` finds it without one. ``manifest.json`` at the top
records every file ``harness data get`` installed: its checksum, size and URL, and for a file
whose checksum is not pinned (no copy was at hand to hash), the checksum its first download got,
which ``verify`` then holds it to.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.definitions.specs import BenchmarkRef
from harness.errors import HarnessError, did_you_mean

if TYPE_CHECKING:
    from harness.definitions.registry import Registry
    from harness.definitions.task import TaskMetadata

#: The data home's variable; ``--data-home`` overrides it.
DATA_ENV = "HARNESS_DATA"
#: A site's own copy of the sources (``--mirror``): see :func:`mirrored`.
MIRROR_ENV = "HARNESS_DATA_MIRROR"
#: Either set (to 1, true, yes or on): never touch the network.
OFFLINE_ENVS = ("HARNESS_OFFLINE", "HF_HUB_OFFLINE")
DEFAULT_HOME = Path("~/.cache/xlqa-harness/data")
#: What the data home holds, file by file (see :class:`HomeRecord`).
RECORD_FILE = "manifest.json"
#: The schema of a plugin's data manifest (``data.json`` beside its tasks: ``BenchmarkRef.beside``).
MANIFEST_SCHEMA = "data-manifest"


def default_home() -> Path:
    """``$HARNESS_DATA``, else ``~/.cache/xlqa-harness/data``; read now, not at import."""
    return Path(os.environ.get(DATA_ENV) or DEFAULT_HOME).expanduser()


def offline() -> bool:
    """Whether ``HARNESS_OFFLINE`` or ``HF_HUB_OFFLINE`` forbids the network."""
    return any(os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"} for name in OFFLINE_ENVS)


def offline_variable() -> str:
    """The variable that set offline mode, for the one line a refused download is."""
    return next(
        f"{name}={os.environ[name]}"
        for name in OFFLINE_ENVS
        if os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
    )


@dataclass(frozen=True)
class DataFile:
    """One official file: where it goes below its benchmark's folder, where it comes from (no URL
    for an archive's member) and its checksum (None where none could be pinned: ``unpinned`` says why)."""

    path: str
    url: str | None
    sha256: str | None
    size: int | None
    split: str | None
    unpinned: str | None = None
    checksum_from: str | None = None

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> DataFile:
        return cls(
            item["path"],
            item.get("url"),
            item["sha256"],
            item.get("size"),
            item.get("split"),
            item.get("unpinned"),
            item.get("checksum_from"),
        )


@dataclass(frozen=True)
class Archive:
    """An official archive (zip or tar), extracted into its benchmark's folder; ``members`` are
    the files checked against pinned checksums after extraction."""

    url: str
    format: str
    sha256: str | None
    size: int | None
    splits: tuple[str, ...] | None
    members: tuple[DataFile, ...]
    unpinned: str | None = None

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class ManualStep:
    """A step only a person may take (a licence click): where to go and what to do there."""

    url: str
    instructions: str


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's files as its plugin's manifest declares them."""

    name: str
    title: str
    folder: str
    licence: str
    source: str
    files: tuple[DataFile, ...]
    archives: tuple[Archive, ...]
    manual: ManualStep | None
    manifest: Path

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits its files declare, in order of appearance."""
        named = [f.split for f in self.files] + [s for a in self.archives for s in (a.splits or ())]
        return tuple(dict.fromkeys(s for s in named if s))

    def check_split(self, split: str | None) -> None:
        if split is not None and split not in self.splits:
            raise HarnessError(
                f"benchmark {self.name} has no split '{split}' (splits: {', '.join(self.splits) or 'none named'})"
            )

    def files_for(self, split: str | None) -> tuple[DataFile, ...]:
        """Its own files for ``split`` (None: all); a file without a split serves every split."""
        return tuple(f for f in self.files if split is None or f.split in (None, split))

    def archives_for(self, split: str | None) -> tuple[Archive, ...]:
        return tuple(a for a in self.archives if split is None or a.splits is None or split in a.splits)

    def members_for(self, archive: Archive, split: str | None) -> tuple[DataFile, ...]:
        """The declared members of ``archive`` that ``split`` (None: all) needs."""
        return tuple(m for m in archive.members if split is None or m.split in (None, split))

    def expected(self, split: str | None = None) -> tuple[DataFile, ...]:
        """Every file the folder holds once ``split`` is fetched: the files and the archives' members
        declared for it."""
        members = (m for a in self.archives_for(split) for m in self.members_for(a, split))
        return (*self.files_for(split), *members)

    def path(self, home: Path, item: DataFile) -> Path:
        return home / self.folder / item.path

    def key(self, item: DataFile) -> str:
        """The file's name in the data home's record: its path below the home."""
        return f"{self.folder}/{item.path}"

    def size(self, split: str | None = None) -> int | None:
        """Bytes to download for ``split``; None where a size is not declared."""
        sizes = [f.size for f in self.files_for(split)] + [a.size for a in self.archives_for(split)]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)


def _benchmark(item: dict[str, Any], manifest: Path) -> Benchmark:
    manual = item.get("manual")
    return Benchmark(
        name=item["name"],
        title=item["title"],
        folder=item["folder"],
        licence=item["licence"],
        source=item["source"],
        files=tuple(DataFile.from_json(f) for f in item.get("files", ())),
        archives=tuple(
            Archive(
                a["url"],
                a["format"],
                a["sha256"],
                a.get("size"),
                tuple(a["splits"]) if "splits" in a else None,
                tuple(DataFile.from_json(m) for m in a["members"]),
                a.get("unpinned"),
            )
            for a in item.get("archives", ())
        ),
        manual=None if manual is None else ManualStep(manual["url"], manual["instructions"]),
        manifest=manifest,
    )


@cache
def read_manifest(path: Path) -> dict[str, Benchmark]:
    """A plugin's data manifest, checked against its schema: benchmark name -> benchmark."""
    from harness.definitions.validation import validate
    from harness.files.io import read_json

    if not path.is_file():
        raise HarnessError(f"data manifest {path} does not exist")
    content = read_json(path)
    validate(content, MANIFEST_SCHEMA, file=path)
    out: dict[str, Benchmark] = {}
    for item in content["benchmarks"]:
        if item["name"] in out:
            raise HarnessError(f"{path}: benchmark '{item['name']}' is declared twice")
        out[item["name"]] = _benchmark(item, path)
    return out


def resolve(ref: BenchmarkRef) -> Benchmark:
    """The benchmark a task's ``data`` names, or one line naming the manifest."""
    benchmarks = read_manifest(ref.manifest)
    if ref.name not in benchmarks:
        raise HarnessError(f"{ref.manifest} declares no benchmark '{ref.name}' (it declares: {', '.join(benchmarks)})")
    return benchmarks[ref.name]


@dataclass(frozen=True)
class Known:
    """The benchmarks of the installed plugins, and which tasks read each."""

    benchmarks: dict[str, Benchmark]
    tasks: dict[str, tuple[str, ...]]

    def get(self, name: str) -> Benchmark:
        if name not in self.benchmarks:
            raise HarnessError(
                f"unknown benchmark '{name}'{did_you_mean(name, self.benchmarks)} "
                f"(known: {', '.join(sorted(self.benchmarks))}; see `harness data list`)"
            )
        return self.benchmarks[name]


def known_benchmarks(registry: Registry) -> Known:
    """Every benchmark the installed plugins declare: those their tasks point at, and the others of
    the same manifests. One name declared by two manifests is refused in one line."""
    import warnings

    from harness.definitions.registry import load_target
    from harness.errors import RegistryError

    benchmarks: dict[str, Benchmark] = {}
    tasks: dict[str, list[str]] = {}
    manifests: dict[Path, None] = {}
    for name, (spec, plugin) in sorted(registry.tasks.entries.items()):
        try:
            ref = load_target(spec, plugin, "task").metadata.data
        except RegistryError as error:  # one broken plugin hides its own benchmarks, not the others'
            warnings.warn(str(error), stacklevel=2)
            continue
        if ref is not None:
            tasks.setdefault(ref.name, []).append(name)
            manifests[ref.manifest] = None
    for manifest in manifests:
        for name, benchmark in read_manifest(manifest).items():
            earlier = benchmarks.setdefault(name, benchmark)
            if earlier.manifest != manifest:
                raise HarnessError(
                    f"benchmark '{name}' is declared by two data manifests: {earlier.manifest} and {manifest}"
                )
    return Known(dict(sorted(benchmarks.items())), {k: tuple(v) for k, v in tasks.items()})


class HomeRecord:
    """``manifest.json`` of a data home: for every installed file (by its path below the home)
    its sha256, size, URL, whether the checksum was pinned, and when it was installed. Written
    atomically; read afresh by each command."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / RECORD_FILE
        self.files: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            from harness.files.io import read_json

            content = read_json(self.path)
            if not isinstance(content, dict) or not isinstance(content.get("files"), dict):
                raise HarnessError(f"{self.path}: not a data home manifest (no 'files' object); move it away")
            self.files = content["files"]

    def recorded(self, key: str) -> str | None:
        """The checksum recorded for ``key``, if any."""
        entry = self.files.get(key)
        return None if entry is None else entry.get("sha256")

    def add(self, key: str, sha256: str, size: int, url: str | None, pinned: bool) -> None:
        self.files[key] = {
            "sha256": sha256,
            "size": size,
            "url": url,
            "pinned": pinned,
            "installed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

    def save(self) -> None:
        from harness.files.io import write_atomic

        payload = json.dumps({"files": dict(sorted(self.files.items()))}, indent=1, ensure_ascii=False) + "\n"
        write_atomic(self.path, lambda handle: handle.write(payload.encode("utf-8")))


def missing(benchmark: Benchmark, home: Path, split: str | None = None) -> list[DataFile]:
    """The declared files of ``split`` not in the data home (a stat each, nothing hashed)."""
    return [item for item in benchmark.expected(split) if not benchmark.path(home, item).is_file()]


def present(benchmark: Benchmark, home: Path) -> bool:
    """Whether any of the benchmark's files is in the data home."""
    return any(benchmark.path(home, item).is_file() for item in benchmark.expected())


@dataclass(frozen=True)
class Finding:
    """What ``verify`` found about one file: ``ok``, ``missing``, ``changed`` or ``recorded`` (an
    unpinned file seen for the first time: its checksum is now recorded)."""

    benchmark: str
    path: Path
    verdict: str
    detail: str = ""


def verify(benchmark: Benchmark, home: Path, record: HomeRecord) -> Iterator[Finding]:
    """Hash every file of ``benchmark`` in the data home against its pinned checksum, or against
    the checksum its first download recorded; an unpinned file seen for the first time (a manual
    step's) has its checksum recorded; a declared file is missing only where its split was
    fetched. Files installed beside them that no manifest declares (an archive's unpinned
    members) are checked against the record too."""
    from harness.files.io import sha256_path

    items = benchmark.expected()
    declared = {benchmark.key(item) for item in items}
    fetched = {item.split for item in items if benchmark.path(home, item).is_file()}
    for item in items:
        path, key = benchmark.path(home, item), benchmark.key(item)
        if not path.is_file():
            if item.split is None or item.split in fetched:  # a split never fetched is not missing
                yield Finding(benchmark.name, path, "missing")
            continue
        got = sha256_path(path)
        want = item.sha256 or record.recorded(key)
        if want is None:
            record.add(key, got, path.stat().st_size, item.url, pinned=False)
            yield Finding(benchmark.name, path, "recorded", f"unpinned; sha256 {got} recorded in {record.path}")
        elif got != want:
            yield Finding(benchmark.name, path, "changed", f"sha256 {got}, expected {want}")
        else:
            yield Finding(benchmark.name, path, "ok")
    prefix = f"{benchmark.folder}/"
    extra = (
        k
        for k, entry in record.files.items()
        if k.startswith(prefix) and k not in declared and not entry.get("archive")
    )  # an archive is deleted once extracted
    for key in sorted(extra):
        path = home / key
        if not path.is_file():
            yield Finding(benchmark.name, path, "missing", "recorded when installed")
            continue
        got, want = sha256_path(path), record.files[key]["sha256"]
        yield Finding(
            benchmark.name,
            path,
            "ok" if got == want else "changed",
            "" if got == want else f"sha256 {got}, recorded {want}",
        )


def task_folder(meta: TaskMetadata, home: Path, split: str) -> Path | None:
    """The data home's folder for a task that declares its benchmark, when the benchmark's files of
    ``split`` are all there (the folder a ``--data-dir`` would name); None when none of them is.
    Some there and some not is one line: run ``harness data get`` again to finish."""
    if meta.data is None:
        return None
    benchmark = resolve(meta.data)
    if not present(benchmark, home):
        return None
    absent = missing(benchmark, home, split if split in benchmark.splits else None)
    if absent:
        raise HarnessError(
            f"the data home {home} holds part of {benchmark.name} ({len(absent)} files missing, "
            f"e.g. {benchmark.path(home, absent[0])}): run `harness data get {benchmark.name}` "
            "to finish it, or pass --data-dir"
        )
    return home
