"""The ``python:`` requirement finds modules without running them, and never counts
(or executes) a module planted in the project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.skills.eligibility import Environment, Requirements, unmet_requirements
from tests.skills.conftest import write_skill

PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\n"


def _plant(folder: Path, name: str, marker: Path, *, package: bool) -> None:
    """A module (or package with a ``sub`` module) that writes ``marker`` if imported."""
    code = PLANTED.format(marker=str(marker))
    if package:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(code)
        (folder / name / "sub.py").write_text(code)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.py").write_text(code)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    return folder


def test_a_module_planted_in_the_project_is_neither_run_nor_counted(
    project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    _plant(project, "skk_planted_pkg", marker, package=True)
    _plant(project, "skk_planted_mod", marker, package=False)
    needs = Requirements(python=("skk_planted_pkg", "skk_planted_pkg.sub", "skk_planted_mod"))

    unmet = unmet_requirements(needs, Environment(project_dir=str(project)))

    assert unmet == [
        "needs Python package 'skk_planted_pkg'",
        "needs Python package 'skk_planted_pkg.sub'",
        "needs Python package 'skk_planted_mod'",
    ]
    assert not marker.exists()
    assert not any(name.startswith("skk_planted") for name in sys.modules)


def test_an_installed_package_is_found_without_running_its_code(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    site = tmp_path / "site"
    _plant(site, "skk_installed_pkg", marker, package=True)
    monkeypatch.syspath_prepend(str(site))
    needs = Requirements(python=("skk_installed_pkg", "skk_installed_pkg.sub", "json.decoder"))

    assert unmet_requirements(needs, Environment(project_dir=str(project))) == []
    assert unmet_requirements(
        Requirements(python=("skk_installed_pkg.missing", "not a name", "")),
        Environment(project_dir=str(project)),
    ) == [
        "needs Python package 'skk_installed_pkg.missing'",
        "needs Python package 'not a name'",
        "needs Python package ''",
    ]
    assert not marker.exists()
    assert "skk_installed_pkg" not in sys.modules


@pytest.mark.timeout(60)
def test_listing_skills_in_a_project_never_imports_its_modules(tmp_path: Path, home: Path) -> None:
    """A real process whose ``sys.path`` starts with the project folder (``python -c``)."""
    project = tmp_path / "project"
    marker = tmp_path / "marker"
    _plant(project, "skk_evil", marker, package=True)
    write_skill(
        project / ".skillkit" / "skills",
        "needs-evil",
        "name: needs-evil\ndescription: Needs a module.\n"
        "metadata:\n  skillkit:\n    requires:\n      python: [skk_evil, skk_evil.sub]",
    )
    script = "import sys; from skillkit.cli import main; sys.exit(main(['skills', 'list']))"

    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=50,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )

    assert result.returncode == 0, result.stderr
    assert "needs-evil" in result.stdout
    assert "needs Python package 'skk_evil'" in result.stdout
    assert not marker.exists()
