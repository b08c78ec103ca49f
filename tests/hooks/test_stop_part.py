"""The core's ``stop_check`` part: a contributor can make a run go on."""

from __future__ import annotations

import pytest

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import ScriptedAdapter
from skillkit.agent import Contributor
from skillkit.models import AgentMessage, UserMessage

pytestmark = pytest.mark.timeout(30)


class GoOnOnce(Contributor):
    name = "go-on-once"

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def stop_check(self, messages: list[AgentMessage]) -> str | None:
        self.seen.append(len(messages))
        return "run the tests first" if len(self.seen) == 1 else None


class Broken(Contributor):
    name = "broken"

    async def stop_check(self, messages: list[AgentMessage]) -> str | None:
        raise RuntimeError("bug")


async def test_a_stop_check_answer_continues_the_run_with_it_as_a_user_message() -> None:
    hook = GoOnOnce()
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(["done", "tests pass, done"]),
        contributors=[hook],
    )
    response = await agent.chat("fix it")
    assert response.text == "tests pass, done"
    assert response.stop_reason == "stop"
    users = [m for m in agent.messages if isinstance(m, UserMessage)]
    assert [u.content for u in users] == ["fix it", "run the tests first"]
    assert hook.seen == [2, 4]


async def test_a_stop_check_that_raises_ends_the_run_and_is_reported() -> None:
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter(["done", "never"]),
        contributors=[Broken()],
    )
    errors: list[str] = []
    agent.events.on("error", lambda event: errors.append(event.payload.stage))
    response = await agent.chat("fix it")
    assert response.text == "done"
    assert errors == ["stop:broken"]


async def test_a_stop_check_that_never_lets_go_is_cut_at_max_iterations() -> None:
    class Forever(Contributor):
        async def stop_check(self, messages: list[AgentMessage]) -> str | None:
            return "again"

    agent = AgentRunner(
        AgentConfig(model="scripted", max_iterations=2),
        adapter=ScriptedAdapter(["a", "b", "c", "d", "e"]),
        contributors=[Forever()],
    )
    response = await agent.chat("go")
    assert response.text == "c"
