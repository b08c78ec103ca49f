"""Print the functions longer than a limit (default 80 lines) and the modules longer
than another (default 600), longest first.

    python scripts/long_functions.py [--lines 80] [--module-lines 600] [PATH ...]

PATH defaults to ``src/skillkit``. A function's length runs from its ``def`` line (its
decorators not counted) to its last line, nested functions included.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def long_functions(path: Path, limit: int) -> list[tuple[int, str]]:
    """(length, "file:line name") of each function in ``path`` over ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((length, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=80)
    parser.add_argument("--module-lines", type=int, default=600)
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "src" / "skillkit"])
    args = parser.parse_args()
    files = sorted(
        f for p in args.paths for f in ([p] if p.is_file() else p.resolve().rglob("*.py"))
    )
    functions: list[tuple[int, str]] = []
    modules: list[tuple[int, str]] = []
    for path in files:
        path = path.resolve()
        functions += long_functions(path, args.lines)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > args.module_lines:
            modules.append((lines, str(path.relative_to(ROOT))))
    print(f"functions over {args.lines} lines:")
    for length, where in sorted(functions, reverse=True):
        print(f"  {length:5}  {where}")
    print(f"modules over {args.module_lines} lines:")
    for length, where in sorted(modules, reverse=True):
        print(f"  {length:5}  {where}")


if __name__ == "__main__":
    main()
