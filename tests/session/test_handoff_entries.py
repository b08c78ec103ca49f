"""Which agent answers a conversation is kept in the session on every store (JSONL
files, SQLite, PostgreSQL): the ``skillkit`` command's handoffs write an
``active_agent`` entry at each handoff, and a session opened again hands the
conversation straight to that agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.registry import AdapterRegistry
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent.handoffs import handoffs_of
from skillkit.frontends.handoff_setup import attach_handoffs, recorded_active_agent
from skillkit.session import Session
from skillkit.session.store_protocol import SessionStoreProtocol
from skillkit.subagents import AgentDefinition, AgentRegistry, Subagents

pytestmark = pytest.mark.timeout(60)


def _agent(
    tmp_path: Path, session: Session, replies: list[Reply | str], writer: list[Reply | str]
) -> tuple[AgentRunner, list[str]]:
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True, exist_ok=True)
    (home / ".skillkit" / "settings.json").write_text(
        json.dumps({"agents": {"handoff_to": ["writer"]}})
    )
    agents = AgentRegistry(default_sources=False)
    agents.register(
        AgentDefinition(
            name="writer", description="Writes.", prompt="You write.", model="writer-model"
        )
    )
    adapters = AdapterRegistry()
    adapters.register("writer-model", ScriptedAdapter(writer))
    children = Subagents(agents)
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(replies),
        adapters=adapters,
        messages=session.context(),
        contributors=[session, children],
    )
    warnings, _ = attach_handoffs(
        runner, children, tmp_path, home=home, trusted=False, session=session
    )
    return runner, warnings


async def test_the_answering_agent_is_kept_on_every_store(
    store: SessionStoreProtocol, tmp_path: Path
) -> None:
    session = store.create(tmp_path)
    runner, warnings = _agent(
        tmp_path, session, [Reply(tool_calls=[("transfer_to_writer", {})])], ["Writer here."]
    )
    assert warnings == []
    assert (await runner.chat("write something")).text == "Writer here."
    await runner.aclose()
    session.close()

    reopened = store.open(session.id)
    assert recorded_active_agent(reopened) == "writer"
    again, _ = _agent(tmp_path, reopened, ["The main agent answered."], ["Writer again."])
    own = handoffs_of(again.contributors)
    assert own is not None and own.active_name == "writer"
    assert (await again.chat("and now?")).text == "Writer again."
    await again.aclose()
    reopened.close()
