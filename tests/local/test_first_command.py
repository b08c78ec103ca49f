"""The README's first command, run as a newcomer runs it: the embedded model lists the
folder once, correctly, and stops."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

NAMES = ("notes.txt", "report.md", "data/", "setup.py")


def _clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(home)
    return env


def test_the_first_command_lists_the_folder_once(default_gguf: Path, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    for name in NAMES[:2] + NAMES[3:]:
        (folder / name).write_text("x\n")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("skillkit")), "-p", "List the files in this folder."],
        cwd=folder,
        env=_clean_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for name in NAMES:
        assert out.count(name) == 1, out
    assert len(out.splitlines()) <= len(NAMES) + 3, out
    assert "output token limit" not in done.stderr
