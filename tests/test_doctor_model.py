"""``skillkit doctor`` names the model a session would use and what chose it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

SKILLKIT = Path(sys.executable).with_name("skillkit")


def _doctor(cwd: Path, home: Path, **extra: str) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and not k.startswith("SKILLKIT_")
    }
    env.update(HOME=str(home), **extra)
    done = subprocess.run(
        [str(SKILLKIT), "doctor"], cwd=cwd, env=env, capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\nModel\n", 1)[1].split("\n\n", 1)[0]


def test_doctor_names_the_provider_default_and_its_key(tmp_path: Path) -> None:
    secret = "sk-ant-not-to-be-shown"
    section = _doctor(tmp_path, tmp_path, ANTHROPIC_API_KEY=secret)
    assert "model      anthropic:claude-sonnet-4-5" in section
    assert "chosen by  ANTHROPIC_API_KEY is set" in section
    assert "key        ANTHROPIC_API_KEY set" in section
    assert secret not in section


def test_doctor_names_the_settings_file_that_chose_the_model(tmp_path: Path) -> None:
    settings = tmp_path / ".skillkit" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "openai:gpt-4o"}))
    work = tmp_path / "work"
    work.mkdir()
    section = _doctor(work, tmp_path)
    assert "model      openai:gpt-4o" in section
    assert f"chosen by  {settings}" in section
    assert "! set OPENAI_API_KEY to use openai:gpt-4o" in section


def test_doctor_shows_an_untrusted_projects_model_as_ignored(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".skillkit").mkdir(parents=True)
    (work / ".skillkit" / "settings.json").write_text(json.dumps({"model": "openai:gpt-4o"}))
    section = _doctor(work, tmp_path / "home")
    assert "model      local" in section
    assert "ignored 'model': the project is not trusted" in section
