from pathlib import Path

import pytest

from skillkit.tools.base import ToolError
from skillkit.tools.builtin import Workspace, WriteTool

from .conftest import Caller


async def test_write_creates_parents_then_overwrites(root: Path, call: Caller) -> None:
    tool = WriteTool(Workspace(root))
    created = await call(tool, path="a/b/new.txt", content="héllo\n")
    assert created.output == "Created a/b/new.txt (7 bytes)"
    assert created.details["created"] is True
    assert (root / "a/b/new.txt").read_text() == "héllo\n"
    again = await call(tool, path="a/b/new.txt", content="bye")
    assert again.output.startswith("Overwrote") and again.details["created"] is False
    assert (root / "a/b/new.txt").read_text() == "bye"


async def test_writing_onto_a_directory_is_refused(root: Path, call: Caller) -> None:
    (root / "dir").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await call(WriteTool(Workspace(root)), path="dir", content="x")
