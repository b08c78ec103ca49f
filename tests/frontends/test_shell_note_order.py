"""The user's own ``!command`` is filed where it ran: in the transcript and the session
file as soon as it ends, before the next prompt — and the model reads it in that order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.anthropic import AnthropicAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.context.transcript import SHELL_NOTE_PREFIX, typed_text
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.shell_command import ShellOutcome, UserShell, shell_note
from skillkit.models import (
    AgentMessage,
    AssistantMessage,
    LLMRequest,
    TextPart,
    UserMessage,
    message_text,
)
from skillkit.session import Session, SessionStore
from skillkit.session.format import MessageEntry
from skillkit.tools.builtin import builtin_tools

pytestmark = pytest.mark.timeout(30)


def recorded_agent(
    tmp_path: Path, replies: list[Reply], **config: Any
) -> tuple[AgentSession, ScriptedAdapter, Session, SessionStore]:
    """An agent recording into a session file, with a ``bash`` tool and no permission
    layer (nothing asks: the commands here only echo)."""
    store = SessionStore(tmp_path / "home")
    recorded = store.create(tmp_path)
    adapter = ScriptedAdapter(replies)
    runner = AgentRunner(
        AgentConfig(model="scripted", **config),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
        contributors=[recorded],
    )
    return AgentSession(runner, session=recorded, store=store), adapter, recorded, store


def user_texts(messages: list[AgentMessage]) -> list[str]:
    return [message_text(m) for m in messages if isinstance(m, UserMessage)]


def file_order(store: SessionStore, session_id: str) -> list[str]:
    """The texts of the user messages in the session file, in file order."""
    snapshot = store.open(session_id, write=False)
    return [
        message_text(entry.message)
        for entry in snapshot.entries
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)
    ]


async def test_the_note_is_in_the_session_file_when_the_command_ends(tmp_path: Path) -> None:
    agent, _, recorded, store = recorded_agent(tmp_path, [])
    outcome = await agent.bash("echo shell-out")
    assert outcome["ran"] is True and "shell-out" in str(outcome["output"])
    # no prompt yet: the file already holds it, so a resume (-c) right now shows it
    texts = file_order(store, recorded.id)
    assert len(texts) == 1 and texts[0].startswith(SHELL_NOTE_PREFIX)
    assert "$ echo shell-out" in texts[0] and "shell-out\n</output>" in texts[0]
    assert typed_text(texts[0]) == "!echo shell-out"
    assert user_texts(agent.messages) == texts
    await agent.aclose()
    # reopened (as -c does), the conversation holds the note
    reopened = store.open(recorded.id, write=False)
    assert user_texts(reopened.context()) == texts
    # listed (-r, sessions list, the web page's side list) by what the user typed
    (info,) = store.list(tmp_path)
    assert info.first_message == info.title == "!echo shell-out"


async def test_command_then_prompt_files_and_sends_them_in_that_order(tmp_path: Path) -> None:
    agent, adapter, recorded, store = recorded_agent(tmp_path, [Reply(text="It said shell-out.")])
    await agent.bash("echo shell-out")
    response = await agent.run("what did it say?")
    assert response.text == "It said shell-out."
    sent = user_texts(adapter.requests[0].messages)
    assert len(sent) == 2
    assert sent[0].startswith(SHELL_NOTE_PREFIX) and "shell-out" in sent[0]
    assert sent[1] == "what did it say?"
    texts = file_order(store, recorded.id)
    assert texts == sent  # the file, the transcript and the request agree
    assert user_texts(agent.messages) == sent
    assert isinstance(agent.messages[-1], AssistantMessage)
    await agent.aclose()


async def test_two_commands_between_answers_keep_their_order(tmp_path: Path) -> None:
    agent, adapter, recorded, store = recorded_agent(
        tmp_path, [Reply(text="First."), Reply(text="Second.")]
    )
    await agent.run("hello")
    await agent.bash("echo one")
    await agent.bash("echo two")
    await agent.run("and now?")
    sent = user_texts(adapter.requests[1].messages)
    assert sent[0] == "hello"
    assert typed_text(sent[1]) == "!echo one" and typed_text(sent[2]) == "!echo two"
    assert sent[3] == "and now?"
    assert file_order(store, recorded.id) == sent
    await agent.aclose()


async def test_input_guardrails_judge_the_prompt_not_the_note(tmp_path: Path) -> None:
    judged: list[Any] = []

    def watch(content: Any) -> bool:
        judged.append(content)
        return False

    agent, _, _, _ = recorded_agent(tmp_path, [Reply(text="ok")], input_guardrails=[watch])
    await agent.bash("echo shell-out")
    await agent.run("what did it say?")
    assert judged == ["what did it say?"]
    await agent.aclose()


async def test_a_command_during_a_run_is_refused_and_the_run_goes_on(tmp_path: Path) -> None:
    agent, adapter, _, _ = recorded_agent(tmp_path, [Reply(text="slow " * 30, delay=0.01)])
    await agent.prompt("go")
    refused = await agent.handle({"type": "bash", "command": "echo during"})
    assert refused["success"] is False and "in progress" in str(refused["error"])
    response = await asyncio.wait_for(agent.wait(), 10)
    assert response.stop_reason == "stop" and response.text.startswith("slow")
    assert not any("during" in text for text in user_texts(agent.messages))
    assert len(adapter.requests) == 1
    await agent.aclose()


async def test_without_a_session_the_note_still_precedes_the_prompt(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([Reply(text="seen")])
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )
    agent = AgentSession(runner)
    await agent.bash("echo no-session")
    await agent.run("next")
    sent = user_texts(adapter.requests[0].messages)
    assert typed_text(sent[0]) == "!echo no-session" and sent[1] == "next"
    await agent.aclose()


async def test_a_note_that_cannot_be_filed_goes_to_the_next_model_call(tmp_path: Path) -> None:
    """When the agent is busy as the command ends (a run started meanwhile from another
    face), the note is not forced into the run's transcript: the run reads it at its
    next model call."""
    adapter = ScriptedAdapter([Reply(text="seen")])
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )

    async def busy(note: AgentMessage) -> bool:
        return False

    shell = UserShell(runner.add_contributor, busy)
    outcome = await shell.run(
        "echo busy",
        tool=runner.find_tool("bash"),
        bus=runner.events,
        permissions=None,
        redactor=None,
    )
    assert outcome.ran
    assert user_texts(runner.messages) == []
    await runner.chat("next")
    sent = user_texts(adapter.requests[0].messages)
    assert sent[0] == "next" and typed_text(sent[1]) == "!echo busy"
    shell.close()
    await runner.aclose()


@pytest.mark.parametrize("failed", [False, True])
def test_the_note_says_how_the_command_ended(failed: bool) -> None:
    note = shell_note("make test", ShellOutcome(ran=True, output="boom\n\n", is_error=failed))
    text = message_text(note)
    assert text.startswith(SHELL_NOTE_PREFIX)
    assert ("failed" in text.splitlines()[0]) is failed
    assert text.endswith("<output>\nboom\n</output>")


def test_a_note_before_a_prompt_is_one_user_turn_for_anthropic() -> None:
    """Note then prompt are two user messages in a row: Anthropic's conversion merges
    them into one user turn (OpenAI's chat API takes consecutive user messages)."""
    note = shell_note("echo shell-out", ShellOutcome(ran=True, output="shell-out"))
    messages: list[Any] = [
        UserMessage(content="hi"),
        AssistantMessage(content=[TextPart(text="hello")]),
        note,
        UserMessage(content="what did it say?"),
    ]
    request = LLMRequest(model="claude-test", messages=messages)
    built = AnthropicAdapter("claude-test").build_messages(request, "claude-test")
    assert [m["role"] for m in built] == ["user", "assistant", "user"]
    texts = [block["text"] for block in built[-1]["content"] if block.get("type") == "text"]
    assert texts[0].startswith(SHELL_NOTE_PREFIX) and texts[-1] == "what did it say?"
    openai = OpenAIAdapter("gpt-4o", api_key="sk-test").build_messages(request, "gpt-4o")
    assert [m["role"] for m in openai][-2:] == ["user", "user"]


async def test_a_run_paused_on_approvals_keeps_its_open_calls_last(tmp_path: Path) -> None:
    """While a run waits on approvals the transcript ends with its open calls: the note
    is not put after them but handed to the resumed run's next model call."""
    from skillkit import tool
    from skillkit.agent.approvals import Approve
    from skillkit.models import ToolCall, ToolResultMessage

    @tool(needs_approval=True)
    def deploy(target: str) -> str:
        """Deploy to a target."""
        return f"deployed to {target}"

    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[ToolCall(id="c1", name="deploy", arguments={"target": "prod"})]),
            "Deployed, and I saw your command.",
        ]
    )
    runner = AgentRunner(
        AgentConfig(model="scripted", approvals="defer"),
        adapter=adapter,
        tools=[*builtin_tools(tmp_path, allow_writes=True), deploy],
    )
    agent = AgentSession(runner)
    paused = await agent.run("ship it")
    assert paused.stop_reason == "approval_pending" and paused.state is not None
    before = agent.messages
    outcome = await agent.bash("echo while-paused")
    assert outcome["ran"] is True
    assert agent.messages == before  # the open call is still last
    resumed = await runner.resume(paused.state, {"c1": Approve()})
    assert resumed.text == "Deployed, and I saw your command."
    last = adapter.requests[-1].messages
    result = next(i for i, m in enumerate(last) if isinstance(m, ToolResultMessage))
    note = next(
        i for i, m in enumerate(last) if typed_text(message_text(m)) == "!echo while-paused"
    )
    assert result < note == len(last) - 1
    await agent.aclose()


class SlowSink:
    """An async store's entry sink: each entry is stored a moment after it is written
    (or storing fails, with ``fail``)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.stored: list[Any] = []
        self._pending: list[Any] = []

    def write(self, entry: Any, line: bytes) -> None:
        self._pending.append(entry)

    def unwritten(self) -> Any:
        if not self._pending:
            return None
        return self._store()

    async def _store(self) -> None:
        await asyncio.sleep(0.05)
        if self.fail:
            raise OSError("the database went away")
        self.stored.extend(self._pending)
        self._pending.clear()

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("fail", [False, True])
async def test_an_async_store_has_the_note_stored_when_bash_returns(
    tmp_path: Path, fail: bool
) -> None:
    import time

    from skillkit.session.format import SessionHeader

    sink = SlowSink(fail=fail)
    header = SessionHeader(id="async-session", cwd=str(tmp_path), created=time.time())
    recorded = Session(tmp_path / "async.jsonl", header, sink=sink)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([]),
        tools=builtin_tools(tmp_path, allow_writes=True),
        contributors=[recorded],
    )
    agent = AgentSession(runner, session=recorded)
    errors: list[str] = []

    def on_error(event: Any) -> None:
        if event.type == "error":
            errors.append(str(event.payload.message))

    agent.listen(on_error)
    outcome = await agent.bash("echo stored")
    assert outcome["ran"] is True
    assert typed_text(user_texts(agent.messages)[0]) == "!echo stored"  # in the transcript
    if fail:  # recording stops, said once; the command's outcome is not lost
        assert sink.stored == [] and errors == [
            "the session stopped recording: the database went away"
        ]
    else:
        notes = [e for e in sink.stored if isinstance(e, MessageEntry)]
        assert [typed_text(message_text(e.message)) for e in notes] == ["!echo stored"]
        assert errors == []
    await agent.aclose()
