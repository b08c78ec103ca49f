"""``skillkit mcp serve`` driven by the official MCP client over stdio, as a subprocess,
with a scripted model: tools with their schemas, an action (structured result), the
gate (an action it would ask for is denied; an allowed one runs), ``run_task`` with
progress, a cancelled ``run_task``, and the skills' files as resources."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ECHO = "import json, sys; print(json.dumps(sys.argv[1:]))"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    skill = project / ".agents" / "skills" / "kit"
    skill.mkdir(parents=True)
    py = json.dumps(sys.executable)
    (skill / "SKILL.md").write_text(
        "---\nname: kit\ndescription: Test kit.\nmetadata:\n  skillkit:\n    actions:\n"
        "      echo:\n"
        "        description: Print the arguments as JSON\n"
        "        params:\n"
        "          text: {type: string, description: Any text}\n"
        "          count: {type: integer, default: 1, flag: --count}\n"
        f"        command: [{py}, -c, {json.dumps(ECHO)}, '{{text}}']\n"
        "---\nBody of the kit.\n"
    )
    (skill / "notes.txt").write_text("kit notes\n")
    return project


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(text)
    return path


@asynccontextmanager
async def served(
    tmp_path: Path,
    script: str,
    *extra: str,
    start_in: Path | None = None,
    elicitation: Any = None,
    mode: str = "auto",
    extensions: Any = None,
    save_session: bool = False,
) -> AsyncIterator[Any]:
    """``save_session``: the server saves its session under ``tmp_path/home`` (read it
    with `saved_entries`); by default it saves none."""
    from mcp.client.stdio import stdio_client

    from mcp import Client, StdioServerParameters

    project = _project(tmp_path)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    model = f"scripted:{_script(tmp_path, script)}"
    env = {
        **os.environ,
        "HOME": str(home),
        "SKILLKIT_TRUST_PROJECT": "1",
        "PYTHONPATH": str(SRC),
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "import sys; from skillkit.cli import main; sys.exit(main())",
            "mcp",
            "serve",
            "--model",
            model,
            *(() if save_session else ("--no-session",)),
            *extra,
        ],
        env=env,
        cwd=str(start_in or project),
    )
    errlog = (tmp_path / "stderr.txt").open("w")
    try:
        client_options: dict[str, Any] = {"mode": mode}
        if elicitation is not None:
            client_options["elicitation_callback"] = elicitation
        if extensions is not None:
            client_options["extensions"] = extensions
        async with Client(stdio_client(params, errlog=errlog), **client_options) as client:
            yield client
    finally:
        errlog.close()


HELLO = "replies:\n  - text: 'Hello from the task.'\ncycle: true\n"


async def test_lists_actions_with_schemas_and_calls_one(tmp_path: Path) -> None:
    async with served(tmp_path, HELLO, "--allow", "kit__echo") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"kit__echo", "run_task"}
        schema = tools["kit__echo"].input_schema
        assert schema["type"] == "object"
        assert schema["properties"]["text"]["type"] == "string"
        assert schema["properties"]["count"]["type"] == "integer"
        assert "text" in schema["required"]
        assert tools["kit__echo"].output_schema is not None
        assert tools["run_task"].input_schema["required"] == ["prompt"]

        result = await client.call_tool("kit__echo", {"text": "a b"})
        assert result.is_error is False
        assert result.structured_content["exit_code"] == 0
        assert json.loads(result.structured_content["stdout"]) == ["a b", "--count", "1"]
        assert result.structured_content["action"] == "echo"

        bad = await client.call_tool("kit__echo", {"count": "many"})
        assert bad.is_error is True


async def test_an_action_the_gate_would_ask_for_is_denied(tmp_path: Path) -> None:
    async with served(tmp_path, HELLO) as client:
        result = await client.call_tool("kit__echo", {"text": "x"})
        assert result.is_error is True
        text = result.content[0].text
        assert "approval" in text and "kit__echo" in text
        assert result.structured_content is None


async def test_a_denied_action_by_rule(tmp_path: Path) -> None:
    async with served(tmp_path, HELLO, "--deny", "kit__echo") as client:
        result = await client.call_tool("kit__echo", {"text": "x"})
        assert result.is_error is True
        assert "denied" in result.content[0].text.lower()


async def test_run_task_answers_with_usage_and_progress(tmp_path: Path) -> None:
    steps: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        steps.append((value, message))

    async with served(tmp_path, HELLO) as client:
        result = await client.call_tool(
            "run_task", {"prompt": "say hello"}, progress_callback=progress
        )
        assert result.is_error is False
        data = result.structured_content
        assert data["answer"] == "Hello from the task."
        assert data["stop_reason"]
        assert isinstance(data["usage"], dict)
        assert result.content[0].text == "Hello from the task."
    assert steps, "no progress notification arrived"
    assert [v for v, _ in steps] == sorted(v for v, _ in steps)
    assert any(m and m.startswith("turn_start") for _, m in steps)


COUNTED = (
    "one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one"
)
# about 5 s for the whole reply: 17 chunks of 8 characters, 0.3 s before each
SLOW = f"replies:\n  - delay: 0.3\n    text: '{COUNTED}'\ncycle: true\n"


def saved_conversation(tmp_path: Path) -> list[Any]:
    """The messages of the session a server started with ``save_session=True`` saved
    (its current branch, oldest first)."""
    from skillkit.session import SessionStore

    store = SessionStore(tmp_path / "home")
    info = store.latest(tmp_path / "project")
    assert info is not None, "the server saved no session"
    return list(store.open(info.id, write=False).context())


def assert_first_run_was_aborted(tmp_path: Path) -> None:
    """The saved session of a server whose ``run_task("count")`` was cancelled, then
    ``run_task("again")`` ran: the first run kept no finished reply (only an aborted
    one, if any) — a run left going would have saved its whole answer before
    ``again`` — and the second answered in full."""
    from skillkit.models import AssistantMessage, UserMessage

    messages = saved_conversation(tmp_path)
    prompts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    assert [messages[i].content for i in prompts] == ["count", "again"]
    between = messages[prompts[0] + 1 : prompts[1]]
    assert all(isinstance(m, AssistantMessage) for m in between)
    assert [m.stop_reason for m in between if m.stop_reason != "aborted"] == []
    last = messages[-1]
    assert isinstance(last, AssistantMessage)
    assert (last.stop_reason, last.text) == ("stop", COUNTED)


async def test_run_task_is_cancelled(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with served(tmp_path, SLOW, save_session=True) as client:
        call = asyncio.create_task(
            client.call_tool("run_task", {"prompt": "count"}, progress_callback=progress)
        )
        await asyncio.wait_for(started.wait(), 30)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the session takes the next task once the cancelled run has let go of it
        for _ in range(200):  # polled for up to 20 s
            result = await client.call_tool("run_task", {"prompt": "again"})
            if not (result.is_error and "busy" in result.content[0].text):
                break
            await asyncio.sleep(0.1)
        assert result.is_error is False
        assert result.structured_content["answer"] == COUNTED
    assert_first_run_was_aborted(tmp_path)


async def test_skill_files_are_resources(tmp_path: Path) -> None:
    async with served(tmp_path, HELLO) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        assert set(resources) == {"skill://kit/SKILL.md", "skill://kit/notes.txt"}
        read = await client.read_resource("skill://kit/notes.txt")
        assert read.contents[0].text == "kit notes\n"
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError):
            await client.read_resource("skill://kit/../../etc/passwd")


async def test_cwd_names_the_project(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project = tmp_path / "project"
    async with served(tmp_path, HELLO, "--cwd", str(project), start_in=elsewhere) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {"kit__echo", "run_task"}


def _answering(approve: bool | None, asked: list[str]) -> Any:
    import mcp_types as types

    async def answer(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if approve is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": approve})

    return answer


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_asked_action_is_put_to_the_user_through_elicitation(
    tmp_path: Path, mode: str
) -> None:
    """2026-07-28 (auto): an input-required round trip; legacy: elicitation/create."""
    asked: list[str] = []
    async with served(tmp_path, HELLO, elicitation=_answering(True, asked), mode=mode) as client:
        result = await client.call_tool("kit__echo", {"text": "yes"})
        assert result.is_error is False, result.content[0].text
        assert json.loads(result.structured_content["stdout"]) == ["yes", "--count", "1"]
    assert len(asked) == 1 and "kit__echo" in asked[0] and '"yes"' in asked[0]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("approve", [False, None])
async def test_a_refusal_through_elicitation_denies(
    tmp_path: Path, approve: bool | None, mode: str
) -> None:
    asked: list[str] = []
    answer = _answering(approve, asked)
    async with served(tmp_path, HELLO, elicitation=answer, mode=mode) as client:
        result = await client.call_tool("kit__echo", {"text": "no"})
        assert result.is_error is True
        assert "denied by the user" in result.content[0].text
    assert len(asked) == 1


async def test_an_allowed_action_is_not_asked(tmp_path: Path) -> None:
    asked: list[str] = []
    served_with = served(
        tmp_path, HELLO, "--allow", "kit__echo", elicitation=_answering(False, asked)
    )
    async with served_with as client:
        result = await client.call_tool("kit__echo", {"text": "x"})
        assert result.is_error is False
    assert asked == []


WRITE = (
    "replies:\n"
    "  - tool_calls:\n"
    "      - name: write\n"
    "        arguments: {path: made.txt, content: hi}\n"
    "  - text: 'I was not allowed to write.'\n"
)


async def test_run_task_approvals_are_denied(tmp_path: Path) -> None:
    async with served(tmp_path, WRITE) as client:
        result = await asyncio.wait_for(client.call_tool("run_task", {"prompt": "write"}), 60)
        assert result.structured_content["answer"] == "I was not allowed to write."
    assert not (tmp_path / "project" / "made.txt").exists()


async def test_skills_are_prompts(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async with served(tmp_path, HELLO) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"kit"}
        assert prompts["kit"].description == "Test kit."
        got = await client.get_prompt("kit", {"arguments": "echo twice"})
        text = got.messages[0].content.text
        assert got.messages[0].role == "user"
        assert "Body of the kit." in text and "echo twice" in text
        with pytest.raises(MCPError):
            await client.get_prompt("nope", {})
