"""SkillKit's import contracts ([tool.importlinter] in pyproject.toml) hold: each layer
imports only the layers below it, and no two sibling packages or modules import each
other. A failure prints lint-imports' report of the broken contracts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_import_contract_is_kept() -> None:
    result = _lint_imports()
    report = result.stdout + result.stderr
    assert result.returncode == 0, "broken import contracts:\n" + report
    assert "0 broken" in report


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    """The contracts are live: the same check over a copy of the sources with one
    upward import added (models importing the agent) fails, naming that import."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "skillkit", copy / "skillkit", ignore=shutil.ignore_patterns("*.pyc")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    models = copy / "skillkit" / "models.py"
    models.write_text(
        models.read_text() + "\nfrom skillkit.agent import runner as _runner  # noqa\n"
    )
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(copy), "PATH": str(LINT_IMPORTS.parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = result.stdout + result.stderr
    assert result.returncode != 0, report
    assert "skillkit.models -> skillkit.agent.runner" in report
