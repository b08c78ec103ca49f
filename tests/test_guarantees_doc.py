"""Every test docs/guarantees.md cites exists, so no promise points at nothing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guarantees.md"


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_cited_test_file_and_test_exists() -> None:
    text = PAGE.read_text()
    cited = re.findall(r"`(tests/[\w/]+\.py)((?:::\w+\*?)?)`", text)
    assert cited, "the page cites no tests"
    missing: list[str] = []
    for file, name in cited:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
            continue
        if name:
            wanted = name.removeprefix("::")
            names = _test_names(path)
            if wanted.endswith("*"):
                if not any(n.startswith(wanted[:-1]) for n in names):
                    missing.append(file + name)
            elif wanted not in names:
                missing.append(file + name)
    # names cited in a list right after a file: (`test_a`, `test_b`)
    for file, names in re.findall(r"`(tests/[\w/]+\.py)` \(([^)]*)\)", text):
        path = ROOT / file
        if not path.is_file():
            continue
        defined = _test_names(path)
        for wanted in re.findall(r"`(test_\w+\*?)`", names):
            if wanted.endswith("*"):
                if not any(n.startswith(wanted[:-1]) for n in defined):
                    missing.append(f"{file}::{wanted}")
            elif wanted not in defined:
                missing.append(f"{file}::{wanted}")
    for file, wanted in re.findall(r"`(tests/[\w/]+\.py)`[^`|]*?`::(test_\w+)`", text):
        if wanted not in _test_names(ROOT / file):
            missing.append(f"{file}::{wanted}")
    assert missing == []
