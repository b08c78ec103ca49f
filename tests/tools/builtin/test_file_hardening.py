"""The file tools hold up against hostile files and patterns: a catastrophic regular
expression, a 2 GiB one-line file, FIFOs, symlinks swapped in after the check, hard
links to files outside, and a workspace nobody named."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from skillkit.runtime import BashRuntime, OutputLimits
from skillkit.tools.base import ToolContext, ToolError
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
from skillkit.tools.builtin.grep import find_ripgrep
from skillkit.tools.builtin.read import ReadArgs
from skillkit.tools.builtin.write import WriteArgs

from .conftest import Caller

pytestmark = pytest.mark.timeout(120)

CATASTROPHIC = r"^(a+)+$"
VICTIM = "a" * 40 + "!\n"


# --------------------------------------------------------------------------- ReDoS


async def test_a_catastrophic_pattern_ends_as_an_error_and_the_loop_keeps_running(
    root: Path, call: Caller
) -> None:
    (root / "victim.txt").write_text(VICTIM)
    grep = GrepTool(Workspace(root), OutputLimits(), BashRuntime(), use_ripgrep=False, timeout=2)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    beat = asyncio.ensure_future(ticker())
    try:
        with pytest.raises(ToolError, match="too slow"):
            await asyncio.wait_for(call(grep, pattern=CATASTROPHIC), 60)
    finally:
        beat.cancel()
    assert ticks > 3  # the event loop ran other work while the search was stuck


async def test_abort_stops_a_stuck_search(root: Path, call: Caller) -> None:
    (root / "victim.txt").write_text(VICTIM)
    grep = GrepTool(Workspace(root), OutputLimits(), BashRuntime(), use_ripgrep=False)
    asyncio.get_running_loop().call_later(0.5, call.abort.abort)
    with pytest.raises(ToolError, match="aborted"):
        await asyncio.wait_for(call(grep, pattern=CATASTROPHIC), 60)


@pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep is not installed")
async def test_ripgrep_is_found_and_answers_the_same_pattern(root: Path, call: Caller) -> None:
    (root / "victim.txt").write_text(VICTIM + "aaaa\n")
    grep = GrepTool(Workspace(root), OutputLimits(), BashRuntime())
    assert grep.ripgrep is not None
    result = await asyncio.wait_for(call(grep, pattern=CATASTROPHIC), 60)
    assert result.output == "victim.txt:2:aaaa"


# --------------------------------------------------------------------------- bounded reading

# VmHWM is the peak resident size of this process image only (ru_maxrss would carry the
# parent's peak across fork and exec).
MEASURE = """
import asyncio, sys
from pathlib import Path
from skillkit.runtime import OutputLimits
from skillkit.tools.base import ToolContext
from skillkit.tools.builtin import ReadTool, Workspace
from skillkit.tools.builtin.read import ReadArgs

root = Path(sys.argv[1])
tool = ReadTool(Workspace(root), OutputLimits())
result = asyncio.run(tool.execute(ReadArgs(path="huge.txt"), ToolContext("c", "read")))
status = Path("/proc/self/status").read_text()
peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
print(len(result.output), peak)
print(result.output[-160:])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_reading_a_2_gib_one_line_file_stays_small(root: Path) -> None:
    huge = root / "huge.txt"
    with huge.open("wb") as out:
        out.write(b"x" * 10_000)
        out.truncate(2 * 1024**3)  # sparse: the rest of the one line is zero bytes
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(root)],
        capture_output=True,
        text=True,
        timeout=110,
        check=True,
    )
    sizes, tail = done.stdout.split("\n", 1)
    length, max_rss_kib = (int(n) for n in sizes.split())
    assert length < 3000  # one line of at most 2000 characters, plus the note
    assert "[... line cut: more than" in tail and "nothing after it was read" in tail
    assert max_rss_kib < 300 * 1024  # far below the file's 2 GiB


async def test_a_long_file_is_read_a_window_at_a_time(root: Path, call: Caller) -> None:
    (root / "many.txt").write_text("".join(f"{i}\n" for i in range(200_000)))
    result = await call(ReadTool(Workspace(root), OutputLimits(max_lines=10)), path="many.txt")
    assert result.output.endswith("[Showing lines 1-10 of 200000. Use offset=11 to continue.]")


# --------------------------------------------------------------------------- FIFOs


@pytest.fixture
def fifo(root: Path) -> Path:
    (root / "a.txt").write_text("needle\n")
    path = root / "pipe"
    os.mkfifo(path)
    return path


async def test_readers_refuse_or_skip_a_fifo_without_waiting(
    root: Path, call: Caller, fifo: Path
) -> None:
    limits = OutputLimits()
    space = Workspace(root)
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(call(ReadTool(space, limits), path="pipe"), 10)
    for use_ripgrep in (False, None) if find_ripgrep() else (False,):
        grep = GrepTool(space, limits, BashRuntime(), use_ripgrep=use_ripgrep)
        found = await asyncio.wait_for(call(grep, pattern="needle"), 30)
        assert found.output == "a.txt:1:needle"
        with pytest.raises(ToolError, match="not a regular file"):
            await asyncio.wait_for(call(grep, pattern="x", path="pipe"), 10)
    listed = await asyncio.wait_for(call(LsTool(space, limits), path="."), 10)
    assert "pipe" in listed.output
    found = await asyncio.wait_for(call(FindTool(space, limits), pattern="*"), 10)
    assert "pipe" in found.output


async def test_writers_refuse_a_fifo_without_waiting(root: Path, call: Caller, fifo: Path) -> None:
    space = Workspace(root)
    with pytest.raises(ToolError, match="regular file"):
        await asyncio.wait_for(call(WriteTool(space), path="pipe", content="x"), 10)
    edit = [{"old_text": "a", "new_text": "b"}]
    with pytest.raises(ToolError, match="regular file"):
        await asyncio.wait_for(call(EditTool(space), path="pipe", edits=edit), 10)


# --------------------------------------------------------------------------- symlink swaps


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def test_a_directory_swapped_for_a_symlink_after_resolving_is_refused(
    root: Path, outside: Path
) -> None:
    space = Workspace(root)
    tool = WriteTool(space)
    (root / "sub").mkdir()
    real = space.resolve("sub/f.txt")
    (root / "sub").rename(root / "sub-away")
    os.symlink(outside, root / "sub")
    with pytest.raises(ToolError, match="symlink"):
        tool._write(WriteArgs(path="sub/f.txt", content="pwned"), real)
    assert list(outside.iterdir()) == []


def test_a_file_swapped_for_a_symlink_after_resolving_is_refused(root: Path, outside: Path) -> None:
    space = Workspace(root)
    target = outside / "bashrc"
    target.write_text("original\n")
    real = space.resolve("f.txt")
    os.symlink(target, root / "f.txt")
    with pytest.raises(ToolError, match="symlink"):
        WriteTool(space)._write(WriteArgs(path="f.txt", content="pwned"), real)
    with pytest.raises(ToolError, match="symlink"):
        ReadTool(space, OutputLimits())._read(ReadArgs(path="f.txt"), real)
    assert target.read_text() == "original\n"


async def test_racing_symlink_swaps_never_let_a_write_escape(
    root: Path, outside: Path, call: Caller
) -> None:
    """A thread keeps atomically replacing ``f.txt`` with a symlink to a file outside
    and back while 300 writes go to ``f.txt``; whatever happens to each write, the
    file outside is never written."""
    target = outside / "bashrc"
    target.write_text("original\n")
    tool = WriteTool(Workspace(root))
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.symlink(target, root / "link.tmp")
            os.replace(root / "link.tmp", root / "f.txt")
            (root / "file.tmp").write_text("inside\n")
            os.replace(root / "file.tmp", root / "f.txt")

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    try:
        for _ in range(300):
            try:
                await call(tool, path="f.txt", content="pwned\n")
            except ToolError:
                pass
    finally:
        stop.set()
        flipper.join(10)
    assert target.read_text() == "original\n"


# --------------------------------------------------------------------------- hard links


async def test_writes_through_a_hard_link_to_an_outside_file_are_refused(
    root: Path, outside: Path, call: Caller
) -> None:
    target = outside / "profile"
    target.write_text("original\n")
    os.link(target, root / "link.txt")
    space = Workspace(root)
    with pytest.raises(ToolError, match="hard links"):
        await call(WriteTool(space), path="link.txt", content="pwned")
    edit = [{"old_text": "original", "new_text": "pwned"}]
    with pytest.raises(ToolError, match="hard links"):
        await call(EditTool(space), path="link.txt", edits=edit)
    assert target.read_text() == "original\n"
    unconfined = Workspace(root, confine=False)
    await call(WriteTool(unconfined), path="link.txt", content="mine\n")
    assert target.read_text() == "mine\n"


# --------------------------------------------------------------------------- default workspace


async def test_builtin_tools_without_a_workspace_are_confined_to_the_current_directory(
    root: Path, outside: Path, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    (outside / "secret.txt").write_text("secret\n")
    (root / "mine.txt").write_text("mine\n")
    monkeypatch.chdir(root)
    read = next(t for t in builtin_tools(None, allow_writes=False) if t.name == "read")
    assert (await call(read, path="mine.txt")).output == "mine"
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(read, path=str(outside / "secret.txt"))
    opted_out = next(
        t for t in builtin_tools(None, allow_writes=False, confine=False) if t.name == "read"
    )
    assert (await call(opted_out, path=str(outside / "secret.txt"))).output == "secret"


async def test_a_tool_context_is_all_a_read_needs(root: Path) -> None:
    (root / "x.txt").write_text("x\n")
    tool = ReadTool(Workspace(root), OutputLimits())
    result = await tool.execute(ReadArgs(path="x.txt"), ToolContext("c", "read"))
    assert result.output == "x"


async def test_a_fifo_named_gitignore_does_not_wedge_a_search(root: Path, call: Caller) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("needle\n")
    os.mkfifo(root / "sub" / ".gitignore")
    space = Workspace(root)
    grep = GrepTool(space, OutputLimits(), BashRuntime(), use_ripgrep=False)
    found = await asyncio.wait_for(call(grep, pattern="needle"), 30)
    assert found.output == "sub/a.txt:1:needle"
    if find_ripgrep() is not None:  # ripgrep waits on the FIFO: the time limit ends it
        ripgrep = GrepTool(space, OutputLimits(), BashRuntime(), timeout=1)
        with pytest.raises(ToolError, match="stopped after 1 s"):
            await asyncio.wait_for(call(ripgrep, pattern="needle"), 30)
    listed = await asyncio.wait_for(call(FindTool(space, OutputLimits()), pattern="*.txt"), 30)
    assert listed.output == "sub/a.txt"


async def test_without_openat_files_are_still_checked_before_use(
    root: Path, call: Caller, fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "supports_dir_fd", set())
    space = Workspace(root)
    await call(WriteTool(space), path="new/dir/x.txt", content="hello\n")
    assert (await call(ReadTool(space, OutputLimits()), path="new/dir/x.txt")).output == "hello"
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(call(ReadTool(space, OutputLimits()), path="pipe"), 10)
