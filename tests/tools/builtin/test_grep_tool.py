import sys
from pathlib import Path

import pytest

from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.tools.base import ToolError
from skillkit.tools.builtin import GrepTool, Workspace
from skillkit.tools.builtin.grep import find_ripgrep

from .conftest import Caller

ENGINES = [
    pytest.param(False, id="python"),
    pytest.param(
        True,
        id="ripgrep",
        marks=pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep is not installed"),
    ),
]


@pytest.fixture(params=ENGINES)
def grep(request: pytest.FixtureRequest, root: Path) -> GrepTool:
    return GrepTool(Workspace(root), OutputLimits(), BashRuntime(), use_ripgrep=request.param)


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "src/app.py").write_text("import os\n\ndef main():\n    return TODO\n")
    (root / "src/util.py").write_text("# todo: tidy\nx = 1\n")
    (root / "notes.md").write_text("TODO write docs\n")
    (root / ".hidden").mkdir()
    (root / ".hidden/secret.py").write_text("TODO hidden\n")
    (root / "build").mkdir()
    (root / "build/out.py").write_text("TODO generated\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "blob.bin").write_bytes(b"TODO\x00\x01")
    return root


async def test_matches_come_back_as_path_line_text(
    grep: GrepTool, call: Caller, tree: Path
) -> None:
    result = await call(grep, pattern="TODO")
    assert sorted(result.output.splitlines()) == [
        "notes.md:1:TODO write docs",
        "src/app.py:4:    return TODO",
    ]
    assert result.details["matches"] == 2


async def test_ignore_case_literal_and_glob(grep: GrepTool, call: Caller, tree: Path) -> None:
    found = await call(grep, pattern="todo", ignore_case=True, glob="*.py")
    assert sorted(found.output.splitlines()) == [
        "src/app.py:4:    return TODO",
        "src/util.py:1:# todo: tidy",
    ]
    literal = await call(grep, pattern="main()", literal=True)
    assert literal.output == "src/app.py:3:def main():"


async def test_hidden_files_are_searched_only_when_asked(
    grep: GrepTool, call: Caller, tree: Path
) -> None:
    result = await call(grep, pattern="hidden", hidden=True)
    assert result.output == ".hidden/secret.py:1:TODO hidden"


async def test_context_lines_and_group_separators(grep: GrepTool, call: Caller, root: Path) -> None:
    (root / "f.txt").write_text("a\nhit 1\nb\nc\nd\ne\nhit 2\nf\n")
    result = await call(grep, pattern="hit", context=1)
    assert result.output.splitlines() == [
        "f.txt-1-a",
        "f.txt:2:hit 1",
        "f.txt-3-b",
        "--",
        "f.txt-6-e",
        "f.txt:7:hit 2",
        "f.txt-8-f",
    ]


async def test_a_single_file_can_be_searched(grep: GrepTool, call: Caller, tree: Path) -> None:
    result = await call(grep, pattern="import", path="src/app.py")
    assert result.output == "src/app.py:1:import os"


async def test_the_match_limit_stops_the_search_and_says_so(
    grep: GrepTool, call: Caller, root: Path
) -> None:
    (root / "many.txt").write_text("".join(f"match {i}\n" for i in range(500)))
    result = await call(grep, pattern="match", limit=10)
    lines = result.output.splitlines()
    assert lines[:10] == [f"many.txt:{i + 1}:match {i}" for i in range(10)]
    assert lines[10] == "[stopped after 10 matches; narrow the search]"
    assert len(lines) == 11


async def test_no_match_is_a_plain_answer(grep: GrepTool, call: Caller, tree: Path) -> None:
    result = await call(grep, pattern="nothing-here")
    assert not result.is_error and result.output.startswith("No matches")


async def test_an_invalid_pattern_is_a_tool_error(grep: GrepTool, call: Caller, tree: Path) -> None:
    with pytest.raises(ToolError):
        await call(grep, pattern="(unclosed")


async def test_a_missing_path_is_a_tool_error(grep: GrepTool, call: Caller, tree: Path) -> None:
    with pytest.raises(ToolError, match="no such file"):
        await call(grep, pattern="x", path="missing")


def test_asking_for_ripgrep_without_it_is_an_error(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(root))
    monkeypatch.setattr(sys, "executable", str(root / "python"))
    with pytest.raises(ValueError, match="not installed"):
        GrepTool(Workspace(root), OutputLimits(), BashRuntime(), use_ripgrep=True)
