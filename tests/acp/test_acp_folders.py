"""The editor's additional workspace folders (``additionalDirectories`` of
``session/new``, ``session/load``, ``session/resume``, ``session/fork``): the file tools,
the permission gate and the sandbox treat them as the workspace. Driven by the
official SDK's client side against ``skillkit acp`` in a subprocess."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

from skillkit.acp.folders import FOLDERS_KIND, remember_folders, saved_folders
from skillkit.session import SessionStore
from tests.acp.conftest import Editor, allow, running

pytestmark = pytest.mark.timeout(90)


def write_into(path: Path) -> str:
    return f"""
replies:
  - tool_calls:
      - name: write
        arguments: {{path: "{path}", content: "from the agent\\n"}}
  - text: "Written."
"""


def shell_into(path: Path) -> str:
    return f"""
replies:
  - tool_calls:
      - name: bash
        arguments: {{command: "echo from bash > {path}"}}
  - text: "Done."
"""


@pytest.fixture
def other(tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    return folder.resolve()


async def test_initialize_says_additional_folders_are_taken(work: Path) -> None:
    async with running(work, write_into(work / "x")) as agent:
        answer = await agent.conn.initialize(protocol_version=1)
    sessions = answer.agent_capabilities.session_capabilities
    assert sessions is not None and sessions.additional_directories is not None


async def test_a_file_in_an_additional_folder_is_written_after_approval(
    work: Path, other: Path
) -> None:
    target = other / "note.txt"
    editor = Editor(answer=allow("allow"))
    async with running(work, write_into(target), editor=editor) as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        answer = await agent.conn.prompt(session_id=made.session_id, prompt=[text_block("go")])
    assert answer.stop_reason == "end_turn"
    assert target.read_text() == "from the agent\n"
    assert len(editor.permissions) == 1  # asked, as for a file of the workspace


async def test_without_the_folder_the_same_write_is_refused(work: Path, other: Path) -> None:
    target = other / "note.txt"
    editor = Editor(answer=allow("allow"))
    async with running(work, write_into(target), editor=editor) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert not target.exists()
    failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    assert failed and "outside the workspace" in str(failed[-1].content)


async def test_in_accept_edits_mode_the_additional_folder_counts_as_the_workspace(
    work: Path, other: Path
) -> None:
    target = other / "auto.txt"
    editor = Editor(answer=allow("reject"))
    async with running(
        work, write_into(target), "--permission-mode", "accept_edits", editor=editor
    ) as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        await agent.conn.prompt(session_id=made.session_id, prompt=[text_block("go")])
    assert target.read_text() == "from the agent\n"
    assert editor.permissions == []  # an edit in the workspace: not asked


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
async def test_an_approved_command_may_write_there_in_the_sandbox_and_only_then(
    work: Path, other: Path
) -> None:
    given, not_given = other / "given.txt", other / "not-given.txt"
    for target, extra in ((given, [str(other)]), (not_given, [])):
        editor = Editor(answer=allow("allow"))
        async with running(work, shell_into(target), "--sandbox", "on", editor=editor) as agent:
            await agent.conn.initialize(protocol_version=1)
            made = await agent.conn.new_session(
                cwd=str(work), additional_directories=extra, mcp_servers=[]
            )
            await agent.conn.prompt(session_id=made.session_id, prompt=[text_block("go")])
        assert len(editor.permissions) == 1  # approved both times
    assert given.read_text() == "from bash\n"
    assert not not_given.exists()  # not a folder of the session: the sandbox keeps it out


async def test_the_editor_is_asked_for_files_of_an_additional_folder(
    work: Path, other: Path
) -> None:
    target = other / "buffer.txt"
    editor = Editor(answer=allow("allow"))
    async with running(work, write_into(target), editor=editor) as agent:
        fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        await agent.conn.initialize(
            protocol_version=1, client_capabilities=ClientCapabilities(fs=fs)
        )
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        await agent.conn.prompt(session_id=made.session_id, prompt=[text_block("go")])
    assert editor.writes == [(str(target), "from the agent\n")]


@pytest.mark.parametrize(
    ("folders", "problem"),
    [(["relative/path"], "must be absolute"), (["/no/such/folder"], "is not a folder")],
)
async def test_a_bad_additional_folder_is_refused_and_the_connection_lives_on(
    work: Path, folders: list[str], problem: str
) -> None:
    async with running(work, write_into(work / "x")) as agent:
        await agent.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as refused:
            await agent.conn.new_session(
                cwd=str(work), additional_directories=folders, mcp_servers=[]
            )
        assert refused.value.code == -32602 and problem in str(refused.value)
        made = await agent.conn.new_session(cwd=str(work), mcp_servers=[])
        assert made.session_id


async def test_a_resumed_session_takes_the_folders_given_again_and_lists_them(
    work: Path, other: Path
) -> None:
    async with running(work, write_into(work / "x")) as agent:
        sid = await agent.session()
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        await agent.conn.close_session(session_id=sid)
        await agent.conn.resume_session(
            session_id=sid, cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        listed = await agent.conn.list_sessions(cwd=str(work))
        # none given: the session open now, as it is
        await agent.conn.resume_session(session_id=sid, cwd=str(work), mcp_servers=[])
        third = work.parent / "third"
        third.mkdir()
        with pytest.raises(RequestError) as refused:
            await agent.conn.resume_session(
                session_id=sid, cwd=str(work), additional_directories=[str(third)], mcp_servers=[]
            )
    [info] = [s for s in listed.sessions if s.session_id == sid]
    assert info.additional_directories == [str(other)]
    assert "open with other additional folders" in str(refused.value)


async def listed_folders(agent: Any, sid: str) -> list[str] | None:
    listed = await agent.conn.list_sessions(cwd=str(agent.work))
    [info] = [s for s in listed.sessions if s.session_id == sid]
    return info.additional_directories  # type: ignore[no-any-return]


@pytest.mark.parametrize("reopen", ["load", "resume"])
async def test_a_reopened_session_takes_its_saved_folders_when_none_are_given(
    work: Path, other: Path, reopen: str
) -> None:
    target = other / "note.txt"
    editor = Editor(answer=allow("allow"))
    async with running(work, write_into(target), editor=editor) as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        sid = made.session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        target.unlink()
        await agent.conn.close_session(session_id=sid)
        if reopen == "load":
            await agent.conn.load_session(session_id=sid, cwd=str(work), mcp_servers=[])
        else:
            await agent.conn.resume_session(session_id=sid, cwd=str(work), mcp_servers=[])
        assert await listed_folders(agent, sid) == [str(other)]
        # the same write again: allowed there only because the folder came back
        await agent.conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert target.read_text() == "from the agent\n"
        # a fork of it keeps them too
        forked = await agent.conn.fork_session(session_id=sid, cwd=str(work), mcp_servers=[])
        assert await listed_folders(agent, forked.session_id) == [str(other)]


async def test_a_saved_folder_that_is_gone_is_dropped_with_a_note(work: Path, other: Path) -> None:
    target = other / "note.txt"
    editor = Editor(answer=allow("allow"))
    async with running(work, write_into(target), editor=editor) as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        sid = made.session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        await agent.conn.close_session(session_id=sid)
        shutil.rmtree(other)
        await agent.conn.resume_session(session_id=sid, cwd=str(work), mcp_servers=[])
        assert await listed_folders(agent, sid) is None
    log = (work.parent / "stderr.log").read_text()
    assert f"the saved additional folder {other} is no longer a folder: dropped" in log


async def test_folders_given_again_replace_the_saved_ones(work: Path, other: Path) -> None:
    third = work.parent / "third"
    third.mkdir()
    async with running(work, write_into(work / "x")) as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(
            cwd=str(work), additional_directories=[str(other)], mcp_servers=[]
        )
        sid = made.session_id
        await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        await agent.conn.close_session(session_id=sid)
        await agent.conn.resume_session(
            session_id=sid, cwd=str(work), additional_directories=[str(third)], mcp_servers=[]
        )
        await agent.conn.close_session(session_id=sid)
        await agent.conn.resume_session(session_id=sid, cwd=str(work), mcp_servers=[])
        assert await listed_folders(agent, sid) == [str(third.resolve())]


def test_folders_are_written_once_and_checked_again_when_read(tmp_path: Path) -> None:
    store = SessionStore(home=tmp_path)
    session = store.create(tmp_path)
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    kept.mkdir()
    remember_folders(session, ())  # none, and none before: nothing written
    remember_folders(session, (kept, gone))
    remember_folders(session, (kept, gone))  # the same: not written again
    session.append_custom(FOLDERS_KIND, {"folders": [str(kept), "relative", 7, str(gone)]})
    saved = [e for e in session.entries if getattr(e, "kind", "") == FOLDERS_KIND]
    assert len(saved) == 2
    assert saved_folders(session, tmp_path) == (kept.resolve(),)
    remember_folders(session, ())  # none now: written, so none come back
    assert saved_folders(session, tmp_path) == ()
    session.close()
