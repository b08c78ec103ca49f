"""Skills inside a running agent: the catalog, the skill tool, actions as tools, hot reload."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.agent import AgentRunner
from skillkit.config import AgentConfig
from skillkit.events import Event
from skillkit.models import ToolResultMessage
from skillkit.skills.registry import SkillRegistry
from skillkit.skills.watch import SkillWatcher

ACTION_SKILL = """name: notes
description: Keep notes in a file.
metadata:
  skillkit:
    actions:
      add:
        description: Append a note
        params:
          text: {type: string}
        command: [%s, -c, "%s", "{text}"]
"""
APPEND = "import sys; open('notes.txt', 'a').write(sys.argv[1] + chr(10))"


def tool_results(agent: AgentRunner) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


async def test_model_calls_an_action_through_the_scripted_adapter(
    project: Path, home: Path, make_skill: Any
) -> None:
    make_skill(
        project / ".agents/skills", "notes", ACTION_SKILL % (json.dumps(sys.executable), APPEND)
    )
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    hostile = "buy milk; rm -rf ~ $(reboot)"
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("notes__add", {"text": hostile})]), Reply(text="Noted.")]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[registry])
    response = await agent.chat("note that I must buy milk")
    assert response.text == "Noted."
    assert (project / "notes.txt").read_text() == hostile + "\n"
    (result,) = tool_results(agent)
    assert not result.is_error and result.text.startswith("notes/add: exit code 0")
    request = adapter.requests[0]
    assert "<name>notes</name>" in request.system_prompt
    assert [t.name for t in request.tools] == ["skill", "notes__add"]
    assert request.tools[1].parameters["required"] == ["text"]


async def test_model_loads_a_skill_body_with_the_skill_tool(
    project: Path, home: Path, make_skill: Any
) -> None:
    path = make_skill(project / ".agents/skills", "guide", body="# Guide\nAlways be kind.\n")
    (path.parent / "ref.md").write_text("reference text")
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("skill", {"name": "guide"})]),
            Reply(tool_calls=[("skill", {"name": "guide", "path": "ref.md"})]),
            Reply(tool_calls=[("skill", {"name": "guide", "path": "../../../etc/passwd"})]),
            Reply(tool_calls=[("skill", {"name": "missing"})]),
            Reply(text="done"),
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[registry])
    await agent.chat("help")
    body, ref, escape, missing = tool_results(agent)
    assert body.text.startswith('<skill_content name="guide"') and "Always be kind." in body.text
    assert "<file>ref.md</file>" in body.text
    assert ref.text == "reference text"
    assert escape.is_error and "is not inside the folder of skill 'guide'" in escape.text
    assert missing.is_error and "name" in missing.text
    assert "Always be kind." not in adapter.requests[0].system_prompt


async def test_no_skills_means_no_catalog_and_no_skill_tool(project: Path, home: Path) -> None:
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    adapter = ScriptedAdapter([Reply(text="hi")])
    agent = AgentRunner(
        AgentConfig(model="scripted", system_prompt="Base."),
        adapter=adapter,
        contributors=[registry],
    )
    await agent.chat("hello")
    assert adapter.requests[0].system_prompt == "Base."
    assert adapter.requests[0].tools == []


async def wait_for(condition: Any, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_hot_reload_is_seen_by_a_running_agent_on_its_next_turn(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "stable")
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    adapter = ScriptedAdapter([Reply(text=f"turn {i}") for i in range(6)])
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[registry])
    events: list[Event] = []  # AgentRunner(skills=...) attaches the registry to its bus
    agent.events.on("store_update", events.append)

    async with SkillWatcher(registry, debounce_ms=30) as watcher:
        await agent.chat("0")
        prompt = lambda: adapter.requests[-1].system_prompt  # noqa: E731

        created = make_skill(root, "fresh", "name: fresh\ndescription: Brand new skill.")
        await wait_for(lambda: registry.get("fresh") is not None)
        await agent.chat("1")
        assert "<description>Brand new skill.</description>" in prompt()

        make_skill(root, "fresh", "name: fresh\ndescription: Edited description.")
        await wait_for(lambda: registry.get("fresh").description == "Edited description.")  # type: ignore[union-attr]
        await agent.chat("2")
        assert "Edited description." in prompt() and "Brand new skill." not in prompt()

        created.write_text("---\nname: fresh\ndescription: [unclosed\n---\n")
        await wait_for(lambda: any(e.op == "error" for e in events))
        await agent.chat("3")
        assert "Edited description." in prompt()  # the last good version stays
        assert any("is not valid YAML" in str(d) for d in registry.diagnostics)

        created.unlink()
        await wait_for(lambda: registry.get("fresh") is None)
        await agent.chat("4")
        assert "fresh" not in prompt() and "<name>stable</name>" in prompt()
        assert watcher.reloads >= 4

    assert [(e.payload.op, e.payload.id) for e in events] == [
        ("create", "fresh"),
        ("update", "fresh"),
        ("error", "fresh"),
        ("delete", "fresh"),
    ]
    assert all(e.type == "store_update" and e.payload.domain == "skill" for e in events)


async def test_a_source_folder_created_later_is_watched(
    project: Path, home: Path, make_skill: Any
) -> None:
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    async with SkillWatcher(registry, debounce_ms=30):
        make_skill(project / ".skillkit/skills", "late")
        await wait_for(lambda: registry.get("late") is not None, seconds=15)
        make_skill(project / ".skillkit/skills", "later")
        await wait_for(lambda: registry.get("later") is not None, seconds=15)


async def test_the_skill_tool_runs_behind_a_permission_gate_without_asking(
    project: Path, home: Path, make_skill: Any
) -> None:
    from skillkit.permissions import PermissionGate, install

    make_skill(project / ".agents/skills", "notes", ACTION_SKILL % ("echo", "x"))
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("skill", {"name": "notes"})]),
            Reply(tool_calls=[("notes__add", {"text": "milk"})]),
            Reply(text="Done."),
        ]
    )
    agent = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[registry])
    permissions = install(agent, PermissionGate(workspace=project, home=home))
    asked: list[str] = []
    permissions.approvals.answerer = lambda request: asked.append(request.tool_name) or "deny"

    await agent.chat("use the notes skill")

    loaded, action = tool_results(agent)
    assert not loaded.is_error and '<skill_content name="notes"' in loaded.text
    assert asked == ["notes__add"]  # an action runs a command: it asks
    assert action.is_error


async def test_a_skill_added_before_the_watcher_is_ready_is_not_missed(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "stable")
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    make_skill(root, "early", "name: early\ndescription: Written before watching began.")
    assert registry.get("early") is None  # the registry has not seen it yet
    async with SkillWatcher(registry, debounce_ms=30) as watcher:
        await asyncio.wait_for(watcher.ready.wait(), 10)
        assert registry.get("early") is not None
