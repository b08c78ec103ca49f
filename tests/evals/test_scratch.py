"""The eval rows' scratch folders: reused only when empty, never shared by two running
rows, removed at the end; what one row leaves is never seen by the next."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.batch import LocalEngine
from skillkit.evals import parse_suite, run_eval
from skillkit.evals.scratch import ScratchFolders
from skillkit.models import LLMRequest, ToolResultMessage, UserMessage, message_text


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_an_empty_folder_is_reused_and_close_removes_every_folder(temp: Path) -> None:
    pool = ScratchFolders()

    async def rows() -> tuple[Path, Path, Path]:
        first = await pool.take_async()
        second = await pool.take_async()  # the first is still taken: a folder of its own
        await pool.give_back(first)
        third = await pool.take_async()
        await pool.give_back(second)
        await pool.give_back(third)
        return first, second, third

    first, second, third = asyncio.run(rows())
    assert first != second and third == first
    assert sorted(temp.iterdir()) == sorted([first, second])
    pool.close()
    assert list(temp.iterdir()) == []


def test_what_a_row_left_is_removed_before_the_folder_is_handed_out_again(temp: Path) -> None:
    pool = ScratchFolders()

    async def rows() -> Path:
        folder = await pool.take_async()
        (folder / ".hidden").write_text("x")
        nested = folder / "a" / "b"
        nested.mkdir(parents=True)
        (nested / "f").write_text("y")
        os.symlink("/etc", folder / "link")
        os.chmod(folder / "a", 0o500)  # a folder the row made read-only
        await pool.give_back(folder)
        again = await pool.take_async()
        assert again == folder
        return again

    folder = asyncio.run(rows())
    assert list(folder.iterdir()) == []
    assert Path("/etc").is_dir()  # the link was removed, not followed
    pool.close()


def test_a_folder_replaced_by_a_link_is_dropped_not_reused(temp: Path) -> None:
    pool = ScratchFolders()
    elsewhere = temp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("mine")

    async def rows() -> tuple[Path, Path]:
        folder = await pool.take_async()
        (folder / "junk").write_text("x")
        moved = folder.with_name(folder.name + "-moved")
        folder.rename(moved)
        folder.symlink_to(elsewhere)
        await pool.give_back(folder)
        return folder, await pool.take_async()

    folder, fresh = asyncio.run(rows())
    assert fresh != folder
    assert (elsewhere / "keep").read_text() == "mine"
    pool.close()


@tool
def write_note(text: str) -> str:
    """Write notes.txt in the workspace."""
    Path("notes.txt").write_text(text)
    return "written"


def test_a_later_row_never_sees_the_files_an_earlier_row_made(temp: Path) -> None:
    """One row at a time, so every row gets the folder the row before it used: the
    note the writing case leaves must be gone for the reading case."""

    def reply(request: LLMRequest) -> Reply:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            return Reply(text="done")
        prompt = next(message_text(m) for m in request.messages if isinstance(m, UserMessage))
        if prompt == "write":
            return Reply(tool_calls=[("write_note", {"text": "left behind"})])
        return Reply(text="nothing")

    def make_agent(model: str, workspace: Path, max_turns: int | None) -> AgentRunner:
        os.chdir(workspace)  # the tool writes relative to the working folder
        config = AgentConfig(model="scripted", max_iterations=4)
        return AgentRunner(config, adapter=FunctionAdapter(reply), tools=[write_note])

    suite = parse_suite(
        "name: isolation\n"
        "cases:\n"
        "  - {name: writes, prompt: write, expect: [{file: {path: notes.txt, exists: true}}]}\n"
        "  - {name: reads, prompt: read, expect: [{file: {path: notes.txt, exists: false}}]}\n"
        "  - {name: writes-again, prompt: write, "
        "expect: [{file: {path: notes.txt, contains: left}}]}\n"
        "  - {name: reads-again, prompt: read, "
        "expect: [{file: {path: notes.txt, exists: false}}]}\n"
    )
    before = Path.cwd()
    try:
        results = asyncio.run(
            run_eval(suite, make_agent, models=["m"], engine=LocalEngine(concurrency=1))
        )
    finally:
        os.chdir(before)
    assert [(c.case, c.passed) for c in results.cases] == [
        ("writes", 1),
        ("reads", 1),
        ("writes-again", 1),
        ("reads-again", 1),
    ]
    assert list(temp.iterdir()) == []  # run_eval removed its folders
