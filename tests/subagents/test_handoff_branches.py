"""The agent that answers follows the session's branch: a rewind of the conversation,
an undo, a ``/tree`` move or a fork to a point before (or after) a handoff gives the
conversation to the agent that answered there, says so, and the next prompt goes to it
— through the command table of the ``skillkit`` command's agent, an SDK runner without
a session, and the real command over RPC."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.handoffs import Handoffs, handed_to
from skillkit.checkpoints import Checkpoints, SnapshotStore
from skillkit.commands.active_agent import recorded_active_agent
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.setup import AgentOptions, build_agent
from skillkit.models import AssistantMessage
from skillkit.rpc import RpcClient
from skillkit.session import MessageEntry, Session
from tests.test_cli import skillkit

pytestmark = pytest.mark.timeout(120)

REVIEWER = """---
name: reviewer
description: Reviews changes.
model: scripted:{script}
tools: [read]
---
You review changes.
"""

MAIN = """
replies:
  - text: "Hello from main."
  - text: "Over to the reviewer."
    tool_calls:
      - name: transfer_to_reviewer
        arguments: {}
  - text: "The branch left behind: a review."
  - text: "Main again."
  - text: "Over to the reviewer again."
    tool_calls:
      - name: transfer_to_reviewer
        arguments: {}
"""


def _home(tmp_path: Path, reviewer_says: list[str]) -> Path:
    home = tmp_path / "home"
    (home / ".skillkit" / "agents").mkdir(parents=True)
    script = tmp_path / "reviewer.yaml"
    (home / ".skillkit" / "agents" / "reviewer.md").write_text(REVIEWER.format(script=script))
    (home / ".skillkit" / "settings.json").write_text(
        json.dumps({"agents": {"handoff_to": ["reviewer"]}})
    )
    script.write_text(json.dumps({"replies": [{"text": text} for text in reviewer_says]}))
    return home


def _said(session: Session, text: str) -> str:
    """The id of the entry holding the assistant message ``text``."""
    for entry in session.entries:
        message = entry.message if isinstance(entry, MessageEntry) else None
        if isinstance(message, AssistantMessage) and message.text == text:
            return entry.id
    raise AssertionError(f"no assistant message {text!r}")


async def test_rewind_undo_tree_and_fork_give_the_conversation_to_the_branchs_agent(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path, ["Reviewer here.", "Reviewer still.", "Reviewer third."])
    (tmp_path / "main.yaml").write_text(MAIN)
    workspace = tmp_path / "work"
    workspace.mkdir()
    agent = build_agent(
        AgentOptions(
            model=f"scripted:{tmp_path / 'main.yaml'}",
            workspace=workspace,
            home=home,
            sandbox="off",
            session="new",
        )
    )
    session = AgentSession.from_agent(agent, home=home)
    try:
        assert (await session.run("hi")).text == "Hello from main."
        assert (await session.run("review my change")).text == "Reviewer here."
        assert session.get_state()["active_agent"] == "reviewer"

        # the conversation rewound to before the handoff's turn: the main agent answers
        rewound = await session.rewind(2, "conversation")
        assert rewound["active_agent"] is None
        assert rewound["active_agent_notice"] == (
            "the main agent answers from here (reviewer answered on the branch left)"
        )
        assert session.get_state()["active_agent"] is None

        # undone: the branch holds the handoff again, and the reviewer answers
        undone = await session.run_command("/undo")
        assert undone is not None and undone.ok, undone
        assert "agent reviewer answers from here: the conversation was handed to it" in (
            undone.output
        )
        assert (await session.run("anything else?")).text == "Reviewer still."

        # /tree back to the main agent's first answer: the main agent answers
        recorded = session.session
        assert recorded is not None
        moved = await session.run_command(f"/tree {_said(recorded, 'Hello from main.')}")
        assert moved is not None and moved.ok, moved
        assert "the main agent answers from here (reviewer answered on the branch left)" in (
            moved.output
        )
        assert (await session.run("and you?")).text == "Main again."
        assert session.get_state()["active_agent"] is None

        # a fork of the whole branch: the main agent still answers, and a handoff there
        # is recorded in the fork
        forked = await session.fork()
        assert forked["active_agent"] is None and "active_agent_notice" not in forked
        assert (await session.run("review it again")).text == "Reviewer third."
        fork = session.session
        assert fork is not None and fork.id == forked["session_id"]
        assert recorded_active_agent(fork) == "reviewer"
        # a fork that ends before that handoff: the main agent answers there
        again = await session.fork(_said(fork, "Main again."))
        assert again["active_agent"] is None
        assert again["active_agent_notice"] == (
            "the main agent answers from here (reviewer answered on the branch left)"
        )
        # a rewind of the code alone leaves the conversation, and who answers, as it is
        code = await session.rewind(1, "code")
        assert "active_agent" not in code
        assert session.get_state()["active_agent"] is None
    finally:
        await session.aclose()


async def test_without_a_session_the_transcript_says_who_answers(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    billing = AgentRunner(
        AgentConfig(model="scripted", agent_id="billing"),
        adapter=ScriptedAdapter(["Billing here."]),
    )
    checkpoints = Checkpoints(SnapshotStore(workspace, tmp_path / "store"))
    triage = AgentRunner(
        AgentConfig(model="scripted", agent_id="triage"),
        adapter=ScriptedAdapter(
            ["Triage here.", Reply(tool_calls=[("transfer_to_billing", {})]), "Triage again."]
        ),
        contributors=[Handoffs([billing]), checkpoints],
    )
    session = AgentSession(triage)
    try:
        await session.run("hello")
        assert (await session.run("my invoice")).text == "Billing here."
        assert handed_to(triage.messages) == "billing"
        rewound = await session.rewind(2, "conversation")
        assert rewound["active_agent"] is None
        assert handed_to(triage.messages) is None
        assert (await session.run("hello again")).text == "Triage again."
    finally:
        await session.aclose()
        await triage.aclose()


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(home)
    return env


async def test_a_rewind_over_rpc_gives_the_conversation_back_to_the_main_agent(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path, ["Reviewer here."])
    (tmp_path / "main.yaml").write_text(MAIN.replace('  - text: "Hello from main."\n', ""))
    (tmp_path / "main-says.yaml").write_text('replies:\n  - text: "The main agent answered."\n')
    work = tmp_path / "work"
    work.mkdir()
    first = skillkit(
        "-p", "review my change", "--sandbox", "off", "--model",
        f"scripted:{tmp_path / 'main.yaml'}", "--mode", "json",
        cwd=work, env=_env(home),
    )  # fmt: skip
    assert first.returncode == 0, first
    header = json.loads(first.stdout.splitlines()[0])

    client = await RpcClient.start(
        "--model", f"scripted:{tmp_path / 'main-says.yaml'}", "--sandbox", "off",
        "--session", header["session_id"],
        cwd=work, env=_env(home), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert (await client.request("get_state"))["active_agent"] == "reviewer"
        rewound = await client.request("rewind", turn=1, target="conversation")
        assert rewound["active_agent"] is None
        assert rewound["active_agent_notice"] == (
            "the main agent answers from here (reviewer answered on the branch left)"
        )
        assert (await client.request("get_state"))["active_agent"] is None
        await client.request("prompt", message="hello?")
        end = await client.next_event("agent_end")
        assert end["payload"]["text"] == "The main agent answered."  # type: ignore[index]
    finally:
        assert await client.aclose() == 0
