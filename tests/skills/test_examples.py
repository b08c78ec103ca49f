"""The example skills and demo run as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skillkit.skills.loader import validate_skill
from skillkit.skills.registry import find_skill_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def test_every_example_skill_is_valid_in_strict_mode() -> None:
    files = find_skill_files(EXAMPLES)
    assert len(files) >= 3
    for path in files:
        assert validate_skill(path, strict=True) == [], path


def test_every_example_declares_gating_and_actions() -> None:
    from skillkit.skills.loader import parse_skill

    for path in find_skill_files(EXAMPLES):
        skill = parse_skill(path, strict=True)
        assert skill.requirements is not None and skill.requirements.source == "skillkit"
        assert skill.actions, path


def test_demo_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "word-stats__count" in done.stdout
    assert "release-notes  ineligible" in done.stdout
    assert "catalog for a 200000-token window: full" in done.stdout
    assert "catalog for a 2000-token window: search" in done.stdout
