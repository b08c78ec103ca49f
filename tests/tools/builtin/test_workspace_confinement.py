import os
from pathlib import Path

import pytest

from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.tools.base import ToolError
from skillkit.tools.builtin import (
    EditTool,
    FindTool,
    GrepTool,
    LsTool,
    ReadTool,
    Workspace,
    WriteTool,
    builtin_tools,
)

from .conftest import Caller


@pytest.fixture
def outside(root: Path) -> Path:
    """A directory next to the workspace holding a secret."""
    secret_dir = root.parent / "outside"
    secret_dir.mkdir()
    (secret_dir / "secret.txt").write_text("top secret\n")
    return secret_dir


def test_relative_paths_resolve_inside_the_root(root: Path) -> None:
    space = Workspace(root)
    assert space.resolve("a/b.txt") == root / "a/b.txt"
    assert space.resolve("./a/../c.txt") == root / "c.txt"
    assert space.resolve(str(root / "x")) == root / "x"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "a/../../outside"])
def test_paths_outside_the_root_are_refused(root: Path, outside: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        Workspace(root).resolve(path)


def test_a_symlink_escape_is_refused(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "door")
    os.symlink(outside / "secret.txt", root / "innocent.txt")
    os.symlink(outside / "not-yet.txt", root / "dangling.txt")
    space = Workspace(root)
    for path in ("door/secret.txt", "innocent.txt", "dangling.txt", "door"):
        with pytest.raises(ToolError, match="outside the workspace"):
            space.resolve(path)


def test_a_symlink_inside_the_root_is_allowed(root: Path) -> None:
    (root / "real.txt").write_text("x")
    os.symlink(root / "real.txt", root / "alias.txt")
    assert Workspace(root).resolve("alias.txt") == root / "real.txt"


def test_a_symlink_loop_is_a_clear_error(root: Path) -> None:
    os.symlink(root / "b", root / "a")
    os.symlink(root / "a", root / "b")
    with pytest.raises(ToolError, match="cannot resolve"):
        Workspace(root).resolve("a/x")


def test_without_confinement_any_path_is_allowed(root: Path, outside: Path) -> None:
    assert Workspace(root, confine=False).resolve("../outside/secret.txt") == outside / "secret.txt"
    assert Workspace(None, confine=False).resolve(str(outside)) == outside


async def test_every_file_tool_refuses_the_symlink_escape(
    root: Path, outside: Path, call: Caller
) -> None:
    os.symlink(outside, root / "door")
    space = Workspace(root)
    limits = OutputLimits()
    attempts = [
        (ReadTool(space, limits), {"path": "door/secret.txt"}),
        (WriteTool(space), {"path": "door/new.txt", "content": "x"}),
        (
            EditTool(space),
            {"path": "door/secret.txt", "edits": [{"old_text": "top", "new_text": "no"}]},
        ),
        (LsTool(space, limits), {"path": "door"}),
        (FindTool(space, limits), {"pattern": "*", "path": "door"}),
        (
            GrepTool(space, limits, BashRuntime(), use_ripgrep=False),
            {"pattern": "secret", "path": "door"},
        ),
    ]
    for tool, arguments in attempts:
        with pytest.raises(ToolError, match="outside the workspace"):
            await call(tool, **arguments)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "new.txt").exists()


async def test_recursive_tools_do_not_follow_symlinks_out(
    root: Path, outside: Path, call: Caller
) -> None:
    os.symlink(outside, root / "door")
    (root / "mine.txt").write_text("secret of mine\n")
    tools = {t.name: t for t in builtin_tools(root, allow_writes=False)}
    grep = await call(
        GrepTool(Workspace(root), OutputLimits(), BashRuntime(), use_ripgrep=False),
        pattern="secret",
    )
    assert grep.output == "mine.txt:1:secret of mine"
    found = await call(tools["find"], pattern="*.txt")
    assert found.output == "mine.txt"


def test_further_roots_are_allowed_and_everything_else_stays_refused(
    root: Path, outside: Path
) -> None:
    shared = root.parent / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("shared\n")
    os.symlink(outside, shared / "door")
    space = Workspace(root, extra_roots=(shared,))
    assert space.resolve(str(shared / "notes.txt")) == shared / "notes.txt"
    assert space.resolve("../shared/notes.txt") == shared / "notes.txt"  # from the base
    assert space.allows(shared / "notes.txt")
    for path in (str(outside / "secret.txt"), str(shared / "door" / "secret.txt")):
        with pytest.raises(ToolError, match="outside the workspace"):
            space.resolve(path)
    space.add_roots([outside])
    assert space.resolve(str(outside / "secret.txt")) == outside / "secret.txt"
