"""The editor's additional workspace folders (``additionalDirectories`` of
``session/new``, ``session/load``, ``session/resume``, ``session/fork``): the file tools,
the permission gate and the sandbox treat them as the workspace. Driven by the
official SDK's client side against ``skillkit acp`` in a subprocess."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

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
        with pytest.raises(RequestError) as refused:
            await agent.conn.resume_session(session_id=sid, cwd=str(work), mcp_servers=[])
    [info] = [s for s in listed.sessions if s.session_id == sid]
    assert info.additional_directories == [str(other)]
    assert "open with other additional folders" in str(refused.value)
