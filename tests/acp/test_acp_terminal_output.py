"""A command in the editor's terminal streams its output to SkillKit's own observers.

`SkillKitAcpAgent` runs in this process (over pipes, driven by the official SDK's
client side) so a subscriber of the session's event bus sees what the terminal face,
the web page, RPC and the session log see: ``tool_execution_update`` events.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, TerminalOutputResponse

from skillkit.acp.agent import AcpSettings
from skillkit.acp.cli import serve_acp
from skillkit.acp.following import CUT_AT_START, CUT_BETWEEN
from skillkit.acp.transport import StdioTransport
from skillkit.events import Event
from skillkit.frontends.setup import AgentOptions, CliAgent, build_agent
from skillkit.runtime.sandbox import find_bubblewrap
from tests.acp.conftest import TerminalEditor, allow

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(isinstance(find_bubblewrap(), str), reason="no usable bubblewrap here"),
]


@dataclass
class Observer:
    """Subscribed to the session's bus: each tool call's output updates and ends."""

    seen: list[tuple[str, str]] = field(default_factory=list)
    """(kind, the update's text or the ended call's id), in order."""

    def __post_init__(self) -> None:
        self.arrived = asyncio.Event()

    def __call__(self, event: Event[Any]) -> None:
        payload = event.payload
        if event.type == "tool_execution_update":
            self.seen.append(("update", payload.output))
        else:
            self.seen.append(("end", payload.tool_call_id))
        self.arrived.set()

    def text(self) -> str:
        return "".join(text for kind, text in self.seen if kind == "update")

    async def wait_for(self, text: str) -> None:
        async with asyncio.timeout(30):
            while text not in self.text():
                self.arrived.clear()
                await self.arrived.wait()


@asynccontextmanager
async def connected(
    work: Path, commands: list[str], editor: TerminalEditor, observer: Observer
) -> AsyncIterator[ClientSideConnection]:
    """The agent in this process, its model running ``commands`` with ``bash`` in
    turn, in the sandbox; ``observer`` subscribed to each session's bus."""
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": c}}]} for c in commands]
    script = work.parent / "script.json"
    script.write_text(json.dumps({"replies": [*replies, {"text": "Done."}]}))

    def build(options: AgentOptions) -> CliAgent:
        made = build_agent(options)
        made.runner.events.on("tool_execution_update", observer)
        made.runner.events.on("tool_execution_end", observer)
        return made

    options = AgentOptions(
        model=f"scripted:{script}", sandbox="auto", session="new", home=work.parent / "home"
    )
    settings = AcpSettings(options=options, build=build)
    agent_in, client_out = os.pipe()
    client_in, agent_out = os.pipe()
    serving = asyncio.create_task(serve_acp(settings, read_fd=agent_in, write_fd=agent_out))
    conn = connect_to_agent(editor, StdioTransport(client_in, client_out))
    try:
        await conn.initialize(
            protocol_version=1, client_capabilities=ClientCapabilities(terminal=True)
        )
        yield conn
    finally:
        await conn.close()
        os.close(client_out)
        await asyncio.wait_for(serving, 10)
        os.close(agent_out)
        os.close(agent_in)


async def test_output_reaches_the_observers_before_the_command_ends(work: Path) -> None:
    """The command prints, waits for the test's go-ahead, prints again: the first line
    is observed while it still waits, and nothing is observed twice."""
    editor = TerminalEditor(answer=allow("allow"))
    observer = Observer()
    command = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; printf tail"
    async with connected(work, [command], editor, observer) as conn:
        made = await conn.new_session(cwd=str(work), mcp_servers=[])
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=made.session_id, prompt=[text_block("run it")])
        )
        await observer.wait_for("first\n")
        assert not prompt.done()
        assert [kind for kind, _ in observer.seen] == ["update"]  # the call has not ended
        (work / "go").touch()
        answer = await asyncio.wait_for(prompt, 30)
    assert answer.stop_reason == "end_turn"
    assert editor.created  # it really ran in the editor's terminal
    updates = [text for kind, text in observer.seen if kind == "update"]
    assert updates == ["first\n", "second\n", "tail"]  # line by line, as a local bash call
    assert observer.seen[-1][0] == "end"
    [done] = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert done.raw_output["output"] == "first\nsecond\ntail"  # the result is as before
    # the editor is not sent the output again: it shows the terminal
    shown = [c for u in editor.of("tool_call_update") for c in u.content or []]
    assert {c.type for c in shown} == {"terminal"}


class _CuttingEditor(TerminalEditor):
    """Keeps only the last ``keep`` characters of each terminal's output, as an editor
    does past the byte limit, and says so."""

    keep = 40

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        full = await super().terminal_output(session_id, terminal_id)
        cut = len(full.output) > self.keep
        return TerminalOutputResponse(
            output=full.output[-self.keep :] if cut else full.output,
            truncated=cut,
            exit_status=full.exit_status,
        )


async def test_output_cut_by_the_editor_is_said_and_never_repeated(work: Path) -> None:
    editor = _CuttingEditor(answer=allow("allow"))
    observer = Observer()
    command = (
        "for n in $(seq 1 5); do echo early-$n; done; while [ ! -e go ]; do sleep 0.05; done;"
        " for n in $(seq 1 200); do echo late-line-$n; done; sleep 0.3; echo last"
    )
    full = "".join(f"early-{n}\n" for n in range(1, 6))
    full += "".join(f"late-line-{n}\n" for n in range(1, 201)) + "last\n"
    async with connected(work, [command], editor, observer) as conn:
        made = await conn.new_session(cwd=str(work), mcp_servers=[])
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=made.session_id, prompt=[text_block("run it")])
        )
        await observer.wait_for("early-5\n")
        (work / "go").touch()
        await asyncio.wait_for(prompt, 30)
    updates = [text for kind, text in observer.seen if kind == "update"]
    notes = [text for text in updates if text in (CUT_AT_START, CUT_BETWEEN)]
    assert notes  # 200 lines do not fit in 40 characters: the cut is said
    # what was observed is the output in order, parts left out, nothing twice
    rest = iter(full)
    assert all(char in rest for text in updates if text not in notes for char in text)
    assert updates[-1] == "last\n"
    [done] = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert done.raw_output["output"].startswith(CUT_AT_START.rstrip("\n"))
