"""Background tasks seen by a running agent: bg_result, then one folded message."""

from __future__ import annotations

import asyncio
from pathlib import Path

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import UserMessage
from skillkit.runtime.background import BackgroundTasks
from skillkit.tools.builtin import builtin_tools
from tests.conftest import Recorder


async def test_finished_task_is_folded_in_at_the_next_boundary(
    tmp_path: Path, recorder: Recorder
) -> None:
    background = BackgroundTasks(cwd=tmp_path)
    adapter = ScriptedAdapter(
        [
            Reply(
                tool_calls=[
                    ("bash", {"command": "echo from-background", "run_in_background": True})
                ]
            ),
            Reply(text="started it"),
            Reply(text="it finished"),
        ]
    )
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True, background=background),
        contributors=[background],
        sinks=[recorder],
    )
    background.attach(agent.events)
    try:
        first = await agent.chat("run it in the background")
        assert first.text == "started it"
        await asyncio.wait_for(background.wait_pending(), 10)
        assert recorder.of("bg_result")[0].status == "completed"
        await agent.chat("is it done?")
        sent = adapter.requests[2].messages
        assert sent[-2] == UserMessage(content="is it done?")
        folded = sent[-1]
        assert isinstance(folded, UserMessage) and isinstance(folded.content, str)
        assert folded.content.startswith("Background tasks finished:")
        assert "from-background" in folded.content
        drains = recorder.of("drain_background_task")
        assert len(drains) == 1 and drains[0].task_ids == [recorder.of("bg_result")[0].task_id]
    finally:
        await agent.aclose()
