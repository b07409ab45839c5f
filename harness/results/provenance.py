"""Where a number came from: versions, code commit, platform, and hashes of the data read."""

from __future__ import annotations

import platform
import subprocess
import sys
from datetime import UTC, datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path
from typing import Any

import harness
from harness.files.io import sha256_file

DISTRIBUTION = "xlqa-harness"


def now_iso() -> str:
    """The current UTC time in ISO 8601, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def package_version(name: str) -> str | None:
    """Installed version of a distribution, without importing it (None if absent)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


@cache
def dependency_versions() -> dict[str, str | None]:
    """Versions of every runtime dependency the harness declares, read from its metadata."""
    names = ["numpy", "torch", "transformers"]
    try:
        for requirement in requires(DISTRIBUTION) or []:
            if "extra ==" in requirement:
                continue
            name = requirement.split(";")[0].strip()
            for stop in "<>=!~[ ":
                name = name.split(stop)[0]
            if name and name not in names:
                names.append(name)
    except PackageNotFoundError:
        pass
    return {name: package_version(name) for name in names}


@cache
def git_commit() -> str | None:
    """The commit of the harness source tree when it is a git checkout (``+dirty`` if modified)."""
    source = Path(harness.__file__).resolve().parent.parent
    if not (source / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head


def environment() -> dict[str, Any]:
    """Versions and platform for a result's provenance."""
    return {
        "harness_version": harness.__version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "packages": dependency_versions(),
        "platform": platform.platform(),
    }


def describe_files(paths: list[Path]) -> list[dict[str, Any]]:
    """Path, SHA-256 and size of each data file read, in a stable order."""
    return [
        {"path": str(path), "sha256": sha256_file(path), "bytes": path.stat().st_size}
        for path in sorted(set(paths), key=str)
    ]
