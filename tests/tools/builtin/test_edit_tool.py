# ruff: noqa: ASYNC240 - tests read and write small files directly

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit.tools.base import ToolError
from skillkit.tools.builtin import EditTool, Workspace
from skillkit.tools.builtin.edit import EditOperation, apply_edits

from .conftest import Caller

SOURCE = """def greet(name):
    print("hello", name)

def part(name):
    print("bye", name)
    print("bye", name)
"""


@pytest.fixture
def source(root: Path) -> Path:
    path = root / "app.py"
    path.write_text(SOURCE)
    return path


def edit(old: str, new: str, **extra: object) -> dict[str, object]:
    return {"old_text": old, "new_text": new, **extra}


async def test_a_unique_match_is_replaced(root: Path, call: Caller, source: Path) -> None:
    result = await call(EditTool(Workspace(root)), path="app.py", edits=[edit('"hello"', '"hi"')])
    assert source.read_text() == SOURCE.replace('"hello"', '"hi"')
    assert result.output == "Edited app.py: 1 replacement (first change at line 2)."
    assert '-    print("hello", name)' in result.details["diff"]


async def test_a_missing_match_is_refused_and_nothing_changes(
    root: Path, call: Caller, source: Path
) -> None:
    with pytest.raises(ToolError) as failure:
        await call(EditTool(Workspace(root)), path="app.py", edits=[edit("goodbye", "x")])
    message = str(failure.value)
    assert message.startswith("No edits were applied.")
    assert "old_text was not found in app.py" in message
    assert "copy the text exactly" in message
    assert source.read_text() == SOURCE


async def test_a_match_differing_in_indentation_points_at_the_line(
    root: Path, call: Caller, source: Path
) -> None:
    with pytest.raises(ToolError, match="first line matches line 2 once indentation is ignored"):
        await call(
            EditTool(Workspace(root)),
            path="app.py",
            edits=[edit('print("hello", name)\n  ', "x")],
        )


async def test_a_non_unique_match_is_refused_with_its_lines(
    root: Path, call: Caller, source: Path
) -> None:
    with pytest.raises(ToolError) as failure:
        await call(
            EditTool(Workspace(root)), path="app.py", edits=[edit('print("bye", name)', "pass")]
        )
    message = str(failure.value)
    assert "occurs 2 times in app.py (at lines 5, 6)" in message
    assert "replace_all" in message
    assert source.read_text() == SOURCE


async def test_replace_all_replaces_every_occurrence(
    root: Path, call: Caller, source: Path
) -> None:
    result = await call(
        EditTool(Workspace(root)),
        path="app.py",
        edits=[edit('"bye"', '"ciao"', replace_all=True)],
    )
    assert source.read_text().count('"ciao"') == 2
    assert result.details["replacements"] == 2


async def test_several_edits_apply_together(root: Path, call: Caller, source: Path) -> None:
    await call(
        EditTool(Workspace(root)),
        path="app.py",
        edits=[edit("def greet", "def welcome"), edit("def part", "def leave")],
    )
    text = source.read_text()
    assert "def welcome(name)" in text and "def leave(name)" in text


async def test_one_bad_edit_among_several_applies_none_and_names_it(
    root: Path, call: Caller, source: Path
) -> None:
    with pytest.raises(ToolError) as failure:
        await call(
            EditTool(Workspace(root)),
            path="app.py",
            edits=[edit("def greet", "def welcome"), edit("missing", "x"), edit("name", "n")],
        )
    message = str(failure.value)
    assert "edits[1].old_text was not found" in message
    assert "edits[2].old_text occurs 5 times" in message
    assert "edits[0]" not in message
    assert source.read_text() == SOURCE


async def test_overlapping_edits_are_refused(root: Path, call: Caller, source: Path) -> None:
    with pytest.raises(ToolError, match=r"edits\[0\] and edits\[1\] overlap"):
        await call(
            EditTool(Workspace(root)),
            path="app.py",
            edits=[edit("def greet(name)", "x"), edit("greet(name):", "y")],
        )


async def test_an_edit_that_changes_nothing_is_refused(
    root: Path, call: Caller, source: Path
) -> None:
    with pytest.raises(ToolError, match="same as its new_text"):
        await call(EditTool(Workspace(root)), path="app.py", edits=[edit("def greet", "def greet")])


async def test_crlf_endings_and_a_bom_are_kept(root: Path, call: Caller) -> None:
    path = root / "dos.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    await call(EditTool(Workspace(root)), path="dos.txt", edits=[edit("one\ntwo", "1\n2")])
    assert path.read_bytes() == "\ufeff1\r\n2\r\nthree\r\n".encode()


async def test_editing_a_missing_file_points_to_write(root: Path, call: Caller) -> None:
    with pytest.raises(ToolError, match="use write to create it"):
        await call(EditTool(Workspace(root)), path="nope.txt", edits=[edit("a", "b")])


async def test_an_empty_old_text_or_no_edits_is_invalid_arguments(root: Path, call: Caller) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        await call(EditTool(Workspace(root)), path="app.py", edits=[edit("", "b")])
    with pytest.raises(ValidationError):
        await call(EditTool(Workspace(root)), path="app.py", edits=[])


@given(
    before=st.text(alphabet="abc\n ", max_size=30),
    needle=st.text(alphabet="XYZ", min_size=1, max_size=5),
    after=st.text(alphabet="abc\n ", max_size=30),
    new=st.text(max_size=10),
)
def test_a_unique_replacement_equals_str_replace(
    before: str, needle: str, after: str, new: str
) -> None:
    content = before + needle + after
    if new == needle:
        return
    updated, count = apply_edits(content, [EditOperation(old_text=needle, new_text=new)], "f")
    assert count == 1
    assert updated == content.replace(needle, new)
