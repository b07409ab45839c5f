"""Extracting an official archive (MLQA's zip, XTREME's tarballs) without trusting its member names.

Every member is checked before anything is written: a path that is absolute, climbs with ``..``
or names a drive is refused, and so is every link (symbolic or hard: the official archives hold
none; one whose target lands outside the folder is named as such), device or pipe. An archive
with one such member is refused whole, in one line naming it, with nothing extracted. The
members are written into a staging folder and handed back by name, so the caller checks them
before moving any into place.
"""

from __future__ import annotations

import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from harness.errors import HarnessError


def safe_member(name: str, archive: Path) -> PurePosixPath:
    """The member path ``name`` as a relative path that stays inside the folder, or one line."""
    text = name.replace("\\", "/")
    path = PurePosixPath(text)
    if path.is_absolute() or (path.parts and ":" in path.parts[0]) or ".." in path.parts:
        raise HarnessError(
            f"{archive}: member '{name}' would be written outside the folder; the archive is refused, nothing extracted"
        )
    return PurePosixPath(*(part for part in path.parts if part not in ("", ".")))


def _check_link(member: PurePosixPath, target: str, archive: Path, *, hard: bool) -> None:
    """A link member's target must resolve inside the folder (a hard link's is relative to the top)."""
    base = "" if hard else str(member.parent)
    resolved = posixpath.normpath(posixpath.join(base, target.replace("\\", "/")))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        raise HarnessError(
            f"{archive}: member '{member}' links outside the folder (to '{target}'); the archive is "
            "refused, nothing extracted"
        )


@contextmanager
def extracted(archive: Path, kind: str, staging: Path) -> Iterator[list[PurePosixPath]]:
    """Extract ``archive`` (``zip`` or ``tar``, compressed or not) into the empty folder
    ``staging`` after checking every member; yields the regular files' relative paths. The
    staging folder is removed when the block ends."""
    shutil.rmtree(staging, ignore_errors=True)  # what a killed extraction left
    try:
        staging.mkdir(parents=True)
        yield (_zip if kind == "zip" else _tar)(archive, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _zip(archive: Path, staging: Path) -> list[PurePosixPath]:
    try:
        with zipfile.ZipFile(archive) as handle:
            members = handle.infolist()
            plan: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
            for info in members:
                path = safe_member(info.filename, archive)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    _check_link(path, handle.read(info).decode("utf-8", "replace"), archive, hard=False)
                    raise HarnessError(
                        f"{archive}: member '{path}' is a symbolic link; the official archives hold "
                        "none, so it is refused, nothing extracted"
                    )
                if not info.is_dir():
                    plan.append((info, path))
            for info, path in plan:
                (staging / path).parent.mkdir(parents=True, exist_ok=True)
                with handle.open(info) as source, open(staging / path, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            return [path for _, path in plan]
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise HarnessError(f"{archive}: not a readable zip archive ({error})") from None


def _tar(archive: Path, staging: Path) -> list[PurePosixPath]:
    try:
        with tarfile.open(archive) as handle:
            members = handle.getmembers()
            plan: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
            for info in members:
                path = safe_member(info.name, archive)
                if info.issym() or info.islnk():
                    _check_link(path, info.linkname, archive, hard=info.islnk())
                    raise HarnessError(
                        f"{archive}: member '{path}' is a link; the official archives hold none, so it "
                        "is refused, nothing extracted"
                    )
                if info.isfile():
                    plan.append((info, path))
                elif not info.isdir():
                    raise HarnessError(
                        f"{archive}: member '{path}' is a device or pipe; the archive is refused, nothing extracted"
                    )
            for info, path in plan:
                (staging / path).parent.mkdir(parents=True, exist_ok=True)
                source = handle.extractfile(info)
                assert source is not None  # a regular file always has content
                with source, open(staging / path, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            return [path for _, path in plan]
    except (tarfile.TarError, OSError, EOFError) as error:
        raise HarnessError(f"{archive}: not a readable tar archive ({error})") from None
