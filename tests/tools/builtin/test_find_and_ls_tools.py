import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.runtime import OutputLimits
from skillkit.tools.base import ToolError
from skillkit.tools.builtin import FindTool, LsTool, Workspace
from skillkit.tools.builtin.globs import compile_glob, glob_to_regex

from .conftest import Caller


@pytest.fixture
def tree(root: Path) -> Path:
    for name in ["src/app.py", "src/pkg/mod.py", "src/pkg/data.json", "README.md", "docs/guide.md"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    (root / ".cache").mkdir()
    (root / ".cache/skip.py").write_text("x")
    (root / "dist").mkdir()
    (root / "dist/bundle.py").write_text("x")
    (root / ".gitignore").write_text("dist/\n*.json\n")
    return root


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["src/app.py", "src/pkg/mod.py"]),
        ("src/*.py", ["src/app.py"]),
        ("src/**/*.py", ["src/app.py", "src/pkg/mod.py"]),
        ("*.{md,py}", ["README.md", "docs/guide.md", "src/app.py", "src/pkg/mod.py"]),
        ("pkg", ["src/pkg/"]),
        ("[A-Z]*", ["README.md"]),
    ],
)
async def test_find_matches_globs_and_skips_hidden_and_ignored(
    tree: Path, call: Caller, pattern: str, expected: list[str]
) -> None:
    result = await call(FindTool(Workspace(tree), OutputLimits()), pattern=pattern)
    assert sorted(result.output.splitlines()) == expected


async def test_find_includes_hidden_paths_when_asked(tree: Path, call: Caller) -> None:
    result = await call(FindTool(Workspace(tree), OutputLimits()), pattern="*.py", hidden=True)
    assert ".cache/skip.py" in result.output.splitlines()
    assert "dist/bundle.py" not in result.output  # .gitignore still applies


async def test_find_in_a_subdirectory_shows_workspace_paths(tree: Path, call: Caller) -> None:
    result = await call(FindTool(Workspace(tree), OutputLimits()), pattern="*.py", path="src/pkg")
    assert result.output == "src/pkg/mod.py"


async def test_find_stops_at_the_limit(tree: Path, call: Caller) -> None:
    result = await call(FindTool(Workspace(tree), OutputLimits()), pattern="*", limit=2)
    lines = result.output.splitlines()
    assert len(lines) == 3 and lines[2].startswith("[stopped after 2 paths")


async def test_find_with_no_match_says_so(tree: Path, call: Caller) -> None:
    result = await call(FindTool(Workspace(tree), OutputLimits()), pattern="*.rs")
    assert result.output.startswith("No paths match '*.rs'")


async def test_ls_lists_entries_with_kinds(tree: Path, call: Caller) -> None:
    os.symlink("README.md", tree / "link")
    result = await call(LsTool(Workspace(tree), OutputLimits()), path=".")
    assert result.output.splitlines() == [
        ".cache/",
        ".gitignore",
        "dist/",
        "docs/",
        "link -> README.md",
        "README.md",
        "src/",
    ]


async def test_ls_limits_and_errors(tree: Path, call: Caller) -> None:
    ls = LsTool(Workspace(tree), OutputLimits())
    limited = await call(ls, limit=2)
    assert limited.output.splitlines()[-1] == "[4 more entries not shown]"
    with pytest.raises(ToolError, match="not a directory; use read"):
        await call(ls, path="README.md")
    with pytest.raises(ToolError, match="no such directory"):
        await call(ls, path="missing")


def test_gitignore_rules_negation_and_anchoring(root: Path) -> None:
    from skillkit.tools.builtin.globs import walk

    (root / ".gitignore").write_text("*.log\n!keep.log\n/top.txt\n")
    for name in ["a.log", "keep.log", "top.txt", "sub/top.txt", "sub/b.log"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    (root / "sub/.gitignore").write_text("!b.log\n")
    seen = sorted(relative for _, relative, is_dir in walk(root) if not is_dir)
    assert seen == ["keep.log", "sub/b.log", "sub/top.txt"]


@given(st.text(max_size=30))
def test_any_pattern_compiles(pattern: str) -> None:
    re.compile(glob_to_regex(pattern))
    compile_glob(pattern)("a/b/c")


@given(
    st.text(alphabet=st.characters(blacklist_characters="*?[]{}/!^\\,"), min_size=1, max_size=20)
)
def test_a_pattern_without_wildcards_matches_only_itself(name: str) -> None:
    matches = compile_glob(name)
    assert matches(name) and matches(f"dir/{name}")
    assert not matches(name + "x")
