"""``harness data``: list the benchmarks the installed plugins declare, fetch their official files
into the data home, and verify what is there (see :mod:`harness.data.home` for the declarations
and the home, :mod:`harness.files.download` and :mod:`harness.files.archives` for the transfers).

:func:`get` and :func:`verify_home` are the library's entry points; the command line only adds
its options and tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.data.home import (
    DATA_ENV,
    MIRROR_ENV,
    Archive,
    Benchmark,
    DataFile,
    Finding,
    HomeRecord,
    Known,
    default_home,
    known_benchmarks,
    missing,
    offline,
    offline_variable,
    present,
    verify,
)
from harness.display.tables import format_table, terminal_width
from harness.errors import HarnessError
from harness.files.download import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from harness.definitions.registry import Registry
    from harness.files.download import Downloader

#: Where archives gather below the data home until they are extracted (then deleted).
DOWNLOADS = ".downloads"


def add_parser(commands: Any) -> None:
    """The ``data`` command and its actions, under the top parser's ``commands``."""
    data = commands.add_parser(
        "data",
        help="benchmark files: list them, fetch them from their official sources "
        "into the data home (checked against pinned SHA-256), verify them",
    )
    actions = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="every benchmark of the installed plugins: files, source, licence, size, whether it is in the data home",
    )
    listing.add_argument(
        "--json", action="store_true", help="machine-readable output, every file with its URL, SHA-256, size and place"
    )
    get = actions.add_parser("get", help="download benchmarks' official files into the data home")
    get.add_argument("benchmarks", nargs="+", metavar="BENCHMARK", help="benchmark names (see `harness data list`)")
    get.add_argument("--split", help="only this split's files (default: all the benchmark declares)")
    get.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help=f"a site's copy of the sources, laid out as URL/HOST/PATH of each official URL (default: ${MIRROR_ENV})",
    )
    get.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"wait this long for a connection or for more bytes (default: {DEFAULT_TIMEOUT:g})",
    )
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    verify_parser = actions.add_parser(
        "verify",
        help="hash the data home's files against the pinned checksums (exit 2 naming any changed or missing file)",
    )
    verify_parser.add_argument(
        "benchmarks", nargs="*", metavar="BENCHMARK", help="benchmarks to check (default: every one in the data home)"
    )
    for parser in (listing, get, verify_parser):
        parser.add_argument(
            "--data-home",
            type=Path,
            metavar="DIR",
            help=f"the data home (default: ${DATA_ENV}, else ~/.cache/xlqa-harness/data)",
        )


def main(args: argparse.Namespace, registry: Registry) -> None:
    """Run the ``data`` action ``args`` names."""
    from harness.files.io import check_folder

    home = args.data_home.expanduser() if args.data_home else default_home()
    check_folder(home, "the data home (--data-home, $HARNESS_DATA)")
    known = known_benchmarks(registry)
    if args.data_command == "list":
        _list(known, home, args.json)
    elif args.data_command == "get":
        for name in args.benchmarks:  # every name checked before any download
            known.get(name).check_split(args.split)
        if args.timeout is not None and args.timeout <= 0:
            raise HarnessError(f"--timeout {args.timeout:g}: give a number of seconds above 0")
        mirror = args.mirror or os.environ.get(MIRROR_ENV)
        if mirror and not mirror.startswith(("http://", "https://")):
            raise HarnessError(f"mirror {mirror} (--mirror, ${MIRROR_ENV}): give an http:// or https:// URL")
        try:
            for name in args.benchmarks:
                report = get(
                    known.get(name), home, args.split, mirror=mirror, timeout=args.timeout, show_progress=not args.quiet
                )
                print(report.summary())
                for note in report.notes:
                    print(f"note: {note}")
        except KeyboardInterrupt:
            print("interrupted: what was downloaded is kept; run the same command again to resume", file=sys.stderr)
            raise SystemExit(130) from None
    else:
        _verify(known, home, args.benchmarks)


def _size(value: int | None) -> str:
    return "?" if value is None else f"{value / 2**20:.1f}"


def _list(known: Known, home: Path, as_json: bool) -> None:
    if as_json:
        print(
            json.dumps(
                {
                    "data_home": str(home),
                    "benchmarks": [
                        {
                            "name": b.name,
                            "title": b.title,
                            "tasks": list(known.tasks.get(b.name, ())),
                            "licence": b.licence,
                            "source": b.source,
                            "folder": str(home / b.folder),
                            "present": present(b, home),
                            "complete": present(b, home) and not missing(b, home),
                            "size": b.size(),
                            "splits": list(b.splits),
                            "manual": None
                            if b.manual is None
                            else {"url": b.manual.url, "instructions": b.manual.instructions},
                            "files": [_file_json(f) for f in b.files],
                            "archives": [
                                {
                                    "url": a.url,
                                    "format": a.format,
                                    "sha256": a.sha256,
                                    "size": a.size,
                                    "unpinned": a.unpinned,
                                    "splits": None if a.splits is None else list(a.splits),
                                    "members": [_file_json(m) for m in a.members],
                                }
                                for a in b.archives
                            ],
                            "manifest": str(b.manifest),
                        }
                        for b in known.benchmarks.values()
                    ],
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        return
    print(f"data home: {home}")
    rows = []
    for b in known.benchmarks.values():
        state = "no"
        if present(b, home):
            absent = len(missing(b, home))
            state = f"yes: {home / b.folder}" if not absent else f"partly ({absent} missing): {home / b.folder}"
        files = len(b.files) + sum(len(a.members) for a in b.archives)
        what = f"{files} files" + (f" in {len(b.archives)} archive(s)" if b.archives else "")
        rows.append(
            [
                b.name,
                ",".join(known.tasks.get(b.name, ())) or "-",
                what,
                _size(b.size()),
                b.licence,
                b.source + (" (manual step)" if b.manual else ""),
                state,
            ]
        )
    print(format_table(["benchmark", "tasks", "files", "MiB", "licence", "source", "present"], rows, terminal_width()))


def _file_json(item: DataFile) -> dict[str, Any]:
    return {
        "path": item.path,
        "url": item.url,
        "sha256": item.sha256,
        "size": item.size,
        "split": item.split,
        "unpinned": item.unpinned,
        "checksum_from": item.checksum_from,
    }


@dataclass
class GetReport:
    """What :func:`get` did for one benchmark."""

    benchmark: Benchmark
    folder: Path
    installed: int = 0
    kept: int = 0
    transferred: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if not self.installed:
            return f"{self.benchmark.name}: already in {self.folder} ({self.kept} files, checked when installed)"
        return (
            f"{self.benchmark.name}: {self.installed} files installed in {self.folder} "
            f"({self.transferred / 2**20:.1f} MiB downloaded, every pinned SHA-256 checked)"
            + (f"; {self.kept} already there" if self.kept else "")
        )


def get(
    benchmark: Benchmark,
    home: Path,
    split: str | None = None,
    *,
    mirror: str | None = None,
    timeout: float | None = None,
    show_progress: bool = True,
) -> GetReport:
    """Download ``benchmark``'s files of ``split`` (None: all) into ``home``, resuming partial
    downloads, checking each file against its pinned SHA-256 before it is put in place, and
    extracting archives with every member checked. Files already installed are kept."""
    benchmark.check_split(split)
    with home_lock(home):
        return _get(benchmark, home, split, mirror, timeout or DEFAULT_TIMEOUT, show_progress)


@contextmanager
def home_lock(home: Path) -> Iterator[None]:
    """The lock two commands writing one data home take in turn (its manifest is read, changed and
    written whole); the second says on stderr that it waits."""
    from filelock import FileLock, Timeout

    home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(home / ".manifest.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"waiting for another harness data command on {home} to finish", file=sys.stderr)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _get(
    benchmark: Benchmark, home: Path, split: str | None, mirror: str | None, timeout: float, show_progress: bool
) -> GetReport:
    from harness.files.download import Downloader

    record = HomeRecord(home)
    report = GetReport(benchmark, home / benchmark.folder)
    if benchmark.manual is not None:
        return _manual(benchmark, home, record, report)
    files = [f for f in benchmark.files_for(split) if not _installed(benchmark, home, f, record)]
    archives = [a for a in benchmark.archives_for(split) if not _archive_installed(benchmark, home, a, record)]
    report.kept = (
        len(benchmark.expected(split)) - len(files) - sum(len(benchmark.members_for(a, split)) for a in archives)
    )
    if not files and not archives:
        record.save()  # files found in place and hashed are recorded
        return report
    if offline():
        first = files[0] if files else archives[0]
        where = (
            benchmark.path(home, first)
            if isinstance(first, DataFile)
            else home / DOWNLOADS / benchmark.folder / first.name
        )
        raise HarnessError(
            f"offline ({offline_variable()}): {benchmark.name} needs {first.url} for {where}; nothing was downloaded"
        )
    sizes = [f.size for f in files] + [a.size for a in archives]
    total = None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)
    from tqdm import tqdm

    try:
        with (
            tqdm(
                total=total,
                desc=benchmark.name,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                leave=False,
                disable=None if show_progress else True,
                dynamic_ncols=True,
            ) as bar,
            Downloader(mirror=mirror, timeout=timeout, progress=bar) as downloader,
        ):
            for item in files:
                _fetch_file(benchmark, home, item, record, downloader, report)
            for archive in archives:
                _fetch_archive(benchmark, home, archive, split, record, downloader, report)
    finally:  # once, not per file (a killed run's unrecorded files are hashed and recorded by the next)
        record.save()
    return report


def _installed(benchmark: Benchmark, home: Path, item: DataFile, record: HomeRecord) -> bool:
    """A file is installed when it is there with the checksum it was installed with (its pinned
    one where pinned); a file put there by hand is hashed once and recorded if it is right."""
    path, key = benchmark.path(home, item), benchmark.key(item)
    if not path.is_file():
        return False
    entry = record.files.get(key)
    if entry is not None and entry.get("size") == path.stat().st_size and item.sha256 in (None, entry["sha256"]):
        return True
    from harness.files.io import sha256_path

    got = sha256_path(path)
    if item.sha256 is not None and got != item.sha256:
        return False  # fetched again; the download replaces it atomically
    record.add(key, got, path.stat().st_size, item.url, pinned=item.sha256 is not None)
    return True


def _archive_key(benchmark: Benchmark, archive: Archive) -> str:
    return f"{benchmark.folder}/{archive.name}"


def _archive_installed(benchmark: Benchmark, home: Path, archive: Archive, record: HomeRecord) -> bool:
    return _archive_key(benchmark, archive) in record.files and all(
        benchmark.path(home, m).is_file() for m in archive.members
    )


def _unpinned_note(what: str, reason: str | None, sha256: str, record: HomeRecord) -> str:
    return (
        f"{what} has no pinned checksum ({reason}); the sha256 it downloaded with, {sha256}, is recorded in "
        f"{record.path}"
    )


def _fetch_file(
    benchmark: Benchmark, home: Path, item: DataFile, record: HomeRecord, downloader: Downloader, report: GetReport
) -> None:
    assert item.url is not None  # the schema requires a URL of every file but a manual step's
    key = benchmark.key(item)
    expected = item.sha256 or record.recorded(key)
    fetched = downloader.fetch(item.url, benchmark.path(home, item), expected, item.size)
    record.add(key, fetched.sha256, fetched.size, item.url, pinned=item.sha256 is not None)
    report.installed += 1
    report.transferred += fetched.transferred
    if expected is None:
        report.notes.append(_unpinned_note(key, item.unpinned, fetched.sha256, record))


def _fetch_archive(
    benchmark: Benchmark,
    home: Path,
    archive: Archive,
    split: str | None,
    record: HomeRecord,
    downloader: Downloader,
    report: GetReport,
) -> None:
    """Download the archive, extract it into a staging folder with every member path checked,
    check the pinned members, then move the members into place and delete the archive."""
    from harness.files.archives import extracted
    from harness.files.io import sha256_path

    key = _archive_key(benchmark, archive)
    expected = archive.sha256 or record.recorded(key)
    target = home / DOWNLOADS / benchmark.folder / archive.name
    fetched = downloader.fetch(archive.url, target, expected, archive.size)
    report.transferred += fetched.transferred
    folder = home / benchmark.folder
    pinned = {m.path: m for m in archive.members}
    try:
        staging = folder / f".extract-{archive.name}"
        with extracted(target, archive.format, staging) as paths:
            names = {p.as_posix() for p in paths}
            absent = [m.path for m in benchmark.members_for(archive, split) if m.path not in names]
            if absent:
                raise HarnessError(
                    f"{target}: holds no {absent[0]} (and {len(absent) - 1} more declared members); "
                    "refused, nothing installed"
                )
            digests = {name: sha256_path(staging / name) for name in names}
            for name, digest in digests.items():
                member = pinned.get(name)
                want = member.sha256 if member is not None else None
                if want is not None and digest != want:
                    raise HarnessError(
                        f"{target}: member {name} has sha256 {digest}, expected {want}; refused, nothing installed"
                    )
            for name, digest in digests.items():
                destination = folder / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / name, destination)
                member = pinned.get(name)
                record.add(
                    f"{benchmark.folder}/{name}",
                    digest,
                    destination.stat().st_size,
                    None,
                    pinned=member is not None and member.sha256 is not None,
                )
                report.installed += 1
    finally:
        target.unlink(missing_ok=True)
    record.add(key, fetched.sha256, fetched.size, archive.url, pinned=archive.sha256 is not None)
    record.files[key]["archive"] = True
    if expected is None:
        report.notes.append(_unpinned_note(archive.name, archive.unpinned, fetched.sha256, record))


def _manual(benchmark: Benchmark, home: Path, record: HomeRecord, report: GetReport) -> GetReport:
    """A benchmark behind a manual step: say exactly what to fetch and where to put it; once it is
    there, check it (recording the checksum of an unpinned file the first time)."""
    assert benchmark.manual is not None
    absent = missing(benchmark, home)
    if absent:
        places = ", ".join(str(benchmark.path(home, item)) for item in absent)
        raise HarnessError(
            f"{benchmark.name} needs a manual step: go to {benchmark.manual.url}, "
            f"{benchmark.manual.instructions}; save it as {places}, then run "
            f"`harness data verify {benchmark.name}`"
        )
    findings = list(verify(benchmark, home, record))
    record.save()
    _raise_on(findings)
    report.kept = len(findings)
    report.notes.extend(f"{f.path}: {f.detail}" for f in findings if f.verdict == "recorded")
    return report


def _raise_on(findings: Sequence[Finding]) -> None:
    bad = [f for f in findings if f.verdict in ("changed", "missing")]
    if bad:
        first = bad[0]
        more = f" (and {len(bad) - 1} more, listed above)" if len(bad) > 1 else ""
        raise HarnessError(f"{first.path} is {first.verdict}{': ' + first.detail if first.detail else ''}{more}")


def verify_home(known: Known, home: Path, names: Sequence[str] = ()) -> list[Finding]:
    """Every file of the named benchmarks (default: those in the data home) hashed against its
    pinned or recorded checksum; unpinned files seen for the first time are recorded."""
    benchmarks = [known.get(name) for name in names] or [b for b in known.benchmarks.values() if present(b, home)]
    for benchmark in benchmarks:
        if not present(benchmark, home):
            raise HarnessError(
                f"{benchmark.name} is not in the data home {home}: "
                + (
                    f"see `harness data get {benchmark.name}`"
                    if benchmark.manual
                    else f"run `harness data get {benchmark.name}`"
                )
            )
    if not benchmarks:
        return []
    with home_lock(home):
        record = HomeRecord(home)
        findings = [f for b in benchmarks for f in verify(b, home, record)]
        if any(f.verdict == "recorded" for f in findings):
            record.save()
    return findings


def _verify(known: Known, home: Path, names: Sequence[str]) -> None:
    findings = verify_home(known, home, names)
    if not findings:
        print(f"data home {home}: no benchmark there yet (`harness data get NAME`; see `harness data list`)")
        return
    shown = [f for f in findings if f.verdict != "ok"]
    if shown:
        print(
            format_table(
                ["benchmark", "file", "verdict", "detail"],
                [[f.benchmark, str(f.path), f.verdict, f.detail] for f in shown],
            )
        )
    counts = {v: sum(f.verdict == v for f in findings) for v in ("ok", "recorded", "changed", "missing")}
    checked = sorted({f.benchmark for f in findings})
    print(
        f"verify {home}: {', '.join(checked)}: {len(findings)} files; "
        + ", ".join(f"{v} {n}" for v, n in counts.items() if n)
    )
    _raise_on(findings)
