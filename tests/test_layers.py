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


def _renderer_defaults(path: Path) -> list[int]:
    """The lines of ``path`` that make a `RendererRegistry` outlive the call that made
    it: one assigned at module or class level, to a name a function declares
    ``global``, or made as a default argument value (each a process-wide default)."""
    import ast

    def makes_registry(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id == "RendererRegistry")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "RendererRegistry")
        )

    def assigned(node: ast.AST) -> tuple[list[ast.expr], ast.AST | None] | None:
        if isinstance(node, ast.Assign):
            return node.targets, node.value
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            return [node.target], node.value
        return None

    lines: list[int] = []

    def visit(node: ast.AST, shared: bool, global_names: frozenset[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
            lines.extend(d.lineno for d in defaults if d is not None and makes_registry(d))
            body = node.body if isinstance(node.body, list) else [node.body]
            declared = frozenset(
                name
                for inner in body
                for sub in ast.walk(inner)
                if isinstance(sub, ast.Global)
                for name in sub.names
            )
            for inner in body:
                visit(inner, False, declared)
            return
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                visit(inner, True, frozenset())
            return
        found = assigned(node)
        if found is not None and makes_registry(found[1]):
            targets = found[0]
            if shared or any(isinstance(t, ast.Name) and t.id in global_names for t in targets):
                lines.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, shared, global_names)

    visit(ast.parse(path.read_text(), str(path)), True, frozenset())
    return sorted(lines)


def test_no_module_keeps_a_process_wide_renderer_registry() -> None:
    """Custom-message renderers are handed down like the model registry: the assembly
    (or an SDK caller) makes the agent's `RendererRegistry`, a runner given none makes
    its own, and a conversion given none uses the read-only built-in renderers."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "src" / "skillkit").rglob("*.py"))
        for line in _renderer_defaults(path)
    ]
    assert found == [], "hand the renderer registry down instead: " + ", ".join(found)


def test_the_renderer_default_check_sees_every_way_to_keep_one(tmp_path: Path) -> None:
    """The check above is live: a module-level, a class-level, a ``global`` and a
    default-argument registry are found; one made inside a call is not."""
    module = tmp_path / "m.py"
    module.write_text(
        "from skillkit.context import RendererRegistry\n"
        "import skillkit.context\n"
        "DEFAULT = RendererRegistry()\n"
        "class Holder:\n"
        "    shared: object = skillkit.context.RendererRegistry(builtins=False)\n"
        "    def __init__(self) -> None:\n"
        "        self.own = RendererRegistry()\n"
        "_lazy = None\n"
        "def lazy() -> object:\n"
        "    global _lazy\n"
        "    if _lazy is None:\n"
        "        _lazy = RendererRegistry()\n"
        "    return _lazy\n"
        "def convert(renderers: object = RendererRegistry()) -> object:\n"
        "    mine = RendererRegistry()\n"
        "    return mine\n"
    )
    assert _renderer_defaults(module) == [3, 5, 12, 14]
