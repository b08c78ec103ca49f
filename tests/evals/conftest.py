"""Helpers of the eval tests: the fixture project copied into a scratch folder, and the
real ``skillkit`` command run in it with a home of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SKILLKIT = Path(sys.executable).with_name("skillkit")
ROOT = Path(__file__).resolve().parents[2]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: starts a local Ray instance")


def make_project(folder: Path) -> Path:
    """The fixture suite, scripts and skill catalog in ``folder/project``, with an empty
    home beside it."""
    project = folder / "project"
    shutil.copytree(FIXTURES, project, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "home").mkdir(exist_ok=True)
    return project


def environment(home: Path) -> dict[str, str]:
    """The command's environment: ``home`` as HOME, and a TMPDIR beside it (scratch
    folders a killed run leaves behind go with the test's folder)."""
    scratch = home.parent / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(scratch), "RAY_AUTH_MODE": "disabled"}
    env["RAY_TMPDIR"] = _short_ray_folder()  # Ray's sockets need a path under 108 bytes
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def skillkit(
    *args: str, cwd: Path, home: Path, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``skillkit ARGS`` as a user runs it, in ``cwd`` with ``HOME=home``."""
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=cwd,
        env=environment(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


_RAY_FOLDERS: list[str] = []


def _short_ray_folder() -> str:
    """A short folder for a local Ray's session files (its unix sockets' paths cannot
    pass 107 bytes, which a test's own folder may), removed when the tests end."""
    if not _RAY_FOLDERS:
        import atexit
        import tempfile

        folder = tempfile.mkdtemp(prefix="skray-", dir="/tmp")
        _RAY_FOLDERS.append(folder)
        atexit.register(shutil.rmtree, folder, True)
    return _RAY_FOLDERS[0]
