import base64
from pathlib import Path

import pytest

from skillkit.models import ImagePart, TextPart
from skillkit.runtime import OutputLimits
from skillkit.tools.base import ToolError
from skillkit.tools.builtin import ReadTool, Workspace

from .conftest import Caller

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def make(root: Path, **limits: int) -> ReadTool:
    return ReadTool(Workspace(root), OutputLimits(**limits))


@pytest.fixture
def numbered(root: Path) -> Path:
    path = root / "numbers.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 51)))
    return path


async def test_a_small_file_is_returned_whole(root: Path, call: Caller, numbered: Path) -> None:
    result = await call(make(root), path="numbers.txt")
    assert result.output == "\n".join(f"line {i}" for i in range(1, 51))
    assert result.details["total_lines"] == 50 and not result.is_error


async def test_offset_and_limit_select_lines_and_hint_the_continuation(
    root: Path, call: Caller, numbered: Path
) -> None:
    result = await call(make(root), path="numbers.txt", offset=10, limit=5)
    body, hint = result.output.split("\n\n")
    assert body.splitlines() == [f"line {i}" for i in range(10, 15)]
    assert hint == "[Showing lines 10-14 of 50. Use offset=15 to continue.]"


async def test_the_line_limit_cuts_with_a_hint(root: Path, call: Caller, numbered: Path) -> None:
    result = await call(make(root, max_lines=20), path="numbers.txt")
    assert result.output.endswith("[Showing lines 1-20 of 50. Use offset=21 to continue.]")


async def test_the_character_limit_cuts_at_a_whole_line(
    root: Path, call: Caller, numbered: Path
) -> None:
    result = await call(make(root, max_chars=30), path="numbers.txt")
    body = result.output.split("\n\n")[0]
    assert body.splitlines() == ["line 1", "line 2", "line 3", "line 4"]
    assert "Use offset=5 to continue" in result.output


async def test_a_very_long_line_is_cut_and_says_so(root: Path, call: Caller) -> None:
    (root / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    result = await call(make(root, max_line_chars=100), path="wide.txt")
    first, second = result.output.splitlines()
    assert first == "x" * 100 + " [... 4900 more characters in this line]"
    assert second == "short"


async def test_an_offset_past_the_end_is_an_error(root: Path, call: Caller, numbered: Path) -> None:
    with pytest.raises(ToolError, match=r"past the end of numbers.txt \(50 lines\)"):
        await call(make(root), path="numbers.txt", offset=51)


async def test_images_come_back_as_image_parts(root: Path, call: Caller) -> None:
    (root / "dot.png").write_bytes(PNG)
    result = await call(make(root), path="dot.png")
    text, image = result.content
    assert isinstance(text, TextPart) and "image/png" in text.text
    assert isinstance(image, ImagePart) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG


async def test_binary_files_directories_and_missing_files_are_clear_errors(
    root: Path, call: Caller
) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    (root / "sub").mkdir()
    with pytest.raises(ToolError, match="binary"):
        await call(make(root), path="blob.bin")
    with pytest.raises(ToolError, match="is a directory"):
        await call(make(root), path="sub")
    with pytest.raises(ToolError, match="no such file"):
        await call(make(root), path="nope.txt")


async def test_an_empty_file_says_so(root: Path, call: Caller) -> None:
    (root / "empty.txt").write_text("")
    assert (await call(make(root), path="empty.txt")).output == "(empty file)"


async def test_crlf_line_endings_are_not_shown(root: Path, call: Caller) -> None:
    (root / "dos.txt").write_bytes(b"a\r\nb\r\n")
    assert (await call(make(root), path="dos.txt")).output == "a\nb"
