"""Plugins from package registries: a PyPI wheel through the user's pip (never an
sdist, whose build would run its code) and an npm tarball through the user's npm (its
scripts never run), each unpacked in a temporary folder with its paths checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

__all__ = ["FetchError", "fetch_npm", "fetch_pypi"]


class FetchError(Exception):
    """A package could not be fetched or unpacked (one line saying why)."""


def _tool(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise FetchError(f"{names[0]} is not installed: the package cannot be fetched")


def _run_tool(argv: list[str], cwd: Path) -> str:
    """Run the user's pip or npm (no prompts); its stdout. Raises `FetchError`."""
    env = {**os.environ, "PIP_NO_INPUT": "1", "npm_config_yes": "false"}
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"{Path(argv[0]).name}: {exc}") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise FetchError(f"{Path(argv[0]).name}: {(lines or ['failed'])[-1].strip()}")
    return done.stdout


def fetch_pypi(requirement: str, temp: Path) -> tuple[Path, str]:
    """Download ``requirement``'s wheel (never an sdist: building one runs its code) with
    the user's pip, without dependencies, and unpack it; (folder, resolved version)."""
    pip = _tool("pip3", "pip")
    download = temp / "download"
    download.mkdir()
    _run_tool(
        [
            pip,
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "--dest",
            str(download),
            requirement,
        ],
        temp,
    )
    wheels = sorted(download.glob("*.whl"))
    if len(wheels) != 1:
        raise FetchError(f"pypi:{requirement}: pip fetched no single wheel")
    version = wheels[0].name.split("-")[1]
    unpacked = temp / "package"
    with zipfile.ZipFile(wheels[0]) as archive:
        for member in archive.infolist():
            relative = PurePosixPath(member.filename)
            if relative.is_absolute() or ".." in relative.parts:
                raise FetchError(f"pypi:{requirement}: the wheel holds {member.filename!r}")
            archive.extract(member, unpacked)
    return unpacked, version


def fetch_npm(spec: str, temp: Path) -> tuple[Path, str]:
    """``npm pack`` ``spec`` with the user's npm (no scripts run) and unpack the tarball;
    (folder, resolved version)."""
    npm = _tool("npm")
    download = temp / "download"
    download.mkdir()
    out = _run_tool(
        [npm, "pack", spec, "--ignore-scripts", "--json", "--pack-destination", str(download)],
        temp,
    )
    try:
        packed = json.loads(out)[0]
        version, filename = str(packed["version"]), str(packed["filename"])
    except (ValueError, LookupError, TypeError) as exc:
        raise FetchError(f"npm:{spec}: npm pack answered no package") from exc
    tarball = download / Path(filename.replace("/", "-").lstrip("@")).name
    if not tarball.is_file():
        found = sorted(download.glob("*.tgz"))
        if len(found) != 1:
            raise FetchError(f"npm:{spec}: npm pack left no tarball")
        tarball = found[0]
    unpacked = temp / "package"
    try:
        with tarfile.open(tarball) as archive:
            archive.extractall(unpacked, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise FetchError(f"npm:{spec}: the tarball cannot be unpacked: {exc}") from exc
    return unpacked, version
