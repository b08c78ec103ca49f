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


def test_no_contract_ignores_an_import() -> None:
    """The contracts hold as written: none lists imports it lets through."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    ignoring = [c["id"] for c in config["contracts"] if c.get("ignore_imports")]
    assert ignoring == []


# The packages that get the model registry handed down (the agent's `models`, the
# session's) instead of reading the process's default one.
_HANDED_THE_REGISTRY = ("agent", "skills", "frontends")


def _default_registry_reads(path: Path) -> list[int]:
    """The lines of ``path`` that import or name the model registry's
    ``default_registry`` (a function of the same name elsewhere does not count)."""
    import ast

    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "skillkit.model_registry"
        ):
            if any(alias.name == "default_registry" for alias in node.names):
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "default_registry"
            and "model_registry" in ast.unparse(node.value)
        ):
            lines.append(node.lineno)
    return lines


def test_the_agent_skills_and_faces_never_read_the_default_model_registry() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in _HANDED_THE_REGISTRY
        for path in sorted((ROOT / "src" / "skillkit" / package).rglob("*.py"))
        for line in _default_registry_reads(path)
    ]
    assert found == [], "read the registry handed down instead: " + ", ".join(found)


def test_the_default_registry_check_sees_both_spellings(tmp_path: Path) -> None:
    """The check above is live: it finds an import and a dotted read."""
    module = tmp_path / "m.py"
    module.write_text(
        "from skillkit.model_registry import default_registry\n"
        "import skillkit.model_registry\n"
        "x = skillkit.model_registry.default_registry()\n"
        "from skillkit.skills.cli import default_registry as skills_default\n"
    )
    assert _default_registry_reads(module) == [1, 3]
