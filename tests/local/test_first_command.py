"""The README's first command, run as a newcomer runs it: in a fresh clone with its
``.venv``, the embedded model lists the folder once, correctly, and stops."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
SKILLKIT = Path(sys.executable).with_name("skillkit")


def _fresh_clone_entries() -> list[str]:
    """The top-level names of a fresh clone of this repository after the README's
    install step: the tracked ones, ``.git`` and ``.venv``."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
    ).stdout.split()
    top = {path.split("/", 1)[0] + ("/" if "/" in path else "") for path in tracked}
    return sorted(top | {".git/", ".venv/"})


def _clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env["HOME"] = str(home)
    return env


def test_the_first_command_lists_a_fresh_clone_once(default_gguf: Path, tmp_path: Path) -> None:
    folder = tmp_path / "skillkit"
    folder.mkdir()
    entries = _fresh_clone_entries()
    for entry in entries:
        if entry.endswith("/"):
            (folder / entry).mkdir()
        else:
            (folder / entry).write_text("x\n")
    done = subprocess.run(
        [str(SKILLKIT), "-p", "List the files in this folder."],
        cwd=folder,
        env=_clean_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr
    answer = done.stdout.strip()
    first, *rest = answer.split("\n")
    assert first.startswith("The ls command returned"), answer
    names = [re.sub(r"^\d+\. ", "", line).strip().rstrip("/") for line in rest]
    assert sorted(names) == sorted(entry.rstrip("/") for entry in entries), answer
    assert all(re.match(r"^\d+\. ", line) for line in rest), answer
    assert "[cut" not in answer
    assert "output token limit" not in done.stderr
